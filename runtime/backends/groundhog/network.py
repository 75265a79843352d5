"""Fetch one URL safely: the only way groundhog touches the network.

One `Fetcher` per network policy holds one httpx.AsyncClient (HTTP/1.1 and HTTP/2, one connection
pool), made on first use in the running event loop and made again when a later call runs in
another loop (a second `anyio.run` in the process: the first loop's connections died with it).
`fetch` never raises for a network or page problem: every outcome is a `Fetched` with a page
status and, for any status but ok, the reason.

The rules live in their own modules, each re-exported here for the other modules' imports:
addresses.py (which URLs and addresses may be reached, `allowed_networks`), connect.py (each
TCP connection opened only to a checked address, without a second DNS lookup), bodies.py
(bounded decoding, media types) and statuses.py (page statuses, challenges).

Statuses. An address or URL refused by this policy is `blocked` with an error starting
"refused: " (the fetcher, not the site, said no; retrying will not help, and the prefix tells it
from a site's 401/403). When no answer came, the status says why (`_failure`): `timeout` (the
request's time, the deadline, or a pacing slot after it), `dns_error` (a name with no address),
`connection_error` (refused, reset, TLS, a broken protocol), `redirect_error` (too many
redirects, or a Location that is no URL); `unknown` only for what fits none. The rest is
statuses.py's.

Redirects are followed by hand (301/302/303/307/308 with a Location), at most `max_redirects`:
each hop's URL passes `refuse_url` and its connection the address check. `redirects` lists each
hop's target in order, so a redirected fetch has `redirects[-1] == final_url`.

Search providers. `get_json` reads a provider's JSON under the same byte cap, never following a
redirect (the headers may hold a key). With `trusted=True`, for the URL the operator configured
(searxng_url, brave_url) and only for that request, no address is refused: a SearXNG on
127.0.0.1:8888 needs no `allowed_networks` entry, which would open loopback to every page. A
trusted request has a client and connection pool of its own, so a connection it opened is never
reused for a page.

HTTP/2: offered in ALPN on https. httpcore 1.0 does not reset a stream that is closed before
its end, so a connection with such a stream (too large, not read, timed out) is closed and the
next request opens a new one; other streams in flight on it fail (rare, with per-host pacing).

Cookies: none. The client's jar refuses every cookie, so a Set-Cookie is never sent back to any
host, the same one included: every fetch is a first visit.

Pacing: two requests to one host start at least `per_domain_interval` apart (start slots are
reserved in call order, so concurrent fetches queue fairly). A fetch waits once per host it
touches: a redirect to the same host does not wait again. `get_json` (search providers) is not
paced. Slots are time.monotonic() values, valid across event loops.

Time: `timeout_seconds` bounds each request, connect to last body byte (a redirect hop is a
request of its own); `deadline` (a time.monotonic() value) bounds the whole fetch, pacing waits
included. A pacing slot that would start after the deadline fails the fetch at once.

httpx and httpcore are imported inside functions only: `lynxc build` imports the tools module.
"""

from __future__ import annotations

import json
import time
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .addresses import (
    MAX_URL_LENGTH,
    Address,
    Network,
    address_kind,
    address_problem,
    address_refusal,
    parse_networks,
    refuse_url,
)
from .bodies import ACCEPT_ENCODING, BoundedBody, Unsupported, drain, media_type, read_body, sniff_media_type
from .connect import AddressRefused, NameNotResolved, Resolver, guarded_backend, system_resolve
from .statuses import (
    READABLE_TYPES,
    SNIFF_BYTES,
    STATUSES,
    Hop,
    challenge_reason,
    classify,
    reason,
    status_for,
    unreadable,
)

if TYPE_CHECKING:
    import ssl

    import httpx

__all__ = [
    "ACCEPT",
    "ACCEPT_ENCODING",
    "MAX_URL_LENGTH",
    "READABLE_TYPES",
    "REDIRECT_STATUSES",
    "SNIFF_BYTES",
    "STATUSES",
    "Address",
    "AddressRefused",
    "BoundedBody",
    "FetchError",
    "FetchPolicy",
    "Fetched",
    "Fetcher",
    "NameNotResolved",
    "Network",
    "Resolver",
    "Wanted",
    "address_kind",
    "address_problem",
    "address_refusal",
    "challenge_reason",
    "media_type",
    "parse_networks",
    "refuse_url",
    "sniff_media_type",
    "status_for",
    "system_resolve",
]

ACCEPT = (
    "text/html,application/xhtml+xml;q=0.9,text/markdown;q=0.9,text/plain;q=0.8,"
    "application/pdf;q=0.7,*/*;q=0.1"
)
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ERROR_HEAD_CHARS = 200  # of a provider's error body, in get_json's errors


@dataclass(frozen=True)
class FetchPolicy:
    allowed_networks: tuple[str, ...] = ()  # CIDRs allowed despite being private/loopback/...
    max_bytes: int = 5_000_000  # decoded body cap (a gzip bomb is too_large)
    max_redirects: int = 5
    timeout_seconds: float = 15.0  # one request, connect to last byte
    user_agent: str = "lynxc-groundhog/0.1 (+https://github.com/lynxc)"
    per_domain_interval: float = 0.0  # seconds between two requests to one host

    def __post_init__(self) -> None:
        # ValueError naming the field and the rule: the caller turns it into a tool error.
        parse_networks(self.allowed_networks)
        if self.max_bytes < 1:
            raise ValueError(f"max_bytes: must be at least 1, got {self.max_bytes}")
        if self.max_redirects < 0:
            raise ValueError(f"max_redirects: must be 0 or more, got {self.max_redirects}")
        if not self.timeout_seconds > 0:
            raise ValueError(f"timeout_seconds: must be more than 0, got {self.timeout_seconds}")
        if not self.per_domain_interval >= 0:
            raise ValueError(f"per_domain_interval: must be 0 or more, got {self.per_domain_interval}")


@dataclass(frozen=True)
class Wanted:
    """What one fetch reads: a page (PAGE), or a page's own resource (a stylesheet), which
    takes other media types, may read less and, fetched with its page, does not wait for the
    host's next pacing slot."""

    media_types: frozenset[str] = READABLE_TYPES
    accept: str = ACCEPT
    max_bytes: int | None = None  # the policy's when None; a smaller cap for a page's resource
    paced: bool = True


PAGE = Wanted()


@dataclass(frozen=True)
class Fetched:
    url: str  # as asked
    final_url: str  # after redirects
    status: str  # one of STATUSES
    http_status: int | None
    content_type: str | None  # media type, lower case, no parameters ("text/html")
    charset: str | None
    body: bytes  # decoded body, at most max_bytes; b"" unless status ok (or challenge)
    error: str | None  # why, for any status but ok
    redirects: tuple[str, ...]
    fetched_at: str  # ISO 8601 UTC with Z


class FetchError(Exception):
    """get_json's failure: the message says what happened (status and the body's start)."""

    def __init__(self, message: str, http_status: int | None = None) -> None:
        super().__init__(message)
        self.http_status = http_status


@dataclass
class _Client:
    """One httpx client and its httpcore pool, made in one event loop."""

    http: httpx.AsyncClient
    pool: Any


def _without_query(url: str) -> str:
    """The URL for an error message: a provider's key may ride in the query."""
    return url.split("?", 1)[0].split("#", 1)[0]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _seconds(value: float) -> str:
    return f"{value:.3g} s"


def _failure(exc: Exception) -> tuple[str, str]:
    """A network exception as a page status and a short sentence for `error`."""
    import httpx

    text = str(exc) or type(exc).__name__
    if isinstance(exc, NameNotResolved):
        return "dns_error", text
    if isinstance(exc, httpx.TimeoutException):
        return "timeout", f"timed out ({text})"
    if isinstance(exc, httpx.ConnectError):
        return "connection_error", f"could not connect: {text}"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.LocalProtocolError):
        return "connection_error", f"protocol error: {text}"
    if isinstance(exc, httpx.NetworkError | ConnectionError):
        return "connection_error", f"connection failed: {text}"
    if isinstance(exc, zlib.error):
        return "unknown", f"corrupt compressed body: {text}"
    return "unknown", f"{type(exc).__name__}: {text}"


# Where `_set_location_aside` keeps a response's Location header (Response.extensions).
LOCATION = "lynxc.location"


async def _set_location_aside(response: httpx.Response) -> None:
    """A response hook: move the Location header into the response's extensions. httpx parses a
    redirect's Location inside `send`, redirects off or not, and raises there on one that is no
    URL ("http://[::1", an "xn--" host), before the status is seen. Set aside, the Location is
    parsed by `fetch`, which answers a redirect_error (or a refusal) that names it."""
    location = response.headers.get("location")
    if location is not None:
        del response.headers["location"]
        response.extensions[LOCATION] = location


def _current_loop() -> object:
    """The running event loop itself (asyncio's loop, trio's token): what a client is bound to."""
    import anyio.lowlevel

    return anyio.lowlevel.current_token().native_token


class Fetcher:
    """Fetch pages under one FetchPolicy with one shared client; see the module docstring.

    `resolver` and `ssl_context` are for tests: a resolver that answers names the system cannot
    (and counts its calls), a context that trusts a test CA."""

    def __init__(
        self,
        policy: FetchPolicy,
        *,
        resolver: Resolver | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self.policy = policy
        self._allowed = parse_networks(policy.allowed_networks)
        self._resolve = resolver or system_resolve
        self._ssl_context = ssl_context
        self._clients: dict[bool, _Client] = {}  # trusted? -> its client, made in self._loop
        self._loop: object | None = None
        self._next_start: dict[str, float] = {}  # host -> earliest monotonic start of its next request

    def _client(self, trusted: bool = False) -> _Client:
        loop = _current_loop()
        if loop is not self._loop:
            # Made in a loop that has ended (or another thread's): its connections and their
            # sockets belong to that loop and cannot be used, or closed, from this one.
            self._clients, self._loop = {}, loop
        client = self._clients.get(trusted)
        if client is None:
            client = self._clients[trusted] = self._make_client(trusted)
        return client

    def _make_client(self, trusted: bool) -> _Client:
        from http.cookiejar import CookieJar, DefaultCookiePolicy

        import httpcore
        import httpx

        context = self._ssl_context or httpx.create_ssl_context(trust_env=False)
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=16, keepalive_expiry=30)
        transport = httpx.AsyncHTTPTransport(verify=context, http2=True, trust_env=False, limits=limits)
        # httpx 0.28 takes no network backend (encode/httpx#3749 would add it): the transport's
        # pool is replaced by one with the same settings and the guarded backend.
        transport._pool = pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=True,
            network_backend=guarded_backend(self._allowed, self._resolve, check=not trusted),
        )
        http = httpx.AsyncClient(
            transport=transport,
            # A jar that takes no cookie: nothing is carried to another host, or back.
            cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
            follow_redirects=False,
            event_hooks={"response": [_set_location_aside]},
            trust_env=False,  # no proxy or .netrc from the environment: the check sees the real peer
            timeout=httpx.Timeout(self.policy.timeout_seconds),
            headers={
                "User-Agent": self.policy.user_agent,
                "Accept": ACCEPT,
                "Accept-Encoding": ACCEPT_ENCODING,
            },
        )
        return _Client(http, pool)

    async def _drop_http2(self, client: _Client, url: httpx.URL) -> None:
        """Close the HTTP/2 connection of a response left unfinished (too large, unread, timed
        out). httpcore 1.0 sends no RST_STREAM when a stream is closed early and stops
        acknowledging its DATA, so the server goes on sending until the connection's window is
        spent, and every later stream on that connection stalls (encode/httpcore#943). Other
        streams in flight on the connection fail with it: rare, with per-host pacing."""
        import anyio
        import httpcore

        origin = httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=b"/").origin
        with anyio.move_on_after(5, shield=True):  # also after a cancelled (timed-out) request
            for connection in list(client.pool.connections):
                if connection.can_handle_request(origin) and "HTTP/2" in connection.info():
                    await connection.aclose()

    async def aclose(self) -> None:
        clients, self._clients = self._clients, {}
        if self._loop is not _current_loop():
            return  # made in another loop, now gone: nothing here can close them
        for client in clients.values():
            await client.http.aclose()

    # -- time

    def _budget(self, deadline: float | None) -> tuple[float, bool]:
        """Seconds this request may take, and whether the deadline (not the timeout) set it."""
        timeout = self.policy.timeout_seconds
        if deadline is None:
            return timeout, False
        left = deadline - time.monotonic()
        return (left, True) if left < timeout else (timeout, False)

    async def _pace(self, host: str, deadline: float | None) -> str | None:
        """Wait for this host's next start slot; the error when it falls after the deadline."""
        interval = self.policy.per_domain_interval
        if interval <= 0:
            return None
        import anyio

        now = time.monotonic()
        start = max(now, self._next_start.get(host, now))
        if deadline is not None and start >= deadline:
            wait = _seconds(start - now)
            return f"rate limit: the next request to {host} may start in {wait}, after the deadline"
        self._next_start[host] = start + interval  # reserved before waiting: concurrent calls queue
        if len(self._next_start) > 4096:
            self._next_start = {h: t for h, t in self._next_start.items() if t > now}
        if start > now:
            await anyio.sleep(start - now)
        return None

    # -- fetch

    async def fetch(self, url: str, *, deadline: float | None = None, wanted: Wanted = PAGE) -> Fetched:
        """Fetch one page (or what `wanted` says); never raises for a network or page problem
        (see the module docstring)."""
        import anyio
        import httpx

        redirects: list[str] = []

        def done(status: str, error: str | None, hop: Hop | None = None, final: str | None = None) -> Fetched:
            return Fetched(
                url=url,
                final_url=final or (redirects[-1] if redirects else url),
                status=status,
                http_status=hop.http_status if hop else None,
                content_type=hop.content_type if hop else None,
                charset=hop.charset if hop else None,
                body=hop.body if hop and status in ("ok", "challenge") else b"",
                error=None if status == "ok" else error,
                redirects=tuple(redirects),
                fetched_at=_now(),
            )

        problem = refuse_url(url)
        if problem is not None:
            return done("blocked", f"refused: {problem}")
        current, paced = url, set()
        while True:
            host = httpx.URL(current).host
            if host not in paced and wanted.paced:
                paced.add(host)
                late = await self._pace(host, deadline)
                if late is not None:
                    return done("timeout", late)
            budget, by_deadline = self._budget(deadline)
            if budget <= 0:
                return done("timeout", f"deadline passed before {current} was requested")
            client = self._client()
            try:
                with anyio.fail_after(budget):
                    hop = await self._hop(client, current, wanted)
            except TimeoutError:
                # Given up before the answer's head, an HTTP/2 stream is left as open as after it.
                await self._drop_http2(client, httpx.URL(current))
                why = "deadline reached" if by_deadline else "timed out"
                return done("timeout", f"{why} after {_seconds(budget)}")
            except AddressRefused as exc:
                return done("blocked", f"refused: {exc}")
            except Unsupported as exc:
                return done("unsupported_content", str(exc))
            except Exception as exc:  # network errors, and h11/h2 state errors a hostile server provokes
                return done(*_failure(exc))
            if hop.location is None:
                return done(hop.status, hop.error, hop)
            try:
                target = str(httpx.URL(current).join(hop.location))
            except (httpx.InvalidURL, ValueError) as exc:
                return done(
                    "redirect_error", f"invalid redirect Location {hop.location[:200]!r}: {exc}", hop, current
                )
            if len(redirects) >= self.policy.max_redirects:
                loop = " (a loop)" if target == url or target in redirects else ""
                return done(
                    "redirect_error",
                    f"too many redirects (more than {self.policy.max_redirects}){loop}",
                    hop,
                    current,
                )
            problem = refuse_url(target)
            if problem is not None:
                return done("blocked", f"refused: redirect to {hop.location[:200]}: {problem}", hop, current)
            redirects.append(target)
            current = target

    async def _hop(self, client: _Client, url: str, wanted: Wanted) -> Hop:
        """One request: a redirect to follow, or the answer classified."""
        http = client.http
        cap = self.policy.max_bytes
        max_bytes = cap if wanted.max_bytes is None else max(1, min(wanted.max_bytes, cap))
        request = http.build_request("GET", url, headers={"Accept": wanted.accept})
        response = await http.send(request, stream=True)
        complete = False  # the body was read to its end
        try:
            code, headers = response.status_code, response.headers
            location = response.extensions.get(LOCATION)
            if code in REDIRECT_STATUSES and location:
                complete = await drain(response, SNIFF_BYTES)
                return Hop(code, location=location.strip())
            kind, charset = media_type(headers.get("content-type"))
            challenged = str(headers.get("cf-mitigated", "")).strip().lower() == "challenge"
            if 200 <= code <= 299 and not challenged:
                if kind is not None and kind not in wanted.media_types:
                    return unreadable(code, kind, charset, wanted.media_types)
                body, too_large = await read_body(response, max_bytes)
            else:
                try:  # read only to recognise a challenge: an odd coding is no reason to fail
                    body, too_large = await read_body(response, min(max_bytes, SNIFF_BYTES))
                except (Unsupported, zlib.error):
                    body, too_large = b"", True
            complete = not too_large
        finally:
            await response.aclose()
            if not complete and response.http_version == "HTTP/2":
                await self._drop_http2(client, response.request.url)
        return classify(code, headers, kind, charset, body, too_large, max_bytes)

    # -- search providers

    async def get_json(
        self,
        url: str,
        *,
        params: dict[str, Any],
        headers: dict[str, str],
        deadline: float | None = None,
        trusted: bool = False,
    ) -> tuple[int, Any]:
        """GET a provider's JSON under the byte cap; redirects are not followed (the headers may
        hold a key). Raises FetchError, with the HTTP status and the start of the body for a
        non-2xx answer.

        `trusted`: the URL is the operator's own setting (a search provider's), not a page's, so
        this request alone may reach any address (a local SearXNG); the URL rules still apply."""
        import anyio
        import httpx

        problem = refuse_url(url)
        if problem is not None:
            raise FetchError(f"refused: {problem}")
        where = _without_query(url)
        budget, by_deadline = self._budget(deadline)
        if budget <= 0:
            raise FetchError(f"deadline passed before {where} was requested")
        client = self._client(trusted)
        request = client.http.build_request(
            "GET", url, params=params, headers={"Accept": "application/json", **headers}
        )
        try:
            with anyio.fail_after(budget):
                response = await client.http.send(request, stream=True)
                too_large = True  # until the body is read to its end
                try:
                    code = response.status_code
                    if code in REDIRECT_STATUSES:
                        location = _without_query(response.extensions.get(LOCATION, "?"))
                        raise FetchError(
                            f"{reason(code)} from {where}: redirects are not followed for search "
                            f"providers (Location: {location[:200]}); configure the final URL",
                            code,
                        )
                    body, too_large = await read_body(response, self.policy.max_bytes)
                finally:
                    await response.aclose()
                    if too_large and response.http_version == "HTTP/2":
                        await self._drop_http2(client, request.url)
        except TimeoutError:
            await self._drop_http2(client, request.url)
            why = "deadline reached" if by_deadline else "timed out"
            raise FetchError(f"{where}: {why} after {_seconds(budget)}") from None
        except AddressRefused as exc:
            raise FetchError(f"refused: {exc}") from None
        except Unsupported as exc:
            raise FetchError(f"{where}: {exc}") from None
        except (httpx.HTTPError, httpx.InvalidURL, OSError, zlib.error) as exc:
            raise FetchError(f"{where}: {_failure(exc)[1]}") from None
        if too_large:
            raise FetchError(
                f"{reason(code)} from {where}: response larger than {self.policy.max_bytes} bytes", code
            )
        text = body.decode("utf-8", "replace")
        head = "".join(c if c.isprintable() else " " for c in text[:ERROR_HEAD_CHARS])
        if not 200 <= code <= 299:
            raise FetchError(f"{reason(code)} from {where}: {head}", code)
        try:
            return code, json.loads(text)
        except ValueError:
            raise FetchError(f"{reason(code)} from {where}: the answer is not JSON: {head}", code) from None

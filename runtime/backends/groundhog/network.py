"""Fetch one URL safely: the only way groundhog touches the network.

One `Fetcher` per network policy holds one httpx.AsyncClient (HTTP/1.1 and HTTP/2, one connection
pool), made on first use in the running event loop. `fetch` never raises for a network or page
problem: every outcome is a `Fetched` with a page status and, for any status but ok, the reason.

Addresses. Every TCP connection, the first and each redirect hop's, is opened by a guarded
httpcore network backend: it resolves the name once, checks each address and connects to an
address it checked, by number, so the system never looks the name up a second time and a DNS
answer that changes between check and connect cannot move the request. TLS still names the host:
httpcore hands the origin's host name, not the address, to start_tls for SNI and certificate
checks. Refused unless inside `allowed_networks`: private, loopback, link-local, multicast,
reserved, unspecified, broadcast, shared (CGNAT 100.64/10), documentation and benchmark ranges,
cloud metadata (169.254.169.254, fd00:ec2::254), IPv6 unique-local and site-local, and IPv4
addresses in IPv6 clothing (IPv4-mapped ::ffff:a.b.c.d judged as the IPv4 address it reaches,
6to4 2002::/16 and NAT64 64:ff9b::/96 judged by the IPv4 address they embed, the deprecated
IPv4-compatible ::a.b.c.d refused). A name that resolves to some allowed and some refused
addresses is reached through the allowed ones only.

Statuses. An address or URL refused by this policy is `blocked` with an error starting
"refused: " (the fetcher, not the site, said no; retrying will not help, and the prefix tells it
from a site's 401/403). Network errors, timeouts and the deadline are `unknown`. HTTP statuses:
2xx with a readable body ok, with an empty (or blank) body empty; 404/410 not_found; 429
rate_limited; 401/403/407/451 blocked; 5xx server_error; any other unknown. A challenge page
wins over the status: Cloudflare's `cf-mitigated: challenge` header, a known interstitial title
("Just a moment...", "Attention Required! | Cloudflare", ...) on any status, captcha markers on
403/503. A 2xx whose media type is outside READABLE_TYPES is unsupported_content (body not read);
a body over `max_bytes` once decoded is too_large. A 2xx without a Content-Type is sniffed (PDF
magic, HTML markup) and unsupported_content otherwise.

Redirects are followed by hand (301/302/303/307/308 with a Location), at most `max_redirects`:
each hop's URL passes `refuse_url` and its connection the address check. `redirects` lists each
hop's target in order, so a redirected fetch has `redirects[-1] == final_url`.

Bodies are read raw (`aiter_raw`) and decoded here, never by httpx's unbounded decoders:
identity, gzip (multi-member too) and deflate (zlib-wrapped or raw) through zlib decompressobj
with an output bound of what is left of the cap plus one byte, so a gzip bomb stops at the cap,
costing at most the cap in memory. Only those codings are offered in Accept-Encoding; a server
answering with another (br, zstd, or stacked codings) gets unsupported_content.

HTTP/2: offered in ALPN on https. httpcore 1.0 does not reset a stream that is closed before
its end, so a connection with such a stream (too large, not read, timed out) is closed and the
next request opens a new one; other streams in flight on it fail (rare, with per-host pacing).

Cookies: none. The client's jar refuses every cookie, so a Set-Cookie is never sent back to any
host, the same one included: every fetch is a first visit.

Pacing: two requests to one host start at least `per_domain_interval` apart (start slots are
reserved in call order, so concurrent fetches queue fairly). A fetch waits once per host it
touches: a redirect to the same host does not wait again. `get_json` (search providers) is not
paced.

Time: `timeout_seconds` bounds each request, connect to last body byte (a redirect hop is a
request of its own); `deadline` (a time.monotonic() value) bounds the whole fetch, pacing waits
included. A pacing slot that would start after the deadline fails the fetch at once.

httpx and httpcore are imported inside functions only: `lynxc build` imports the tools module.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import time
import zlib
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from html import unescape
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl

    import httpx

STATUSES = (
    "ok",
    "challenge",
    "blocked",
    "rate_limited",
    "not_found",
    "server_error",
    "unsupported_content",
    "empty",
    "too_large",
    "unknown",
)
READABLE_TYPES = frozenset(
    {"text/html", "application/xhtml+xml", "text/plain", "text/markdown", "application/pdf"}
)
ACCEPT = (
    "text/html,application/xhtml+xml;q=0.9,text/markdown;q=0.9,text/plain;q=0.8,"
    "application/pdf;q=0.7,*/*;q=0.1"
)
ACCEPT_ENCODING = "gzip, deflate"  # only what _BoundedBody decodes under the cap
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_URL_LENGTH = 8192
# What an error or challenge page is read up to, to recognise a challenge in it.
SNIFF_BYTES = 256 * 1024
ERROR_HEAD_CHARS = 200  # of a provider's error body, in get_json's errors

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# (host, port) -> the host's addresses, as text; the system resolver unless a test injects one.
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]


@dataclass(frozen=True)
class FetchPolicy:
    allowed_networks: tuple[str, ...] = ()  # CIDRs allowed despite being private/loopback/...
    max_bytes: int = 5_000_000  # decoded body cap (a gzip bomb is too_large)
    max_redirects: int = 5
    timeout_seconds: float = 15.0  # one request, connect to last byte
    user_agent: str = "lynxc-groundhog/0.1 (+https://github.com/lynxc)"
    per_domain_interval: float = 0.0  # seconds between two requests to one host

    def __post_init__(self) -> None:
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


class AddressRefused(Exception):
    """A connection the policy forbids; raised by the guarded backend, never retried."""


class _Unsupported(Exception):
    """A body this module will not decode (an unknown content coding)."""


# ---------------------------------------------------------------- URLs


def refuse_url(url: str) -> str | None:
    """What is wrong with the URL itself, or None: only absolute http(s) URLs with a host and no
    credentials. Parsed by httpx, so the check and the request read the URL the same way."""
    import httpx

    if not isinstance(url, str) or not url.strip():
        return "empty URL"
    if len(url) > MAX_URL_LENGTH:
        return f"longer than {MAX_URL_LENGTH} characters"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return "control characters in the URL"
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as exc:
        return f"not a valid URL ({exc})"
    if not parsed.scheme:
        return "no scheme: give an absolute http or https URL"
    if parsed.scheme not in ("http", "https"):
        return f"scheme {parsed.scheme!r} is not allowed (only http and https)"
    if not parsed.host:
        return "no host"
    if parsed.userinfo:
        return "credentials in the URL are not allowed"
    if parsed.port is not None and not 1 <= parsed.port <= 65535:
        return f"port {parsed.port} is out of range (1-65535)"
    return None


def _without_query(url: str) -> str:
    """The URL for an error message: a provider's key may ride in the query."""
    return url.split("?", 1)[0].split("#", 1)[0]


# ---------------------------------------------------------------- addresses


def parse_networks(cidrs: Iterable[str]) -> tuple[Network, ...]:
    networks = []
    for cidr in cidrs:
        try:
            networks.append(ipaddress.ip_network(str(cidr).strip(), strict=False))
        except ValueError:
            raise ValueError(
                f"allowed_networks: {cidr!r} is not an IP network (e.g. '127.0.0.1/32' or '::1/128')"
            ) from None
    return tuple(networks)


def _nets(*pairs: tuple[str, str]) -> tuple[tuple[Network, str], ...]:
    return tuple((ipaddress.ip_network(cidr), kind) for cidr, kind in pairs)


# First match wins: the specific names come before the ranges that contain them.
_IPV4_REFUSED = _nets(
    ("169.254.169.254/32", "a cloud metadata address"),
    ("0.0.0.0/8", "an unspecified address"),
    ("127.0.0.0/8", "a loopback address"),
    ("10.0.0.0/8", "a private address"),
    ("172.16.0.0/12", "a private address"),
    ("192.168.0.0/16", "a private address"),
    ("100.64.0.0/10", "a shared (CGNAT) address"),
    ("169.254.0.0/16", "a link-local address"),
    ("224.0.0.0/4", "a multicast address"),
    ("255.255.255.255/32", "a broadcast address"),
    ("240.0.0.0/4", "a reserved address"),
    ("192.0.0.0/24", "a reserved address"),  # IETF protocol assignments
    ("192.0.2.0/24", "a reserved address"),  # documentation
    ("198.51.100.0/24", "a reserved address"),
    ("203.0.113.0/24", "a reserved address"),
    ("198.18.0.0/15", "a reserved address"),  # benchmarking
    ("192.88.99.0/24", "a reserved address"),  # former 6to4 relay anycast
)
_IPV6_REFUSED = _nets(
    ("fd00:ec2::254/128", "a cloud metadata address"),
    ("::/128", "an unspecified address"),
    ("::1/128", "a loopback address"),
    ("64:ff9b:1::/48", "a private address"),  # local-use NAT64
    ("fc00::/7", "a private address"),  # unique local
    ("fec0::/10", "a private address"),  # site-local (deprecated)
    ("fe80::/10", "a link-local address"),
    ("ff00::/8", "a multicast address"),
    ("100::/64", "a reserved address"),  # discard
    ("2001::/23", "a reserved address"),  # IETF protocol assignments, Teredo included
    ("2001:db8::/32", "a reserved address"),  # documentation
    ("3fff::/20", "a reserved address"),  # documentation
    ("5f00::/16", "a reserved address"),  # SRv6 SIDs
)
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def address_kind(ip: Address) -> str | None:
    """Why this address may not be reached ("a private address", ...), or None when public."""
    if isinstance(ip, ipaddress.IPv4Address):
        for network, kind in _IPV4_REFUSED:
            if ip in network:
                return kind
        return None if ip.is_global else "a reserved address"
    ip = ipaddress.IPv6Address(int(ip))  # drop a zone (fe80::1%eth0): ranges ignore it
    if ip.ipv4_mapped is not None:
        kind = address_kind(ip.ipv4_mapped)
        return None if kind is None else f"{kind} (IPv4-mapped {ip.ipv4_mapped})"
    for network, kind in _IPV6_REFUSED:
        if ip in network:
            return kind
    if ip in _IPV4_COMPATIBLE:
        return "an IPv4-compatible address (deprecated)"
    embedded, form = None, ""
    if ip in _NAT64:
        embedded, form = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), "NAT64"
    elif ip.sixtofour is not None:
        embedded, form = ip.sixtofour, "6to4"
    if embedded is not None:
        kind = address_kind(embedded)
        if kind is not None:
            return f"{kind} ({form} of {embedded})"
    return None if ip.is_global else "a reserved address"


def _is_allowed(ip: Address, allowed: Sequence[Network]) -> bool:
    candidates: list[Address] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        candidates[0] = ip = ipaddress.IPv6Address(int(ip))
        if ip.ipv4_mapped is not None:  # the socket reaches the IPv4 address itself
            candidates.append(ip.ipv4_mapped)
    return any(c in net for c in candidates for net in allowed if c.version == net.version)


def address_problem(address: str, allowed: Sequence[Network] = ()) -> str | None:
    """Why the policy refuses this address ("a loopback address"), or None when it may be
    reached: public, or inside one of the allowed networks."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return "not an IP address"
    if _is_allowed(ip, allowed):
        return None
    return address_kind(ip)


async def system_resolve(host: str, port: int) -> list[str]:
    """The host's addresses by the system resolver, in its order, each once."""
    import anyio

    infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class _GuardedConnect:
    """The body of the guarded httpcore network backend (the class itself is made at first use,
    with httpcore.AsyncNetworkBackend as its base, so that importing this module stays light).

    connect_tcp resolves once, checks every address and connects to a checked one by number."""

    def __init__(self, inner: Any, allowed: Sequence[Network], resolve: Resolver) -> None:
        self._inner = inner
        self._allowed = tuple(allowed)
        self._resolve = resolve

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> Any:
        import httpcore

        addresses = await self._addresses(host, port, timeout)
        refusals: list[str] = []
        failure: Exception | None = None
        for address in addresses:
            kind = address_problem(address, self._allowed)
            if kind is not None:
                literal = address == host
                refusals.append(
                    f"{address} is {kind}" if literal else f"{host} resolves to {address}, {kind}"
                )
                continue
            try:
                return await self._inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc  # try the host's next allowed address
        if failure is not None:
            raise failure
        raise AddressRefused(refusals[0])

    async def _addresses(self, host: str, port: int, timeout: float | None) -> list[str]:
        import anyio
        import httpcore

        try:
            ipaddress.ip_address(host)
            return [host]  # a literal: nothing to resolve
        except ValueError:
            pass
        try:
            with anyio.fail_after(timeout):
                addresses = list(await self._resolve(host, port))
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"resolving {host} timed out") from None
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc.strerror or exc}") from None
        if not addresses:
            raise httpcore.ConnectError(f"cannot resolve {host}: no address")
        return addresses

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> Any:
        raise AddressRefused("unix sockets are not used")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


@cache
def _guarded_backend_type() -> type:
    import httpcore

    return type("GuardedBackend", (_GuardedConnect, httpcore.AsyncNetworkBackend), {})


# ---------------------------------------------------------------- bodies


class _BoundedBody:
    """Decode a body chunk by chunk, keeping at most `limit` bytes of output; `feed` answers
    False as soon as the decoded body would pass the limit (zlib is never asked for more)."""

    def __init__(self, coding: str | None, limit: int) -> None:
        self._coding = coding
        self._limit = limit
        self._out = bytearray()
        self._started = False
        self._done = False  # trailing bytes after the last gzip member are ignored
        self._z = self._decompressor() if coding else None

    def _decompressor(self, raw_deflate: bool = False) -> Any:
        if self._coding in ("gzip", "x-gzip"):
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        return zlib.decompressobj(-zlib.MAX_WBITS if raw_deflate else zlib.MAX_WBITS)

    def _keep(self, data: bytes) -> bool:
        if len(self._out) + len(data) > self._limit:
            return False
        self._out += data
        return True

    def feed(self, data: bytes) -> bool:
        if self._z is None:
            return self._keep(data)
        while data and not self._done:
            room = self._limit - len(self._out) + 1  # one byte more tells "over"
            try:
                out = self._z.decompress(data, room)
            except zlib.error:
                if self._coding == "deflate" and not self._started:
                    # "deflate" is sent both zlib-wrapped (as specified) and raw: try raw.
                    self._z, self._started = self._decompressor(raw_deflate=True), True
                    continue
                raise
            self._started = True
            if not self._keep(out):
                return False
            data = self._z.unconsumed_tail
            if self._z.eof:
                data = self._z.unused_data
                if not (data and self._coding in ("gzip", "x-gzip") and data[:2] == b"\x1f\x8b"):
                    self._done = True
                    break
                self._z = self._decompressor()  # the next member of a multi-member gzip
        return True

    def body(self) -> bytes:
        return bytes(self._out)


def _coding(headers: httpx.Headers) -> str | None:
    codings = [c.strip().lower() for c in headers.get("content-encoding", "").split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if len(codings) > 1:
        raise _Unsupported(f"stacked content encodings ({', '.join(codings)}) are not supported")
    if codings and codings[0] not in ("gzip", "x-gzip", "deflate"):
        raise _Unsupported(f"content encoding {codings[0]!r} is not supported")
    return codings[0] if codings else None


async def _read_body(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """(decoded body, over the limit); an over-limit body is b"" and the rest is never read."""
    coding = _coding(response.headers)
    if coding is None:
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            return b"", True
    decoded = _BoundedBody(coding, limit)
    async for chunk in response.aiter_raw():
        if not decoded.feed(chunk):
            return b"", True
    return decoded.body(), False


async def _drain(response: httpx.Response, limit: int) -> bool:
    """Read and drop a body no one needs (a redirect's), up to `limit` raw bytes; whether it
    ended within them."""
    seen = 0
    async for chunk in response.aiter_raw():
        seen += len(chunk)
        if seen > limit:
            return False
    return True


# ---------------------------------------------------------------- classification


def media_type(content_type: str | None) -> tuple[str | None, str | None]:
    """Content-Type header -> (media type lower case without parameters, charset or None)."""
    if not content_type:
        return None, None
    main, *params = content_type.split(";")
    kind = main.strip().lower() or None
    charset = None
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            charset = value.strip().strip("\"'").lower() or None
    return kind, charset


def sniff_media_type(body: bytes) -> str | None:
    head = body[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")) or b"<html" in head or b"<body" in head:
        return "text/html"
    return None


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
CHALLENGE_TITLES = (
    "just a moment",
    "attention required",
    "checking your browser",
    "verifying you are human",
    "ddos-guard",
    "security check",
)
CAPTCHA_MARKERS = (
    b"g-recaptcha",
    b"h-captcha",
    b"hcaptcha.com",
    b"cf-turnstile",
    b"challenge-platform",
    b"/cdn-cgi/challenge",
    b"captcha-delivery.com",
    b"px-captcha",
    b"captcha",
)


def challenge_reason(http_status: int, headers: httpx.Headers | dict[str, str], body: bytes) -> str | None:
    """Why this answer is a bot challenge rather than the page, or None."""
    if str(headers.get("cf-mitigated", "")).strip().lower() == "challenge":
        return "challenge page (cf-mitigated: challenge)"
    head = body[:SNIFF_BYTES]
    found = _TITLE.search(head)
    if found:
        title = " ".join(unescape(found.group(1).decode("utf-8", "replace")).split())
        if title.lower().startswith(CHALLENGE_TITLES):
            return f"challenge page (title {title[:80]!r})"
    if http_status in (403, 503):
        lowered = head.lower()
        for marker in CAPTCHA_MARKERS:
            if marker in lowered:
                return f"challenge page (captcha marker {marker.decode()!r} on HTTP {http_status})"
    return None


def _reason(http_status: int) -> str:
    try:
        return f"HTTP {http_status} {HTTPStatus(http_status).phrase}"
    except ValueError:
        return f"HTTP {http_status}"


def status_for(http_status: int, retry_after: str | None = None) -> tuple[str, str]:
    """The page status and error of a non-2xx, non-redirect answer that is no challenge."""
    error = _reason(http_status)
    if retry_after and http_status in (429, 503):
        error += f" (Retry-After: {retry_after[:40]})"
    if http_status in (404, 410):
        return "not_found", error
    if http_status == 429:
        return "rate_limited", error
    if http_status in (401, 403, 407, 451):
        return "blocked", error
    if 500 <= http_status <= 599:
        return "server_error", error
    return "unknown", error


# ---------------------------------------------------------------- the fetcher


@dataclass(frozen=True)
class _Hop:
    http_status: int
    location: str | None = None  # set: a redirect to follow
    status: str = "unknown"
    content_type: str | None = None
    charset: str | None = None
    body: bytes = b""
    error: str | None = None


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _seconds(value: float) -> str:
    return f"{value:.3g} s"


def _describe(exc: Exception) -> str:
    """A network exception as a short sentence for `error`."""
    import httpx

    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.TimeoutException):
        return f"timed out ({text})"
    if isinstance(exc, httpx.ConnectError):
        return f"could not connect: {text}"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.LocalProtocolError):
        return f"protocol error: {text}"
    if isinstance(exc, zlib.error):
        return f"corrupt compressed body: {text}"
    return f"{type(exc).__name__}: {text}"


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
        self._http: httpx.AsyncClient | None = None
        self._pool: Any = None  # the client's httpcore pool
        self._next_start: dict[str, float] = {}  # host -> earliest monotonic start of its next request

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            from http.cookiejar import CookieJar, DefaultCookiePolicy

            import httpcore
            import httpx

            context = self._ssl_context or httpx.create_ssl_context(trust_env=False)
            limits = httpx.Limits(max_connections=64, max_keepalive_connections=16, keepalive_expiry=30)
            transport = httpx.AsyncHTTPTransport(verify=context, http2=True, trust_env=False, limits=limits)
            # httpx 0.28 takes no network backend (encode/httpx#3749 would add it): the transport's
            # pool is replaced by one with the same settings and the guarded backend.
            transport._pool = self._pool = httpcore.AsyncConnectionPool(
                ssl_context=context,
                max_connections=limits.max_connections,
                max_keepalive_connections=limits.max_keepalive_connections,
                keepalive_expiry=limits.keepalive_expiry,
                http1=True,
                http2=True,
                network_backend=_guarded_backend_type()(
                    httpcore.AnyIOBackend(), self._allowed, self._resolve
                ),
            )
            self._http = httpx.AsyncClient(
                transport=transport,
                # A jar that takes no cookie: nothing is carried to another host, or back.
                cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
                follow_redirects=False,
                trust_env=False,  # no proxy or .netrc from the environment: the check sees the real peer
                timeout=httpx.Timeout(self.policy.timeout_seconds),
                headers={
                    "User-Agent": self.policy.user_agent,
                    "Accept": ACCEPT,
                    "Accept-Encoding": ACCEPT_ENCODING,
                },
            )
        return self._http

    async def _drop_http2(self, url: httpx.URL) -> None:
        """Close the HTTP/2 connection of a response left unfinished (too large, unread, timed
        out). httpcore 1.0 sends no RST_STREAM when a stream is closed early and stops
        acknowledging its DATA, so the server goes on sending until the connection's window is
        spent, and every later stream on that connection stalls (encode/httpcore#943). Other
        streams in flight on the connection fail with it: rare, with per-host pacing."""
        import anyio
        import httpcore

        origin = httpcore.URL(scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=b"/").origin
        with anyio.move_on_after(5, shield=True):  # also after a cancelled (timed-out) request
            for connection in list(self._pool.connections if self._pool else ()):
                if connection.can_handle_request(origin) and "HTTP/2" in connection.info():
                    await connection.aclose()

    async def aclose(self) -> None:
        if self._http is not None:
            client, self._http = self._http, None
            await client.aclose()

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

    async def fetch(self, url: str, *, deadline: float | None = None) -> Fetched:
        """Fetch one page; never raises for a network or page problem (see the module docstring)."""
        import anyio
        import httpx

        redirects: list[str] = []

        def done(
            status: str, error: str | None, hop: _Hop | None = None, final: str | None = None
        ) -> Fetched:
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
            if host not in paced:
                paced.add(host)
                late = await self._pace(host, deadline)
                if late is not None:
                    return done("unknown", late)
            budget, by_deadline = self._budget(deadline)
            if budget <= 0:
                return done("unknown", f"deadline passed before {current} was requested")
            try:
                with anyio.fail_after(budget):
                    hop = await self._hop(current)
            except TimeoutError:
                # Given up before the answer's head, an HTTP/2 stream is left as open as after it.
                await self._drop_http2(httpx.URL(current))
                why = "deadline reached" if by_deadline else "timed out"
                return done("unknown", f"{why} after {_seconds(budget)}")
            except AddressRefused as exc:
                return done("blocked", f"refused: {exc}")
            except _Unsupported as exc:
                return done("unsupported_content", str(exc))
            except (httpx.HTTPError, httpx.InvalidURL, OSError, zlib.error) as exc:
                return done("unknown", _describe(exc))
            except Exception as exc:  # h11/h2 state errors a hostile server can provoke
                return done("unknown", _describe(exc))
            if hop.location is None:
                return done(hop.status, hop.error, hop)
            try:
                target = str(httpx.URL(current).join(hop.location))
            except (httpx.InvalidURL, ValueError) as exc:
                return done(
                    "unknown", f"invalid redirect Location {hop.location[:200]!r}: {exc}", hop, current
                )
            if len(redirects) >= self.policy.max_redirects:
                return done(
                    "unknown", f"too many redirects (more than {self.policy.max_redirects})", hop, current
                )
            problem = refuse_url(target)
            if problem is not None:
                return done("blocked", f"refused: redirect to {hop.location[:200]}: {problem}", hop, current)
            redirects.append(target)
            current = target

    async def _hop(self, url: str) -> _Hop:
        """One request: a redirect to follow, or the answer classified."""
        client = self._client()
        response = await client.send(client.build_request("GET", url), stream=True)
        complete = False  # the body was read to its end
        try:
            code, headers = response.status_code, response.headers
            location = headers.get("location")
            if code in REDIRECT_STATUSES and location:
                complete = await _drain(response, SNIFF_BYTES)
                return _Hop(code, location=location.strip())
            kind, charset = media_type(headers.get("content-type"))
            challenged = str(headers.get("cf-mitigated", "")).strip().lower() == "challenge"
            if 200 <= code <= 299 and not challenged:
                if kind is not None and kind not in READABLE_TYPES:
                    return _Hop(
                        code,
                        status="unsupported_content",
                        content_type=kind,
                        charset=charset,
                        error=f"media type {kind} is not read (only {', '.join(sorted(READABLE_TYPES))})",
                    )
                body, too_large = await _read_body(response, self.policy.max_bytes)
            else:
                try:  # read only to recognise a challenge: an odd coding is no reason to fail
                    body, too_large = await _read_body(response, min(self.policy.max_bytes, SNIFF_BYTES))
                except (_Unsupported, zlib.error):
                    body, too_large = b"", True
            complete = not too_large
        finally:
            await response.aclose()
            if not complete and response.http_version == "HTTP/2":
                await self._drop_http2(response.request.url)
        return _classify(code, headers, kind, charset, body, too_large, self.policy.max_bytes)

    # -- search providers

    async def get_json(
        self,
        url: str,
        *,
        params: dict[str, Any],
        headers: dict[str, str],
        deadline: float | None = None,
    ) -> tuple[int, Any]:
        """GET a provider's JSON under the same address checks and byte cap; redirects are not
        followed (the headers may hold a key). Raises FetchError, with the HTTP status and the
        start of the body for a non-2xx answer."""
        import anyio
        import httpx

        problem = refuse_url(url)
        if problem is not None:
            raise FetchError(f"refused: {problem}")
        where = _without_query(url)
        budget, by_deadline = self._budget(deadline)
        if budget <= 0:
            raise FetchError(f"deadline passed before {where} was requested")
        client = self._client()
        request = client.build_request(
            "GET", url, params=params, headers={"Accept": "application/json", **headers}
        )
        try:
            with anyio.fail_after(budget):
                response = await client.send(request, stream=True)
                too_large = True  # until the body is read to its end
                try:
                    code = response.status_code
                    if code in REDIRECT_STATUSES:
                        location = _without_query(response.headers.get("location", "?"))
                        raise FetchError(
                            f"{_reason(code)} from {where}: redirects are not followed for search "
                            f"providers (Location: {location[:200]}); configure the final URL",
                            code,
                        )
                    body, too_large = await _read_body(response, self.policy.max_bytes)
                finally:
                    await response.aclose()
                    if too_large and response.http_version == "HTTP/2":
                        await self._drop_http2(request.url)
        except TimeoutError:
            await self._drop_http2(request.url)
            why = "deadline reached" if by_deadline else "timed out"
            raise FetchError(f"{where}: {why} after {_seconds(budget)}") from None
        except AddressRefused as exc:
            raise FetchError(f"refused: {exc}") from None
        except _Unsupported as exc:
            raise FetchError(f"{where}: {exc}") from None
        except (httpx.HTTPError, httpx.InvalidURL, OSError, zlib.error) as exc:
            raise FetchError(f"{where}: {_describe(exc)}") from None
        if too_large:
            raise FetchError(
                f"{_reason(code)} from {where}: response larger than {self.policy.max_bytes} bytes", code
            )
        text = body.decode("utf-8", "replace")
        head = "".join(c if c.isprintable() else " " for c in text[:ERROR_HEAD_CHARS])
        if not 200 <= code <= 299:
            raise FetchError(f"{_reason(code)} from {where}: {head}", code)
        try:
            return code, json.loads(text)
        except ValueError:
            raise FetchError(f"{_reason(code)} from {where}: the answer is not JSON: {head}", code) from None


def _classify(
    code: int,
    headers: httpx.Headers,
    kind: str | None,
    charset: str | None,
    body: bytes,
    too_large: bool,
    max_bytes: int,
) -> _Hop:
    reason = challenge_reason(code, headers, body)
    if reason is not None:
        return _Hop(code, status="challenge", content_type=kind, charset=charset, body=body, error=reason)
    if not 200 <= code <= 299:
        status, error = status_for(code, headers.get("retry-after"))
        return _Hop(code, status=status, content_type=kind, charset=charset, error=error)
    if too_large:
        return _Hop(
            code,
            status="too_large",
            content_type=kind,
            charset=charset,
            error=f"body larger than {max_bytes} bytes (decoded)",
        )
    if not body.strip():
        return _Hop(
            code,
            status="empty",
            content_type=kind,
            charset=charset,
            error=f"{_reason(code)} with an empty body",
        )
    if kind is None:
        kind = sniff_media_type(body)
        if kind is None:
            return _Hop(
                code,
                status="unsupported_content",
                error="no Content-Type, and the body is neither HTML nor PDF",
            )
    return _Hop(code, status="ok", content_type=kind, charset=charset, body=body)

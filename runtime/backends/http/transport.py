"""Sending one request over a server's httpx pool: redirects followed by hand, bodies read with a cap.

httpx follows redirects blindly (to any host, with the Authorization header dropped but an API
key in a custom header or the query kept), so the pool never follows them and `send` does:
at most MAX_REDIRECTS hops, each to the same origin (scheme, host and port) as the request,
with the call's credentials applied to every hop by the caller's `prepare`. A redirect to
another origin is a tool error naming the host it pointed to; nothing is sent there.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from lynxc.runtime.errors import ToolError

MAX_REDIRECTS = 3
REDIRECTS = (301, 302, 303, 307, 308)

# prepare(method, url, content) -> the request to send (credentials and headers applied)
Prepare = Callable[[str, httpx.URL, bytes | None], httpx.Request]


async def send(
    client: httpx.AsyncClient, method: str, url: str, content: bytes | None, prepare: Prepare, shown: str
) -> httpx.Response:
    """The final response (streamed: the caller reads and closes it) after same-origin redirects."""
    target = httpx.URL(url)
    origin = _origin(target)
    for _hop in range(MAX_REDIRECTS + 1):
        response = await _send_one(client, prepare(method, target, content), shown)
        location = response.headers.get("location")
        if response.status_code not in REDIRECTS or location is None:
            return response
        await response.aclose()
        try:
            target = target.join(location)
        except httpx.InvalidURL:
            raise ToolError(f"{shown} redirected to a location that is not a URL") from None
        if _origin(target) != origin:
            raise ToolError(
                f"{shown} redirected to another host ({target.host}:{_port(target)}), which is not "
                "followed: credentials never leave the API's origin"
            )
        if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
            # As browsers and httpx do: the next request is a GET without the body.
            method, content = ("GET" if method != "HEAD" else "HEAD"), None
    raise ToolError(f"{shown} redirected more than {MAX_REDIRECTS} times")


async def _send_one(client: httpx.AsyncClient, request: httpx.Request, shown: str) -> httpx.Response:
    try:
        return await client.send(request, stream=True, follow_redirects=False)
    except httpx.HTTPError as err:
        # The exception's text may quote the URL (a query API key): name only the host and the kind.
        raise ToolError(
            f"{shown} could not be sent to {request.url.host}:{_port(request.url)}: {_reason(err)}"
        ) from None


async def read_capped(response: httpx.Response, cap: int, shown: str, what: str = "response") -> bytes:
    """The whole body, or a ToolError once more than `cap` bytes arrived (nothing partial is
    used). Counted after content decoding, so a small gzip bomb is cut off too."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap and "content-encoding" not in response.headers:
        await response.aclose()
        raise ToolError(_over_cap(shown, what, cap))
    chunks, size = [], 0
    try:
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > cap:
                raise ToolError(_over_cap(shown, what, cap))
            chunks.append(chunk)
    except httpx.HTTPError as err:
        raise ToolError(f"{shown}: the {what} broke off: {_reason(err)}") from None
    finally:
        await response.aclose()
    return b"".join(chunks)


async def read_start(response: httpx.Response, limit: int) -> bytes:
    """At most the first `limit` bytes of a body (for an error's excerpt); the rest is dropped."""
    data = b""
    try:
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) >= limit:
                break
    except httpx.HTTPError:
        pass  # an excerpt is a courtesy: the status already says what went wrong
    finally:
        await response.aclose()
    return data[:limit]


def _over_cap(shown: str, what: str, cap: int) -> str:
    return f"{shown}: the {what} is larger than {cap} bytes (the tool's max_response_bytes cap)"


def _origin(url: httpx.URL) -> tuple[str, str, int]:
    return url.scheme, url.host, _port(url)


def _port(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


def _reason(err: httpx.HTTPError) -> str:
    """The kind of failure (ConnectError, ReadError...) and, for connection failures, the OS's
    reason; never the URL."""
    cause = err.__cause__ or err.__context__
    detail = str(cause) if isinstance(cause, OSError) else ""
    return type(err).__name__ + (f" ({detail})" if detail else "")

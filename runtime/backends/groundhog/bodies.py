"""Read an HTTP body under a byte cap, and name its media type.

Bodies are read raw (`aiter_raw`) and decoded here, never by httpx's unbounded decoders:
identity, gzip (multi-member too) and deflate (zlib-wrapped or raw) through zlib decompressobj
with an output bound of what is left of the cap plus one byte, so a gzip bomb stops at the cap,
costing at most the cap in memory. Only those codings are offered in Accept-Encoding; a server
answering with another (br, zstd, or stacked codings) is `Unsupported`.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

ACCEPT_ENCODING = "gzip, deflate"  # only what BoundedBody decodes under the cap


class Unsupported(Exception):
    """A body this module will not decode (an unknown content coding)."""


class BoundedBody:
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


def content_coding(headers: httpx.Headers) -> str | None:
    """The one content coding to undo (gzip, x-gzip, deflate) or None; Unsupported otherwise."""
    codings = [c.strip().lower() for c in headers.get("content-encoding", "").split(",")]
    codings = [c for c in codings if c and c != "identity"]
    if len(codings) > 1:
        raise Unsupported(f"stacked content encodings ({', '.join(codings)}) are not supported")
    if codings and codings[0] not in ("gzip", "x-gzip", "deflate"):
        raise Unsupported(f"content encoding {codings[0]!r} is not supported")
    return codings[0] if codings else None


async def read_body(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """(decoded body, over the limit); an over-limit body is b"" and the rest is never read."""
    coding = content_coding(response.headers)
    if coding is None:
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > limit:
            return b"", True
    decoded = BoundedBody(coding, limit)
    async for chunk in response.aiter_raw():
        if not decoded.feed(chunk):
            return b"", True
    return decoded.body(), False


async def drain(response: httpx.Response, limit: int) -> bool:
    """Read and drop a body no one needs (a redirect's), up to `limit` raw bytes; whether it
    ended within them."""
    seen = 0
    async for chunk in response.aiter_raw():
        seen += len(chunk)
        if seen > limit:
            return False
    return True


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
    """A body without a Content-Type: PDF by its magic, HTML by its markup, else None."""
    head = body[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")) or b"<html" in head or b"<body" in head:
        return "text/html"
    return None

"""One tool call's request, built from its arguments: pure functions, no I/O.

Every argument goes exactly where http.json puts it, and none can change the request's shape:
a path value is percent-encoded as one segment (`/`, `?`, `#` and `%` included, so `../x` or
`%2e%2e` stays inside its segment) and `.`, `..` or an empty value is refused outright; a header
value with a line break, NUL or another control character is refused (it could inject a header);
query values are encoded by urlencode. The credentials are added afterwards (credentials.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

from lynxc.runtime.errors import ToolError

from .catalog import PLACEHOLDER, HttpTool

# Control characters a header value must not hold (HTAB is allowed by RFC 9110).
_HEADER_FORBIDDEN = frozenset(chr(c) for c in range(0x20) if c != 0x09) | {"\x7f"}
_DOT_SEGMENTS = ("", ".", "..")


@dataclass(frozen=True)
class Request:
    method: str
    url: str  # base URL + the tool's path, with its query: never shown in a message
    headers: list[tuple[str, str]] = field(default_factory=list)
    content: bytes | None = None
    shown: str = ""  # `GET /pets/7`: what messages name (no host, no query, no secret)


def build_request(
    tool: HttpTool, base_url: str, fixed_headers: Mapping[str, str], arguments: Mapping[str, Any]
) -> Request:
    """The request of one call; a ToolError names the argument that cannot be sent."""
    path = fill_path(tool, arguments)
    headers = list(fixed_headers.items()) + header_pairs(tool, arguments)
    content = body_bytes(tool, arguments)
    if content is not None:
        headers.append(("Content-Type", "application/json"))
    url = join_url(base_url, path, query_pairs(tool, arguments))
    return Request(tool.method, url, headers, content, shown=f"{tool.method} {path}")


def fill_path(tool: HttpTool, arguments: Mapping[str, Any]) -> str:
    """The tool's path with each placeholder replaced by its argument, encoded as one segment."""

    def segment(match: Any) -> str:
        param = tool.path_params[match[1]]
        value = arguments.get(param)
        if value is None:
            raise ToolError(f"{param}: a path parameter needs a value")
        text = scalar_text(value)
        if text in _DOT_SEGMENTS:
            shown = "an empty value" if not text else repr(text)
            raise ToolError(f"{param}: {shown} cannot be a path segment (it would change the path)")
        return quote(text, safe="")

    return PLACEHOLDER.sub(segment, tool.path)


def query_pairs(tool: HttpTool, arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(wire name, value) pairs in http.json's order: an array repeats its name, None is left out."""
    pairs: list[tuple[str, str]] = []
    for wire, param in tool.query.items():
        value = arguments.get(param)
        values = value if isinstance(value, list) else [value]
        pairs += [(wire, scalar_text(item)) for item in values if item is not None]
    return pairs


def header_pairs(tool: HttpTool, arguments: Mapping[str, Any]) -> list[tuple[str, str]]:
    pairs = []
    for wire, param in tool.headers.items():
        value = arguments.get(param)
        if value is None:
            continue
        text = scalar_text(value)
        if any(char in _HEADER_FORBIDDEN for char in text):
            raise ToolError(
                f"{param}: a header value cannot hold a line break, NUL or other control character "
                f"(header {wire})"
            )
        pairs.append((wire, text))
    return pairs


def body_bytes(tool: HttpTool, arguments: Mapping[str, Any]) -> bytes | None:
    """The JSON body: an object of the declared fields (None left out), or one parameter's value."""
    body = tool.body
    if body is None:
        return None
    if body.param is not None:
        value = arguments.get(body.param)
        return None if value is None else _json(value)
    fields = body.fields or {}
    return _json(
        {wire: arguments[param] for wire, param in fields.items() if arguments.get(param) is not None}
    )


def join_url(base_url: str, path: str, query: list[tuple[str, str]]) -> str:
    """base URL + path, the base's own query kept and the call's appended."""
    parts = urlsplit(base_url)
    full_path = parts.path.rstrip("/") + path
    extra = urlencode(query, quote_via=quote)
    joined = "&".join(part for part in (parts.query, extra) if part)
    return urlunsplit((parts.scheme, parts.netloc, full_path, joined, ""))


def check_base_url(base_url: str, where: str) -> None:
    """A base URL is an absolute http(s) URL; the message names where it came from, not its text
    (a URL may carry credentials)."""
    try:
        parts = urlsplit(base_url)
        absolute = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # e.g. a bad port
        absolute = False
    if not absolute:
        raise ToolError(f"{where} is not an absolute http:// or https:// URL")


def scalar_text(value: Any) -> str:
    """A scalar as it goes on the wire: booleans as true/false, numbers as JSON writes them."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float) or value is None:
        return json.dumps(value)
    raise ToolError(f"{json.dumps(value)[:60]} is not a string, number or boolean")


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()

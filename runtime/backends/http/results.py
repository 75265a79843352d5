"""An API's answer as the tool's structured result (pure functions, no I/O).

JSON: the body parsed, the `result` pointer (RFC 6901) applied and the value put under `wrap`;
the host then validates it against the output schema, so an API that breaks its promise is a
tool error naming the path, not a silent pass. Text: {"text", "content_type"}.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from lynxc.runtime.errors import ToolError

from .catalog import HttpTool
from .redaction import excerpt


def json_result(tool: HttpTool, body: bytes, content_type: str, shown: str, secrets: Iterable[str]) -> Any:
    if not body.strip():
        value: Any = None  # 204 No Content, or an empty 200
    else:
        try:
            value = json.loads(body)
        except ValueError:  # JSONDecodeError, or bytes that are not UTF-8
            kind = f" ({content_type})" if content_type else ""
            raise ToolError(
                f"{shown} answered a body that is not JSON{kind}: {excerpt(body, secrets)}"
            ) from None
    if tool.result is not None:
        value = pointed(value, tool.result, shown)
    if tool.wrap is not None:
        return {tool.wrap: value}
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ToolError(
            f"{shown} answered a JSON {_kind(value)}, not an object (a tool's structured result is an "
            "object: set `wrap` in the spec)"
        )
    return value


def text_result(body: bytes, content_type: str, charset: str | None) -> dict[str, str]:
    try:
        text = body.decode(charset or "utf-8", "replace")
    except LookupError:  # a charset Python does not know
        text = body.decode("utf-8", "replace")
    return {"text": text, "content_type": content_type}


def status_error(shown: str, status: int, reason: str, body: bytes, secrets: Iterable[str]) -> ToolError:
    """`GET /pets/7 answered 404 Not Found: <the body's first 300 characters>`."""
    start = excerpt(body, secrets)
    return ToolError(f"{shown} answered {status} {reason}" + (f": {start}" if start else ""))


def pointed(document: Any, pointer: str, shown: str) -> Any:
    """The value at an RFC 6901 pointer; missing -> a tool error naming the pointer."""
    value = document
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            raise ToolError(
                f"{shown} answered JSON without the value at {pointer} (the tool's result pointer)"
            )
    return value


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    return "number"

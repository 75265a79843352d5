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
from lynxc.runtime.wire_values import json_kind, pointed_value

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
            f"{shown} answered JSON that is {json_kind(value)}, not an object (a tool's structured "
            "result is an object: set `wrap` in the spec)"
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
    try:
        return pointed_value(document, pointer)
    except LookupError:
        raise ToolError(
            f"{shown} answered JSON without the value at {pointer} (the tool's result pointer)"
        ) from None

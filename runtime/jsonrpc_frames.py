"""Incoming JSON-RPC frames: strict JSON first, then the message envelope, or the error answer.

JSON text is UTF-8 (RFC 8259) with no lone surrogates and no NaN or Infinity. A frame that is
not such JSON is answered with -32700 Parse error; JSON that is not a JSON-RPC message (an
object without `jsonrpc`/`method`, an array batch, which MCP does not use) with -32600 Invalid
Request, as is a request whose `id` is not a string or an integer (MCP allows no null id, and
the SDK would take a message with an object id for a notification, answering nothing). Per
JSON-RPC 2.0 the answer's id is null unless the request's id could be read. Both transports
answer through here: stdio per line, Streamable HTTP per POST body (`http_json_bodies`).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pydantic_core
from pydantic import ValidationError


class FrameError(ValueError):
    """A frame that gets an error answer instead of being served."""

    def __init__(self, answer: types.JSONRPCError):
        super().__init__(answer.error.message)
        self.answer = answer


def strict_json(data: bytes) -> Any:
    """Parse JSON as RFC 8259 defines it; ValueError names the first problem and where."""
    # pydantic_core rejects invalid UTF-8 and lone surrogate escapes; NaN/Infinity on request.
    return pydantic_core.from_json(data, allow_inf_nan=False)


def parse_frame(data: bytes) -> types.JSONRPCMessage:
    """One JSON-RPC message from one frame, or FrameError holding its error answer."""
    try:
        decoded = strict_json(data)
    except ValueError as err:
        raise FrameError(parse_error(str(err))) from None
    if isinstance(decoded, dict) and "method" in decoded and "id" in decoded and _request_id(decoded) is None:
        raise FrameError(_invalid_request(decoded, "id must be a string or an integer"))
    try:
        return types.jsonrpc_message_adapter.validate_python(decoded, by_name=False)
    except ValidationError:
        what = (
            "send one JSON-RPC message per frame (MCP has no batches)"
            if isinstance(decoded, list)
            else "not a JSON-RPC 2.0 request, notification or response"
        )
        raise FrameError(_invalid_request(decoded, what)) from None


def parse_error(detail: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=types.ErrorData(code=types.PARSE_ERROR, message=f"Parse error: {detail}"),
    )


def _invalid_request(decoded: Any, what: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=_request_id(decoded),
        error=types.ErrorData(code=types.INVALID_REQUEST, message=f"Invalid Request: {what}"),
    )


def _request_id(decoded: Any) -> str | int | None:
    """The id of something meant as a request (it names a method), when it is a valid id."""
    if not isinstance(decoded, dict) or "method" not in decoded:
        return None
    request_id = decoded.get("id")
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None

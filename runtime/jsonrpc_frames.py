"""Incoming JSON-RPC frames: strict JSON first, then the message envelope, or the error answer.

JSON text is UTF-8 (RFC 8259) with no lone surrogates and no NaN or Infinity. A frame that is
not such JSON is answered with -32700 Parse error; JSON that is not a JSON-RPC message (an
object without `jsonrpc`/`method`, an array batch, which MCP does not use) with -32600 Invalid
Request. Per JSON-RPC 2.0 the answer's id is null unless the request's id could be read.
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
    try:
        return types.jsonrpc_message_adapter.validate_python(decoded, by_name=False)
    except ValidationError:
        raise FrameError(_invalid_request(decoded)) from None


def parse_error(detail: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=None,
        error=types.ErrorData(code=types.PARSE_ERROR, message=f"Parse error: {detail}"),
    )


def _invalid_request(decoded: Any) -> types.JSONRPCError:
    if isinstance(decoded, list):
        message = "Invalid Request: send one JSON-RPC message per frame (MCP has no batches)"
    else:
        message = "Invalid Request: not a JSON-RPC 2.0 request, notification or response"
    return types.JSONRPCError(
        jsonrpc="2.0",
        id=_request_id(decoded),
        error=types.ErrorData(code=types.INVALID_REQUEST, message=message),
    )


def _request_id(decoded: Any) -> str | int | None:
    """The id of something meant as a request (it names a method), when it is a valid id."""
    if not isinstance(decoded, dict) or "method" not in decoded:
        return None
    request_id = decoded.get("id")
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None

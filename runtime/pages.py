"""Cursor pagination of the list requests (tools/list, prompts/list, resources/list and
resources/templates/list): a cursor is the base64 of `kind:offset`, so a cursor of another list,
one past the end or one that is no cursor at all is refused with -32602 "invalid cursor"."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import TypeVar

import mcp_types as types
from mcp.shared.exceptions import MCPError

T = TypeVar("T")


def page(kind: str, items: Sequence[T], cursor: str | None, size: int) -> tuple[list[T], str | None]:
    """The page of `items` that `cursor` (None: the first) starts, and the next page's cursor
    (None after the last)."""
    start = _offset(kind, cursor, len(items))
    end = start + size
    following = base64.urlsafe_b64encode(f"{kind}:{end}".encode()).decode() if end < len(items) else None
    return list(items[start:end]), following


def _offset(kind: str, cursor: str | None, total: int) -> int:
    if cursor is None:
        return 0
    try:
        found, _, number = base64.urlsafe_b64decode(cursor.encode()).decode().partition(":")
        offset = int(number)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise MCPError(types.INVALID_PARAMS, "invalid cursor") from None
    if found != kind or not 0 <= offset <= total:
        raise MCPError(types.INVALID_PARAMS, "invalid cursor")
    return offset

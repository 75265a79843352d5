"""Opaque, tamper-evident cursors: where the last page ended, bound to the search it came from."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from lynxc.runtime.errors import ToolError


def search_key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def encode(key: str, position: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps({"k": key, **position}).encode()).decode().rstrip("=")


def decode(cursor: str, key: str) -> dict[str, Any]:
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, UnicodeDecodeError):
        raise ToolError("cursor: not a cursor this tool returned") from None
    if not isinstance(data, dict) or data.get("k") != key:
        raise ToolError("cursor: it belongs to a different search; repeat the same arguments with it")
    return data

"""Page cursors of search_records and query_records.

A cursor is opaque to clients: the urlsafe base64 of a compact JSON object naming the table
and the Lance version the first page read, the offset of the page it opens, and a hash of the
query (every parameter except `cursor` and `limit`). A later page reads the same version, so
paging while `lynxc load` replaces the data still yields every record once and none twice; a
cursor sent with other parameters is refused rather than silently paging another query. The
hash is not a signature: a cursor made by hand can only name a table of the same resource and
an offset, which the caller could have asked for anyway.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.errors import ToolError

FORMAT = 1
MAX_OFFSET = 10_000_000
EMBEDDERS = ("minilm", "static")  # the names a cursor may carry (retrieval/embedders.py)
_TABLE = re.compile(r"^(?P<resource>[a-z][a-z0-9_]*)-(?P<n>[0-9]+)$")


@dataclass(frozen=True)
class Position:
    """Where a page starts: which table, at which version, after how many records; and the
    embedder of that table's vectors (a newer load may have changed it since)."""

    table: str
    version: int
    offset: int
    embedder: str | None = None


def query_hash(arguments: Mapping[str, Any]) -> str:
    """A short hash of a query's parameters (`cursor` and `limit` excluded, whatever is passed)."""
    kept = {k: v for k, v in arguments.items() if k not in ("cursor", "limit")}
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def encode_cursor(position: Position, query: str) -> str:
    payload = {
        "f": FORMAT,
        "t": position.table,
        "v": position.version,
        "o": position.offset,
        "e": position.embedder,
        "q": query,
    }
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, query: str, resource: str) -> Position:
    """The position `cursor` names, checked to belong to `query` over the resource named
    `resource`; ToolError otherwise."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        payload = json.loads(raw.decode())
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise ToolError(_GARBLED) from None
    if not isinstance(payload, dict) or payload.get("f") != FORMAT:
        raise ToolError(_GARBLED)
    table, version, offset, embedder, hashed = (payload.get(k) for k in ("t", "v", "o", "e", "q"))
    if not (
        isinstance(table, str)
        and _TABLE.match(table)
        and _is_int(version)
        and version >= 1
        and _is_int(offset)
        and 0 <= offset <= MAX_OFFSET
        and isinstance(hashed, str)
        and (embedder is None or embedder in EMBEDDERS)
    ):
        raise ToolError(_GARBLED)
    match = _TABLE.match(table)
    assert match is not None
    if hashed != query or match["resource"] != resource:
        raise ToolError(
            "cursor: the cursor does not belong to this query: it continues a call with other "
            "parameters (only limit may change between pages); drop cursor to start this query afresh"
        )
    return Position(table, version, offset, embedder)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_GARBLED = "cursor: not a cursor this server issued (pass back page.next_cursor exactly as received)"

"""Page cursors: opaque, bound to one query, pinned to a table version; refused when garbled."""

from __future__ import annotations

import base64
import json

import pytest

from lynxc.runtime.backends.records.cursors import Position, decode_cursor, encode_cursor, query_hash
from lynxc.runtime.errors import ToolError

QUERY = {
    "tool": "query_records",
    "resource_id": "peps",
    "filters": [{"field": "status", "op": "eq", "value": "Final"}],
}


def test_round_trip() -> None:
    h = query_hash(QUERY)
    cursor = encode_cursor(Position("peps-2", 7, 40, "minilm"), h)
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    assert decode_cursor(cursor, h, "peps") == Position("peps-2", 7, 40, "minilm")


def test_limit_and_cursor_do_not_change_the_query() -> None:
    assert query_hash({**QUERY, "limit": 5, "cursor": None}) == query_hash(
        {**QUERY, "limit": 100, "cursor": "x"}
    )


def test_any_other_parameter_does() -> None:
    base = query_hash(QUERY)
    assert query_hash({**QUERY, "locales": ["fr"]}) != base
    assert query_hash({**QUERY, "filters": []}) != base
    assert query_hash({**QUERY, "resource_id": "sections"}) != base


def test_cursor_of_another_query_is_refused() -> None:
    cursor = encode_cursor(Position("peps-1", 3, 5), query_hash(QUERY))
    with pytest.raises(ToolError, match="cursor does not belong to this query"):
        decode_cursor(cursor, query_hash({**QUERY, "filters": []}), "peps")


def test_cursor_of_another_resource_is_refused() -> None:
    h = query_hash(QUERY)
    cursor = encode_cursor(Position("countries-1", 3, 5), h)
    with pytest.raises(ToolError, match="cursor does not belong to this query"):
        decode_cursor(cursor, h, "peps")


def _forge(payload: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode()


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "not a cursor!",
        "%%%",
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),
        _forge([1, 2]),
        _forge({"f": 2, "t": "peps-1", "v": 1, "o": 0, "q": "x"}),
        _forge({"f": 1, "t": "peps", "v": 1, "o": 0, "q": "x"}),
        _forge({"f": 1, "t": "peps-1", "v": 0, "o": 0, "q": "x"}),
        _forge({"f": 1, "t": "peps-1", "v": 1, "o": -1, "q": "x"}),
        _forge({"f": 1, "t": "peps-1", "v": 1, "o": True, "q": "x"}),
        _forge({"f": 1, "t": "peps-1", "v": 1, "o": 10**12, "q": "x"}),
        _forge({"f": 1, "t": "peps-1", "v": 1, "o": 0}),
        _forge({"f": 1, "t": "peps-1", "v": 1, "o": 0, "q": "x", "e": "../../evil"}),
        _forge({"f": 1, "t": "../peps-1", "v": 1, "o": 0, "q": "x"}),
    ],
)
def test_garbled_cursor_gets_a_clear_error(cursor: str) -> None:
    with pytest.raises(ToolError, match=r"^cursor: not a cursor this server issued"):
        decode_cursor(cursor, "x", "peps")

"""Shaping records: locales kept, long text cut and listed, references grafted in one batched
lookup per populated path."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from typing import Any

import pytest

from lynxc.runtime.backends.records.definitions import Resource
from lynxc.runtime.backends.records.shape import (
    Shaping,
    item,
    populate,
    populate_paths,
    shape_data,
    truncation_block,
)
from lynxc.runtime.errors import ToolError

from .tables import RESOURCES, declare, field, resource

ITEMS = RESOURCES.by_name("items")
PEOPLE = {
    "1": {"pid": 1, "name": "Ann", "bio": "A" * 30, "motto": {"en": "Carpe diem!!", "fr": "Cueille le jour"}},
    "2": {"pid": 2, "name": "Bob", "bio": "short"},
}


def test_text_cut_at_every_depth() -> None:
    data = {
        "id": "a",
        "title": "t" * 50,  # a string, never cut
        "body": "b" * 25,
        "name": {"en": "e" * 21, "fr": "f" * 20},
        "capital": {"name": "x", "note": "n" * 30},
        "parts": [{"x": "short"}, {"x": "p" * 40}],
    }
    shaped = shape_data(ITEMS.fields, data, Shaping(max_text_chars=20))
    assert shaped.data["title"] == "t" * 50
    assert shaped.data["body"] == "b" * 20
    assert shaped.data["name"] == {"en": "e" * 20, "fr": "f" * 20}
    assert shaped.data["capital"]["note"] == "n" * 20
    assert shaped.data["parts"][1]["x"] == "p" * 20
    assert shaped.cuts == [
        {"field": "body", "locale": None, "original_length": 25},
        {"field": "name", "locale": "en", "original_length": 21},
        {"field": "capital.note", "locale": None, "original_length": 30},
        {"field": "parts[1].x", "locale": None, "original_length": 40},
    ]


def test_array_of_text_elements_are_named_by_index() -> None:
    notes = declare(
        resource(
            "notes", "id", [field("id", "string"), field("lines", "array", items=field("items", "text"))]
        )
    ).by_name("notes")
    shaped = shape_data(notes.fields, {"id": "x", "lines": ["ok", "long line"]}, Shaping(max_text_chars=4))
    assert shaped.data["lines"] == ["ok", "long"]
    assert shaped.cuts == [{"field": "lines[1]", "locale": None, "original_length": 9}]


def test_no_limit_cuts_nothing() -> None:
    shaped = shape_data(ITEMS.fields, {"body": "b" * 5000}, Shaping())
    assert shaped.data["body"] == "b" * 5000 and shaped.cuts == []


def test_locales_keep_only_the_named_ones() -> None:
    data = {"name": {"en": "Apple", "fr": "Pomme", "de": "Apfel"}}
    assert shape_data(ITEMS.fields, data, Shaping(locales=frozenset({"fr", "xx"}))).data["name"] == {
        "fr": "Pomme"
    }
    assert (
        shape_data(ITEMS.fields, {"name": {"en": "a"}}, Shaping(locales=frozenset({"xx"}))).data["name"] == {}
    )


def test_locales_apply_before_the_cut() -> None:
    shaped = shape_data(ITEMS.fields, {"name": {"en": "e" * 30, "fr": "f"}}, Shaping(20, frozenset({"fr"})))
    assert shaped.cuts == []


def test_item_shape() -> None:
    row = {
        "_key": "a",
        "_revision": 3,
        "_created_at": dt.datetime(2024, 1, 2, tzinfo=dt.UTC),
        "_updated_at": dt.datetime(2024, 1, 3, 4, 5, 6, tzinfo=dt.UTC),
    }
    shaped = shape_data(ITEMS.fields, {"id": "a", "body": "x" * 30}, Shaping(20))
    out = item(row, shaped, 0.5)
    assert out == {
        "id": "a",
        "data": {"id": "a", "body": "x" * 20},
        "_sys": {
            "key": "a",
            "revision": "3",
            "created_at": "2024-01-02T00:00:00Z",
            "updated_at": "2024-01-03T04:05:06Z",
            "relevance": 0.5,
            "truncated": [{"field": "body", "locale": None, "original_length": 30}],
        },
    }
    assert "truncated" not in item(row, shape_data(ITEMS.fields, {"id": "a"}, Shaping(20)), None)["_sys"]
    assert set(item(row, shaped, None, listed=False)["_sys"]) == {
        "key",
        "revision",
        "created_at",
        "updated_at",
    }


def test_truncation_block() -> None:
    assert truncation_block(None, False) is None
    block = truncation_block(2000, True)
    assert block is not None and block["applied"] is True and block["max_text_chars"] == 2000
    assert "get_record" in block["note"]


# --- populate -------------------------------------------------------------------------------


def test_populate_paths_are_checked() -> None:
    assert [p.path for p in populate_paths(ITEMS, ["author", "friends", "author"])] == ["author", "friends"]
    with pytest.raises(
        ToolError,
        match=r"populate\.0: 'autor' is not a reference field of 'items' \(did you mean 'author'\?\)",
    ):
        populate_paths(ITEMS, ["autor"])
    with pytest.raises(
        ToolError, match=r"populate\.1: 'title' is not a reference field.*references: author, friends"
    ):
        populate_paths(ITEMS, ["author", "title"])
    with pytest.raises(ToolError, match=r"populate\.0: 'people' has no reference fields"):
        populate_paths(RESOURCES.by_name("people"), ["name"])


class Lookups:
    """A fetch that answers from PEOPLE and records every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    async def __call__(self, target: Resource, keys: list[str]) -> dict[str, Any]:
        self.calls.append((target.name, keys))
        return {k: json.loads(json.dumps(PEOPLE[k])) for k in keys if k in PEOPLE}


def _populate(records: list[dict[str, Any]], names: list[str], shaping: Shaping) -> tuple[list, Lookups]:
    fetch = Lookups()
    cuts: list[list[dict[str, Any]]] = [[] for _ in records]
    asyncio.run(populate(RESOURCES, records, cuts, populate_paths(ITEMS, names), shaping, fetch))
    return cuts, fetch


def test_populate_batches_one_lookup_per_path() -> None:
    records = [{"id": str(i), "author": 1 + i % 3, "friends": [1, 2, 9]} for i in range(30)]
    cuts, fetch = _populate(records, ["author", "friends"], Shaping(10))
    assert fetch.calls == [("people", ["1", "2", "3"]), ("people", ["1", "2", "9"])]
    assert records[0]["author"]["name"] == "Ann" and records[1]["author"]["name"] == "Bob"
    assert records[2]["author"] == 3  # dangling: the key stays
    assert [f if isinstance(f, int) else f["pid"] for f in records[0]["friends"]] == [1, 2, 9]
    assert records[0]["author"]["bio"] == "A" * 10
    assert {"field": "author.bio", "locale": None, "original_length": 30} in cuts[0]
    assert {"field": "friends[0].bio", "locale": None, "original_length": 30} in cuts[0]
    assert {"field": "friends[0].motto", "locale": "fr", "original_length": 15} in cuts[0]
    assert not any(c["field"].startswith("author") for c in cuts[1])


def test_populated_records_keep_only_the_named_locales() -> None:
    records = [{"id": "a", "author": 1}]
    _populate(records, ["author"], Shaping(None, frozenset({"en"})))
    assert records[0]["author"]["motto"] == {"en": "Carpe diem!!"}
    assert records[0]["author"]["bio"] == "A" * 30  # no limit: nothing cut


def test_nothing_to_populate_makes_no_lookup() -> None:
    records = [{"id": "a"}, {"id": "b", "friends": []}]
    _, fetch = _populate(records, ["author", "friends"], Shaping(10))
    assert fetch.calls == []

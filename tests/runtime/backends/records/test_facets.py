"""page.total, facets, sort on one locale and the frames query_records runs in (frame.py), over
a real store: every count checked against the records counted in Python, the frame's answers
against the Lance path's where a filter reads long text."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from lynxc.runtime.backends.records import frame as frames
from lynxc.runtime.backends.records import tools
from lynxc.runtime.backends.records.facets import MAX_FACET_SIZE, parse_facets
from lynxc.runtime.errors import ToolError

from .tables import RESOURCES, add_records, write_store
from .test_query import ITEMS, PEOPLE, SECTIONS, Params, context, ids, make_item


class FacetParams(Params):
    facets: list[str] | None = None
    facet_size: int | None = None


@pytest.fixture
def store(tmp_path: Path) -> Path:
    write_store(tmp_path, RESOURCES, {"items": ITEMS, "people": PEOPLE, "sections": SECTIONS})
    return tmp_path


def call(fn: Any, data_dir: Path, **params: Any) -> Any:
    return asyncio.run(fn(FacetParams(**params), context(data_dir)))


def top(counter: Counter, size: int = 10) -> list[dict[str, Any]]:
    ordered = sorted(counter.items(), key=lambda vn: (-vn[1], vn[0]))
    return [{"value": v, "count": n} for v, n in ordered[:size]]


def test_total_is_exact_and_counts_every_page(store: Path) -> None:
    result = call(tools.query_records, store, filters=[{"field": "status", "value": "Final"}], limit=3)
    finals = [r for r in ITEMS if r["status"] == "Final"]
    assert result["page"]["total"] == len(finals) and result["page"]["total_relation"] == "eq"
    following = call(
        tools.query_records,
        store,
        filters=[{"field": "status", "value": "Final"}],
        limit=3,
        cursor=result["page"]["next_cursor"],
    )
    assert following["page"]["total"] == len(finals)
    assert call(tools.query_records, store)["page"]["total"] == 40
    none = call(tools.query_records, store, filters=[{"field": "count", "op": "gt", "value": 99}])
    assert none["page"]["total"] == 0 and none["items"] == []


def test_facets_count_under_the_filters(store: Path) -> None:
    selected = [r for r in ITEMS if r.get("count") is not None and r["count"] >= 2]
    result = call(
        tools.query_records,
        store,
        filters=[{"field": "count", "op": "gte", "value": 2}],
        facets=["status", "author", "friends", "count"],
        facet_size=2,
        limit=1,
    )
    facets = result["facets"]
    assert facets["status"] == {
        "values": top(Counter(r["status"] for r in selected), 2),
        "distinct": 2,
        "missing": 0,
    }
    assert facets["author"]["values"] == top(Counter(r["author"] for r in selected), 2)
    friends = Counter(f for r in selected for f in set(r["friends"]))
    assert facets["friends"] == {
        "values": top(friends, 2),
        "distinct": len(friends),
        "missing": sum(1 for r in selected if not r["friends"]),
    }
    assert facets["count"]["values"] == top(Counter(r["count"] for r in selected), 2)
    assert facets["count"]["distinct"] == len({r["count"] for r in selected}) > 2


def test_facets_count_missing_values(store: Path) -> None:
    result = call(tools.query_records, store, facets=["count", "title"], facet_size=MAX_FACET_SIZE)
    assert result["facets"]["count"]["missing"] == sum(1 for r in ITEMS if "count" not in r)
    assert result["facets"]["title"]["distinct"] == 40 and len(result["facets"]["title"]["values"]) == 40


def test_search_total_and_facets_cover_the_ranking(store: Path) -> None:
    result = call(
        tools.search_records, store, query="jazz saxophone", search_type="text", facets=["status"], limit=2
    )
    jazz = [r for r in ITEMS if "jazz" in r["title"]]
    assert result["page"]["total"] == len(jazz) and result["page"]["total_relation"] == "eq"
    assert result["facets"]["status"]["values"] == top(Counter(r["status"] for r in jazz))
    nothing = call(tools.search_records, store, query="zzzz", search_type="text", facets=["status"])
    assert nothing["page"]["total"] == 0 and nothing["facets"]["status"] == {
        "values": [],
        "distinct": 0,
        "missing": 0,
    }


@pytest.mark.parametrize(
    ("facets", "size", "message"),
    [
        (["body"], None, r"^facets\.0: 'body' is a text field; facets count exact values of enum"),
        (["status", "name.fr"], None, r"^facets\.1: 'name\.fr' is one locale of a localized field"),
        (["score"], None, r"^facets\.0: 'score' is a number field"),
        (["day"], None, r"^facets\.0: 'day' is a date field"),
        (["stauts"], None, r"^facets\.0: 'items' has no field 'stauts' \(did you mean 'status'\?\)"),
        (["status"] * 9, None, r"^facets: at most 8 fields, not 9"),
        (["status"], 0, r"^facet_size: an integer from 1 to 50, not 0"),
        (["status"], 51, r"^facet_size: an integer from 1 to 50"),
    ],
)
def test_facet_errors(facets: list[str], size: int | None, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        parse_facets(RESOURCES.by_name("items"), facets, size)


def test_sort_on_one_locale_ignores_case_and_accents(tmp_path: Path) -> None:
    names = ["Zèbre", "arbre", "Ébène", "zoo", "Abricot", "école", "Eau"]
    records = [{**make_item(i), "name": {"fr": name, "en": f"n{i}"}} for i, name in enumerate(names)]
    records.append({**make_item(99), "name": {"en": "only English"}})
    write_store(tmp_path, RESOURCES, {"items": records, "people": PEOPLE})
    ascending = call(tools.query_records, tmp_path, sort=[{"field": "name.fr"}], locales=["fr"], limit=20)
    order = [item["data"]["name"].get("fr") for item in ascending["items"]]
    assert order == ["Abricot", "arbre", "Eau", "Ébène", "école", "Zèbre", "zoo", None]
    descending = call(
        tools.query_records, tmp_path, sort=[{"field": "name.fr", "order": "desc"}], locales=["fr"], limit=20
    )
    assert [item["data"]["name"].get("fr") for item in descending["items"]] == [*reversed(order[:-1]), None]
    chosen = call(
        tools.query_records,
        tmp_path,
        filters=[{"field": "name.fr", "op": "in", "value": ["zoo", "Eau", "eau"]}],
    )
    assert sorted(item["data"]["name"]["fr"] for item in chosen["items"]) == ["Eau", "zoo"]  # in is exact


def test_a_filter_on_long_text_runs_in_lance_and_counts_alike(store: Path) -> None:
    """`body` is not in the frame: Lance selects the keys, the frame orders and counts them."""
    arguments = {
        "filters": [
            {"field": "body", "op": "contains", "value": "JAZZ"},
            {"field": "status", "value": "Final"},
        ],
        "facets": ["author"],
        "sort": [{"field": "title", "order": "desc"}],
        "limit": 100,
    }
    result = call(tools.query_records, store, **arguments)
    expected = [r for r in ITEMS if "jazz" in r["body"].lower() and r["status"] == "Final"]
    assert ids(result) == [r["id"] for r in sorted(expected, key=lambda r: r["title"], reverse=True)]
    assert result["page"]["total"] == len(expected)
    assert result["facets"]["author"]["values"] == top(Counter(r["author"] for r in expected))


def test_a_new_version_gets_its_own_frame_and_old_ones_are_dropped(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = call(tools.query_records, store, limit=1)
    assert first["page"]["total"] == 40
    add_records(store, RESOURCES, "items", [make_item(i) for i in range(40, 45)])
    monkeypatch.setattr(frames, "FRAMES", 1)
    assert call(tools.query_records, store, limit=1)["page"]["total"] == 45
    with frames._lock:
        assert len(frames._frames) == 1
    # The first page's cursor reads the version it started on: its frame is read again.
    again = call(tools.query_records, store, limit=1, cursor=first["page"]["next_cursor"])
    assert again["page"]["total"] == 40


def test_an_empty_resource_has_an_empty_frame(tmp_path: Path) -> None:
    write_store(tmp_path, RESOURCES, {"items": [], "people": PEOPLE})
    result = call(tools.query_records, tmp_path, facets=["status"], sort=[{"field": "name.fr"}])
    assert result["items"] == [] and result["page"]["total"] == 0
    assert result["facets"]["status"] == {"values": [], "distinct": 0, "missing": 0}


def frame_tables() -> int:
    [(count,)] = (
        frames.duckdb()
        .execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'frame_%'")
        .fetchall()
    )
    return count


def test_concurrent_first_queries_read_one_frame(store: Path) -> None:
    before = frame_tables()

    async def both() -> list[Any]:
        ctx = context(store)
        return await asyncio.gather(
            tools.query_records(FacetParams(limit=1), ctx),
            tools.query_records(FacetParams(limit=2, facets=["status"]), ctx),
        )

    first, second = asyncio.run(both())
    assert first["page"]["total"] == second["page"]["total"] == 40
    assert frame_tables() == before + 1


def test_a_frame_evicted_while_in_use_is_dropped_after(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lynxc.runtime.backends.records.frame import Selection, run

    call(tools.query_records, store, limit=1)
    with frames._lock:
        frame = next(reversed(frames._frames.values()))
        frames._in_use[frame.name] = 1  # a query on it is running
    add_records(store, RESOURCES, "items", [make_item(40)])
    monkeypatch.setattr(frames, "FRAMES", 1)
    assert call(tools.query_records, store, limit=1)["page"]["total"] == 41  # evicts the first
    with frames._lock:
        assert frame.name in frames._doomed
        frames._in_use[frame.name] = 0  # that query ends: the next use of it drops it
    assert run(Selection(frame), ["SELECT count(*) FROM records"]) == [[(40,)]]
    with frames._lock:
        assert frame.name not in frames._doomed and frame.name not in frames._in_use
    with pytest.raises(Exception, match="frame_"):
        run(Selection(frame), ["SELECT count(*) FROM records"])


def test_describe_says_which_fields_facet(store: Path) -> None:
    fields = {f["path"]: f for f in call(tools.describe_resource, store)["fields"]}
    assert [p for p, f in fields.items() if f["facetable"]] == [
        "id",
        "title",
        "status",
        "count",
        "flag",
        "tags",
        "nums",
        "kinds",
        "author",
        "friends",
        "capital.name",
        "capital.population",
    ]


def test_the_last_page_counts_itself(store: Path) -> None:
    first = call(tools.query_records, store, limit=30)
    last = call(tools.query_records, store, limit=30, cursor=first["page"]["next_cursor"])
    assert (last["page"]["returned"], last["page"]["has_more"], last["page"]["total"]) == (10, False, 40)
    beyond = call(tools.query_records, store, filters=[{"field": "status", "value": "Final"}], limit=100)
    assert beyond["page"]["total"] == 20


class GetParams(FacetParams):
    include: list[str] | None = None
    include_limit: int | None = None


def test_get_record_includes_children_under_an_integer_key(store: Path) -> None:
    ctx = context(store)
    params = GetParams(resource_id="people", record_id="1", include=["sections"], include_limit=2)
    result = asyncio.run(tools.get_record(params, ctx))
    mine = sorted((s for s in SECTIONS if s["person"] == 1), key=lambda s: (s["n"], s["sid"]))
    children = result["included"]["sections"]
    assert (children["total"], children["has_more"]) == (len(mine), True)
    assert [item["id"] for item in children["items"]] == [s["sid"] for s in mine[:2]]
    with pytest.raises(ToolError, match=r"^include\.0: 'items' is not a resource nested under 'people'"):
        asyncio.run(tools.get_record(GetParams(resource_id="people", record_id="1", include=["items"]), ctx))
    with pytest.raises(ToolError, match=r"^include_limit: an integer from 1 to 50, not 0"):
        asyncio.run(tools.get_record(GetParams(resource_id="people", record_id="1", include_limit=0), ctx))

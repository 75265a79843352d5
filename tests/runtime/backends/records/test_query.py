"""The five records backends over a real store (Lance tables + CURRENT.json in the contract §4
layout): query_records' order and paging, the four search types, get_record, discover and
describe, cursors across a load, and the errors a client can act on."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from lynxc.runtime.backends.records import tools
from lynxc.runtime.backends.records.cursors import Position, encode_cursor
from lynxc.runtime.backends.records.search import BOOSTED, FIRST_PAGE
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

from .tables import RESOURCES, add_records, declare, field, resource, write_store

TOPICS = [
    "garden flowers and roses",
    "python programming language",
    "ocean waves and surfing",
    "mountain climbing in winter",
    "baking bread with yeast",
    "jazz music and saxophone",
    "chess openings strategy",
    "solar panels energy",
]


def make_item(i: int) -> dict[str, Any]:
    topic = TOPICS[i % len(TOPICS)]
    record: dict[str, Any] = {
        "id": f"i{i:02d}",
        "title": f"Note {i} on {topic}",
        "body": f"All about {topic}. " + "More words follow here. " * 3,
        "name": {"en": f"Item {i}", "fr": f"Objet {i}"},
        "status": "Final" if i % 2 else "Draft",
        "author": 1 + i % 3,
        "friends": [1, 2] if i % 4 == 0 else [],
    }
    if i % 10:
        record["count"] = i % 7
    if i % 5:
        record["day"] = f"2020-{1 + i % 12:02d}-{1 + i % 28:02d}"
        record["at"] = f"2021-03-04T{i % 24:02d}:00:00+01:00"
    return record


ITEMS = [make_item(i) for i in range(40)]
PEOPLE = [
    {
        "pid": 1,
        "name": "Ann",
        "bio": "Ann writes about gardens and bread.",
        "motto": {"en": "Grow", "fr": "Pousse"},
    },
    {"pid": 2, "name": "Bob", "bio": "Bob plays jazz."},
]
SECTIONS = [
    {"sid": f"i0{i}-{p}-{n}", "item": f"i0{i}", "person": p, "n": n, "title": f"Part {n} of i0{i}"}
    for i in range(3)
    for p in (1, 2)
    for n in (1, 2)
]


class Params(BaseModel):
    """Stands in for the generated input models (all the list and get parameters)."""

    resource_id: str = "items"
    parents: dict[str, str] | None = None
    filters: list[dict[str, Any]] | None = None
    sort: list[dict[str, Any]] | None = None
    locales: list[str] | None = None
    populate: list[str] | None = None
    limit: int = 5
    cursor: str | None = None
    query: str = ""
    search_type: str = "hybrid"
    record_id: str = ""


@pytest.fixture
def store(tmp_path: Path) -> Path:
    write_store(tmp_path, RESOURCES, {"items": ITEMS, "people": PEOPLE, "sections": SECTIONS})
    return tmp_path


def context(data_dir: Path, resources: Any = RESOURCES) -> ToolContext:
    server = SimpleNamespace(name="test-server", records=lambda: resources)
    return ToolContext(
        tool="t",
        caps={"max_limit": 100},
        settings={"data_dir": str(data_dir), "embedder": "static"},
        server=server,
    )


def call(fn: Any, data_dir: Path, resources: Any = RESOURCES, **params: Any) -> Any:
    return asyncio.run(fn(Params(**params), context(data_dir, resources)))


def ids(result: dict[str, Any]) -> list[str]:
    return [i["id"] for i in result["items"]]


def default_order(records: list[dict[str, Any]]) -> list[str]:
    """items' default order: count descending, missing counts last, then the key."""
    return [
        r["id"]
        for r in sorted(records, key=lambda r: (r.get("count") is None, -(r.get("count") or 0), r["id"]))
    ]


# --- query_records --------------------------------------------------------------------------


def test_query_default_order_and_shape(store: Path) -> None:
    result = call(tools.query_records, store, limit=8)
    assert ids(result) == default_order(ITEMS)[:8]
    first = result["items"][0]
    assert first["_sys"]["relevance"] is None
    assert first["_sys"]["revision"] == "1" and first["_sys"]["created_at"].endswith("Z")
    assert first["data"]["body"] == make_item(int(first["id"][1:]))["body"][:20]
    assert first["_sys"]["truncated"] == [
        {"field": "body", "locale": None, "original_length": len(make_item(int(first["id"][1:]))["body"])}
    ]
    assert result["truncation"]["applied"] is True and result["truncation"]["max_text_chars"] == 20
    assert result["page"] == {
        "has_more": True,
        "returned": 8,
        "limit": 8,
        "next_cursor": result["page"]["next_cursor"],
        "previous_cursor": None,
        "total": 40,
        "total_relation": "eq",
    }
    assert "execution_info" not in result


def test_query_pages_cover_everything_once(store: Path) -> None:
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        result = call(tools.query_records, store, limit=7, cursor=cursor)
        seen += ids(result)
        pages += 1
        if pages > 1:
            assert result["page"]["previous_cursor"] is not None
        cursor = result["page"]["next_cursor"]
        assert result["page"]["has_more"] is (cursor is not None)
        if cursor is None:
            break
    assert seen == default_order(ITEMS)
    assert pages == 6


def test_has_more_is_exact_on_a_full_last_page(store: Path) -> None:
    first = call(tools.query_records, store, limit=20)
    second = call(tools.query_records, store, limit=20, cursor=first["page"]["next_cursor"])
    assert second["page"]["returned"] == 20
    assert second["page"]["has_more"] is False and second["page"]["next_cursor"] is None
    back = call(tools.query_records, store, limit=20, cursor=second["page"]["previous_cursor"])
    assert ids(back) == ids(first)


def test_limit_may_change_between_pages(store: Path) -> None:
    first = call(tools.query_records, store, limit=5)
    rest = call(tools.query_records, store, limit=100, cursor=first["page"]["next_cursor"])
    assert ids(first) + ids(rest) == default_order(ITEMS)


def test_cursor_of_another_query_is_refused(store: Path) -> None:
    first = call(tools.query_records, store, limit=5)
    with pytest.raises(ToolError, match="cursor does not belong to this query"):
        call(
            tools.query_records,
            store,
            limit=5,
            cursor=first["page"]["next_cursor"],
            filters=[{"field": "count", "op": "exists"}],
        )
    with pytest.raises(ToolError, match="cursor does not belong to this query"):
        call(tools.search_records, store, query="x", cursor=first["page"]["next_cursor"])


def test_sort_and_filters(store: Path) -> None:
    result = call(
        tools.query_records,
        store,
        filters=[{"field": "status", "value": "Final"}, {"field": "count", "op": "gte", "value": 3}],
        sort=[{"field": "count", "order": "asc"}, {"field": "title", "order": "desc"}],
        limit=100,
    )
    expected = sorted(
        (r for r in ITEMS if r["status"] == "Final" and r.get("count", -1) >= 3),
        key=lambda r: r["title"],
        reverse=True,
    )
    expected.sort(key=lambda r: r["count"])
    assert ids(result) == [r["id"] for r in expected]
    assert result["page"]["has_more"] is False


def test_sort_by_dates(store: Path) -> None:
    by_day = call(tools.query_records, store, sort=[{"field": "day"}], limit=100)
    dated = sorted((r for r in ITEMS if "day" in r), key=lambda r: (r["day"], r["id"]))
    undated = sorted(r["id"] for r in ITEMS if "day" not in r)
    assert ids(by_day) == [r["id"] for r in dated] + undated  # missing values last
    by_time = call(tools.query_records, store, sort=[{"field": "at", "order": "desc"}], limit=100)
    timed = sorted((r for r in ITEMS if "at" in r), key=lambda r: (r["at"], r["id"]), reverse=True)
    # equal times keep the key order (ascending) whatever the direction
    expected = sorted(timed, key=lambda r: r["id"])
    expected.sort(key=lambda r: r["at"], reverse=True)
    assert ids(by_time)[: len(timed)] == [r["id"] for r in expected]


def test_sort_errors(store: Path) -> None:
    with pytest.raises(
        ToolError, match=r"sort\.0\.field: 'body' cannot be sorted on \(text\); sortable: id, title"
    ):
        call(tools.query_records, store, sort=[{"field": "body"}])
    with pytest.raises(ToolError, match=r"sort\.1\.field: 'tags' cannot be sorted on \(string in an array\)"):
        call(tools.query_records, store, sort=[{"field": "count"}, {"field": "tags"}])
    with pytest.raises(
        ToolError, match=r"sort\.0\.field: 'items' has no field 'cuont' \(did you mean 'count'\?\)"
    ):
        call(tools.query_records, store, sort=[{"field": "cuont"}])
    with pytest.raises(ToolError, match=r"sort\.0\.field: 'name' cannot be sorted on \(localized\)"):
        call(tools.query_records, store, sort=[{"field": "name"}])


def test_query_populate_and_locales(store: Path) -> None:
    result = call(
        tools.query_records,
        store,
        filters=[{"field": "id", "value": "i00"}],
        populate=["author", "friends"],
        locales=["fr"],
    )
    [record] = result["items"]
    assert record["data"]["name"] == {"fr": "Objet 0"}
    assert record["data"]["author"]["name"] == "Ann"
    assert record["data"]["author"]["motto"] == {"fr": "Pousse"}
    assert record["data"]["author"]["bio"] == PEOPLE[0]["bio"][:20]
    assert [f["pid"] for f in record["data"]["friends"]] == [1, 2]
    assert {"field": "author.bio", "locale": None, "original_length": len(PEOPLE[0]["bio"])} in record[
        "_sys"
    ]["truncated"]


def test_dangling_reference_stays_a_key(store: Path) -> None:
    result = call(tools.query_records, store, filters=[{"field": "id", "value": "i02"}], populate=["author"])
    assert result["items"][0]["data"]["author"] == 3


def test_populate_is_one_lookup_per_field(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, int]] = []
    real = tools.fetch_records

    async def counting(store_: Any, target: Any, keys: list[str], visible: Any) -> Any:
        calls.append((target.name, len(keys)))
        return await real(store_, target, keys, visible)

    monkeypatch.setattr(tools, "fetch_records", counting)
    result = call(tools.query_records, store, populate=["author", "friends"], limit=100)
    assert result["page"]["returned"] == 40
    assert calls == [("people", 3), ("people", 2)]


# --- paging while a load runs ---------------------------------------------------------------


def test_cursor_reads_the_version_it_started_on(store: Path) -> None:
    first = call(tools.query_records, store, limit=10)
    # a load adds records that sort first, and moves the pointer
    newcomers = [{**make_item(100 + i), "id": f"new{i}", "count": 99} for i in range(5)]
    add_records(store, RESOURCES, "items", newcomers)
    seen = ids(first)
    cursor = first["page"]["next_cursor"]
    while cursor:
        page = call(tools.query_records, store, limit=10, cursor=cursor)
        seen += ids(page)
        cursor = page["page"]["next_cursor"]
    assert seen == default_order(ITEMS)  # every record of the old version once, none twice
    fresh = call(tools.query_records, store, limit=5)
    assert ids(fresh) == [f"new{i}" for i in range(5)]


def test_cursor_of_a_version_no_longer_kept(store: Path) -> None:
    first = call(tools.query_records, store, limit=5)
    raw = first["page"]["next_cursor"]
    payload = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
    stale = encode_cursor(Position("items-1", 999, 5, "static"), payload["q"])
    with pytest.raises(
        ToolError, match=r"cursor: the data it pages was replaced by a newer load .*run the query again"
    ):
        call(tools.query_records, store, limit=5, cursor=stale)


# --- search_records -------------------------------------------------------------------------


def _topic(record_id: str) -> str:
    return TOPICS[int(record_id[1:]) % len(TOPICS)]


def test_text_search(store: Path) -> None:
    result = call(tools.search_records, store, query="saxophone", search_type="text", limit=100)
    assert result["execution_info"]["applied_search_type"] == "text"
    assert set(ids(result)) == {r["id"] for r in ITEMS if "saxophone" in r["title"]}
    assert all(0 <= i["_sys"]["relevance"] <= 1 for i in result["items"])


def test_semantic_search(store: Path) -> None:
    result = call(tools.search_records, store, query="roses flowers garden", search_type="semantic", limit=5)
    assert result["execution_info"]["applied_search_type"] == "semantic"
    assert result["page"]["returned"] == 5 and result["page"]["has_more"] is True
    assert _topic(ids(result)[0]) == "garden flowers and roses"
    relevances = [i["_sys"]["relevance"] for i in result["items"]]
    assert relevances == sorted(relevances, reverse=True)
    assert all(0 <= r <= 1 for r in relevances)


def test_hybrid_search(store: Path) -> None:
    result = call(tools.search_records, store, query="surfing ocean waves", limit=5)
    assert result["execution_info"]["applied_search_type"] == "hybrid"
    assert {_topic(i) for i in ids(result)} == {"ocean waves and surfing"}


def test_vector_boosted(store: Path) -> None:
    """Every text match, in text's order, but for the BOOSTED closest by meaning lifted to the
    top; text's best hit stays on the first page; relevance never rises along the list."""
    result = call(tools.search_records, store, query="bread yeast", search_type="vector_boosted", limit=100)
    text = call(tools.search_records, store, query="bread yeast", search_type="text", limit=100)
    assert result["execution_info"]["applied_search_type"] == "vector_boosted"
    matching = [r for r in ITEMS if "bread" in r["title"] or "yeast" in r["title"]]
    assert set(ids(result)) == set(ids(text)) == {r["id"] for r in matching}
    similarities = {i["id"]: i["_sys"]["similarity"] for i in result["items"]}
    lifted, rest = ids(result)[:BOOSTED], ids(result)[BOOSTED:]
    assert min(similarities[k] for k in lifted) >= max(similarities[k] for k in rest)
    assert rest == [k for k in ids(text) if k in rest]
    assert ids(text)[0] in ids(result)[:FIRST_PAGE]
    relevances = [i["_sys"]["relevance"] for i in result["items"]]
    assert relevances == sorted(relevances, reverse=True)


def test_vector_boosted_without_vectors_is_text_and_says_so(store: Path) -> None:
    boosted = call(
        tools.search_records, store, resource_id="people", query="jazz", search_type="vector_boosted"
    )
    text = call(tools.search_records, store, resource_id="people", query="jazz", search_type="text")
    assert boosted["execution_info"]["applied_search_type"] == "text"
    assert "no embeddings to boost by" in boosted["execution_info"]["search_mode"]
    assert boosted["items"] == text["items"]


@pytest.mark.parametrize("search_type", ["text", "semantic", "hybrid", "vector_boosted"])
def test_relevance_is_the_order_and_similarity_the_cosine(store: Path, search_type: str) -> None:
    result = call(tools.search_records, store, query="winter climbing", search_type=search_type, limit=100)
    relevances = [i["_sys"]["relevance"] for i in result["items"]]
    assert relevances and relevances == sorted(relevances, reverse=True)
    assert all(0 <= r <= 1 for r in relevances)
    similarities = {i["id"]: i["_sys"]["similarity"] for i in result["items"]}
    assert all(0 <= s <= 1 for s in similarities.values())
    if search_type == "semantic":
        assert relevances == [similarities[k] for k in ids(result)]
    semantic = call(tools.search_records, store, query="winter climbing", search_type="semantic", limit=100)
    same = {i["id"]: i["_sys"]["similarity"] for i in semantic["items"]}
    assert all(same[k] == s for k, s in similarities.items() if k in same)  # one cosine per record


def test_vector_boosted_keeps_text_matches_only(store: Path) -> None:
    mixed = call(
        tools.search_records, store, query="bread saxophone", search_type="vector_boosted", limit=100
    )
    assert {_topic(i) for i in ids(mixed)} == {"baking bread with yeast", "jazz music and saxophone"}
    nothing = call(tools.search_records, store, query="zebra quasar", search_type="vector_boosted")
    assert nothing["items"] == []


def test_search_filters_apply_before_ranking(store: Path) -> None:
    result = call(
        tools.search_records,
        store,
        query="jazz saxophone",
        search_type="text",
        filters=[{"field": "id", "op": "in", "value": ["i05", "i13", "i00"]}],
    )
    assert sorted(ids(result)) == ["i05", "i13"]


def test_search_pages_are_disjoint(store: Path) -> None:
    everything = call(tools.search_records, store, query="winter climbing", limit=100)
    first = call(tools.search_records, store, query="winter climbing", limit=6)
    second = call(
        tools.search_records, store, query="winter climbing", limit=6, cursor=first["page"]["next_cursor"]
    )
    assert ids(first) + ids(second) == ids(everything)[:12]


def test_search_on_a_resource_without_vectors(store: Path) -> None:
    semantic = call(tools.search_records, store, resource_id="people", query="jazz", search_type="semantic")
    assert semantic["items"] == [] and semantic["execution_info"]["applied_search_type"] == "none"
    assert "no embeddings" in semantic["execution_info"]["search_mode"]
    hybrid = call(tools.search_records, store, resource_id="people", query="jazz")
    assert ids(hybrid) == ["2"] and hybrid["execution_info"]["applied_search_type"] == "text"
    assert 0 < hybrid["items"][0]["_sys"]["relevance"] < 1


def test_search_nested_resource(store: Path) -> None:
    result = call(
        tools.search_records, store, resource_id="items/i01/people/2/sections", query="part", limit=10
    )
    assert sorted(ids(result)) == ["i01-2-1", "i01-2-2"]
    same = call(
        tools.search_records,
        store,
        resource_id="items/{item}/people/{person}/sections",
        parents={"item": "i01", "person": "2"},
        query="part",
        limit=10,
    )
    assert ids(same) == ids(result)


# --- get_record -----------------------------------------------------------------------------


def test_get_record_is_whole(store: Path) -> None:
    result = call(tools.get_record, store, record_id="i03", populate=["author"], locales=["en"])
    assert result["id"] == "i03"
    assert result["data"]["body"] == make_item(3)["body"]
    assert result["data"]["name"] == {"en": "Item 3"}
    assert result["data"]["author"]["bio"] == PEOPLE[0]["bio"]  # populated, never cut
    assert set(result["_sys"]) == {"key", "revision", "created_at", "updated_at"}


def test_get_record_integer_key(store: Path) -> None:
    assert call(tools.get_record, store, resource_id="people", record_id="2")["data"]["name"] == "Bob"
    with pytest.raises(
        ToolError, match=r"record_id: 'two' is not a key of 'people' \(its keys are integers\)"
    ):
        call(tools.get_record, store, resource_id="people", record_id="two")
    with pytest.raises(ToolError, match=r"record_id: 'people' has no record '7'"):
        call(tools.get_record, store, resource_id="people", record_id="7")


def test_get_record_under_parents(store: Path) -> None:
    found = call(tools.get_record, store, resource_id="items/i00/people/1/sections", record_id="i00-1-2")
    assert found["data"]["n"] == 2
    with pytest.raises(ToolError, match=r"has no record 'i00-1-2' under \{'item': 'i01', 'person': '1'\}"):
        call(tools.get_record, store, resource_id="items/i01/people/1/sections", record_id="i00-1-2")
    one_parent = call(
        tools.get_record,
        store,
        resource_id="items/{item}/people/{person}/sections",
        parents={"item": "i00"},
        record_id="i00-2-1",
    )
    assert one_parent["data"]["person"] == 2  # an unfilled placeholder reaches every parent
    listed = call(tools.query_records, store, resource_id="items/{item}/people/{person}/sections", limit=100)
    assert len(listed["items"]) == len(SECTIONS)


# --- discover and describe ------------------------------------------------------------------


def test_discover(store: Path) -> None:
    found = {r["resource_id"]: r for r in call(tools.discover_resources, store)["resources"]}
    assert found["items"]["record_count"] == 40
    assert found["items"]["locales"] == ["en", "fr"]
    assert found["items"]["nested"] == ["items/{item}/people/{person}/sections"]
    assert found["items/{item}/people/{person}/sections"]["parents"] == ["item", "person"]
    assert found["people"]["key"] == "pid"


def test_discover_before_any_load(tmp_path: Path) -> None:
    found = call(tools.discover_resources, tmp_path)["resources"]
    assert [r["record_count"] for r in found] == [0, 0, 0]


def test_describe(store: Path) -> None:
    result = call(tools.describe_resource, store)
    fields = {f["path"]: f for f in result["fields"]}
    assert fields["count"] == {
        "path": "count",
        "type": "integer",
        "sortable": True,
        "ops": list(fields["count"]["ops"]),
        "locale_keyed": False,
        "facetable": True,
    }
    assert "between" in fields["count"]["ops"]
    assert fields["name"]["locale_keyed"] is True and fields["name"]["sortable"] is False
    assert fields["tags"]["type"] == "array" and fields["tags"]["items"] == "string"
    assert fields["status"]["values"] == ["Draft", "Final", "It's"]
    assert fields["capital.population"]["sortable"] is True
    assert fields["parts"]["ops"] == ["exists"]
    assert result["references"] == [
        {"field": "author", "resource_id": "people"},
        {"field": "friends", "resource_id": "people"},
    ]
    assert result["default_sort"] == [{"field": "count", "order": "desc"}]
    assert result["max_text_chars"] == 20 and result["record_count"] == 40
    assert result["keyword_fields"] == ["title", "body", "name"] and result["embedded_fields"] == [
        "title",
        "body",
    ]


# --- errors ---------------------------------------------------------------------------------


def test_unknown_resource(store: Path) -> None:
    with pytest.raises(ToolError, match=r"resource_id: no resource 'itmes' \(did you mean 'items'\?\)"):
        call(tools.query_records, store, resource_id="itmes")
    with pytest.raises(
        ToolError,
        match=r"no resource 'sections' \(did you mean 'items/\{item\}/people/\{person\}/sections', with par",
    ):
        call(tools.describe_resource, store, resource_id="sections")


def test_not_loaded_yet(tmp_path: Path) -> None:
    with pytest.raises(
        ToolError, match=r"'items' holds no records yet: run `lynxc load test-server items FILE`"
    ):
        call(tools.query_records, tmp_path)


def test_capability_missing(store: Path) -> None:
    only_query = declare(
        resource(
            "notes", "id", [field("id", "string", required=True)], capabilities=["query"], keyword=["id"]
        )
    )
    with pytest.raises(
        ToolError, match=r"resource_id: 'notes' does not allow search \(its capabilities: query\)"
    ):
        call(tools.search_records, store, only_query, resource_id="notes", query="x")
    with pytest.raises(ToolError, match=r"'notes' does not allow get_one"):
        call(tools.get_record, store, only_query, resource_id="notes", record_id="x")


def test_contradicting_parents(store: Path) -> None:
    with pytest.raises(ToolError, match=r"parents\.item: 'i02' contradicts 'i01' in resource_id"):
        call(tools.query_records, store, resource_id="items/i01/people/1/sections", parents={"item": "i02"})


def test_searches_over_an_ann_index(store: Path) -> None:
    """From the loader's ANN threshold a table has an HNSW index; the searches must read it the
    same way as the exact scan (LanceDB refuses an `ef` below the candidates it refines)."""
    import lancedb
    from lancedb.index import HnswSq

    from lynxc.runtime.backends.records.store import ResourceState, read_current, write_current

    exact = call(tools.search_records, store, query="roses flowers garden", search_type="semantic", limit=5)
    table = lancedb.connect(str(store / "lance")).open_table("items-1")
    table.create_index("_vector", config=HnswSq(distance_type="cosine"))
    current = read_current(store)
    state = current.resources["items"]
    moved = dict(vars(state), version=table.version)
    write_current(store, type(current)({**current.resources, "items": ResourceState(**moved)}))
    assert table.list_indices() and table.version > state.version
    for search_type in ("semantic", "hybrid", "vector_boosted"):
        result = call(
            tools.search_records, store, query="roses flowers garden", search_type=search_type, limit=5
        )
        assert result["execution_info"]["applied_search_type"] == search_type
        assert result["items"]
    indexed = call(tools.search_records, store, query="roses flowers garden", search_type="semantic", limit=5)
    assert {_topic(i) for i in ids(indexed)[:3]} == {_topic(i) for i in ids(exact)[:3]}

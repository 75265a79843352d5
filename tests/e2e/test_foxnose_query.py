"""foxnose-knowledge's query features end to end: page.total, facets, any_of groups, filters on
the fields of an array's objects (`currencies.code`), `in` and sort on one locale (`name.de`),
through the generated server and a real MCP client over stdio, each answer checked against the
shipped data read directly (PEPs and countries loaded whole, the sections of a few PEPs,
embedder static: the run's shared store, tests/fixtures/foxnose_store.py)."""

from __future__ import annotations

import unicodedata
from collections import Counter

import pytest

from tests.conftest import stdio_client
from tests.e2e.test_foxnose_knowledge import DATA, SERVER, call, read_jsonl, refused
from tests.fixtures.foxnose_store import SECTION_PEPS, copy_of_store

pytestmark = pytest.mark.anyio

PEPS = read_jsonl(DATA / "peps.jsonl.gz")
COUNTRIES = read_jsonl(DATA / "countries.jsonl.gz")
# the sections in the store: those of SECTION_PEPS (8 among them); a PEP outside has none loaded
SECTIONS = [row for row in read_jsonl(DATA / "sections.jsonl.gz") if row["pep"] in SECTION_PEPS]
WITHOUT_SECTIONS = min(row["number"] for row in PEPS if row["number"] not in SECTION_PEPS)


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A copy of the run's store (tests/fixtures/foxnose_store.py), the module's own: its server
    writes to it."""
    return copy_of_store(tmp_path_factory, "foxnose-query")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def client(settings: dict):
    async with stdio_client(SERVER, settings) as client:
        yield client


def top(counter: Counter, size: int) -> list[dict]:
    return [
        {"value": v, "count": n} for v, n in sorted(counter.items(), key=lambda vn: (-vn[1], vn[0]))[:size]
    ]


async def test_total_and_facets_of_query_records(client) -> None:
    final = [p for p in PEPS if p["status"] in ("Final", "Accepted")]
    result = await call(
        client,
        "query_records",
        resource_id="peps",
        filters=[{"field": "status", "op": "in", "value": ["Final", "Accepted"]}],
        facets=["type", "topic", "status", "requires"],
        facet_size=3,
        limit=2,
    )
    assert result["page"]["total"] == len(final) and result["page"]["total_relation"] == "eq"
    assert result["page"]["returned"] == 2
    facets = result["facets"]
    assert facets["type"] == {
        "values": top(Counter(p["type"] for p in final), 3),
        "distinct": len({p["type"] for p in final}),
        "missing": 0,
    }
    topics = Counter(t for p in final for t in set(p.get("topic") or []))
    assert facets["topic"]["values"] == top(topics, 3)
    assert facets["topic"]["missing"] == sum(1 for p in final if not p.get("topic"))
    assert facets["status"]["distinct"] == 2
    requires = Counter(str(r) for p in final for r in set(p["requires"]))
    assert [v["count"] for v in facets["requires"]["values"]] == [n for _, n in requires.most_common(3)]
    # No filters: every record.
    everything = await call(client, "query_records", resource_id="peps", limit=1)
    assert everything["page"]["total"] == len(PEPS) and "facets" not in everything


async def test_any_of(client) -> None:
    expected = {
        p["number"]
        for p in PEPS
        if (p["status"] == "Draft" or "Typing" in (p.get("topic") or [])) and p["created"] >= "2020-01-01"
    }
    result = await call(
        client,
        "query_records",
        resource_id="peps",
        filters=[
            {"any_of": [{"field": "status", "value": "Draft"}, {"field": "topic", "value": "Typing"}]},
            {"field": "created", "op": "gte", "value": "2020-01-01"},
        ],
        limit=100,
    )
    assert result["page"]["total"] == len(expected)
    assert {item["data"]["number"] for item in result["items"]} == expected
    message = await refused(
        client,
        "query_records",
        resource_id="peps",
        filters=[{"any_of": [{"field": "status", "value": "Draft"}, {"field": "topik", "value": "x"}]}],
    )
    assert "filters.0.any_of.1.field: 'peps' has no field 'topik' (did you mean 'topic'?)" in message


async def test_fields_of_an_arrays_objects(client) -> None:
    euro = sorted(c["cca3"] for c in COUNTRIES if any(cur["code"] == "EUR" for cur in c["currencies"]))
    result = await call(
        client,
        "query_records",
        resource_id="countries",
        filters=[{"field": "currencies.code", "value": "EUR"}],
        facets=["currencies.code", "region", "languages"],
        limit=100,
    )
    assert [item["id"] for item in result["items"]] == euro and result["page"]["total"] == len(euro)
    eurozone = [c for c in COUNTRIES if c["cca3"] in euro]
    assert result["facets"]["region"]["values"] == top(Counter(c["region"] for c in eurozone), 10)
    codes = Counter(code for c in eurozone for code in {cur["code"] for cur in c["currencies"]})
    assert result["facets"]["currencies.code"]["values"] == top(codes, 10)
    languages = Counter(lang for c in eurozone for lang in set(c["languages"]))
    assert result["facets"]["languages"]["values"] == top(languages, 10)
    assert result["facets"]["languages"]["distinct"] == len(languages)
    described = await call(client, "describe_resource", resource_id="countries")
    paths = {f["path"]: f for f in described["fields"]}
    assert paths["currencies.code"]["ops"] == ["eq", "contains", "in", "not_in", "exists"]
    none = await call(
        client,
        "query_records",
        resource_id="countries",
        filters=[{"field": "currencies.code", "op": "exists", "value": False}],
    )
    assert none["page"]["total"] == sum(1 for c in COUNTRIES if not c["currencies"])


def collation(text: str) -> str:
    """Case and accents ignored: what NOCASE.NOACCENT compares."""
    return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if not unicodedata.combining(c))


async def test_in_and_sort_on_one_locale(client) -> None:
    wanted = ["Allemagne", "France", "Italie", "Germany"]  # the last is English, not French
    result = await call(
        client,
        "query_records",
        resource_id="countries",
        filters=[{"field": "name.fr", "op": "in", "value": wanted}],
        sort=[{"field": "name.de", "order": "asc"}],
    )
    assert [item["id"] for item in result["items"]] == ["DEU", "FRA", "ITA"]
    europe = [c for c in COUNTRIES if c["region"] == "Europe"]
    result = await call(
        client,
        "query_records",
        resource_id="countries",
        filters=[{"field": "region", "value": "Europe"}],
        sort=[{"field": "name.de", "order": "desc"}],
        limit=100,
    )
    expected = sorted(europe, key=lambda c: (collation(c["name"]["de"]), c["name"]["de"]), reverse=True)
    assert [item["data"]["name"]["de"] for item in result["items"]] == [c["name"]["de"] for c in expected]
    names = [item["data"]["name"]["de"] for item in result["items"]]
    assert any(unicodedata.normalize("NFD", n) != n for n in names)  # accents were there to ignore


async def test_search_records_total_and_facets(client) -> None:
    result = await call(
        client,
        "search_records",
        resource_id="peps",
        query="structural pattern matching",
        search_type="text",
        filters=[{"field": "type", "value": "Standards Track"}],
        facets=["status"],
    )
    total = result["page"]["total"]
    assert result["page"]["total_relation"] == "eq" and 0 < total < len(PEPS)
    assert sum(v["count"] for v in result["facets"]["status"]["values"]) == total
    # Semantic search ranks every record within its window of 1,000: all 736 PEPs, exactly.
    wide = await call(client, "search_records", resource_id="peps", query="python", search_type="semantic")
    assert (wide["page"]["total"], wide["page"]["total_relation"]) == (len(PEPS), "eq")


async def test_facet_errors(client) -> None:
    message = await refused(client, "query_records", resource_id="peps", facets=["status", "body"])
    assert message.startswith("facets.1: 'body' is a text field; facets count")
    assert "status" in message
    message = await refused(client, "query_records", resource_id="countries", facets=["name.fr"])
    assert "facets.0: 'name.fr' is one locale of a localized field" in message
    message = await refused(client, "query_records", resource_id="peps", facets=["status"], facet_size=51)
    assert "facet_size" in message


async def test_get_record_with_its_children(client) -> None:
    pep8 = sorted((s for s in SECTIONS if s["pep"] == 8), key=lambda s: s["index"])
    result = await call(
        client, "get_record", resource_id="peps", record_id="8", include=["sections"], include_limit=3
    )
    assert result["data"]["number"] == 8
    sections = result["included"]["sections"]
    assert (sections["total"], sections["has_more"]) == (len(pep8), True)
    assert [item["id"] for item in sections["items"]] == [s["section_id"] for s in pep8[:3]]
    alone = await call(
        client, "get_record", resource_id="peps", record_id=str(WITHOUT_SECTIONS), include=["sections"]
    )
    assert alone["included"]["sections"] == {"items": [], "total": 0, "has_more": False}
    assert "included" not in await call(client, "get_record", resource_id="peps", record_id="8")
    message = await refused(client, "get_record", resource_id="peps", record_id="8", include=["sectoins"])
    assert "include.0: 'sectoins' is not a resource nested under 'peps' (did you mean 'sections'?)" in message

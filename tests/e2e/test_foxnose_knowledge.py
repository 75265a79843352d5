"""foxnose-knowledge end to end: its own shipped data loaded with `lynxc load`, then the five
records tools through the generated server and a real MCP client over stdio.

The PEPs and countries load whole; sections only for a few PEPs, which keeps the load short
without losing a case (nested ids, parents, references into `peps`): the run's shared store
(tests/fixtures/foxnose_store.py), loaded once for the modules that read it. That store is embedded with
`static`: no check on it depends on what the vectors mean. The checks that do (a search by
meaning finds the pattern-matching PEPs; hybrid with minilm's weights) run on a second store, a
hundred PEPs embedded with minilm, the served default (loading all 736 PEPs took 40 s of CPU
with minilm, 4 s with static)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import LYNXC, stdio_client
from tests.fixtures.foxnose_store import (  # noqa: F401  (imported from here by other modules)
    DATA,
    SECTION_PEPS,
    SERVER,
    copy_of_store,
    load_args,
    load_in_one_process,
    read_jsonl,
    write_jsonl,
)

pytestmark = pytest.mark.anyio


def load(settings: dict, resource: str, path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [LYNXC, *load_args(settings, resource, path, *extra)], capture_output=True, text=True
    )


# The PEPs of the minilm store: 600 to 699 (634 and 636 among them) and 572. Over these, `static`
# ranks neither 634 nor 636 in its first five for "structural pattern matching"; minilm does.
# With them, 343 (the with statement) and the PEPs text ranks above it for "the with statement".
MINILM_PEPS = {572, *range(600, 700), 343, 346, 359, 377, 236, 340, 310}


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    """The settings of the module's two stores: everything with static (a copy of the run's
    store, tests/fixtures/foxnose_store.py, the module's own: its servers write to it), a hundred
    PEPs with minilm, loaded here."""
    settings = copy_of_store(tmp_path_factory, "foxnose")
    base = tmp_path_factory.mktemp("foxnose-minilm")
    minilm = {"data_dir": str(base / "minilm-store"), "embedder": "minilm"}
    peps = read_jsonl(DATA / "peps.jsonl.gz")
    done = load_in_one_process(
        load_args(
            minilm,
            "peps",
            write_jsonl(base / "minilm-peps.jsonl", [row for row in peps if row["number"] in MINILM_PEPS]),
        ),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(" inserted, ") == 1, done.stdout
    return settings, minilm


@pytest.fixture(scope="module")
def settings(stores: tuple[dict, dict]) -> dict:
    return stores[0]


@pytest.fixture(scope="module")
def minilm_settings(stores: tuple[dict, dict]) -> dict:
    return stores[1]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # module-wide, for the module's client


@pytest.fixture(scope="module")
async def client(settings: dict):
    """One server process and its MCP client for the tests that only read the module's store
    (each started its own: a server's start and first search are most of such a test's CPU)."""
    async with stdio_client(SERVER, settings) as client:
        yield client


async def call(client, tool: str, **arguments) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def refused(client, tool: str, **arguments) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return result.content[0].text


async def test_discover_and_describe(client) -> None:
    listed = await call(client, "discover_resources")
    peps = await call(client, "describe_resource", resource_id="peps")
    countries = await call(client, "describe_resource", resource_id="countries")
    typo = await refused(client, "describe_resource", resource_id="pep")
    by_id = {r["resource_id"]: r for r in listed["resources"]}
    assert set(by_id) == {"peps", "peps/{pep}/sections", "countries"}
    assert by_id["peps"]["record_count"] == 736 and by_id["countries"]["record_count"] == 250
    assert by_id["peps/{pep}/sections"]["parents"] == ["pep"]
    assert "peps/{pep}/sections" in by_id["peps"]["nested"]
    assert {"en", "fr", "de"} <= set(by_id["countries"]["locales"])
    assert set(by_id["peps"]["capabilities"]) == {"search", "query", "get_one"}
    assert peps["key"] == "number" and peps["max_text_chars"] == 2000
    assert peps["schema"]["properties"]["status"]["enum"][:2] == ["Draft", "Active"]
    assert {"field": "requires", "resource_id": "peps"} in peps["references"]
    assert "body" in peps["keyword_fields"] and peps["embedded_fields"]
    assert countries["embedded_fields"] == [] and "name" in countries["keyword_fields"]
    status = next(f for f in peps["fields"] if f["path"] == "status")
    assert status["sortable"] and {"eq", "in", "not_in"} <= set(status["ops"])
    assert "'peps'" in typo


async def test_search_types(client) -> None:
    text = await call(
        client, "search_records", resource_id="peps", query="assignment expressions", search_type="text"
    )
    hybrid = await call(client, "search_records", resource_id="peps", query="assignment expressions walrus")
    semantic = await call(
        client,
        "search_records",
        resource_id="peps",
        query="structural pattern matching",
        search_type="semantic",
    )  # by static's vectors: its ranking is checked with minilm's, below
    boosted = await call(
        client,
        "search_records",
        resource_id="peps",
        query="pattern matching",
        search_type="vector_boosted",
        limit=20,
    )
    boosted_full = [
        await call(client, "get_record", resource_id="peps", record_id=i["id"]) for i in boosted["items"]
    ]
    no_vectors = await call(
        client, "search_records", resource_id="countries", query="Germany", search_type="semantic"
    )
    fallback = await call(client, "search_records", resource_id="countries", query="Deutschland")
    assert 572 in [i["data"]["number"] for i in text["items"]]
    assert text["execution_info"]["applied_search_type"] == "text"
    assert hybrid["execution_info"]["applied_search_type"] == "hybrid"
    assert 572 in [i["data"]["number"] for i in hybrid["items"][:3]]
    assert semantic["items"] and semantic["execution_info"]["applied_search_type"] == "semantic"
    for result in (text, hybrid, semantic, boosted):
        assert len(result["items"]) <= result["page"]["limit"]
        assert all(0 <= i["_sys"]["relevance"] <= 1 for i in result["items"])
    # vector_boosted: every record really holds a query word
    for i in boosted_full:
        words = json.dumps(i["data"]).lower()
        assert "pattern" in words or "match" in words  # a term, as its stem
    assert no_vectors["items"] == [] and no_vectors["execution_info"]["applied_search_type"] == "none"
    assert fallback["execution_info"]["applied_search_type"] == "text"
    assert fallback["items"][0]["id"] == "DEU"


async def test_search_by_meaning_with_minilm(minilm_settings: dict) -> None:
    """The served default embedder: records embedded by `lynxc load` with minilm, queries by the
    server with minilm, semantic and hybrid (minilm's keyword weight)."""
    async with stdio_client(SERVER, minilm_settings) as client:
        semantic = await call(
            client,
            "search_records",
            resource_id="peps",
            query="structural pattern matching",
            search_type="semantic",
        )
        hybrid = await call(
            client, "search_records", resource_id="peps", query="assignment expressions walrus"
        )
    assert {634, 636} & {i["data"]["number"] for i in semantic["items"]}
    assert semantic["execution_info"]["applied_search_type"] == "semantic"
    assert hybrid["execution_info"]["applied_search_type"] == "hybrid"
    assert 572 in [i["data"]["number"] for i in hybrid["items"][:3]]
    for result in (semantic, hybrid):
        assert len(result["items"]) <= result["page"]["limit"]
        assert all(0 <= i["_sys"]["relevance"] <= 1 for i in result["items"])


SEARCH_TYPES = ("text", "semantic", "hybrid", "vector_boosted")


async def search(client, query: str, search_type: str, limit: int = 5, resource_id: str = "peps") -> dict:
    arguments = {"query": query, "search_type": search_type, "limit": limit}
    return await call(client, "search_records", resource_id=resource_id, **arguments)


def numbers(result: dict) -> list[int]:
    return [i["data"]["number"] for i in result["items"]]


async def test_stop_words_and_symbols_are_search_terms(client) -> None:
    """Words and symbols that are keywords in code find what they name (by text: no vectors)."""
    bare_with = await search(client, "with", "text")
    walrus = await search(client, ":=", "text")
    walrus_named = await search(client, "assignment expressions :=", "text")
    assert 343 in numbers(bare_with)
    assert numbers(walrus)[0] == 572 and numbers(walrus_named)[0] == 572


async def test_relevance_is_the_order_and_similarity_the_cosine(minilm_settings: dict) -> None:
    """In every mode the list descends by _sys.relevance, the score it is ordered by; the cosine
    is _sys.similarity, one value per record and query whatever the mode. "the with statement"
    finds PEP 343 by default (hybrid)."""
    async with stdio_client(SERVER, minilm_settings) as client:
        runs = {kind: await search(client, "the with statement", kind, limit=20) for kind in SEARCH_TYPES}
        default = await call(client, "search_records", resource_id="peps", query="the with statement")
    cosines: dict[str, float] = {}
    for kind, result in runs.items():
        relevances = [i["_sys"]["relevance"] for i in result["items"]]
        assert relevances and relevances == sorted(relevances, reverse=True), kind
        for i in result["items"]:
            assert 0 <= i["_sys"]["relevance"] <= 1 and 0 <= i["_sys"]["similarity"] <= 1
            assert cosines.setdefault(i["id"], i["_sys"]["similarity"]) == i["_sys"]["similarity"]
    assert default["execution_info"]["applied_search_type"] == "hybrid"
    assert 343 in numbers(default)[:3]


async def test_vector_boosted_keeps_text_matches_and_its_best_hit(minilm_settings: dict) -> None:
    """Every text match, text's best one on the first page (the default limit, 5), whatever the
    query; the countries have no vectors: text, said so, in text's order."""
    queries = ("the with statement", "assignment expressions", "pattern matching", "async generators")
    async with stdio_client(SERVER, minilm_settings) as client:
        for query in queries:
            text = await search(client, query, "text", limit=100)
            boosted = await search(client, query, "vector_boosted", limit=100)
            first_page = await call(
                client, "search_records", resource_id="peps", query=query, search_type="vector_boosted"
            )
            assert sorted(numbers(boosted)) == sorted(numbers(text)), query
            assert numbers(text)[0] in numbers(first_page), query
            assert first_page["page"]["limit"] == 5


async def test_vector_boosted_without_vectors(client) -> None:
    text = await search(client, "Republic", "text", limit=20, resource_id="countries")
    boosted = await search(client, "Republic", "vector_boosted", limit=20, resource_id="countries")
    assert boosted["execution_info"]["applied_search_type"] == "text"
    assert "no embeddings to boost by" in boosted["execution_info"]["search_mode"]
    assert [i["id"] for i in boosted["items"]] == [i["id"] for i in text["items"]]
    relevances = [i["_sys"]["relevance"] for i in boosted["items"]]
    assert relevances == sorted(relevances, reverse=True) and "similarity" not in boosted["items"][0]["_sys"]


async def test_filters_and_their_errors(client) -> None:
    final = await call(
        client,
        "query_records",
        resource_id="peps",
        filters=[
            {"field": "status", "value": "Final"},
            {"field": "type", "op": "in", "value": ["Standards Track"]},
            {"field": "created", "op": "between", "value": ["2020-01-01", "2021-12-31"]},
        ],
        sort=[{"field": "created", "order": "desc"}],
        limit=100,
    )
    typing = await call(
        client,
        "query_records",
        resource_id="peps",
        filters=[{"field": "topic", "value": "Typing"}],
        limit=100,
    )
    titled = await call(
        client,
        "query_records",
        resource_id="peps",
        filters=[{"field": "title", "op": "contains", "value": "PATTERN MATCHING"}],
    )
    french = await call(
        client,
        "query_records",
        resource_id="countries",
        filters=[{"field": "name.fr", "value": "Allemagne"}],
        locales=["fr"],
    )
    landlocked = await call(
        client,
        "query_records",
        resource_id="countries",
        filters=[{"field": "landlocked", "value": True}, {"field": "region", "value": "Africa"}],
        sort=[{"field": "area", "order": "desc"}],
        limit=3,
    )
    unknown = await refused(
        client, "query_records", resource_id="peps", filters=[{"field": "stauts", "value": "Final"}]
    )
    wrong_type = await refused(
        client, "query_records", resource_id="peps", filters=[{"field": "number", "value": "eight"}]
    )
    arity = await refused(
        client,
        "query_records",
        resource_id="peps",
        filters=[{"field": "number", "op": "between", "value": [1]}],
    )
    bad_enum = await refused(
        client, "query_records", resource_id="peps", filters=[{"field": "status", "value": "Finished"}]
    )
    too_many = await refused(client, "query_records", resource_id="peps", limit=101)
    bad_sort = await refused(client, "query_records", resource_id="peps", sort=[{"field": "body"}])
    rows = [i["data"] for i in final["items"]]
    assert rows and all(
        r["status"] == "Final" and r["type"] == "Standards Track" and "2020" <= r["created"][:4] <= "2021"
        for r in rows
    )
    assert [r["created"] for r in rows] == sorted((r["created"] for r in rows), reverse=True)
    assert final["items"][0]["_sys"]["relevance"] is None and "execution_info" not in final
    assert typing["items"] and all("Typing" in i["data"]["topic"] for i in typing["items"])
    assert {i["data"]["number"] for i in titled["items"]} >= {634, 636}
    assert [i["id"] for i in french["items"]] == ["DEU"]
    assert set(french["items"][0]["data"]["name"]) == {"fr"}
    assert [i["id"] for i in landlocked["items"]] == ["TCD", "NER", "MLI"]
    assert "filters.0.field" in unknown and "status" in unknown
    assert "filters.0.value" in wrong_type
    assert "filters.0.value" in arity and "two" in arity
    assert "Finished" in bad_enum
    assert "limit" in too_many and "100" in too_many
    assert "body" in bad_sort and "sort" in bad_sort


async def test_truncation_populate_and_get_record(client) -> None:
    found = await call(
        client, "search_records", resource_id="peps", query="PEP purpose and guidelines", limit=3
    )
    full = await call(client, "get_record", resource_id="peps", record_id=found["items"][0]["id"])
    populated = await call(
        client,
        "query_records",
        resource_id="peps",
        filters=[{"field": "requires", "op": "exists"}],
        populate=["requires"],
        limit=10,
    )
    borders = await call(
        client,
        "get_record",
        resource_id="countries",
        record_id="DEU",
        populate=["borders"],
        locales=["en"],
    )
    bad_populate = await refused(client, "get_record", resource_id="peps", record_id="1", populate=["status"])
    missing = await refused(client, "get_record", resource_id="peps", record_id="99999")
    assert found["truncation"]["applied"] is True and found["truncation"]["max_text_chars"] == 2000
    cut = found["items"][0]
    body_cut = next(t for t in cut["_sys"]["truncated"] if t["field"] == "body")
    assert len(cut["data"]["body"]) <= 2000 < body_cut["original_length"]
    assert "truncated" not in full["_sys"] and full["id"] == cut["id"]
    assert len(full["data"]["body"]) == body_cut["original_length"]
    assert full["data"]["body"].startswith(cut["data"]["body"])
    grafted = [r for i in populated["items"] for r in i["data"]["requires"]]
    assert grafted and all(isinstance(r, dict) and "title" in r for r in grafted)
    long_bodies = [
        t
        for i in populated["items"]
        for t in i["_sys"].get("truncated", [])
        if t["field"].startswith("requires")
    ]
    assert all(t["field"].endswith(".body") or t["field"].endswith(".abstract") for t in long_bodies)
    neighbours = {b["cca3"]: b for b in borders["data"]["borders"]}
    assert {"FRA", "POL", "AUT"} <= set(neighbours) and set(neighbours["FRA"]["name"]) == {"en"}
    assert "status" in bad_populate and "reference" in bad_populate
    assert "99999" in missing


async def test_nested_resource_by_parents_or_path(client) -> None:
    by_parents = await call(
        client, "query_records", resource_id="peps/{pep}/sections", parents={"pep": "8"}, limit=100
    )
    by_path = await call(client, "query_records", resource_id="peps/8/sections", limit=100)
    searched = await call(
        client,
        "search_records",
        resource_id="peps/8/sections",
        query="imports on separate lines",
        search_type="text",
    )
    top = await call(
        client, "get_record", resource_id="peps/8/sections", record_id=searched["items"][0]["id"]
    )
    every_pep = await call(
        client,
        "search_records",
        resource_id="peps/{pep}/sections",
        query="structural pattern matching",
        search_type="text",
        limit=20,
    )
    assert by_parents["items"] and {i["data"]["pep"] for i in by_parents["items"]} == {8}
    assert [i["id"] for i in by_parents["items"]] == [i["id"] for i in by_path["items"]]
    assert {i["data"]["pep"] for i in searched["items"]} == {8}
    assert "separate lines" in top["data"]["body"]
    assert {634, 636} & {i["data"]["pep"] for i in every_pep["items"]}  # no parent: every PEP


async def test_paging_reads_each_record_once_and_cursors_are_bound(client) -> None:
    seen, cursors, cursor = [], [], None
    while True:
        arguments = {"resource_id": "countries", "sort": [{"field": "cca3"}], "limit": 100}
        page = await call(client, "query_records", **arguments, **({"cursor": cursor} if cursor else {}))
        seen += [i["id"] for i in page["items"]]
        cursor = page["page"]["next_cursor"]
        assert page["page"]["has_more"] is (cursor is not None)
        if cursor is None:
            break
        cursors.append(cursor)
    other = await refused(
        client,
        "query_records",
        resource_id="countries",
        filters=[{"field": "landlocked", "value": True}],
        cursor=cursors[0],
    )
    garbled = await refused(client, "query_records", resource_id="countries", cursor="not-a-cursor")
    searched = await call(client, "search_records", resource_id="peps", query="python", limit=5)
    second = await call(
        client,
        "search_records",
        resource_id="peps",
        query="python",
        limit=5,
        cursor=searched["page"]["next_cursor"],
    )
    assert len(cursors) == 2 and len(seen) == 250 and seen == sorted(set(seen))
    assert "cursor" in other and "query" in other
    assert "cursor" in garbled
    assert not {i["id"] for i in searched["items"]} & {i["id"] for i in second["items"]}
    assert second["page"]["previous_cursor"]


async def test_a_load_while_paging_and_several_servers(tmp_path: Path) -> None:
    """Two server processes serve one store while a load replaces part of it: a paging client
    reads the version it started on (every record once, none twice), and both servers see the
    new data on their next call."""
    settings = {"data_dir": str(tmp_path / "store"), "embedder": "static"}
    countries = read_jsonl(DATA / "countries.jsonl.gz")
    assert load(settings, "countries", DATA / "countries.jsonl.gz").returncode == 0
    changed = [dict(c, flag="changed") for c in countries[20:30]]
    added = [dict(countries[0], cca3=f"ZZ{n}", cca2=f"Z{n}", borders=[]) for n in range(5)]
    update = write_jsonl(tmp_path / "update.jsonl", countries[30:] + changed + added)
    arguments = {"resource_id": "countries", "sort": [{"field": "cca3"}], "limit": 50}
    async with stdio_client(SERVER, settings) as reader, stdio_client(SERVER, settings) as other:
        first = await call(reader, "query_records", **arguments)
        await call(other, "discover_resources")
        done = load(settings, "countries", update, "--delete-missing")
        assert done.returncode == 0, done.stderr
        seen, cursor = [i["id"] for i in first["items"]], first["page"]["next_cursor"]
        while cursor:
            page = await call(reader, "query_records", **arguments, cursor=cursor)
            seen += [i["id"] for i in page["items"]]
            cursor = page["page"]["next_cursor"]
        fresh = [await call(client, "discover_resources") for client in (reader, other)]
        revised = await call(other, "get_record", resource_id="countries", record_id=countries[25]["cca3"])
        kept = await call(other, "get_record", resource_id="countries", record_id=countries[40]["cca3"])
        gone = await refused(other, "get_record", resource_id="countries", record_id=countries[5]["cca3"])
    assert sorted(seen) == sorted(c["cca3"] for c in countries) and len(seen) == len(set(seen))
    for listed in fresh:
        assert {r["resource_id"]: r["record_count"] for r in listed["resources"]}["countries"] == 250 - 20 + 5
    assert revised["data"]["flag"] == "changed" and revised["_sys"]["revision"] != kept["_sys"]["revision"]
    assert revised["_sys"]["updated_at"] > revised["_sys"]["created_at"] == kept["_sys"]["created_at"]
    assert countries[5]["cca3"] in gone


async def test_every_argument_error_names_its_field(client) -> None:
    checks = {
        "unknown placeholder": await refused(
            client, "query_records", resource_id="peps/{pep}/sections", parents={"pep": "8", "pop": "1"}
        ),
        "parent key type": await refused(client, "query_records", resource_id="peps/eight/sections"),
        "unknown id": await refused(client, "query_records", resource_id="peps/8/chapters"),
        "populate typo": await refused(
            client, "get_record", resource_id="peps", record_id="8", populate=["require"]
        ),
        "empty query": await refused(client, "search_records", resource_id="peps", query=""),
        "search type": await refused(
            client, "search_records", resource_id="peps", query="x", search_type="fuzzy"
        ),
        "op": await refused(
            client,
            "query_records",
            resource_id="peps",
            filters=[{"field": "number", "op": "like", "value": 1}],
        ),
        "op for type": await refused(
            client,
            "query_records",
            resource_id="countries",
            filters=[{"field": "landlocked", "op": "gt", "value": True}],
        ),
        "date": await refused(
            client,
            "query_records",
            resource_id="peps",
            filters=[{"field": "created", "op": "gte", "value": "2020-13-01"}],
        ),
        "in needs a list": await refused(
            client,
            "query_records",
            resource_id="peps",
            filters=[{"field": "number", "op": "in", "value": 8}],
        ),
        "sort typo": await refused(client, "query_records", resource_id="peps", sort=[{"field": "creatd"}]),
        "record id type": await refused(client, "get_record", resource_id="peps", record_id="eight"),
    }
    unknown_locale = await call(
        client, "get_record", resource_id="countries", record_id="FRA", locales=["xx"]
    )
    nested_paths = await call(
        client,
        "query_records",
        resource_id="countries",
        filters=[
            {"field": "demonym.female", "value": "French"},
            {"field": "currencies", "op": "exists"},
            {"field": "subregion", "op": "not_in", "value": ["Western Africa"]},
            {"field": "area", "op": "gt", "value": 500000},
            {"field": "independent", "op": "ne", "value": False},
        ],
    )
    absent = await call(
        client,
        "query_records",
        resource_id="peps",
        filters=[
            {"field": "python_version", "op": "exists", "value": False},
            {"field": "number", "op": "lte", "value": 10},
        ],
        limit=20,
    )
    expected = {
        "unknown placeholder": "pop",
        "parent key type": "eight",
        "unknown id": "peps/8/chapters",
        "populate typo": "requires",
        "empty query": "query",
        "search type": "search_type",
        "op": "filters.0.op",
        "op for type": "filters.0.op",
        "date": "filters.0.value",
        "in needs a list": "filters.0.value",
        "sort typo": "created",
        "record id type": "record_id",
    }
    for case, needle in expected.items():
        assert needle in checks[case], (case, checks[case])
    assert unknown_locale["data"]["name"] == {} and unknown_locale["id"] == "FRA"
    assert [i["id"] for i in nested_paths["items"]] == ["FRA"]
    assert absent["items"] and all("python_version" not in i["data"] for i in absent["items"])

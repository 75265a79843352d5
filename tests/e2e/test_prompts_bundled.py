"""The bundled servers' prompts and completions over their real data (issue 31): countries-sql
completes from SQL (with another argument given as context), foxnose-knowledge from the peps
collection loaded with `lynxc load`; over stdio and HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client

from tests.conftest import ROOT, http_server, stdio_client
from tests.fixtures.foxnose_store import copy_of_store

pytestmark = pytest.mark.anyio


async def countries_checks(client: Client) -> None:
    listed = await client.list_prompts()
    assert [p.name for p in listed.prompts] == ["country_brief"]
    brief = await client.get_prompt("country_brief", {"code": "FRA", "region": "Europe"})
    assert brief.messages[0].content.text.startswith("Write a short brief on the country FRA (in Europe).")
    ref = types.PromptReference(name="country_brief")
    regions = await client.complete(ref, {"name": "region", "value": "a"})
    assert regions.completion.values == ["Africa", "Americas", "Antarctic", "Asia"]
    assert (regions.completion.total, regions.completion.has_more) == (4, False)
    in_europe = await client.complete(ref, {"name": "code", "value": "f"}, {"region": "Europe"})
    assert in_europe.completion.values == ["FIN", "FRA", "FRO"]
    anywhere = await client.complete(ref, {"name": "code", "value": "f"})
    assert set(in_europe.completion.values) < set(anywhere.completion.values)
    everything = await client.complete(ref, {"name": "code", "value": ""})
    assert len(everything.completion.values) == 100
    assert everything.completion.has_more and everything.completion.total is None


async def test_countries_sql_over_stdio() -> None:
    async with stdio_client("countries-sql") as client:
        await countries_checks(client)


async def test_countries_sql_over_http() -> None:
    with http_server("countries-sql") as url:
        async with Client(url) as client:
            await countries_checks(client)


@pytest.fixture(scope="module")
def peps_store(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A copy of the run's store (tests/fixtures/foxnose_store.py: the PEPs, countries and a few
    PEPs' sections), the module's own: its servers write to it."""
    return copy_of_store(tmp_path_factory, "peps")


async def peps_checks(client: Client) -> None:
    listed = await client.list_prompts()
    assert [p.name for p in listed.prompts] == ["explain_pep", "peps_by_status"]
    explained = await client.get_prompt("explain_pep", {"number": "8", "audience": "newcomer"})
    assert explained.messages[0].content.text.startswith("Explain PEP 8 to a newcomer:")
    # the second message embeds the PEP's record, read through the server's pep://{number}
    embedded = explained.messages[1].content
    assert embedded.type == "resource" and embedded.resource.uri == "pep://8"
    assert json.loads(embedded.resource.text)["data"]["title"] == "Style Guide for Python Code"
    ref = types.PromptReference(name="explain_pep")
    eights = (await client.complete(ref, {"name": "number", "value": "8"})).completion
    assert eights.values[:2] == ["8", "800"]
    assert all(v.startswith("8") for v in eights.values) and not eights.has_more
    status = types.PromptReference(name="peps_by_status")
    assert (await client.complete(status, {"name": "status", "value": "fi"})).completion.values == ["Final"]
    audiences = (await client.complete(ref, {"name": "audience", "value": "C"})).completion
    assert audiences.values == ["core developer"]


async def test_foxnose_knowledge_over_stdio(peps_store: dict[str, object]) -> None:
    async with stdio_client("foxnose-knowledge", peps_store) as client:
        await peps_checks(client)


async def test_foxnose_knowledge_over_http(peps_store: dict[str, object]) -> None:
    with http_server("foxnose-knowledge", peps_store) as url:
        async with Client(url) as client:
            await peps_checks(client)


def test_every_bundled_prompt_server_lists_its_files(tmp_path: Path) -> None:
    """A server with prompts ships prompts.json and prompt_messages.json, checked by server.py."""
    for server in ("countries-sql", "foxnose-knowledge"):
        text = (ROOT / "generated" / server / "server.py").read_text()
        for name in ("prompts.json", "prompt_messages.json", "completions.json"):
            assert f"'{name}':" in text


@pytest.mark.parametrize("server", sorted(p.name for p in (ROOT / "generated").iterdir() if p.is_dir()))
async def test_capabilities_advertise_prompts_and_completions_only_where_declared(server: str) -> None:
    from lynxc.runtime.definition import load_definition
    from lynxc.runtime.host import ToolHost

    folder = ROOT / "generated" / server
    async with Client(ToolHost(load_definition(folder), {}).server(), mode="legacy") as client:
        capabilities = client.server_capabilities
    assert (capabilities.prompts is not None) == (folder / "prompts.json").is_file()
    assert (capabilities.completions is not None) == (folder / "completions.json").is_file()

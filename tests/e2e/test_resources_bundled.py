"""The bundled servers' MCP resources over their real data (issue 31): every bundled server
that declares resources lists exactly what its generated resources.json says and reads each
static resource; foxnose-knowledge reads PEPs and countries by URI from a store `lynxc load`
wrote, and tells a subscriber of exactly the PEP a second load changed; countries-sql reads a
country by URI through its SQL engine, over stdio and HTTP."""

from __future__ import annotations

import base64
import gzip
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.conftest import LYNXC, ROOT, http_server, settings_args, stdio_client
from tests.fixtures.foxnose_store import copy_of_store

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

GENERATED = ROOT / "generated"
WITH_RESOURCES = sorted(p.parent.name for p in GENERATED.glob("*/resource_sources.json"))
FOXNOSE = ROOT / "specs" / "foxnose-knowledge"


def test_the_bundled_servers_declare_resources() -> None:
    assert {"foxnose-knowledge", "countries-sql"} <= set(WITH_RESOURCES)


@pytest.mark.parametrize("server", WITH_RESOURCES)
async def test_each_lists_exactly_its_resources_json_and_reads_its_static_resources(server: str) -> None:
    listing = json.loads((GENERATED / server / "resources.json").read_text())
    async with stdio_client(server) as client:
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
        assert [r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in resources.resources] == (
            listing["resources"]
        )
        assert [
            t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in templates.resource_templates
        ] == listing["resourceTemplates"]
        for entry in listing["resources"]:
            read = await client.read_resource(entry["uri"])
            content = read.contents[0]
            assert content.mime_type == entry["mimeType"]
            data = content.text.encode() if hasattr(content, "text") else base64.b64decode(content.blob)
            assert len(data) == entry["size"]


def rows_of(name: str) -> list[dict[str, Any]]:
    with gzip.open(FOXNOSE / "data" / name, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def load(settings: dict[str, Any], collection: str, path: Path) -> None:
    done = subprocess.run(
        [
            LYNXC,
            "--project",
            str(ROOT),
            "load",
            "foxnose-knowledge",
            collection,
            str(path),
            *settings_args(settings),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr


def write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], list[dict[str, Any]]]:
    """A copy of the run's store (tests/fixtures/foxnose_store.py: every PEP and country), the
    module's own, since a test loads into it; and the PEPs a test edits and loads again."""
    settings = copy_of_store(tmp_path_factory, "foxnose-resources")
    peps = [row for row in rows_of("peps.jsonl.gz") if row["number"] in (1, 8, 9, 20)]
    return Path(settings["data_dir"]).parent, settings, peps


async def test_foxnose_reads_peps_countries_and_its_guide(store: tuple[Path, dict[str, Any], Any]) -> None:
    _, settings, _ = store
    async with stdio_client("foxnose-knowledge", settings) as client:
        guide = (await client.read_resource("docs://foxnose-knowledge/guide")).contents[0]
        assert guide.text == (FOXNOSE / "guide.md").read_text() and guide.mime_type == "text/markdown"
        pep = json.loads((await client.read_resource("pep://8")).contents[0].text)
        assert pep["data"]["title"] == "Style Guide for Python Code"
        france = json.loads((await client.read_resource("country://FRA")).contents[0].text)
        assert france["id"] == "FRA"
        for missing in ("pep://99999", "country://ZZZ", "pep://eight"):
            with pytest.raises(MCPError) as raised:
                await client.read_resource(missing)
            assert (raised.value.error.code, raised.value.error.data) == (-32602, {"uri": missing})


async def test_foxnose_tells_a_subscriber_of_exactly_the_pep_a_load_changed(
    store: tuple[Path, dict[str, Any], list[dict[str, Any]]],
) -> None:
    folder, settings, peps = store
    received: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            received.append(str(message.params.uri))
            arrived.set()

    command = [LYNXC, "--project", str(ROOT), "serve", "foxnose-knowledge", *settings_args(settings)]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params, mode="legacy", message_handler=on_message) as client:
        await client.subscribe_resource("pep://8")
        await client.subscribe_resource("pep://9")
        changed = [dict(row) for row in peps]
        for row in changed:
            if row["number"] == 8:
                row["title"] = "Style Guide for Python Code (edited)"
        await anyio.to_thread.run_sync(load, settings, "peps", write(folder / "peps-2.jsonl", changed))
        with anyio.fail_after(60):
            await arrived.wait()
        await anyio.sleep(3)  # three polls of the pointer: a wrong notification would have come
    assert received == ["pep://8"]


async def test_countries_sql_reads_a_country_by_uri_over_stdio_and_http() -> None:
    async with stdio_client("countries-sql") as client:
        japan = json.loads((await client.read_resource("country://jpn")).contents[0].text)
        with pytest.raises(MCPError) as raised:
            await client.read_resource("country://zzz")
        assert raised.value.error.data == {"uri": "country://zzz"}
    assert (japan["code"], japan["name"], japan["capital"]) == ("JPN", "Japan", ["Tokyo"])
    with http_server("countries-sql") as url:
        async with Client(url) as client:
            france = json.loads((await client.read_resource("country://FRA")).contents[0].text)
    assert france["name"] == "France"

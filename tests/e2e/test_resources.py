"""MCP resources end to end (issue 31): a project of its own declaring one resource of each kind
(a text file, a binary file, a fixed text, a text template, a SQL row, a Python function), built
with `lynxc build` and served on stdio and over HTTP to a real `mcp.Client`: both lists (paged),
a read of each kind, an unknown URI (-32602 with data.uri), a content over its max_bytes, and a
subscription to a URI the server cannot read."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.conftest import ROOT, free_port, lynxc_command, stdio_client
from tests.e2e.test_records_catalogue import lynxc

pytestmark = pytest.mark.anyio

COUNTRIES = ROOT / "specs" / "countries-sql" / "data" / "countries.jsonl.gz"
RESOURCES_KEY = "resources"

SPEC = f"""\
lynxc: 1
server:
  name: shelf
  version: 1.0.0
  title: A shelf of resources
  instructions: Reads a guide, a logo, notes and countries by URI.
  transports: [stdio, http]
  settings:
    countries_file:
      type: string
      default: {COUNTRIES}
      description: The countries as JSON Lines.
  duckdb:
    views:
      countries:
        reader: read_json
        setting: countries_file
        options: {{format: newline_delimited}}
        sample: data/countries.jsonl.gz
tools:
  - name: count_countries
    description: {{purpose: Count the countries of the data set.}}
    annotations: {{readOnlyHint: true}}
    backend: {{sql: "SELECT count(*) AS n FROM countries", result: one}}
{RESOURCES_KEY}:
  - {{name: guide, uri: "docs://shelf/guide", title: Guide, description: How the shelf is laid out.,
     mime_type: text/markdown, file: guide.md}}
  - {{name: logo, uri: "docs://shelf/logo", description: The shelf's logo., mime_type: image/png,
     file: logo.png}}
  - {{name: hello, uri: "test://static-text", description: A fixed greeting., mime_type: text/plain,
     text: "Hello from the shelf."}}
  - {{name: tiny, uri: "test://tiny", description: A text over its limit when read., mime_type: text/plain,
     function: "shelf_functions:too_long", max_bytes: 8}}
  - {{name: loud, uri_template: "test://loud/{{word}}", description: A word said a hundred times.,
     mime_type: text/plain, text: "{{{{ word * 100 }}}}", max_bytes: 16}}
  - name: data
    uri_template: "test://template/{{id}}/data"
    description: JSON made from the URI's id.
    mime_type: application/json
    text: '{{"id":"{{{{ id }}}}","data":"Data for ID: {{{{ id }}}}"}}'
  - name: country
    uri_template: "country://{{code}}"
    description: One country of the data set by its ISO alpha-3 code, as JSON.
    mime_type: application/json
    sql: "SELECT cca3 AS code, name.common AS name, region FROM countries WHERE cca3 = upper($code)"
    variables: {{code: {{description: An ISO 3166-1 alpha-3 code such as FRA.}}}}
  - name: echo
    uri_template: "echo://{{word}}"
    description: The word, shouted, from a Python function.
    mime_type: text/plain
    function: "shelf_functions:shout"
"""

FUNCTIONS = """\
async def shout(variables, ctx):
    return variables["word"].upper() + "!"


async def too_long(variables, ctx):
    return "far more than eight bytes"
"""

GUIDE = "# The shelf\n\nA guide, a logo and a few templates.\n"
LOGO = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


@pytest.fixture(scope="module")
def shelf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("shelf")
    (project / "specs").mkdir()
    (project / "specs" / "shelf.yaml").write_text(SPEC)
    (project / "specs" / "guide.md").write_text(GUIDE)
    (project / "specs" / "logo.png").write_bytes(LOGO)
    (project / "specs" / "data").mkdir()
    shutil.copy(COUNTRIES, project / "specs" / "data" / "countries.jsonl.gz")
    (project / "shelf_functions.py").write_text(FUNCTIONS)
    built = lynxc(project, "build")
    assert built.returncode == 0, built.stdout + built.stderr
    return project


def generated(project: Path, name: str) -> Any:
    return json.loads((project / "generated" / "shelf" / name).read_text())


def test_the_build_writes_both_list_answers_and_how_each_is_read(shelf: Path) -> None:
    listing = generated(shelf, "resources.json")
    assert [r["uri"] for r in listing["resources"]] == [
        "docs://shelf/guide",
        "docs://shelf/logo",
        "test://static-text",
        "test://tiny",
    ]
    assert listing["resources"][0]["size"] == len(GUIDE.encode())
    assert [t["uriTemplate"] for t in listing["resourceTemplates"]] == [
        "test://loud/{word}",
        "test://template/{id}/data",
        "country://{code}",
        "echo://{word}",
    ]
    assert (shelf / "generated" / "shelf" / "resource_files" / "guide").read_text() == GUIDE
    sql = generated(shelf, "sql.json")
    assert "resource__country" in json.dumps(sql)  # the hidden tool that reads the resource
    tools = generated(shelf, "tools.json")
    assert [t["name"] for t in tools["tools"]] == ["count_countries"]  # and it is never listed
    readme = (shelf / "generated" / "shelf" / "README.md").read_text()
    assert "## MCP resources" in readme and "`country://{code}`" in readme


async def every_page(list_page: Any, field: str) -> list[str]:
    seen, cursor = [], None
    for _ in range(20):
        result = await list_page(cursor)
        seen += [
            getattr(item, field) for item in getattr(result, "resources", None) or result.resource_templates
        ]
        cursor = result.next_cursor
        if cursor is None:
            return seen
    raise AssertionError("pages on forever")


async def check_resources(client: Client) -> None:
    listed = await client.list_resources()
    assert [str(r.uri) for r in listed.resources] == [
        "docs://shelf/guide",
        "docs://shelf/logo",
        "test://static-text",
        "test://tiny",
    ]
    templates = await client.list_resource_templates()
    assert [t.uri_template for t in templates.resource_templates] == [
        "test://loud/{word}",
        "test://template/{id}/data",
        "country://{code}",
        "echo://{word}",
    ]

    guide = (await client.read_resource("docs://shelf/guide")).contents[0]
    assert guide.text == GUIDE and guide.mime_type == "text/markdown"
    logo = (await client.read_resource("docs://shelf/logo")).contents[0]
    assert base64.b64decode(logo.blob) == LOGO and logo.mime_type == "image/png"
    hello = (await client.read_resource("test://static-text")).contents[0]
    assert hello.text == "Hello from the shelf."
    data = (await client.read_resource("test://template/42/data")).contents[0]
    assert json.loads(data.text) == {"id": "42", "data": "Data for ID: 42"}
    france = (await client.read_resource("country://fra")).contents[0]
    assert json.loads(france.text) == {"code": "FRA", "name": "France", "region": "Europe"}
    assert str(france.uri) == "country://fra"
    echo = (await client.read_resource("echo://hello")).contents[0]
    assert echo.text == "HELLO!"

    for unknown in ("docs://shelf/nothing", "country://zzz", "nowhere://" + "x" * 5000):
        with pytest.raises(MCPError) as raised:
            await client.read_resource(unknown)
        assert raised.value.error.code == -32602
        assert raised.value.error.message == "Resource not found"
        assert raised.value.error.data == {"uri": unknown}
    with pytest.raises(MCPError) as raised:
        await client.read_resource("test://tiny")
    assert "max_bytes of 8" in raised.value.error.message
    # a text template stops rendering past its max_bytes (a loop cannot fill memory first)
    with pytest.raises(MCPError) as raised:
        await client.read_resource("test://loud/shout")
    assert "max_bytes of 16" in raised.value.error.message


async def test_every_kind_over_stdio(shelf: Path) -> None:
    async with stdio_client("shelf", project=shelf) as client:
        await check_resources(client)


async def test_every_kind_over_http(shelf: Path) -> None:
    import subprocess
    import time

    port = free_port()
    command = [*lynxc_command("serve", "shelf", "--transport", "http", "--port", str(port))]
    command[2] = str(shelf)  # --project: the shelf's
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        import socket

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            await check_resources(client)
    finally:
        process.terminate()
        process.wait(timeout=10)


async def test_lists_page_with_cursors(shelf: Path) -> None:
    import os

    from mcp import StdioServerParameters

    command = [*lynxc_command("serve", "shelf", "--page-size", "1")]
    command[2] = str(shelf)
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params) as client:
        resources = await every_page(lambda cursor: client.list_resources(cursor=cursor), "uri")
        templates = await every_page(
            lambda cursor: client.list_resource_templates(cursor=cursor), "uri_template"
        )
        with pytest.raises(MCPError) as raised:
            await client.list_resources(cursor="bm90IGEgY3Vyc29y")
        assert raised.value.error.code == -32602
    assert [str(uri) for uri in resources] == [
        "docs://shelf/guide",
        "docs://shelf/logo",
        "test://static-text",
        "test://tiny",
    ]
    assert templates == [
        "test://loud/{word}",
        "test://template/{id}/data",
        "country://{code}",
        "echo://{word}",
    ]


async def test_subscribing_to_an_unknown_uri_is_refused(shelf: Path) -> None:
    async with stdio_client("shelf", project=shelf) as client:
        with pytest.raises(MCPError) as raised:
            async with client.listen(resource_subscriptions=["docs://shelf/nothing"]):
                pass
        assert raised.value.error.code == -32602
        assert raised.value.error.data == {"uri": "docs://shelf/nothing"}

"""The host's contract, through the generated fixture server and a real MCP client over stdio:
argument validation, errors, output validation, pagination, progress and cancellation."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.conftest import LYNXC, ROOT

pytestmark = pytest.mark.anyio
FIXTURE = ROOT / "tests" / "fixtures" / "project"


@pytest.fixture(scope="session")
def fixture_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("fixture") / "project"
    shutil.copytree(FIXTURE, project)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([LYNXC, "--project", str(project), "build"], check=True, env=env, capture_output=True)
    return project


def client_for(project: Path, *extra: str) -> Client:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["--project", str(project), "serve", "fixture", *extra]
    return Client(StdioServerParameters(command=LYNXC, args=args, env=env))


async def test_valid_call_fills_defaults_and_validates_output(fixture_project: Path) -> None:
    async with client_for(fixture_project) as client:
        result = await client.call_tool("echo", {"text": "hi"})
    assert not result.is_error
    assert result.structured_content == {
        "echo": {"text": "hi", "count": 1, "mode": "plain", "tags": None, "when": None}
    }
    assert json.loads(result.content[0].text) == result.structured_content


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "text: required parameter is missing (rule required)"),
        ({"text": ""}, "text: String should have at least 1 character (rule string_too_short)"),
        ({"text": "x" * 11}, "text: String should have at most 10 characters (rule string_too_long)"),
        ({"text": "x", "count": 6}, "count: Input should be less than or equal to 5 (rule less_than_equal)"),
        ({"text": "x", "count": "two"}, "count: Input should be a valid integer"),
        ({"text": "x", "mode": "quiet"}, "mode: Input should be 'plain' or 'loud' (rule literal_error)"),
        ({"text": "x", "tags": ["a", "b", "c"]}, "tags: List should have at most 2 items"),
        ({"text": "x", "colour": "red"}, "colour: unknown parameter (rule additionalProperties)"),
    ],
)
async def test_bad_arguments_name_the_field_and_the_rule(fixture_project: Path, arguments, message) -> None:
    async with client_for(fixture_project) as client:
        result = await client.call_tool("echo", arguments)
    assert result.is_error
    assert result.content[0].text.startswith("invalid arguments for 'echo': ")
    assert message in result.content[0].text


async def test_constrained_array_items_arrive_as_plain_values(fixture_project: Path) -> None:
    async with client_for(fixture_project) as client:
        joined = await client.call_tool("join", {"words": ["alpha", "beta"]})
        upper = await client.call_tool("join", {"words": ["alpha", "Beta"]})
    assert not joined.is_error and joined.structured_content == {"joined": "alpha+beta"}
    assert upper.is_error
    assert "words.1: String should match pattern '^[a-z]+$' (rule string_pattern_mismatch)" in (
        upper.content[0].text
    )


async def test_failures_are_tool_errors_and_the_server_stays_up(fixture_project: Path) -> None:
    async with client_for(fixture_project) as client:
        exploded = await client.call_tool("explode", {})
        refused = await client.call_tool("refuse", {})
        wrong = await client.call_tool("wrong_shape", {})
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("no_such_tool", {})
        after = await client.call_tool("echo", {"text": "still"})
    assert exploded.is_error and exploded.content[0].text == "'explode' failed: RuntimeError: disk on fire"
    assert refused.is_error and refused.content[0].text == "text: refused on purpose"
    assert (
        wrong.is_error
        and "'wrong_shape' produced an invalid result at echo: 42 is not of type 'object'"
        in (wrong.content[0].text)
    )
    assert unknown.value.code == -32602 and "no_such_tool" in str(unknown.value)
    assert not after.is_error


async def test_caps_bound_parameters_and_progress(fixture_project: Path) -> None:
    seen = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with client_for(fixture_project) as client:
        result = await client.call_tool("count_to", {"n": 3}, progress_callback=on_progress)
        over = await client.call_tool("count_to", {"n": 6})
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert result.structured_content == {"items": [0, 1, 2]}
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert over.is_error and "less than or equal to 5" in over.content[0].text
    assert tools["count_to"].input_schema["properties"]["n"]["maximum"] == 5
    assert tools["count_to"].description == "Count from zero, reporting progress, up to 5 items."


async def test_cancellation_is_honoured(fixture_project: Path) -> None:
    async with client_for(fixture_project) as client:
        with anyio.move_on_after(1) as scope:
            await client.call_tool("sleep_forever", {})
        assert scope.cancelled_caught
        # The cancelled call is dropped server-side; the connection keeps serving.
        result = await client.call_tool("echo", {"text": "after"})
    assert not result.is_error


async def test_tools_list_paginates_with_a_cursor(fixture_project: Path) -> None:
    async with client_for(fixture_project, "--page-size", "4") as client:
        first = await client.list_tools()
        second = await client.list_tools(cursor=first.next_cursor)
        with pytest.raises(MCPError) as bad:
            await client.list_tools(cursor="bogus")
    assert [t.name for t in first.tools] == ["echo", "count_to", "explode", "refuse"]
    assert [t.name for t in second.tools] == ["wrong_shape", "sleep_forever", "join"]
    assert second.next_cursor is None
    assert bad.value.code == -32602


def test_initialize_and_tools_list_import_no_backend(fixture_project: Path) -> None:
    """Answering initialize and tools/list loads neither backends nor heavy libraries."""
    script = f"""
import sys, anyio
from pathlib import Path
from mcp import Client
from lynxc.runtime.definition import load_definition
from lynxc.runtime.host import ToolHost
folders = [Path({str(ROOT / "generated/dot-harness")!r}), Path({str(ROOT / "generated/lynx-mcp")!r}),
           Path({str(fixture_project / "generated/fixture")!r})]
for folder in folders:
    server = ToolHost(load_definition(folder), {{}}).server()
    async def main():
        async with Client(server) as client:
            await client.list_tools()
    anyio.run(main)
heavy = [m for m in ("lancedb", "duckdb", "trafilatura", "tests.fixtures.backends",
         "lynxc.runtime.backends.dot_harness.search", "datamodel_code_generator", "jinja2", "ruamel",
         "jsonschema", "fastjsonschema", "onnxruntime", "tree_sitter", "pyarrow",
         "lynxc.runtime.backends.lynx.tools")
         if m in sys.modules]
print(heavy)
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

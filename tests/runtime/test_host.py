"""The host's contract, through the generated fixture servers and a real MCP client over stdio:
argument validation (as strict as the inputSchema), errors, result conversion to JSON, output
validation, pagination, progress and cancellation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.conftest import LYNXC, ROOT
from tests.refused_nulls import null_failures

pytestmark = pytest.mark.anyio
# A hang guard, not a time assertion: an unserializable response used to leave the client waiting.
HANG_GUARD = 60


# fixture_project (the built tests/fixtures/project) comes from conftest.py.


def client_for(project: Path, *extra: str, server: str = "fixture") -> Client:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["--project", str(project), "serve", server, *extra]
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
        # Strict JSON types, as the inputSchema reads them: no coercion from bool, string, fraction.
        ({"text": "x", "count": True}, "count: Input should be a valid integer (rule int_type)"),
        ({"text": "x", "count": "2"}, "count: Input should be a valid integer (rule int_type)"),
        ({"text": "x", "count": 2.5}, "count: Input should be a valid integer (rule int_type)"),
        ({"text": 5}, "text: Input should be a valid string (rule string_type)"),
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


# Strict argument typing -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"x": True}, "x: Input should be a valid number (rule float_type)"),
        ({"x": "1.5"}, "x: Input should be a valid number (rule float_type)"),
        ({"flag": 1}, "flag: Input should be a valid boolean (rule bool_type)"),
        ({"flag": "true"}, "flag: Input should be a valid boolean (rule bool_type)"),
        ({"depth": True}, "depth: Input should be a valid integer (rule int_type)"),
        ({"n": 3.0, "depth": False}, "depth: Input should be a valid integer (rule int_type)"),
        # Only the published names: the generated model's Python name is not a parameter.
        ({"max_items": 3}, "max_items: unknown parameter (rule additionalProperties)"),
        ({"n": 101.0}, "n: Input should be less than or equal to 100 (rule less_than_equal)"),
    ],
)
async def test_arguments_are_as_strict_as_the_input_schema(fixture_project: Path, arguments, message) -> None:
    async with client_for(fixture_project, server="wire") as client:
        result = await client.call_tool("typed_args", arguments)
    assert result.is_error
    assert result.content[0].text == f"invalid arguments for 'typed_args': {message}"


async def test_what_the_input_schema_accepts_is_accepted(fixture_project: Path) -> None:
    """An integer for a number, and 3.0 for an integer (JSON Schema counts it as one)."""
    async with client_for(fixture_project, server="wire") as client:
        result = await client.call_tool("typed_args", {"n": 3.0, "x": 2, "maxItems": 4, "depth": None})
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert not result.is_error, result.content[0].text
    echo = result.structured_content["echo"]
    assert echo == {"n": 3, "x": 2.0, "flag": False, "maxItems": 4, "depth": None}
    assert type(echo["n"]) is int
    assert listed["typed_args"].input_schema["properties"]["n"]["type"] == "integer"


async def test_null_is_refused_where_the_schema_excludes_it(fixture_project: Path, tmp_path: Path) -> None:
    """The generic null check (tests/refused_nulls.py) on a spec a test builds, with user backends."""
    tools = json.loads((fixture_project / "generated" / "fixture" / "tools.json").read_text())["tools"]
    async with client_for(fixture_project) as client:
        assert not await null_failures(client, tools, tmp_path)


# Results: one conversion rule, and every failure a tool error ------------------------------


async def test_backend_values_are_converted_by_one_rule(fixture_project: Path) -> None:
    with anyio.fail_after(HANG_GUARD):
        async with client_for(fixture_project, server="wire") as client:
            result = await client.call_tool("typed_values", {})
    assert not result.is_error, result.content[0].text
    assert result.structured_content == {
        "total": 12.3,
        "count": 7,
        "price": 0.1,
        "big": 12345678901234.568,  # the nearest double: what any JSON client reads
        "when": "2024-05-01T12:30:00+00:00",
        "naive": "2024-05-01T12:30:15.250000",
        "day": "2024-05-01",
        "at": "09:15:00",
        "span": "P1DT2H",
        "id": "12345678-1234-5678-1234-567812345678",
        "rank": 3,
        "score": 0.5,
        "hit": True,
        "scores": [0.25, 0.5],
        "grid": [[0, 1], [2, 3]],
        "blob": "AP9seW54",
        "level": "high",
    }
    assert type(result.structured_content["count"]) is int
    assert json.loads(result.content[0].text) == result.structured_content


@pytest.mark.parametrize(
    ("case", "where"),
    [
        ("nan", "rows/1/price: NaN is not a JSON number"),
        ("infinity", "rows/0/price: -Infinity is not a JSON number"),
        ("decimal_nan", "rows/0/price: NaN is not a JSON number"),
        ("numpy_nan", "scores/1: NaN is not a JSON number"),
        ("surrogate", "rows/0/name: the text holds a lone surrogate (U+DCE9), not Unicode"),
        ("set", "tags: a set has no JSON form"),
        ("numpy_datetime", "when: numpy datetime64[D] has no JSON form here; convert it to datetime first"),
        ("huge_int", "n: Exceeds the limit (4300 digits) for integer string conversion"),
        # Deeper than the SDK's serializer goes: the path is 200 levels long, the reason last.
        ("deep", "tree" + "/a" * 199 + ": nested more than 200 levels deep"),
    ],
)
async def test_values_json_cannot_carry_are_tool_errors(fixture_project: Path, case: str, where: str) -> None:
    with anyio.fail_after(HANG_GUARD):
        async with client_for(fixture_project, server="wire") as client:
            result = await client.call_tool("not_json", {"case": case})
            after = await client.call_tool("typed_args", {})
    assert result.is_error
    assert result.content[0].text.startswith(f"'not_json' produced a value that is not JSON at {where}")
    assert not after.is_error


async def test_failures_with_unsendable_text_are_still_answered(fixture_project: Path) -> None:
    """A message naming a file read with surrogateescape, and a text renderer that raises: both
    are tool errors, and the connection keeps serving."""
    with anyio.fail_after(HANG_GUARD):
        async with client_for(fixture_project, server="wire") as client:
            refused = await client.call_tool("refuse_surrogate", {})
            rendered = await client.call_tool("bad_text", {})
            after = await client.call_tool("typed_args", {})
    assert refused.is_error and refused.content[0].text == "path: caf\\udce9.txt is not readable"
    assert rendered.is_error and rendered.content[0].text == (
        "'bad_text' failed to render its text: TypeError: Object of type Decimal is not JSON serializable"
    )
    assert not after.is_error

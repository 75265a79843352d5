"""Every parameter of every bundled tool, through its generated server and a real MCP client:
what the published inputSchema rejects, the server rejects (`true` for an integer, `"3"` for a
number, `1` for a boolean, `null` wherever the schema excludes it), naming the field and the
rule; and what it accepts (`3.0` for an integer, as JSON Schema counts it; `null` where it
admits it), the server accepts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, stdio_client
from tests.refused_nulls import admits_null, null_failures, valid_required

pytestmark = pytest.mark.anyio

SERVERS = sorted(path.parent.name for path in (ROOT / "generated").glob("*/tools.json"))
# Settings a server cannot start without. Arguments are validated before any backend runs, so
# pagila's database may be unreachable here (port 1 refuses at once).
SETTINGS: dict[str, dict[str, object]] = {
    "pagila": {"database_url": "postgresql://reader@127.0.0.1:1/pagila"},
    # Identity-bound parameters on stdio read the local caller's claims (issue 27).
    "support-desk": {"caller_claims": {"sub": "alice", "email": "alice@example.com"}},
}
CLAIMS_META = "lynxc/auth"

# Wrong JSON types per schema type, and the pydantic rule the answer names.
WRONG = {
    "integer": ([True, False, "3", 1.5], "Input should be a valid integer (rule int_type)"),
    "number": ([True, "0.5"], "Input should be a valid number (rule float_type)"),
    "boolean": ([1, 0, "true"], "Input should be a valid boolean (rule bool_type)"),
}


def tools(server: str) -> list[dict[str, Any]]:
    return json.loads((ROOT / "generated" / server / "tools.json").read_text())["tools"]


def scalar_type(schema: dict[str, Any]) -> str | None:
    """integer/number/boolean, directly or as the non-null member of an anyOf."""
    kinds = [schema.get("type")] + [member.get("type") for member in schema.get("anyOf", [])]
    found = [kind for kind in kinds if kind in WRONG]
    return found[0] if found else None


def typed_params(server: str) -> list[tuple[str, str, str, dict[str, Any]]]:
    return [
        (tool["name"], name, kind, schema)
        for tool in tools(server)
        for name, schema in tool["inputSchema"].get("properties", {}).items()
        if (kind := scalar_type(schema))
    ]


def integral(schema: dict[str, Any]) -> float:
    bounds = [schema, *schema.get("anyOf", [])]
    low = max([member.get("minimum", 0) for member in bounds if member.get("type") == "integer"] or [0])
    return float(max(low, 1))


def test_every_bundled_server_has_typed_parameters() -> None:
    """The cases below are derived from the generated tools.json; make sure they exist."""
    kinds = {kind for server in SERVERS for _, _, kind, _ in typed_params(server)}
    assert kinds == {"integer", "number", "boolean"}
    names = {name for server in SERVERS for _, name, _, _ in typed_params(server)}
    # The parameters the issue found accepting `true`.
    assert {"offset", "limit", "context", "after", "max_results", "startLine", "maxDepth"} <= names


@pytest.mark.parametrize("server", SERVERS)
async def test_wrong_json_types_are_rejected(server: str, tmp_path: Path) -> None:
    by_name = {tool["name"]: tool for tool in tools(server)}
    failures = []
    async with stdio_client(server, SETTINGS.get(server)) as client:
        for tool_name, param, kind, _ in typed_params(server):
            values, rule = WRONG[kind]
            for value in values:
                arguments = {**valid_required(by_name[tool_name], tmp_path), param: value}
                result = await client.call_tool(tool_name, arguments)
                text = result.content[0].text
                expected = f"invalid arguments for {tool_name!r}: {param}: {rule}"
                if not (result.is_error and text == expected):
                    failures.append((tool_name, param, value, text[:200]))
    assert not failures


@pytest.mark.parametrize("server", SERVERS)
async def test_integral_floats_are_integers(server: str, tmp_path: Path) -> None:
    """JSON Schema counts 3.0 as an integer, so a client validating against inputSchema may send
    it: it must pass validation (the backend may still refuse the made-up workspace or path)."""
    by_name = {tool["name"]: tool for tool in tools(server)}
    failures = []
    async with stdio_client(server, SETTINGS.get(server)) as client:
        for tool_name, param, kind, schema in typed_params(server):
            if kind != "integer":
                continue
            arguments = {**valid_required(by_name[tool_name], tmp_path), param: integral(schema)}
            result = await client.call_tool(tool_name, arguments)
            if result.content[0].text.startswith("invalid arguments"):
                failures.append((tool_name, param, result.content[0].text[:200]))
    assert not failures


def test_every_bundled_server_has_parameters_that_refuse_null() -> None:
    """The parameters the issue found taking `null` as "absent" are among those checked below."""
    refusing = {
        (server, tool["name"], param)
        for server in SERVERS
        for tool in tools(server)
        for param in tool["inputSchema"].get("properties", {})
        if not admits_null(tool, param)
    }
    found = {
        ("agent-tool", "grep", "path"),
        ("agent-tool", "grep", "file_path"),
        ("agent-tool", "grep", "glob"),
        ("agent-tool", "glob", "path"),
        ("countries-sql", "region_summary", "region"),
        ("countries-sql", "find_countries", "min_area"),
        *(
            ("foxnose-knowledge", tool, param)
            for tool in ("query_records", "search_records")
            for param in ("filters", "locales", "populate")
        ),
        ("foxnose-knowledge", "query_records", "sort"),
    }
    assert found <= refusing


@pytest.mark.parametrize("server", SERVERS)
async def test_null_is_refused_where_the_schema_excludes_it(server: str, tmp_path: Path) -> None:
    async with stdio_client(server, SETTINGS.get(server)) as client:
        assert not await null_failures(client, tools(server), tmp_path)


def bound_params(server: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(tool, parameter, its claim entry) for every identity-bound parameter of a server."""
    return [
        (tool["name"], name, entry)
        for tool in tools(server)
        for name, entry in tool.get("_meta", {}).get(CLAIMS_META, {}).get("claims", {}).items()
    ]


def test_some_bundled_server_binds_parameters_to_claims() -> None:
    assert any(bound_params(server) for server in SERVERS)


@pytest.mark.parametrize("server", [s for s in SERVERS if bound_params(s)])
async def test_identity_bound_parameters_are_unpublished_and_refused(server: str, tmp_path: Path) -> None:
    """A parameter bound to the caller's claim is not in the published inputSchema, and a call
    that sends it anyway (even with the caller's own value) is refused naming it, for every
    bundled server."""
    by_name = {tool["name"]: tool for tool in tools(server)}
    claims = SETTINGS[server]["caller_claims"]
    assert isinstance(claims, dict)
    failures = []
    async with stdio_client(server, SETTINGS.get(server)) as client:
        for tool_name, param, entry in bound_params(server):
            tool = by_name[tool_name]
            if param in tool["inputSchema"]["properties"] or param in tool["inputSchema"].get("required", []):
                failures.append((tool_name, param, "published"))
            for value in (claims.get(entry["claim"]), "someone-else@example.com"):
                arguments = {**valid_required(tool, tmp_path), param: value}
                result = await client.call_tool(tool_name, arguments)
                expected = (
                    f"invalid arguments for {tool_name!r}: {param!r}: comes from the caller's verified "
                    "identity and cannot be sent (rule from_claim)"
                )
                if not (result.is_error and result.content[0].text == expected):
                    failures.append((tool_name, param, result.content[0].text[:200]))
    assert not failures

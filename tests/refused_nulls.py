"""The generic null check, for any served spec: every parameter whose published schema excludes
`null` is sent `null` and must be refused with `invalid arguments` naming that parameter and a
rule; every parameter whose schema admits it must pass validation with it.

Which schemas admit null is decided here by jsonschema reading each parameter's schema, not by
the server: the tools are the `tools.json` a build wrote, which is exactly what `tools/list`
returns. Tests of the bundled servers and tests that build their own specs both call
`null_failures`, so a new server or spec is covered without a new test.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
from mcp import Client


def admits_null(tool: dict[str, Any], param: str) -> bool:
    schema = tool["inputSchema"]
    own = {**schema["properties"][param], "$defs": schema.get("$defs", {})}
    return jsonschema.Draft202012Validator(own).is_valid(None)


def valid_value(name: str, schema: dict[str, Any], scratch: Path) -> Any:
    """A value the parameter's schema accepts, with which the backend ends fast."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "array":
        return ["x"] * max(schema.get("minItems", 1), 1)
    if kind in ("integer", "number"):
        return max(schema.get("minimum", 0), 0)
    if kind == "boolean":
        return False
    if schema.get("format") in FORMATTED:
        return FORMATTED[schema["format"]]
    return str(scratch) if "path" in name else "x"


# Strings of a format (pagila's date ranges) take a value of that format.
FORMATTED = {"date": "2024-01-01", "date-time": "2024-01-01T00:00:00Z", "time": "12:00:00"}


def valid_required(tool: dict[str, Any], scratch: Path) -> dict[str, Any]:
    """Values for the required parameters that pass validation and make the backend end fast."""
    schema = tool["inputSchema"]
    return {
        name: valid_value(name, schema["properties"][name], scratch) for name in schema.get("required", [])
    }


async def null_failures(client: Client, tools: list[dict[str, Any]], scratch: Path) -> list[tuple[Any, ...]]:
    """(tool, parameter, what went wrong) for each parameter of `tools` (served by `client`)
    whose answer to `null` disagrees with its published schema; empty when all agree."""
    failures = []
    for tool in tools:
        name = tool["name"]
        for param in tool["inputSchema"].get("properties", {}):
            result = await client.call_tool(name, {**valid_required(tool, scratch), param: None})
            text = result.content[0].text
            named = re.escape(f"invalid arguments for {name!r}: {param}: ")
            refused = re.fullmatch(rf"{named}Input should [^;]+ \(rule \w+\)", text)
            if admits_null(tool, param):
                if text.startswith("invalid arguments"):
                    failures.append((name, param, "null refused though the schema admits it", text[:200]))
            elif not (result.is_error and refused):
                failures.append((name, param, "null not refused as the schema says", text[:200]))
    return failures

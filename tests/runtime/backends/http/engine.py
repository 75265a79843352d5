"""Calling `call_http` directly: a hand-written http.json in a ServerDefinition of its own, and
a ToolContext as the host would pass it (the settings, the caps)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lynxc.runtime.backends.http.catalog import HttpTool
from lynxc.runtime.backends.http.tools import call_http
from lynxc.runtime.context import ToolContext
from lynxc.runtime.definition import ServerDefinition

CAPS = {"max_response_bytes": 1_048_576, "max_output_json_bytes": 1_048_576}


def parsed_tool(**changes: Any) -> HttpTool:
    """A parsed HTTP tool (GET /x, JSON, no placements) with `changes` applied."""
    return HttpTool(**{"name": "t", **http_tool("/x"), **changes})


def http_tool(path: str, method: str = "GET", **fields: Any) -> dict[str, Any]:
    """A tool entry of http.json; the path's placeholders are parameters of the same name."""
    from lynxc.runtime.backends.http.catalog import PLACEHOLDER

    entry = {
        "method": method,
        "path": path,
        "path_params": {name: name for name in PLACEHOLDER.findall(path)},
        "query": {},
        "headers": {},
        "body": None,
        "response": "json",
        "result": None,
        "wrap": None,
        "idempotent": method not in ("POST", "PATCH"),
    }
    return {**entry, **fields}


def definition(
    folder: Path, tools: dict[str, dict[str, Any]], auth: dict[str, Any] | None = None, **server: Any
) -> ServerDefinition:
    document = {
        "_generated": "test",
        "format": 1,
        "server": {
            "base_url": {"setting": "api_url"},
            "auth": auth,
            "headers": {"User-Agent": "lynxc-test/1.0"},
            "settings": {"timeout": "http_timeout_seconds", "retries": "http_max_retries"},
            **server,
        },
        "tools": tools,
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "http.json").write_text(json.dumps(document))
    return ServerDefinition(
        name="api",
        version="1.0.0",
        title=None,
        instructions=None,
        folder=folder,
        settings_schema={},
        tools=(),
        http="http.json",
    )


async def call(
    server: ServerDefinition,
    tool: str,
    arguments: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    caps: dict[str, int] | None = None,
) -> Any:
    ctx = ToolContext(tool=tool, caps=caps or CAPS, settings=settings or {}, server=server)
    return await call_http(arguments or {}, ctx)

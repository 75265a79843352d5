"""The wire form of a server: the `tools/list` entries a client sees, rendered from the IR.

`lynxc diff` and `lynxc lint` judge this form, so they work equally on servers lynxc did not build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Diagnostic, Span
from .ir import ServerIR, ToolIR

# tools.json keeps its do-not-edit header under this key, beside the payload, never in it:
# the runtime strips it, so clients do not receive it in every tools/list answer.
GENERATED_KEY = "_generated"
# The MCP rule for tool names; both the spec checks and lint of saved tools/list apply it.
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def wire_tool(tool: ToolIR) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": tool.name}
    if tool.title:
        entry["title"] = tool.title
    entry["description"] = tool.description
    entry["inputSchema"] = tool.input_schema
    if tool.output_schema is not None:
        entry["outputSchema"] = tool.output_schema
    if tool.annotations:
        entry["annotations"] = dict(tool.annotations)
    return entry


def tools_list(server: ServerIR) -> dict[str, Any]:
    """Exactly what `tools/list` answers (all pages together)."""
    return {"tools": [wire_tool(tool) for tool in server.tools]}


@dataclass(frozen=True)
class SpecExtras:
    """What a spec knows about a tool beyond its wire form (lint uses it)."""

    caps: dict[str, int]
    description_sources: tuple[tuple[Span, str], ...]
    suppressions: dict[str, str]  # rule -> reason


@dataclass(frozen=True)
class ServerWire:
    """One server's tools as a client sees them, and where they came from."""

    name: str
    tools: list[dict[str, Any]]
    origin: str
    # (tool, parameter or None) -> where it is declared, when the side is a spec
    spans: dict[tuple[str, str | None], Span] = field(default_factory=dict)
    extras: dict[str, SpecExtras] = field(default_factory=dict)


@dataclass(frozen=True)
class Side:
    """What one input of `lynxc diff` or `lynxc lint` holds: servers by name."""

    servers: dict[str, ServerWire]
    diagnostics: tuple[Diagnostic, ...] = ()


def wire_from_ir(server: ServerIR, origin: str) -> ServerWire:
    spans: dict[tuple[str, str | None], Span] = {}
    extras: dict[str, SpecExtras] = {}
    for tool in server.tools:
        spans[(tool.name, None)] = tool.span
        for param in tool.params:
            spans[(tool.name, param.name)] = param.span
        extras[tool.name] = SpecExtras(tool.cap_values, tool.description_sources, dict(tool.suppressions))
    return ServerWire(server.name, [wire_tool(tool) for tool in server.tools], origin, spans, extras)

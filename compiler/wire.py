"""The wire form of a server: the `tools/list` entries a client sees, rendered from the IR.

`lynxc diff` and `lynxc lint` judge this form, so they work equally on servers lynxc did not build.
"""

from __future__ import annotations

import re
from typing import Any

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

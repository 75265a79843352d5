"""Which removed tool was probably renamed to which added one, said beside the removal as a
hint (the verdict stays: callers of the old name fail).

Two signs, tried in order: the same name spelt otherwise (`read-query` and `read_query`,
`getTinyImage` and `get-tiny-image`), then the same parameters (names, JSON types, which are
required), when there is at least one (every parameterless tool would match every other). A match
must be one-to-one, as for renamed parameters: a removed tool whose sign fits several added
ones, or an added one that several removed tools fit, gets no hint.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from .schema_alternatives import admitted_types, canonical


def rename_hints(old_tools: Mapping[str, Any], new_tools: Mapping[str, Any]) -> dict[str, str]:
    """Removed tool name -> 'probably renamed to ...' for each removal with one likely target."""
    removed = sorted(old_tools.keys() - new_tools.keys())
    added = sorted(new_tools.keys() - old_tools.keys())
    hints: dict[str, str] = {}
    taken: set[str] = set()  # added tools already named by a hint: each names one removal
    signs: list[tuple[str, Callable[[str, Mapping[str, Any]], str | None]]] = [
        ("same name spelt otherwise", lambda name, _tool: _spelling(name)),
        ("same parameters", lambda _name, tool: _parameters_shape(tool)),
    ]
    for why, sign in signs:
        sources = {name: sign(name, old_tools[name]) for name in removed if name not in hints}
        targets = {name: sign(name, new_tools[name]) for name in added if name not in taken}
        for source, key in sources.items():
            matches = [target for target, other in targets.items() if key is not None and other == key]
            rivals = [name for name, other in sources.items() if other == key]
            if len(matches) == 1 and rivals == [source]:
                hints[source] = f"probably renamed to '{matches[0]}' ({why})"
                taken.add(matches[0])
    return {name: hints[name] for name in sorted(hints)}


def _spelling(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def _parameters_shape(tool: Mapping[str, Any]) -> str | None:
    """The parameters' names, JSON types and which are required: what a call must send. Closing
    the object or rewording a description in the same release does not hide the match."""
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict) or not properties:
        return None
    required = schema.get("required")
    return canonical(
        {
            "parameters": {name: sorted(admitted_types(node) or ()) for name, node in properties.items()},
            "required": sorted(required) if isinstance(required, list) else [],
        }
    )

"""Tool and parameter names: snake_case from operationId (or method and path), unique in the
server and within MCP's and lynxc's rules."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...lower.schema import PARAM_NAME

MAX_TOOL_NAME = 64  # MCP allows 128; an agent reads shorter names better, and lint agrees
# A word: an acronym's plural (APIs, IDs), an acronym (URL, V2), a capitalised or lower word, digits.
_WORD = re.compile(r"[A-Z]+s(?![a-z])|[A-Z]+\d*(?![a-z])|[A-Z]?[a-z]+\d*|\d+")


def snake(text: str) -> str:
    return "_".join(w.lower() for w in _WORD.findall(text))


def tool_base_name(operation_id: str | None, method: str, path: str) -> str:
    name = snake(operation_id or "") or snake(f"{method} {path}")
    if not name or not name[0].isalpha():
        name = f"{method.lower()}_{name}".strip("_")
    return name[:MAX_TOOL_NAME].rstrip("_")


def unique_names(wanted: Iterable[str]) -> list[str]:
    """Each name as wanted, the second and later of a clash suffixed _2, _3... Names that differ
    only by case or `_` count as one: they would share a generated models file."""
    taken: set[str] = set()
    out = []
    for name in wanted:
        candidate, number = name, 1
        while _folded(candidate) in taken:
            number += 1
            suffix = f"_{number}"
            candidate = name[: MAX_TOOL_NAME - len(suffix)] + suffix
        taken.add(_folded(candidate))
        out.append(candidate)
    return out


def _folded(name: str) -> str:
    return re.sub(r"[-._]", "", name).lower()


def parameter_name(wire: str) -> str:
    """The wire name when it is already a plain identifier (what the API's docs call it),
    otherwise its snake_case form: `page[size]` -> page_size, `X-Request-ID` stays."""
    if PARAM_NAME.match(wire):
        return wire
    name = snake(wire) or "value"
    if not name[0].isalpha():
        name = f"p_{name}"
    return name[:64]

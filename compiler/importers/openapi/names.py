"""Tool and parameter names: snake_case from operationId (or method and path), unique in the
server and within MCP's and lynxc's rules."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ...lower.schema import PARAM_NAME
from ...wire import TOOL_NAME

MAX_TOOL_NAME = 64  # MCP allows 128; an agent reads shorter names better, and lint agrees
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")


def snake(text: str) -> str:
    words = _NOT_WORD.sub(" ", _CAMEL.sub(" ", text)).split()
    return "_".join(w.lower() for w in words)


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
        assert TOOL_NAME.match(candidate), candidate
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

"""Measurements of a tool definition that lint rules and scores are built on: sentences, words,
token estimates, parameter coverage, and the invocation cost TDQS defines for shadowing."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`'\"(])|\n\s*\n")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")
_LOCAL_REF = re.compile(r"#/(\$defs|definitions)/([^/]+)")
MAX_COST_DEPTH = 10


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def estimate_tokens(text: str) -> int:
    """About four characters a token for English and code: the usual rule of thumb."""
    return math.ceil(len(text) / 4)


def name_words(*names: str | None) -> set[str]:
    """`search_project_text`, `deepSearch`, "Search text" -> {'search', 'project', 'text', 'deep'}."""
    found: set[str] = set()
    for name in names:
        if name:
            spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
            found |= {w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w}
    return found


def properties(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return props if isinstance(props, dict) else {}


def described(prop: Any) -> bool:
    return (
        isinstance(prop, dict) and isinstance(prop.get("description"), str) and len(prop["description"]) > 0
    )


def schema_coverage(schema: Mapping[str, Any] | None) -> int | None:
    """Percent of top-level parameters with a schema description (None without parameters),
    rounded half up as TDQS does."""
    props = properties(schema)
    if not props:
        return None
    return math.floor(100 * sum(described(p) for p in props.values()) / len(props) + 0.5)


def invocation_cost(schema: Mapping[str, Any] | None) -> int:
    """TDQS's proxy for the work of filling a schema in: required fields in the required
    subtree, plus 2 per object level below the first, plus 2 per extra union branch."""
    if not isinstance(schema, Mapping) or not properties(schema):
        return 0
    fields, depth, unions = _visit(schema, schema, 0, frozenset())
    return fields + 2 * max(0, depth - 1) + 2 * unions


def _resolve(root: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return node
    match = _LOCAL_REF.fullmatch(ref)
    if match is None:
        return None
    defs = root.get(match.group(1))
    target = defs.get(match.group(2)) if isinstance(defs, dict) else None
    return target if isinstance(target, dict) else None


def _is_null(node: Any) -> bool:
    kind = node.get("type") if isinstance(node, dict) else None
    return kind == "null" or kind == ["null"]


def _visit(
    root: Mapping[str, Any], node: Any, parent_depth: int, seen: frozenset[str]
) -> tuple[int, int, int]:
    """(required fields, deepest object level, extra union branches) reachable from `node`
    through required properties. `items`, `allOf`, `not` and union branches refine the node
    they sit on, so they are visited at the parent's depth; of a union only the widest branch
    adds fields, and the nullable idiom (`X | null`) is no choice."""
    if not isinstance(node, dict):
        return 0, parent_depth, 0
    ref = node.get("$ref") if isinstance(node.get("$ref"), str) else None
    if ref is not None and ref in seen:
        return 0, parent_depth, 0
    resolved = _resolve(root, node)
    if resolved is None:
        return 0, parent_depth, 0
    seen = seen | {ref} if ref else seen
    fields, deepest, unions = 0, parent_depth, 0

    def add(visit: tuple[int, int, int]) -> None:
        nonlocal fields, deepest, unions
        fields, deepest, unions = fields + visit[0], max(deepest, visit[1]), unions + visit[2]

    props = properties(resolved)
    if props and parent_depth < MAX_COST_DEPTH:
        depth = parent_depth + 1
        deepest = max(deepest, depth)
        required = resolved.get("required") if isinstance(resolved.get("required"), list) else []
        for name in (n for n in required if isinstance(n, str)):
            fields += 1  # a required name counts even without a schema: it must be supplied
            if name in props:
                add(_visit(root, props[name], depth, seen))
    if isinstance(resolved.get("items"), dict):
        add(_visit(root, resolved["items"], parent_depth, seen))
    for branch in resolved.get("allOf") if isinstance(resolved.get("allOf"), list) else []:
        add(_visit(root, branch, parent_depth, seen))
    if isinstance(resolved.get("not"), dict):
        deepest = max(deepest, _visit(root, resolved["not"], parent_depth, seen)[1])
    for keyword in ("oneOf", "anyOf"):
        branches = resolved.get(keyword)
        if not isinstance(branches, list) or not branches:
            continue
        visits = [_visit(root, b, parent_depth, seen) for b in branches if not _is_null(b)]
        if visits:
            widest = max(visits, key=lambda visit: visit[0])  # first of the widest, as TDQS picks
            fields, unions = fields + widest[0], unions + widest[2]
            deepest = max(deepest, *(visit[1] for visit in visits))
        unions += max(0, len(visits) - 1)
    return fields, deepest, unions

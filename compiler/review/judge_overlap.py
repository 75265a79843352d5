"""One finding per change. A single edit to a schema can show as several diff entries: `type:
string` becoming `anyOf: [{type: string}, {type: null}]` removes `type` and adds `anyOf`;
`properties` and `required` moving into the members of a new `oneOf` remove both beside it;
`items` arrives with `type: array`. One of those entries, judged, says the whole change; the
others say it again or say less. This module names, for an entry, the sibling that says it.

- Where the `anyOf`/`oneOf` of a node changed and is judged whole (its alternatives, each
  merged with the constraints written beside it, paired and compared), every constraint of
  that node, and of the nodes inside it, is part of that comparison.
- A keyword that constrains only a JSON type the node did not admit before (or no longer
  admits) came or went with the `type` beside it: the type change says it. So do listed
  values changed with the type (`enum: [a, b]` gaining null with `type: [string, null]`).

Annotations (description, default, ...) are never folded: they are their own findings.
"""

from __future__ import annotations

from typing import Any

from .diff import MISSING, SEPARATOR, Change
from .schema_alternatives import (
    ANNOTATIONS,
    APPLIES_TO,
    COMBINATORS,
    admitted_types,
    both_combinators,
    canonical,
    combinator,
    combinators_differ,
    listed_values,
    node_starts,
    required_group,
    types_overlap,
)


def said_by(change: Change, old_root: Any, new_root: Any) -> str | None:
    """The path of the sibling entry whose finding says this change, or None."""
    section, path = change.path[0], change.path[1:]
    starts = node_starts(path)
    keyword = path[starts[-1]] if path else ""
    if not path or keyword in ANNOTATIONS:
        return None
    for start in starts:
        node_path, under = path[:start], path[start]
        if under in COMBINATORS:
            continue  # the combinator's own entry
        old, new = _node(old_root, node_path), _node(new_root, node_path)
        if not isinstance(old, dict) or not isinstance(new, dict):
            break  # a node that appeared or vanished whole is one entry
        if combinators_differ(old, new) and _judged_whole(old, new, under):
            return SEPARATOR.join((section, *node_path, combinator(new) or combinator(old) or ""))
    node_path = path[: starts[-1]]
    old, new = _node(old_root, node_path), _node(new_root, node_path)
    listed = listed_values(old) is not None and listed_values(new) is not None
    if keyword in ("enum", "const") and listed and _type_changed(old, new):
        return SEPARATOR.join((section, *node_path, "type"))  # the type's finding lists them
    if keyword in APPLIES_TO and _type_changed(old, new):
        applies = APPLIES_TO[keyword]
        before, after = (
            types_overlap(admitted_types(old), applies),
            types_overlap(admitted_types(new), applies),
        )
        came = change.op == "added" and not before
        went = change.op == "removed" and not after
        if came or went or (change.op == "changed" and not (before and after)):
            return SEPARATOR.join((section, *node_path, "type"))
    return None


def _node(root: Any, path: tuple[str, ...]) -> Any:
    node = root
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return MISSING
        node = node[key]
    return node


def _judged_whole(old: Any, new: Any, keyword: str) -> bool:
    """Whether the combinator's finding compares whole alternatives, and so says a change to
    `keyword` beside it. A required group compares required names only; two listed-value
    nodes compare their values (and types) only."""
    if any(both_combinators(node) or required_group(node) for node in (old, new)):
        return False
    if listed_values(old) is not None and listed_values(new) is not None:
        return keyword in {"enum", "const", "type"}
    return True


def _type_changed(old: Any, new: Any) -> bool:
    """Whether the node's `type` keyword has its own diff entry."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return False
    return canonical(old.get("type")) != canonical(new.get("type"))

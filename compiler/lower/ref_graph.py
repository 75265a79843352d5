"""The `$ref`s of an output schema, checked before anything follows them.

Two shapes break what comes after the compiler:

- A cycle of references that never reaches a schema of its own (`A: {$ref: B}`, `B: {$ref: A}`,
  or `A: {anyOf: [{$ref: A}, ...]}`): every validator that meets it recurses until Python's
  stack runs out, and the model generator refuses it with an exception. Recursion through
  `properties`, `items` or `additionalProperties` is fine: each step there consumes a level of
  the (finite) value, so validation ends; a tree type is written that way, and it works end to
  end (the generator emits a self-referencing model, the runtime validates with both refs kept).
- References that multiply when inlined, as the runtime inlines them once per tool (see
  `lynxc.runtime.schema_refs`): thirty definitions that each use the next twice would expand
  to a billion nodes; a chain of thousands of plain references exhausts the stack, and makes the
  model generator take minutes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..limits import MAX_SCHEMA_DEPTH, MAX_SCHEMA_NODES
from ..spec.models import SchemaNode
from ..spec.source import NodePath

LOCAL_PREFIX = "#/$defs/"


def ref_cycles(defs: Mapping[str, SchemaNode], defs_path: NodePath) -> list[tuple[NodePath, list[str]]]:
    """Each cycle of unguarded references among `defs`: the `$ref` that closes it, and the names
    along it (first and last the same). Depth-first with an explicit stack: a chain of thousands
    of definitions must not exhaust Python's own."""
    edges = {name: list(_unguarded_refs(node, (*defs_path, name))) for name, node in defs.items()}
    found: list[tuple[NodePath, list[str]]] = []
    state: dict[str, str] = {}  # "open" while on the current path, then "done"
    for start in edges:
        if start in state:
            continue
        trail, pending = [start], [iter(edges[start])]
        state[start] = "open"
        while pending:
            step = next(pending[-1], None)
            if step is None:
                state[trail.pop()] = "done"
                pending.pop()
                continue
            target, ref_path = step
            if target not in edges:
                continue  # an unresolved reference is reported on its own
            if state.get(target) == "open":
                found.append((ref_path, [*trail[trail.index(target) :], target]))
            elif target not in state:
                state[target] = "open"
                trail.append(target)
                pending.append(iter(edges[target]))
    return found


def _unguarded_refs(node: SchemaNode, path: NodePath) -> Iterator[tuple[str, NodePath]]:
    """References a validator follows for the same value: the node's own and its anyOf members'
    (a nullable node is an anyOf too). Those under properties, items or additionalProperties
    apply to a part of the value, one level down, so they are not followed here."""
    if node.ref is not None and node.ref.startswith(LOCAL_PREFIX):
        yield node.ref[len(LOCAL_PREFIX) :], (*path, "$ref")
    for index, member in enumerate(node.anyOf or ()):
        yield from _unguarded_refs(member, (*path, "anyOf", index))


class _Exceeded(Exception):
    pass


def expansion_problem(schema: Mapping[str, Any]) -> str | None:
    """Why inlining the schema's local `$ref`s, exactly as the runtime does, would be too much,
    or None. Walks the expansion without building it, and stops at the first limit crossed, so
    a schema that would expand to billions of nodes costs as much to refuse as a small one."""
    defs = schema.get("$defs")
    defs = defs if isinstance(defs, dict) else {}
    remaining = MAX_SCHEMA_NODES

    def walk(node: Any, stack: frozenset[str], depth: int) -> None:
        nonlocal remaining
        remaining -= 1
        if remaining < 0:
            raise _Exceeded(f"more than {MAX_SCHEMA_NODES:,} nodes")
        if depth > MAX_SCHEMA_DEPTH:
            raise _Exceeded(f"nesting (each $ref followed counts) deeper than {MAX_SCHEMA_DEPTH} levels")
        if isinstance(node, list):
            for item in node:
                walk(item, stack, depth + 1)
            return
        if not isinstance(node, dict):
            return
        # The runtime's rule: a local reference standing alone is replaced by its definition,
        # unless that definition is already being inlined on this path (recursion stays a $ref).
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(LOCAL_PREFIX) and len(node) == 1:
            name = ref[len(LOCAL_PREFIX) :]
            if name in defs and name not in stack:
                walk(defs[name], stack | {name}, depth + 1)
                return
        for key, value in node.items():
            if key != "$defs":
                walk(value, stack, depth + 1)

    try:
        walk(schema, frozenset(), 0)
    except _Exceeded as err:
        return f"with its $refs inlined, as the runtime does, the output schema has {err}"
    return None

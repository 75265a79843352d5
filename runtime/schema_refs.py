"""Inline local `$ref`s of a JSON schema once, so validating many values skips ref lookups."""

from __future__ import annotations

from typing import Any

LOCAL_PREFIX = "#/$defs/"


def inline_local_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """`{"$ref": "#/$defs/X"}` -> the definition of X, recursively. A recursive definition, or a
    ref with sibling keywords, is left as is (with `$defs` kept), so the result always validates
    exactly the same values as the input."""
    defs = schema.get("$defs", {})
    kept_refs = False

    def resolve(node: Any, stack: tuple[str, ...]) -> Any:
        nonlocal kept_refs
        if isinstance(node, list):
            return [resolve(item, stack) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(LOCAL_PREFIX) and len(node) == 1:
            name = ref[len(LOCAL_PREFIX) :]
            if name in defs and name not in stack:
                return resolve(defs[name], (*stack, name))
        if "$ref" in node:
            kept_refs = True
        return {key: resolve(value, stack) for key, value in node.items() if key != "$defs"}

    inlined = resolve(schema, ())
    if kept_refs and defs:
        inlined["$defs"] = defs
    return inlined

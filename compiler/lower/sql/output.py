"""Does an output schema the spec writes for a SQL tool agree with the statement's result?

It agrees when it accepts every value the result types can produce: the same columns (by name,
at every level of the rows), and at each of them every JSON type the column's values can take
(an integer is a number; a BIGINT beyond 2^53 comes as a string, NaN as the string "NaN", a
nullable column as null). A written schema may say more than the types (descriptions, a
pattern, tighter bounds): that is the spec author's knowledge of the data, checked when serving.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from lynxc.runtime.schema_refs import inline_local_refs

from ...diagnostics import Diagnostic
from ...ir import ToolIR, canonical_json
from ...rules import diagnostic
from ...spec.load import ToolSource
from ...spec.source import NodePath, SourceDoc

_UNCHECKABLE = frozenset({"oneOf", "allOf", "not", "if", "$ref"})
_ALL = frozenset({"null", "boolean", "integer", "number", "string", "array", "object"})


def with_output(
    tool_ir: ToolIR, derived: dict[str, Any], tool_source: ToolSource
) -> tuple[ToolIR, list[Diagnostic]]:
    """The tool with the output schema its result types give (`derived`), or with the one its
    spec writes, once checked to accept every value those types produce."""
    if tool_ir.output_schema_json is None:
        return replace(tool_ir, output_schema_json=canonical_json(derived)), []
    written = json.loads(tool_ir.output_schema_json)
    return tool_ir, output_problems(written, derived, tool_source.doc, (*tool_source.base, "output"))


def output_problems(
    written: dict[str, Any], derived: dict[str, Any], doc: SourceDoc, path: NodePath
) -> list[Diagnostic]:
    written = inline_local_refs(written)  # a `$ref` is checked as what it refers to
    return [
        diagnostic("SQL_OUTPUT_MISMATCH", message, doc.span(at), hint)
        for at, message, hint in _compare(written, derived, path, "output")
    ]


def kinds(schema: Any) -> frozenset[str]:
    """The JSON types a schema accepts (an empty schema: all). `type`, `anyOf` and `enum` in
    one node each narrow what the others allow."""
    if not isinstance(schema, dict):
        return _ALL if schema is True else frozenset()
    found = _ALL
    declared = schema.get("type")
    if declared is not None:
        found &= frozenset([declared] if isinstance(declared, str) else declared)
    if "anyOf" in schema:
        found &= frozenset().union(*(kinds(option) for option in schema["anyOf"]))
    values = schema["enum"] if "enum" in schema else [schema["const"]] if "const" in schema else None
    if values is not None:
        found &= frozenset(_kind_of(value) for value in values)
    return found | {"integer"} if "number" in found else found


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), "string")


def _compare(written: Any, derived: Any, path: NodePath, label: str) -> Iterator[tuple[NodePath, str, str]]:
    if isinstance(written, dict) and _UNCHECKABLE & set(written):
        yield (
            path,
            f"{label} uses {', '.join(sorted(_UNCHECKABLE & set(written)))}, which the build cannot "
            "check against the result's types",
            "write it with type, anyOf, enum, properties and items",
        )
        return
    missing = kinds(derived) - kinds(written)
    if missing:
        yield (
            path,
            f"{label} does not accept {', '.join(sorted(missing))}, which the result can hold here",
            _hint(missing),
        )
        return
    written_object, derived_object = _branch(written, "object"), _branch(derived, "object")
    if written_object is not None and derived_object is not None and "properties" in derived_object:
        have = written_object.get("properties")
        if isinstance(have, dict):
            for name, schema in derived_object["properties"].items():
                if name not in have:
                    yield (
                        path,
                        f"{label} has no property '{name}', a column of the result",
                        "add it, or drop the column",
                    )
                else:
                    yield from _compare(have[name], schema, (*path, "properties", name), f"{label}.{name}")
            for name in have:
                if name not in derived_object["properties"]:
                    yield (
                        (*path, "properties", name),
                        f"{label}.{name} is not a column of the result",
                        "remove it, or select it in the statement",
                    )
    written_array, derived_array = _branch(written, "array"), _branch(derived, "array")
    if (
        written_array is not None
        and derived_array is not None
        and "items" in derived_array
        and "items" in written_array
    ):
        yield from _compare(written_array["items"], derived_array["items"], (*path, "items"), f"{label}[]")


def _branch(schema: Any, kind: str) -> dict[str, Any] | None:
    """The part of `schema` that describes values of JSON type `kind`."""
    if not isinstance(schema, dict):
        return None
    if "anyOf" in schema:
        for option in schema["anyOf"]:
            found = _branch(option, kind)
            if found is not None:
                return found
        return None
    return schema if schema.get("type") == kind or kind in (schema.get("type") or []) else None


def _hint(missing: frozenset[str]) -> str:
    if "null" in missing:
        return "add `nullable: true`, or make the column provably NOT NULL (COALESCE, a NOT NULL column)"
    if "string" in missing:
        return (
            "BIGINT and HUGEINT values beyond 2^53, NaN and infinities come as strings: accept strings "
            "(anyOf), or CAST the column in the statement"
        )
    return "write the type the column's values have, or CAST the column in the statement"

"""Lower spec schema nodes to JSON Schema 2020-12, checking them on the way.

`nullable: true` becomes `anyOf: [<node>, {"type": "null"}]` rather than a `type` array,
which some MCP clients reject. Bounds written as `caps.NAME` become the cap's value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from ..diagnostics import Diagnostic, Span
from ..rules import diagnostic
from ..spec.models import CAP_REF_PREFIX, Parameter, SchemaNode
from ..spec.source import NodePath, SourceDoc
from ..suggest import did_you_mean
from .patterns import pattern_matches, pattern_problem
from .ref_graph import expansion_problem, ref_cycles
from .templates_text import CAP_PLACEHOLDER, PLACEHOLDER, render

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
TYPES = ("string", "integer", "number", "boolean", "array", "object", "null")
PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")

# Keywords that only mean something for one family of types.
_KEYWORD_TYPES: Mapping[str, tuple[str, ...]] = {
    "minLength": ("string",),
    "maxLength": ("string",),
    "pattern": ("string",),
    "format": ("string",),
    "minimum": ("integer", "number"),
    "maximum": ("integer", "number"),
    "exclusiveMinimum": ("integer", "number"),
    "exclusiveMaximum": ("integer", "number"),
    "items": ("array",),
    "minItems": ("array",),
    "maxItems": ("array",),
    "uniqueItems": ("array",),
    "properties": ("object",),
    "required": ("object",),
    "additionalProperties": ("object",),
}
_COUNT_KEYWORDS = ("minLength", "maxLength", "minItems", "maxItems")
_BOUND_PAIRS = (
    ("minimum", "maximum"),
    ("exclusiveMinimum", "maximum"),
    ("minimum", "exclusiveMaximum"),
    ("minLength", "maxLength"),
    ("minItems", "maxItems"),
)
_MAX_SUFFIX = ".max"


def _linear_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    """JSON Schema's `pattern`, matched by the runtime's linear-time engine instead of `re`."""
    if validator.is_type(instance, "string") and not pattern_matches(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


# Checks defaults as the generated server will check arguments; a pattern that backtracks
# catastrophically in Python's `re` cannot hang the build.
_DefaultValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"pattern": _linear_pattern}
)


@dataclass
class SchemaLowering:
    """Lowers the schema nodes of one tool (or the settings of one server)."""

    doc: SourceDoc
    caps: Mapping[str, int]
    defs: frozenset[str] = frozenset()
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: list[tuple[Span, str]] = field(default_factory=list)  # descriptions as written

    def report(
        self, rule_id: str, message: str, path: NodePath, hint: str | None = None, *, key: bool = False
    ):
        self.diagnostics.append(diagnostic(rule_id, message, self.doc.span(path, key=key), hint))

    def input_schema(self, parameters: Mapping[str, Parameter], base: NodePath) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, parameter in parameters.items():
            path = (*base, name)
            if not PARAM_NAME.match(name):
                self.report(
                    "PARAM_NAME_INVALID",
                    f"parameter name '{name}' is not a plain identifier",
                    path,
                    "use letters, digits and underscores, starting with a letter",
                    key=True,
                )
            properties[name] = self.node(parameter, path, required_override=parameter.requiredProperties)
            self.check_default(parameter, properties[name], path)
            if parameter.required:
                required.append(name)
        schema: dict[str, Any] = {"$schema": JSON_SCHEMA_DIALECT, "type": "object", "properties": properties}
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        return schema

    def output_schema(self, node: SchemaNode, path: NodePath) -> dict[str, Any]:
        self.defs = frozenset(node.defs or ())
        schema = {"$schema": JSON_SCHEMA_DIALECT, **self.node(node, path)}
        cycles = ref_cycles(node.defs or {}, (*path, "$defs"))
        for ref_path, names in cycles:
            chain = " -> ".join(names)
            self.report(
                "SCHEMA_REF_CYCLE",
                f"$ref cycle {chain} never reaches a schema: validating it recurses forever",
                ref_path,
                "a recursive type nests through properties, items or additionalProperties, "
                "e.g. children: {type: array, items: {$ref: '#/$defs/Node'}}",
            )
        if not cycles and (problem := expansion_problem(schema)) is not None:
            self.report(
                "SCHEMA_REF_BUDGET_EXCEEDED",
                problem,
                path,
                "share fewer definitions per level, or flatten the chain of $refs",
                key=True,
            )
        return schema

    def check_default(self, node: SchemaNode, schema: dict[str, Any], path: NodePath) -> None:
        if "default" not in node.model_fields_set:
            return
        checkable = {k: v for k, v in schema.items() if k not in ("default", "examples")}
        error = jsonschema.exceptions.best_match(
            _DefaultValidator(checkable, format_checker=None).iter_errors(node.default)
        )
        if error is not None:
            self.report(
                "PARAM_DEFAULT_INVALID",
                f"default {node.default!r} does not satisfy the schema: {error.message}",
                (*path, "default"),
            )

    def node(
        self, node: SchemaNode, path: NodePath, *, required_override: list[str] | None = None
    ) -> dict[str, Any]:
        written = node.model_fields_set
        self._check_type(node, path)
        core: dict[str, Any] = {}
        if node.type is not None:
            core["type"] = node.type
        if node.enum is not None:
            core["enum"] = list(node.enum)
        if "const" in written:
            core["const"] = node.const
        if node.format is not None:
            core["format"] = node.format
        if node.pattern is not None:
            core["pattern"] = node.pattern
            self._check_pattern(node.pattern, (*path, "pattern"))
        bounds = self._bounds(node, path)
        core.update(bounds)
        if node.items is not None:
            core["items"] = self.node(node.items, (*path, "items"))
        if node.uniqueItems is not None:
            core["uniqueItems"] = node.uniqueItems
        if node.properties is not None:
            core["properties"] = {
                name: self.node(child, (*path, "properties", name)) for name, child in node.properties.items()
            }
        # On a parameter, `required` says whether callers must send it; its object's own list
        # of required properties is `requiredProperties`.
        is_parameter = isinstance(node, Parameter)
        required = required_override if is_parameter else node.required
        if required is not None:
            key = "requiredProperties" if is_parameter else "required"
            for index, name in enumerate(required):
                if name not in (node.properties or {}):
                    self.report(
                        "SPEC_VALUE_INVALID",
                        f"required property '{name}' is not among the properties",
                        (*path, key, index),
                        did_you_mean(name, node.properties or {}),
                    )
            core["required"] = list(required)
        if isinstance(node.additionalProperties, SchemaNode):
            core["additionalProperties"] = self.node(
                node.additionalProperties, (*path, "additionalProperties")
            )
        elif node.additionalProperties is not None:
            core["additionalProperties"] = node.additionalProperties
        if node.anyOf is not None:
            core["anyOf"] = [self.node(child, (*path, "anyOf", i)) for i, child in enumerate(node.anyOf)]
        if node.ref is not None:
            core["$ref"] = node.ref
            self._check_ref(node.ref, (*path, "$ref"))
        self._check_keywords(node, path)

        outer: dict[str, Any] = {"anyOf": [core, {"type": "null"}]} if node.nullable else core
        if node.title is not None:
            outer["title"] = node.title
        if node.description is not None:
            outer["description"] = self.text(node.description, (*path, "description"))
        if "default" in written:
            outer["default"] = node.default
        if node.examples is not None:
            outer["examples"] = list(node.examples)
        if node.defs is not None:
            outer["$defs"] = {
                name: self.node(child, (*path, "$defs", name)) for name, child in node.defs.items()
            }
        return outer

    def text(self, text: str, path: NodePath) -> str:
        self.sources.append((self.doc.span(path), text))
        caps = dict(self.caps)
        for match in PLACEHOLDER.finditer(text):
            cap = CAP_PLACEHOLDER.match((match.group(1) or "").strip())
            if cap is not None and self._max_undefined(cap.group(1)):
                self._report_max_undefined(cap.group(1), path)
                caps[cap.group(1)] = 0  # reported once, here, not again as an unknown cap
        rendered, problems = render(text, caps)
        for problem in problems:
            self.report(problem.rule_id, problem.message, path, problem.hint)
        return rendered

    def _check_type(self, node: SchemaNode, path: NodePath) -> None:
        if node.type is not None and node.type not in TYPES:
            self.report(
                "PARAM_TYPE_UNKNOWN",
                f"'{node.type}' is not a type",
                (*path, "type"),
                did_you_mean(node.type, TYPES) or "types: " + ", ".join(TYPES),
            )

    def _check_pattern(self, pattern: str, path: NodePath) -> None:
        problem = pattern_problem(pattern)
        if problem is not None:
            self.report("PATTERN_INVALID", problem[0], path, problem[1])

    def _max_undefined(self, name: str) -> bool:
        """`caps.NAME.max` of a cap that declares no `max:` (its hard maximum is then its value,
        which a reference to `.max` would silently stand for)."""
        return name.endswith(_MAX_SUFFIX) and name not in self.caps and name[: -len(_MAX_SUFFIX)] in self.caps

    def _report_max_undefined(self, name: str, path: NodePath) -> None:
        cap = name[: -len(_MAX_SUFFIX)]
        self.report(
            "CAP_MAX_UNDEFINED",
            f"'caps.{name}' names the hard maximum of cap '{cap}', which declares no 'max:'",
            path,
            f"add 'max:' to cap '{cap}', or write 'caps.{cap}' for its value",
        )

    def _check_ref(self, ref: str, path: NodePath) -> None:
        prefix = "#/$defs/"
        name = ref[len(prefix) :] if ref.startswith(prefix) else None
        if name is None or name not in self.defs:
            self.report(
                "REF_UNRESOLVED",
                f"$ref {ref!r} does not point at a $defs entry",
                path,
                did_you_mean(name or ref, self.defs) if self.defs else "declare the target under '$defs:'",
            )

    def _check_keywords(self, node: SchemaNode, path: NodePath) -> None:
        if node.type is None or node.type not in TYPES:
            return
        keywords = set(_KEYWORD_TYPES) - ({"required"} if isinstance(node, Parameter) else set())
        for keyword in sorted(node.model_fields_set & keywords):
            if getattr(node, keyword) is None:
                continue
            allowed = _KEYWORD_TYPES[keyword]
            if node.type not in allowed:
                self.report(
                    "PARAM_KEYWORD_MISPLACED",
                    f"'{keyword}' does not apply to type '{node.type}'",
                    (*path, keyword),
                    f"'{keyword}' applies to {' or '.join(allowed)}",
                    key=True,
                )

    def _bounds(self, node: SchemaNode, path: NodePath) -> dict[str, Any]:
        resolved: dict[str, Any] = {}
        for keyword in (
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
        ):
            value = getattr(node, keyword)
            if value is None:
                continue
            if isinstance(value, str):
                name = value[len(CAP_REF_PREFIX) :]
                if self._max_undefined(name):
                    self._report_max_undefined(name, (*path, keyword))
                    continue
                if name not in self.caps:
                    self.report(
                        "CAP_UNKNOWN",
                        f"'{value}' names no cap of this tool",
                        (*path, keyword),
                        did_you_mean(name, self.caps) or "declare it under 'caps:'",
                    )
                    continue
                value = self.caps[name]
            if keyword in _COUNT_KEYWORDS and (not isinstance(value, int) or value < 0):
                self.report(
                    "SPEC_VALUE_INVALID", f"'{keyword}' must be a whole number >= 0", (*path, keyword)
                )
                continue
            resolved[keyword] = value
        for low, high in _BOUND_PAIRS:
            if low in resolved and high in resolved and resolved[low] > resolved[high]:
                self.report(
                    "PARAM_BOUNDS_INVALID",
                    f"'{low}' ({resolved[low]}) exceeds '{high}' ({resolved[high]})",
                    (*path, low),
                )
        return resolved

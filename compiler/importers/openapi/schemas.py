"""Map an OpenAPI schema onto lynxc's schema subset (`SchemaNode`): `$ref`s inlined, `nullable`
(3.0, `x-nullable` in 2.0) and `type: [..., "null"]` (3.1) as `nullable`, `allOf` merged into one
object, `oneOf`/`anyOf` as `anyOf`, `readOnly` properties dropped from inputs and `writeOnly` ones
from outputs. What would change the meaning (a recursive type, an allOf of non-objects) is
`Unmappable`; what only loosens it (`not`, `discriminator`, an unknown format) is left out."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from .document import Document, Located
from .errors import Unmappable
from .texts import clean_text

Direction = Literal["input", "output"]

MAX_SCHEMA_NODES = 4000  # per operation, once $refs are inlined: a tool an agent can read
MAX_SCHEMA_DEPTH = 48  # nesting of one schema; lynxc's own limit is 100 for the whole spec
SCALARS = ("string", "integer", "number", "boolean")
TYPES = (*SCALARS, "array", "object", "null")
# JSON Schema's own formats: what validators and clients know. Others ("password", "int64",
# vendor names) say nothing a client can check and are left out.
STRING_FORMATS = frozenset(
    (
        "date-time", "date", "time", "duration", "email", "idn-email", "hostname", "idn-hostname",
        "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid", "json-pointer",
    )
)  # fmt: skip
_COPIED = ("minLength", "maxLength", "minItems", "maxItems", "uniqueItems")
_BY_TYPE = {
    "minLength": "string", "maxLength": "string", "pattern": "string", "format": "string",
    "minimum": "numeric", "maximum": "numeric", "exclusiveMinimum": "numeric", "exclusiveMaximum": "numeric",
    "minItems": "array", "maxItems": "array", "uniqueItems": "array", "items": "array",
    "properties": "object", "required": "object", "additionalProperties": "object",
}  # fmt: skip


@dataclass
class SchemaMapper:
    document: Document
    direction: Direction
    nodes: int = 0
    active: list[str] = field(default_factory=list)  # the $refs being inlined: a repeat is recursion
    # Outputs may recurse through `$defs` (lynxc checks such a schema's $refs and their
    # expansion); the definitions found, by name, go to the root of the output schema.
    defs: dict[str, dict[str, Any]] = field(default_factory=dict)
    _def_names: dict[str, str] = field(default_factory=dict)  # $ref target -> name in $defs
    _path: list[str] = field(default_factory=list)  # the schemas being mapped, outermost first

    def map(self, node: Located) -> dict[str, Any]:
        if len(self._path) >= MAX_SCHEMA_DEPTH:
            raise Unmappable(f"schema {node.pointer} nests deeper than {MAX_SCHEMA_DEPTH} levels")
        self._path.append(node.pointer)
        try:
            return self._map(node)
        finally:
            self._path.pop()

    def _map(self, node: Located) -> dict[str, Any]:
        self.nodes += 1
        if self.nodes > MAX_SCHEMA_NODES:
            raise Unmappable(f"its schemas inline to more than {MAX_SCHEMA_NODES} nodes")
        if isinstance(node.value, bool):  # 3.1: `true` accepts anything, `false` nothing
            if node.value:
                return {}
            raise Unmappable(f"schema {node.pointer} is `false`, which accepts nothing")
        if not isinstance(node.value, dict):
            raise Unmappable(f"schema {node.pointer} is not an object")
        if isinstance(node.value.get("$ref"), str):
            return self._ref(node)
        schema = node.value
        if "allOf" in schema:
            return self._all_of(node)
        out: dict[str, Any] = {}
        self._type(node, out)
        for key in ("title", "description"):
            if isinstance(schema.get(key), str) and schema[key].strip():
                out[key] = clean_text(schema[key]) if key == "description" else schema[key].strip()
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            out["enum"] = list(schema["enum"])
        if "const" in schema:
            out["const"] = schema["const"]
        self._numbers(schema, out)
        for key in _COPIED:
            if key in schema and key not in out and _is_number_or_bool(schema[key]):
                out[key] = schema[key]
        if isinstance(schema.get("pattern"), str):
            from ...lower.patterns import pattern_problem  # the build's own check of patterns

            if pattern_problem(schema["pattern"]) is None:
                out["pattern"] = schema["pattern"]
        fmt = schema.get("format")
        if fmt == "binary" and self.direction == "input":
            raise Unmappable(f"schema {node.pointer} is binary data (format: binary), an upload")
        if isinstance(fmt, str) and fmt in STRING_FORMATS:
            out["format"] = fmt
        if "items" in schema:
            items = schema["items"]
            if isinstance(items, list):  # 2020-12 `prefixItems` written the old way: loosen
                out["items"] = {}
            else:
                out["items"] = self.map(node.child("items"))
        if isinstance(schema.get("properties"), dict):
            self._properties(node, out)
        additional = schema.get("additionalProperties")
        if isinstance(additional, bool):
            out["additionalProperties"] = additional
        elif isinstance(additional, dict):
            out["additionalProperties"] = self.map(node.child("additionalProperties"))
        for key in ("oneOf", "anyOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                self._any_of(node, key, out)
        self._infer_type(out)
        self._drop_misplaced(out)
        self._examples(schema, out)
        return out

    def _ref(self, node: Located) -> dict[str, Any]:
        target = self.document.follow(node)
        key = f"{target.file}#{target.pointer}"
        if key in self.active:
            if self.direction == "input":
                raise Unmappable(f"schema {target.pointer or '/'} is recursive (it contains itself)")
            return {"$ref": f"#/$defs/{self._def_name(key, target.pointer)}"}
        self.active.append(key)
        try:
            out = self.map(target)
        finally:
            self.active.pop()
        if key in self._def_names:  # recursive: defined once, referred to from here
            self.defs[self._def_names[key]] = out
            out = {"$ref": f"#/$defs/{self._def_names[key]}"}
        description = node.value.get("description")  # 3.1 allows siblings of $ref
        if isinstance(description, str) and description.strip():
            out = {**out, "description": clean_text(description)}
        return out

    def _def_name(self, key: str, pointer: str) -> str:
        if key not in self._def_names:
            base = re.sub(r"[^A-Za-z0-9_]+", "_", pointer.rsplit("/", 1)[-1]).strip("_") or "Schema"
            name, number = base, 1
            while name in self._def_names.values():
                number += 1
                name = f"{base}_{number}"
            self._def_names[key] = name
        return self._def_names[key]

    def _type(self, node: Located, out: dict[str, Any]) -> None:
        schema = node.value
        kind = schema.get("type")
        nullable = schema.get("nullable") is True or schema.get("x-nullable") is True
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"]
            nullable = nullable or "null" in kind
            if len(kinds) > 1:
                if not all(k in TYPES for k in kinds):
                    raise Unmappable(f"schema {node.pointer} has unknown types {kinds}")
                out["anyOf"] = [{"type": k} for k in kinds]
                kind = None
            else:
                kind = kinds[0] if kinds else "null"
        if kind is not None:
            if kind not in TYPES:
                raise Unmappable(f"schema {node.pointer} has type {kind!r}, not a JSON type")
            if kind == "null" and nullable:
                nullable = False
            out["type"] = kind
        if nullable:
            out["nullable"] = True

    def _numbers(self, schema: dict[str, Any], out: dict[str, Any]) -> None:
        # 3.0 writes exclusive bounds as booleans beside minimum/maximum; 3.1 as the numbers
        for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            value = schema.get(exclusive)
            if value is True and _is_number(schema.get(bound)):
                out[exclusive] = schema[bound]
            elif _is_number(value):
                out[exclusive] = value
                if _is_number(schema.get(bound)):
                    out[bound] = schema[bound]
            elif _is_number(schema.get(bound)):
                out[bound] = schema[bound]

    def _properties(self, node: Located, out: dict[str, Any]) -> None:
        hidden = "readOnly" if self.direction == "input" else "writeOnly"
        properties: dict[str, Any] = {}
        for name in node.value["properties"]:
            child = node.child("properties", name)
            if self._flag(child, hidden):
                continue
            properties[str(name)] = self.map(child)
        out["properties"] = properties
        required = node.value.get("required")
        if isinstance(required, list):
            kept = [str(n) for n in required if str(n) in properties]
            if kept:
                out["required"] = sorted(set(kept), key=kept.index)

    def _flag(self, node: Located, flag: str) -> bool:
        target = self.document.follow(node) if isinstance(node.value, dict) else node
        return isinstance(target.value, dict) and target.value.get(flag) is True

    def _any_of(self, node: Located, key: str, out: dict[str, Any]) -> None:
        branches = [self.map(node.child(key, i)) for i in range(len(node.value[key]))]
        if any(not _standalone(b) for b in branches):
            return  # branches that only add constraints to the outer schema: loosen, keep the outer
        if "anyOf" in out:  # a 3.1 type list as well: both must hold, which the subset cannot say
            raise Unmappable(f"schema {node.pointer} has both a list of types and {key}")
        out["anyOf"] = branches

    def _all_of(self, node: Located) -> dict[str, Any]:
        outer = {k: v for k, v in node.value.items() if k != "allOf"}
        parts = [self.map(node.child("allOf", i)) for i in range(len(node.value["allOf"]))]
        if len(outer) > 0:
            parts.append(self.map(Located(outer, node.file, node.pointer)))
        objects = [p for p in parts if _object_like(p)]
        described = [p for p in parts if set(p) - {"description", "title", "nullable"}]
        if len(described) <= 1:
            merged: dict[str, Any] = {}
            for part in parts:
                merged.update(
                    {k: v for k, v in part.items() if k not in merged or k not in ("description", "title")}
                )
            return merged
        if len(objects) != len(described):
            raise Unmappable(f"schema {node.pointer} has an allOf of schemas that are not all objects")
        merged = {"type": "object", "properties": {}}
        required: list[str] = []
        for part in parts:
            for key in ("title", "description"):
                if key in part and key not in merged:
                    merged[key] = part[key]
            for name, child in (part.get("properties") or {}).items():
                merged["properties"].setdefault(name, child)
            required += [n for n in part.get("required", []) if n not in required]
            if part.get("nullable") and "nullable" not in merged:
                merged["nullable"] = True
        if required:
            merged["required"] = required
        if all(p.get("additionalProperties") is False for p in objects):
            merged["additionalProperties"] = False
        return merged

    def _infer_type(self, out: dict[str, Any]) -> None:
        if "type" in out or "anyOf" in out or "enum" in out or "const" in out:
            return
        if "properties" in out or "additionalProperties" in out:
            out["type"] = "object"
        elif "items" in out:
            out["type"] = "array"

    def _drop_misplaced(self, out: dict[str, Any]) -> None:
        """A keyword of another type (minLength on an integer) is an error in a spec, and the
        validator would ignore it anyway."""
        kind = out.get("type")
        if kind is None:
            for key in _BY_TYPE:
                out.pop(key, None)
            return
        for key, family in _BY_TYPE.items():
            fits = kind in ("integer", "number") if family == "numeric" else kind == family
            if key in out and not fits:
                del out[key]

    def _examples(self, schema: dict[str, Any], out: dict[str, Any]) -> None:
        """`default` and `example` are kept only where they satisfy the schema as mapped: a spec's
        default must (the build checks it), and an example that does not misleads."""
        examples = schema.get("examples") if isinstance(schema.get("examples"), list) else None
        if examples is None and "example" in schema:
            examples = [schema["example"]]
        if "default" in schema and self.direction == "input" and _satisfies(out, schema["default"]):
            out["default"] = schema["default"]
        if examples:
            fitting = [e for e in examples[:3] if _satisfies(out, e)]
            if fitting:
                out["examples"] = fitting


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_number_or_bool(value: Any) -> bool:
    return isinstance(value, int | float)


def _standalone(branch: dict[str, Any]) -> bool:
    return any(k in branch for k in ("type", "anyOf", "enum", "const", "properties"))


def _object_like(part: dict[str, Any]) -> bool:
    return part.get("type") == "object" or ("type" not in part and "properties" in part)


def to_json_schema(node: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema a mapped node stands for (nullable as anyOf with null), to check values."""
    out = {k: v for k, v in node.items() if k not in ("nullable", "description", "title", "examples")}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = to_json_schema(out[key])
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: to_json_schema(v) for k, v in out["properties"].items()}
    if isinstance(out.get("anyOf"), list):
        out["anyOf"] = [to_json_schema(b) for b in out["anyOf"]]
    out.pop("format", None)
    out.pop("pattern", None)
    return {"anyOf": [out, {"type": "null"}]} if node.get("nullable") else out


def _satisfies(node: dict[str, Any], value: Any) -> bool:
    import jsonschema

    try:
        return jsonschema.Draft202012Validator(to_json_schema(node)).is_valid(value)
    except (jsonschema.exceptions.SchemaError, RecursionError, TypeError):
        return False

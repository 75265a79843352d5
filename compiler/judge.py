"""Judge each structural change: which rule it falls under, and whether it breaks clients.

Direction matters. In an input schema, narrowing what is accepted breaks callers (a new
required parameter, a lower maximum, a removed enum value); in an output schema, widening what
may come back breaks consumers (a removed or no longer required field, a new enum value).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .diff import MISSING, ROOT, SCHEMA_SECTIONS, TOOL, Change
from .rules import RULES

Level = Literal["breaking", "warning", "info"]
LEVELS: tuple[Level, ...] = ("breaking", "warning", "info")


@dataclass(frozen=True)
class Finding:
    change: Change
    rule_id: str
    message: str

    @property
    def level(self) -> Level:
        return RULES[self.rule_id].severity  # type: ignore[return-value]

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule_id, "level": self.level, "message": self.message, **self.change.to_json()}


@dataclass(frozen=True)
class _Context:
    change: Change
    direction: Literal["input", "output"]
    keyword: str  # the schema keyword the change is under
    parent: tuple[str, ...]  # path, inside the schema, of the node holding that keyword
    member: str | None  # for a change to one property or definition: its name
    owner_names: tuple[str, ...]  # property names leading to the node, for messages
    old_tool: Mapping[str, Any]
    new_tool: Mapping[str, Any]

    def node(self, which: Literal["old", "new"], path: tuple[str, ...]) -> Any:
        tool = self.old_tool if which == "old" else self.new_tool
        node: Any = tool.get(SCHEMA_SECTIONS[self.change.path[0]], MISSING)
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return MISSING
            node = node[key]
        return node


def judge(change: Change, old_tool: Mapping[str, Any] | None, new_tool: Mapping[str, Any] | None) -> Finding:
    section = change.path[0]
    if section == TOOL:
        if change.op == "removed":
            return Finding(change, "TOOL_REMOVED", f"tool '{change.tool}' was removed")
        return Finding(change, "TOOL_ADDED", f"tool '{change.tool}' was added")
    if section == "Title":
        return Finding(change, "TITLE_CHANGED", "the tool's title changed")
    if section == "Description":
        return Finding(change, "DESCRIPTION_CHANGED", "the tool's description changed")
    if section == "Annotations":
        return _annotation(change, old_tool or {}, new_tool or {})
    direction: Literal["input", "output"] = "input" if section == "Input schema" else "output"
    schema_path = change.path[1:]
    index, member, owners = _locate(schema_path)
    keyword = schema_path[index] if schema_path else ROOT
    context = _Context(
        change, direction, keyword, schema_path[:index], member, owners, old_tool or {}, new_tool or {}
    )
    if schema_path == (ROOT,):
        return _root(context)
    if member is not None:
        return (_property if keyword == "properties" else _definition)(context)
    return _KEYWORD_HANDLERS.get(keyword, _other)(context)


# Keywords whose value maps names to schemas, and keywords whose value is one schema.
_NAMED = frozenset({"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"})
_SUBSCHEMA = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "contains",
        "propertyNames",
        "if",
        "then",
        "else",
        "unevaluatedProperties",
        "unevaluatedItems",
        "additionalItems",
    }
)


def _locate(path: tuple[str, ...]) -> tuple[int, str | None, tuple[str, ...]]:
    """Walk a path inside a schema: return the index of the keyword the change is under, the
    property or definition name when the change is to one member as a whole, and the property
    names on the way. `properties / description` is a property named description, not a
    description keyword; past a plain keyword (`default / a`) the path is data."""
    owners: list[str] = []
    index = 0
    while index < len(path):
        keyword = path[index]
        if keyword in _NAMED and index + 1 < len(path):
            if index + 2 == len(path):
                return index, path[index + 1], tuple(owners)
            if keyword == "properties":
                owners.append(path[index + 1])
            index += 2
        elif keyword in _SUBSCHEMA and index + 1 < len(path):
            index += 1
        else:
            return index, None, tuple(owners)
    return max(index - 1, 0), None, tuple(owners)


# --- annotations --------------------------------------------------------------------------

# MCP defaults: a tool is assumed writable, destructive, not idempotent, open-world.
_HINT_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
# (hint, effective value after) -> (rule, why)
_HINT_RULES: Mapping[tuple[str, bool], tuple[str, str]] = {
    ("readOnlyHint", False): ("READ_ONLY_HINT_REMOVED", "the tool may now modify its environment"),
    ("readOnlyHint", True): ("READ_ONLY_HINT_ADDED", "the tool now declares it is read-only"),
    ("destructiveHint", True): ("DESTRUCTIVE_HINT_ADDED", "the tool may now destroy data"),
    ("destructiveHint", False): ("DESTRUCTIVE_HINT_REMOVED", "the tool no longer declares destruction"),
    ("idempotentHint", False): ("IDEMPOTENT_HINT_REMOVED", "repeating a call may now have more effect"),
    ("idempotentHint", True): ("IDEMPOTENT_HINT_ADDED", "repeating a call now has no further effect"),
    ("openWorldHint", True): ("OPEN_WORLD_HINT_ADDED", "the tool may now reach external systems"),
    ("openWorldHint", False): ("OPEN_WORLD_HINT_REMOVED", "the tool no longer reaches external systems"),
}


def _annotation(change: Change, old_tool: Mapping[str, Any], new_tool: Mapping[str, Any]) -> Finding:
    """Judge the effective hints (MCP defaults filled in), so adding `annotations` as a whole or
    writing a default out explicitly is judged by what it means, not by its shape."""
    hints = [change.path[1]] if len(change.path) > 1 else list(_HINT_DEFAULTS)
    moved = []
    for hint in hints:
        if hint not in _HINT_DEFAULTS:
            continue
        default = _HINT_DEFAULTS[hint]
        before = (old_tool.get("annotations") or {}).get(hint, default)
        after = (new_tool.get("annotations") or {}).get(hint, default)
        if before != after:
            rule, why = _HINT_RULES[(hint, bool(after))]
            moved.append((rule, f"{hint} {json.dumps(before)} -> {json.dumps(after)}: {why}"))
    if not moved:
        return Finding(change, "ANNOTATION_CHANGED", "annotations changed; effective hints are the same")
    worst = min(moved, key=lambda item: LEVELS.index(RULES[item[0]].severity))  # type: ignore[arg-type]
    return Finding(change, worst[0], "; ".join(text for _, text in moved))


# --- schemas ------------------------------------------------------------------------------


def _root(c: _Context) -> Finding:
    old, new = c.change.before, c.change.after
    if c.direction == "output":
        if new is None:
            return Finding(c.change, "OUTPUT_SCHEMA_REMOVED", "the output schema was removed")
        if old is None:
            return Finding(c.change, "OUTPUT_SCHEMA_ADDED", "an output schema was added")
    return Finding(c.change, "INPUT_SCHEMA_REPLACED", "the input schema was replaced")


def _owner(c: _Context) -> str:
    """'parameter x' / 'output field a.b' for messages."""
    names = (*c.owner_names, c.member) if c.member and c.keyword == "properties" else c.owner_names
    what = "parameter" if c.direction == "input" else "output field"
    return f"{what} '{'.'.join(names)}'" if names else ("input" if c.direction == "input" else "output")


def _property(c: _Context) -> Finding:
    """One property added or removed as a whole."""
    if c.change.op == "changed":
        return _other(c)
    return _members(c, [c.member or ""], _owner(c))


def _properties(c: _Context) -> Finding:
    """The whole `properties` keyword appeared or vanished."""
    if c.change.op == "changed":
        return _other(c)
    names = sorted((c.change.after if c.change.op == "added" else c.change.before) or {})
    what = "parameters" if c.direction == "input" else "output fields"
    return _members(c, names, f"{what} {', '.join(names)}")


def _members(c: _Context, names: list[str], who: str) -> Finding:
    """Properties added or removed: for inputs, required ones break callers; for outputs,
    removed ones break consumers."""
    if c.direction == "input":
        if c.change.op == "removed":
            return Finding(c.change, "PARAM_REMOVED", f"{who} removed; callers sending it fail")
        required = c.node("new", (*c.parent, "required"))
        if isinstance(required, list) and set(required) & set(names):
            return Finding(c.change, "PARAM_ADDED_REQUIRED", f"{who} added as required")
        return Finding(c.change, "PARAM_ADDED_OPTIONAL", f"{who} added as optional")
    if c.change.op == "removed":
        return Finding(c.change, "OUTPUT_PROPERTY_REMOVED", f"{who} removed")
    return Finding(c.change, "OUTPUT_PROPERTY_ADDED", f"{who} added")


def _required(c: _Context) -> Finding:
    old = set(c.change.before) if isinstance(c.change.before, list) else set()
    new = set(c.change.after) if isinstance(c.change.after, list) else set()
    existed = c.node("old", (*c.parent, "properties"))
    existed = set(existed) if isinstance(existed, dict) else set()
    if c.direction == "input":
        newly = sorted((new - old) & existed)
        if newly:
            return Finding(c.change, "PARAM_BECAME_REQUIRED", f"now required: {', '.join(newly)}")
        if old - new:
            return Finding(c.change, "PARAM_BECAME_OPTIONAL", f"now optional: {', '.join(sorted(old - new))}")
        return Finding(c.change, "REQUIRED_CHANGED", "required now lists the new parameters")
    if old - new:
        dropped = ", ".join(sorted(old - new))
        return Finding(c.change, "OUTPUT_REQUIRED_REMOVED", f"no longer guaranteed in the output: {dropped}")
    return Finding(c.change, "OUTPUT_REQUIRED_ADDED", f"now guaranteed: {', '.join(sorted(new - old))}")


def _types(node: Any) -> frozenset[str] | None:
    """What a schema node admits, coarsely: JSON type names (None = anything)."""
    if not isinstance(node, dict):
        return None
    members = node.get("anyOf", node.get("oneOf"))
    if isinstance(members, list):
        found: set[str] = set()
        for member in members:
            kinds = _types(member)
            if kinds is None:
                return None
            found |= kinds
        return frozenset(found)
    kind = node.get("type")
    if isinstance(kind, str):
        kinds = {kind}
    elif isinstance(kind, list):
        kinds = set(kind)
    elif "$ref" in node:
        kinds = {"ref:" + str(node["$ref"])}
    elif "const" in node or "enum" in node:
        values = [node["const"]] if "const" in node else node["enum"]
        kinds = {_json_type(v) for v in values}
    else:
        return None
    if "number" in kinds:
        kinds.add("integer")  # every integer is a number
    return frozenset(kinds)


def _same_types(c: _Context, owner: str) -> Finding:
    """Same JSON types on both sides: compare the listed values of enum/const members, else say
    the members were only reordered, or that a reviewer must look."""
    before, after = c.change.before, c.change.after
    if isinstance(before, list) and isinstance(after, list) and _as_set(before) == _as_set(after):
        return Finding(c.change, "SCHEMA_REORDERED", f"{owner}: '{c.keyword}' members were reordered")
    old, new = _listed_values(c.node("old", c.parent)), _listed_values(c.node("new", c.parent))
    if old is not None and new is not None and old != new:
        added, removed = sorted(new - old), sorted(old - new)
        if c.direction == "input":
            if removed:
                return Finding(
                    c.change,
                    "ENUM_VALUE_REMOVED",
                    f"{owner} no longer accepts {', '.join(removed)}",
                )
            return Finding(c.change, "ENUM_VALUE_ADDED", f"{owner} also accepts {', '.join(added)}")
        if added:
            return Finding(c.change, "OUTPUT_ENUM_VALUE_ADDED", f"{owner} may now return {', '.join(added)}")
        return Finding(
            c.change, "OUTPUT_ENUM_VALUE_REMOVED", f"{owner} no longer returns {', '.join(removed)}"
        )
    return Finding(
        c.change,
        "SCHEMA_CHANGED",
        f"{owner}: '{c.keyword}' changed within the same types; review it",
    )


def _as_set(members: list[Any]) -> set[str]:
    return {json.dumps(member, sort_keys=True) for member in members}


def _listed_values(node: Any) -> set[str] | None:
    """JSON texts of every enum/const value a node lists (across anyOf members); None if any
    member admits a whole type rather than listed values (other than null)."""
    if not isinstance(node, dict):
        return None
    members = node.get("anyOf", node.get("oneOf"))
    if isinstance(members, list):
        found: set[str] = set()
        for member in members:
            if isinstance(member, dict) and member.get("type") == "null" and len(member) == 1:
                found.add("null")
                continue
            values = _listed_values(member)
            if values is None:
                return None
            found |= values
        return found
    if "const" in node:
        return {json.dumps(node["const"])}
    if isinstance(node.get("enum"), list):
        return {json.dumps(v) for v in node["enum"]}
    return None


def _json_type(value: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
    }.get(type(value), "null")


def _type(c: _Context) -> Finding:
    old, new = _types(c.node("old", c.parent)), _types(c.node("new", c.parent))
    owner = _owner(c)
    if old == new:
        return _same_types(c, owner)
    widened = new is None or (old is not None and old < new)
    narrowed = old is None or (new is not None and new < old)
    if c.direction == "input":
        if widened:
            return Finding(c.change, "PARAM_TYPE_WIDENED", f"{owner} accepts more types")
        if narrowed:
            return Finding(c.change, "PARAM_TYPE_NARROWED", f"{owner} accepts fewer types")
        return Finding(c.change, "PARAM_TYPE_CHANGED", f"{owner} changed type")
    if narrowed:
        return Finding(c.change, "OUTPUT_TYPE_NARROWED", f"{owner} returns fewer types")
    if widened:
        return Finding(c.change, "OUTPUT_TYPE_WIDENED", f"{owner} may return types it did not before")
    return Finding(c.change, "OUTPUT_TYPE_CHANGED", f"{owner} changed type")


def _enum(c: _Context) -> Finding:
    old, new = _values(c.change.before, c.keyword), _values(c.change.after, c.keyword)
    owner = _owner(c)
    removed = [v for v in old or [] if v not in (new or [])]
    added = [v for v in new or [] if v not in (old or [])]
    if c.direction == "input":
        if old is None:
            return Finding(c.change, "ENUM_ADDED", f"{owner} is now limited to {json.dumps(new)}")
        if new is None:
            return Finding(c.change, "ENUM_REMOVED", f"{owner} is no longer limited to listed values")
        if removed:
            return Finding(c.change, "ENUM_VALUE_REMOVED", f"{owner} no longer accepts {_list(removed)}")
        return Finding(c.change, "ENUM_VALUE_ADDED", f"{owner} also accepts {_list(added)}")
    if new is None or added:
        what = "any value" if new is None else _list(added)
        return Finding(c.change, "OUTPUT_ENUM_VALUE_ADDED", f"{owner} may now return {what}")
    return Finding(c.change, "OUTPUT_ENUM_VALUE_REMOVED", f"{owner} no longer returns {_list(removed)}")


def _values(value: Any, keyword: str) -> list[Any] | None:
    """An enum's values, or a const as a one-value enum; None when the keyword is absent."""
    if value is MISSING:
        return None
    if keyword == "const":
        return [value]
    return value if isinstance(value, list) else None


def _list(values: list[Any]) -> str:
    return ", ".join(json.dumps(v) for v in values)


# keyword -> (rule when tightened, rule when relaxed, True if a larger value is tighter)
_BOUNDS: Mapping[str, tuple[str, str, bool]] = {
    "maximum": ("MAXIMUM_DECREASED", "MAXIMUM_INCREASED", False),
    "exclusiveMaximum": ("MAXIMUM_DECREASED", "MAXIMUM_INCREASED", False),
    "minimum": ("MINIMUM_INCREASED", "MINIMUM_DECREASED", True),
    "exclusiveMinimum": ("MINIMUM_INCREASED", "MINIMUM_DECREASED", True),
    "maxLength": ("MAX_LENGTH_DECREASED", "MAX_LENGTH_INCREASED", False),
    "minLength": ("MIN_LENGTH_INCREASED", "MIN_LENGTH_DECREASED", True),
    "maxItems": ("MAX_ITEMS_DECREASED", "MAX_ITEMS_INCREASED", False),
    "minItems": ("MIN_ITEMS_INCREASED", "MIN_ITEMS_DECREASED", True),
}


def _bound(c: _Context) -> Finding:
    tighter_rule, looser_rule, larger_is_tighter = _BOUNDS[c.keyword]
    old, new = c.change.before, c.change.after
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (old, new))
    if old is MISSING:
        tightened = True  # a new bound where there was none
    elif new is MISSING:
        tightened = False
    elif numeric:
        tightened = (new > old) if larger_is_tighter else (new < old)
    else:
        return _other(c)
    shown = f"{c.keyword} {_shown(old)} -> {_shown(new)}"
    owner = _owner(c)
    if c.direction == "input":
        if tightened:
            return Finding(c.change, tighter_rule, f"{owner} accepts less: {shown}")
        return Finding(c.change, looser_rule, f"{owner} accepts more: {shown}")
    if tightened:
        return Finding(c.change, "OUTPUT_RANGE_NARROWED", f"{owner} returns a narrower range: {shown}")
    return Finding(
        c.change, "OUTPUT_RANGE_WIDENED", f"{owner} may return values outside the old range: {shown}"
    )


def _shown(value: Any) -> str:
    return "(none)" if value is MISSING else json.dumps(value)


def _pattern(c: _Context) -> Finding:
    owner = _owner(c)
    if c.direction == "output":
        return Finding(c.change, "OUTPUT_PATTERN_CHANGED", f"{owner} may return strings of another form")
    if c.change.op == "removed":
        return Finding(c.change, "PATTERN_REMOVED", f"{owner} has no pattern any more")
    return Finding(c.change, "PATTERN_CHANGED", f"{owner} must match a new pattern")


def _additional(c: _Context) -> Finding:
    old, new = c.change.before, c.change.after
    restricted = new is False or (new is not MISSING and old in (MISSING, True))
    if c.direction == "input" and restricted:
        return Finding(c.change, "ADDITIONAL_PROPERTIES_RESTRICTED", f"{_owner(c)} rejects extra keys")
    return Finding(c.change, "ADDITIONAL_PROPERTIES_CHANGED", f"{_owner(c)}: additionalProperties changed")


def _default(c: _Context) -> Finding:
    if c.direction == "output":
        return Finding(c.change, "OUTPUT_DEFAULT_CHANGED", f"{_owner(c)}: documented default changed")
    return Finding(
        c.change,
        "DEFAULT_CHANGED",
        f"{_owner(c)}: callers relying on the default get new behaviour",
    )


def _definition(c: _Context) -> Finding:
    name = c.member
    if c.change.op == "removed":
        return Finding(c.change, "DEFINITION_REMOVED", f"definition '{name}' was removed")
    if c.change.op == "added":
        return Finding(c.change, "DEFINITION_ADDED", f"definition '{name}' was added")
    return _other(c)


def _defs(c: _Context) -> Finding:
    if c.change.op == "changed":
        return _other(c)
    verb = "added" if c.change.op == "added" else "removed"
    return Finding(c.change, f"DEFINITION_{verb.upper()}", f"definitions were {verb}")


def _simple(rule: str, what: str) -> Callable[[_Context], Finding]:
    return lambda c: Finding(c.change, rule, f"{_owner(c)}: {what}")


def _other(c: _Context) -> Finding:
    return Finding(c.change, "SCHEMA_CHANGED", f"{_owner(c)}: '{c.keyword}' changed")


_KEYWORD_HANDLERS: Mapping[str, Callable[[_Context], Finding]] = {
    "description": _simple("DESCRIPTION_CHANGED", "description changed"),
    "title": _simple("TITLE_CHANGED", "title changed"),
    "examples": _simple("EXAMPLES_CHANGED", "examples changed"),
    "$schema": _simple("SCHEMA_DIALECT_CHANGED", "JSON Schema dialect changed"),
    "format": _simple("FORMAT_CHANGED", "format changed"),
    "default": _default,
    "required": _required,
    "type": _type,
    "anyOf": _type,
    "oneOf": _type,
    "$ref": _type,
    "enum": _enum,
    "const": _enum,
    "pattern": _pattern,
    "additionalProperties": _additional,
    "properties": _properties,
    "$defs": _defs,
    **{keyword: _bound for keyword in _BOUNDS},
}

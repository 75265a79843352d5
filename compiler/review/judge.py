"""Judge each structural change: which rule it falls under, and whether it breaks clients.

Direction matters. In an input schema, narrowing what is accepted breaks callers (a new
required parameter, a lower maximum, a removed enum value); in an output schema, widening what
may come back breaks consumers (a removed or no longer required field, a new enum value).

An `anyOf`/`oneOf` is judged member by member: the members of both versions are paired
(`judge_combinators`) and each pair is diffed and judged by these same rules, so an enum
changed inside a member weighs what it weighs outside one. Only what no pairing can prove is
left to a reviewer (SCHEMA_CHANGED).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from .auth import claim_binding, judge_tool_auth, judges_tool_auth
from .diff import MISSING, ROOT, SCHEMA_SECTIONS, TOOL, Change, diff_schemas
from .judge_bounds import RANGE_KEYWORDS, BoundSide, Moved, bound_moved, shown_bound
from .judge_combinators import (
    as_set,
    judge_combinator,
    listed_beside,
    listed_change,
    moved_keyword,
    summed_up,
    type_change,
    value_shift,
)
from .judge_context import DEFINITION_KEYWORDS, LEVELS, Direction, Finding, Level, SchemaContext, worst_of
from .judge_context import owner as _owner
from .judge_dependencies import DEPENDENCY_KEYWORDS, judge_dependency
from .judge_overlap import said_by
from .schema_alternatives import (
    ANNOTATIONS,
    NAMED_KEYWORDS,
    admitted_types,
    canonical,
    combinator,
    combinators_differ,
    extra_keys,
    listed_values,
    node_starts,
)
from .tool_fields import (
    annotation_title_moved,
    annotations_without_hints,
    judge_tool_field,
    judges_tool_field,
)

__all__ = ["LEVELS", "Finding", "Level", "judge"]


def judge(change: Change, old_tool: Mapping[str, Any] | None, new_tool: Mapping[str, Any] | None) -> Finding:
    section = change.path[0]
    if judges_tool_auth(change):
        return judge_tool_auth(change, old_tool or {}, new_tool or {})
    if judges_tool_field(change):
        return judge_tool_field(change, old_tool or {}, new_tool or {})
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
    direction: Direction = "input" if section == "Input schema" else "output"
    field = SCHEMA_SECTIONS[section]
    old_root, new_root = (old_tool or {}).get(field, MISSING), (new_tool or {}).get(field, MISSING)
    finding = _judge_schema(change, direction, old_root, new_root)
    if direction == "input":
        finding = claim_binding(finding, old_tool or {}, new_tool or {})
    said = said_by(change, old_root, new_root)
    return finding if said is None else replace(finding, said_by=said)


def _judge_schema(
    change: Change,
    direction: Direction,
    old_root: Any,
    new_root: Any,
    owners: tuple[str, ...] = (),
    label: str = "",
) -> Finding:
    """Judge a change whose path (after its section) starts at `old_root`/`new_root`."""
    schema_path = change.path[1:]
    index, member, found = _locate(schema_path)
    keyword = schema_path[index] if schema_path else ROOT
    context = SchemaContext(
        change, direction, keyword, schema_path[:index], member, (*owners, *found), old_root, new_root, label
    )
    if schema_path == (ROOT,):
        return _root(context)
    moved = moved_keyword(context)
    if moved is not None:
        return moved
    if member is not None:
        return (_property if keyword == "properties" else _definition)(context)
    return _KEYWORD_HANDLERS.get(keyword, _other)(context)


def _locate(path: tuple[str, ...]) -> tuple[int, str | None, tuple[str, ...]]:
    """Walk a path inside a schema: return the index of the keyword the change is under, the
    property or definition name when the change is to one member as a whole, and the property
    names on the way. `properties / description` is a property named description, not a
    description keyword; past a plain keyword (`default / a`) the path is data."""
    starts = node_starts(path)
    index = starts[-1]
    owners: tuple[str, ...] = ()
    for i in starts[:-1]:
        if path[i] == "properties":
            owners = (*owners, path[i + 1])
        elif path[i] in DEFINITION_KEYWORDS:
            # A definition is reached only through a `$ref`: name it as the ref does, and the
            # properties under it from there.
            owners = (f"#/{path[i]}/{path[i + 1]}",)
    if index + 2 == len(path) and path[index] in NAMED_KEYWORDS:
        return index, path[index + 1], owners
    return index, None, owners


# --- annotations --------------------------------------------------------------------------

# MCP defaults: a tool is assumed writable, destructive, not idempotent, open-world (the docs'
# badges say so too, compiler/docs/model.py).
HINT_DEFAULTS = {
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
    hints = [change.path[1]] if len(change.path) > 1 else list(HINT_DEFAULTS)
    moved = []
    for hint in hints:
        if hint not in HINT_DEFAULTS:
            continue
        default = HINT_DEFAULTS[hint]
        before = (old_tool.get("annotations") or {}).get(hint, default)
        after = (new_tool.get("annotations") or {}).get(hint, default)
        if before != after:
            rule, why = _HINT_RULES[(hint, bool(after))]
            moved.append((rule, f"{hint} {json.dumps(before)} -> {json.dumps(after)}: {why}"))
    if len(change.path) == 1 and moved:
        # `annotations` added or removed whole: its display title came or went with the hints.
        title = annotation_title_moved(old_tool, new_tool)
        moved += [("TITLE_CHANGED", title)] if title else []
    if not moved:
        if len(change.path) > 1 and change.path[1] in HINT_DEFAULTS:
            return _hint_same(change, HINT_DEFAULTS[change.path[1]])
        return annotations_without_hints(change, old_tool, new_tool, HINT_DEFAULTS)
    return worst_of(change, moved)


def _hint_same(change: Change, default: bool) -> Finding:
    """One hint written out, or dropped, at the value MCP assumes when it is absent: say which
    hint, not a title or another sibling that moved in the same release."""
    shown = " -> ".join("(none)" if v is MISSING else json.dumps(v) for v in (change.before, change.after))
    return Finding(
        change,
        "ANNOTATION_CHANGED",
        f"{change.path[1]} {shown}: absent means {json.dumps(default)}, so the effective hints are the same",
    )


# --- schemas ------------------------------------------------------------------------------


# What the MCP specification asks of a tool's input schema (Tool.inputSchema: required, and
# `type: "object"`): the arguments of a call are always an object.
_MCP_INPUT_SCHEMA = {"type": "object"}
_NOT_VALID = "is not a valid input schema in MCP (it must be an object schema)"


def _root(c: SchemaContext) -> Finding:
    old, new = c.change.before, c.change.after
    if c.direction == "output":
        if new is None:
            return Finding(c.change, "OUTPUT_SCHEMA_REMOVED", "the output schema was removed")
        if old is None:
            return Finding(c.change, "OUTPUT_SCHEMA_ADDED", "an output schema was added")
        return Finding(c.change, "SCHEMA_CHANGED", "the output schema is not an object schema; review it")
    if isinstance(new, dict):
        return _repaired_input(c)
    what = "null" if new is None else json.dumps(new)
    return Finding(
        c.change,
        "INPUT_SCHEMA_REPLACED",
        f"the input schema became {what}, which {_NOT_VALID}: clients may refuse to list or call the tool",
    )


def _repaired_input(c: SchemaContext) -> Finding:
    """An object schema where there was none (null, or a value that is no schema MCP allows).
    Clients had to send arguments unchecked, so the old schema is read as the loosest valid one,
    `{type: object}`, and the new one is judged against it: a repair unless it requires or
    forbids what any call could send."""
    was = "null" if c.change.before is None else json.dumps(c.change.before)
    changes = diff_schemas(c.change.tool, c.change.path[:1], _MCP_INPUT_SCHEMA, c.change.after)
    found = [_judge_schema(sub, "input", _MCP_INPUT_SCHEMA, c.change.after) for sub in changes]
    narrowing = [f for f in found if f.level != "info"]
    if not narrowing:
        return Finding(
            c.change,
            "INPUT_SCHEMA_REPAIRED",
            f"the input schema was {was}, which {_NOT_VALID}; it is now an object schema: "
            "every call that worked still works",
        )
    led = summed_up(c, narrowing)
    return Finding(
        c.change,
        led.rule_id,
        f"the input schema was {was} (any arguments); the object schema narrows it: {led.message}",
    )


def _input_root_type(c: SchemaContext) -> Finding | None:
    """`type: object` given to the root of an input schema narrows nothing: arguments are always
    an object. It repairs the schema to what MCP requires."""
    if c.direction != "input" or c.change.path[1:] != ("type",) or c.owner_names or c.label:
        return None
    if admitted_types(c.node("new", ())) != frozenset({"object"}):
        return None
    return Finding(
        c.change,
        "INPUT_SCHEMA_REPAIRED",
        "the input schema now declares type: object, as MCP requires; arguments were always an object",
    )


def _property(c: SchemaContext) -> Finding:
    """One property added or removed as a whole."""
    if c.change.op == "changed":
        return _other(c)
    return _members(c, [c.member or ""], _owner(c))


def _properties(c: SchemaContext) -> Finding:
    """The whole `properties` keyword appeared or vanished. Dropped from an input object that
    still accepts any key, it rejects nothing: the names are merely no longer declared."""
    if c.change.op == "changed":
        return _other(c)
    names = sorted((c.change.after if c.change.op == "added" else c.change.before) or {})
    if not names:
        return Finding(
            c.change,
            "SCHEMA_RESTRUCTURED",
            f"{_owner(c)}: an empty 'properties' was {c.change.op}; nothing changes",
        )
    if c.direction == "input" and c.change.op == "removed":
        extra = extra_keys(c.node("new", c.parent))
        if extra == "open":
            them = "it" if len(names) == 1 else "them"
            return Finding(
                c.change,
                "PROPERTIES_UNDECLARED",
                f"{_owner(c)}: {', '.join(names)} no longer declared but still accepted "
                f"(additionalProperties allows {them})",
            )
        if extra == "schema":
            return Finding(
                c.change,
                "SCHEMA_CHANGED",
                f"{_owner(c)}: {', '.join(names)} no longer declared; "
                "extra keys have their own schema, review it",
            )
    return _members(c, names, _parameters(names) if c.direction == "input" else _fields(names))


def _members(c: SchemaContext, names: list[str], who: str) -> Finding:
    """Properties added or removed: for inputs, required ones break callers; for outputs,
    removed ones break consumers."""
    hint = _rename_hint(c) if c.member is not None and c.change.op == "removed" else None
    if c.direction == "input":
        if c.change.op == "removed":
            return Finding(c.change, "PARAM_REMOVED", f"{who} removed; {_still_sent(c)}", hint)
        required = c.node("new", (*c.parent, "required"))
        needed = [name for name in names if isinstance(required, list) and name in required]
        if not needed:
            return Finding(c.change, "PARAM_ADDED_OPTIONAL", f"{who} added as optional")
        optional = [name for name in names if name not in needed]
        if not optional:
            return Finding(c.change, "PARAM_ADDED_REQUIRED", f"{who} added as required")
        # Several parameters declared at once: name which of them a caller must now send.
        return Finding(
            c.change,
            "PARAM_ADDED_REQUIRED",
            f"{_parameters(needed)} added as required; {_parameters(optional)} added as optional",
        )
    if c.change.op == "removed":
        return Finding(c.change, "OUTPUT_PROPERTY_REMOVED", f"{who} removed", hint)
    return Finding(c.change, "OUTPUT_PROPERTY_ADDED", f"{who} added")


# What becomes of a removed parameter that a caller still sends, by what the object does with
# keys it does not declare. Open objects are the common case (no `additionalProperties`): the
# call goes through and the value is dropped without a word, which is why it stays breaking.
_STILL_SENT = {
    "closed": "callers still sending it are rejected (additionalProperties: false)",
    "open": "callers still sending it are no longer refused: the argument is silently ignored",
    "schema": "callers still sending it have it checked against additionalProperties/patternProperties",
}


def _still_sent(c: SchemaContext) -> str:
    return _STILL_SENT[extra_keys(c.node("new", c.parent))]


def _parameters(names: list[str]) -> str:
    return f"parameter '{names[0]}'" if len(names) == 1 else f"parameters {', '.join(names)}"


def _fields(names: list[str]) -> str:
    return f"output field '{names[0]}'" if len(names) == 1 else f"output fields {', '.join(names)}"


def _rename_hint(c: SchemaContext) -> str | None:
    """A removed property whose schema (annotations aside) exactly one added sibling has, and
    no other removed one: probably renamed. Said once, beside the removal."""
    old, new = c.node("old", (*c.parent, "properties")), c.node("new", (*c.parent, "properties"))
    if not isinstance(old, dict) or not isinstance(new, dict) or c.member not in old:
        return None

    def shape(schema: Any) -> str:
        bare = (
            {k: v for k, v in schema.items() if k not in ANNOTATIONS} if isinstance(schema, dict) else schema
        )
        return canonical(bare)

    targets = [name for name in new if name not in old and shape(new[name]) == shape(old[c.member])]
    if len(targets) != 1:
        return None
    sources = [name for name in old if name not in new and shape(old[name]) == shape(new[targets[0]])]
    return f"probably renamed to '{targets[0]}' (same schema)" if sources == [c.member] else None


def _required(c: SchemaContext) -> Finding:
    old = set(c.change.before) if isinstance(c.change.before, list) else set()
    new = set(c.change.after) if isinstance(c.change.after, list) else set()
    existed = c.node("old", (*c.parent, "properties"))
    existed = set(existed) if isinstance(existed, dict) else set()
    if old == new and old:
        return Finding(c.change, "SCHEMA_REORDERED", f"{_owner(c)}: 'required' members were reordered")
    if old == new:  # `required: []` written out or dropped: no name moved
        return Finding(
            c.change, "REQUIRED_CHANGED", f"an empty 'required' was {c.change.op}; nothing changes"
        )
    if c.direction == "input":
        newly = sorted((new - old) & existed)
        if newly:
            return Finding(c.change, "PARAM_BECAME_REQUIRED", f"now required: {', '.join(newly)}")
        # A name that left `required` with its property was removed, not made optional.
        remaining = c.node("new", (*c.parent, "properties"))
        relaxed = sorted((old - new) & set(remaining if isinstance(remaining, dict) else ()))
        if relaxed:
            return Finding(c.change, "PARAM_BECAME_OPTIONAL", f"now optional: {', '.join(relaxed)}")
        if old - new:
            added, removed = ", ".join(sorted(new - old)), ", ".join(sorted(old - new))
            follows = f"added ({added}) and removed ({removed})" if added else f"removed ({removed})"
            return Finding(c.change, "REQUIRED_CHANGED", f"required follows the parameters {follows}")
        listed = f": {', '.join(sorted(new - old))}" if new - old else ""
        return Finding(c.change, "REQUIRED_CHANGED", f"required now lists the new parameters{listed}")
    if old - new:
        dropped = ", ".join(sorted(old - new))
        return Finding(c.change, "OUTPUT_REQUIRED_REMOVED", f"no longer guaranteed in the output: {dropped}")
    return Finding(c.change, "OUTPUT_REQUIRED_ADDED", f"now guaranteed: {', '.join(sorted(new - old))}")


def _type(c: SchemaContext) -> Finding:
    repaired = _input_root_type(c)
    if repaired is not None:
        return repaired
    old_node, new_node = c.node("old", c.parent), c.node("new", c.parent)
    old, new = admitted_types(old_node), admitted_types(new_node)
    owner = _owner(c)
    if old != new:
        shift = value_shift(c)
        found = [type_change(c, old, new, shift)]
        old_values, new_values = listed_values(old_node), listed_values(new_node)
        if old_values is not None and new_values is not None:
            found += listed_beside(c, found, shift, old_values, new_values)
        return summed_up(c, found)
    if combinators_differ(old_node, new_node):
        # `type: object` moved into (or out of) anyOf members: the types stay; what the
        # members add or drop is judged on the combinator's own entry.
        kind = combinator(new_node) or combinator(old_node)
        return Finding(
            c.change,
            "SCHEMA_RESTRUCTURED",
            f"{owner}: same types as before (see '{kind}')",
        )
    return _same_types(c, owner)


def _same_types(c: SchemaContext, owner: str) -> Finding:
    """Same JSON types on both sides: compare the listed values of enum/const members, else say
    the members were only reordered, or that a reviewer must look."""
    before, after = c.change.before, c.change.after
    if isinstance(before, list) and isinstance(after, list) and as_set(before) == as_set(after):
        return Finding(c.change, "SCHEMA_REORDERED", f"{owner}: '{c.keyword}' members were reordered")
    old, new = listed_values(c.node("old", c.parent)), listed_values(c.node("new", c.parent))
    if old is not None and new is not None and old != new:
        return listed_change(c, old, new)
    return Finding(
        c.change,
        "SCHEMA_CHANGED",
        f"{owner}: '{c.keyword}' changed within the same types; review it",
    )


def _dependency(c: SchemaContext) -> Finding:
    schema_path = c.change.path[1:]
    at = len(c.parent) + 1
    trigger = schema_path[at] if len(schema_path) > at else None
    found = judge_dependency(c, trigger)
    if not found:
        return Finding(
            c.change, "SCHEMA_RESTRUCTURED", f"{_owner(c)}: '{c.keyword}' changed form; same conditions"
        )
    return summed_up(c, found)


def _combinator(c: SchemaContext) -> Finding:
    return judge_combinator(c, _judge_schema)


def _enum(c: SchemaContext) -> Finding:
    old, new = _values(c.change.before, c.keyword), _values(c.change.after, c.keyword)
    owner = _owner(c)
    if c.direction == "input":
        if old is None:
            return Finding(c.change, "ENUM_ADDED", f"{owner} is now limited to {_list(new or [])}")
        if new is None:
            return Finding(c.change, "ENUM_REMOVED", f"{owner} is no longer limited to listed values")
    elif new is None:
        return Finding(c.change, "OUTPUT_ENUM_VALUE_ADDED", f"{owner} may now return any value")
    elif old is None:  # a list where there was none: fewer values may come back
        return Finding(c.change, "OUTPUT_ENUM_VALUE_REMOVED", f"{owner} now returns only {_list(new)}")
    return listed_change(c, [json.dumps(v) for v in old or []], [json.dumps(v) for v in new])


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


def _bound(c: SchemaContext) -> Finding:
    tighter_rule, looser_rule, larger_is_tighter = _BOUNDS[c.keyword]
    side = RANGE_KEYWORDS.get(c.keyword)
    judged = _range_moved(c, side) if side is not None else _limit_moved(c, larger_is_tighter)
    if judged is None:
        return _other(c)
    moved, shown = judged
    owner = _owner(c)
    if moved == "same":
        return Finding(c.change, "SCHEMA_RESTRUCTURED", f"{owner}: {shown}; it admits the same values")
    tightened = moved == "tighter"
    if c.direction == "input":
        if tightened:
            return Finding(c.change, tighter_rule, f"{owner} accepts less: {shown}")
        return Finding(c.change, looser_rule, f"{owner} accepts more: {shown}")
    if tightened:
        return Finding(c.change, "OUTPUT_RANGE_NARROWED", f"{owner} returns a narrower range: {shown}")
    return Finding(
        c.change, "OUTPUT_RANGE_WIDENED", f"{owner} may return values outside the old range: {shown}"
    )


def _range_moved(c: SchemaContext, side: BoundSide) -> tuple[Moved, str] | None:
    """A numeric range bound judged whole (every keyword that sets it, on both sides): one
    rewritten in another keyword is said once, by the same words from each entry, and only as
    far as the values it admits moved."""
    old_node, new_node = c.node("old", c.parent), c.node("new", c.parent)
    moved = bound_moved(old_node, new_node, side)
    if moved is None:
        return None
    return moved, shown_bound(old_node, new_node, side)


def _limit_moved(c: SchemaContext, larger_is_tighter: bool) -> tuple[Moved, str] | None:
    """A length or item count limit: one keyword, compared value to value."""
    old, new = c.change.before, c.change.after
    if old is MISSING:
        tightened = True  # a new limit where there was none
    elif new is MISSING:
        tightened = False
    elif all(isinstance(v, int | float) and not isinstance(v, bool) for v in (old, new)):
        tightened = (new > old) if larger_is_tighter else (new < old)
    else:
        return None
    return ("tighter" if tightened else "looser"), f"{c.keyword} {_shown(old)} -> {_shown(new)}"


def _shown(value: Any) -> str:
    return "(none)" if value is MISSING else json.dumps(value)


def _pattern(c: SchemaContext) -> Finding:
    owner = _owner(c)
    if c.direction == "output":
        return Finding(c.change, "OUTPUT_PATTERN_CHANGED", f"{owner} may return strings of another form")
    if c.change.op == "removed":
        return Finding(c.change, "PATTERN_REMOVED", f"{owner} has no pattern any more")
    return Finding(c.change, "PATTERN_CHANGED", f"{owner} must match a new pattern")


def _additional(c: SchemaContext) -> Finding:
    old, new = c.change.before, c.change.after
    restricted = new is False or (new is not MISSING and old in (MISSING, True))
    if c.direction == "input" and restricted:
        what = "rejects extra keys" if new is False else "checks extra keys against a schema"
        return Finding(c.change, "ADDITIONAL_PROPERTIES_RESTRICTED", f"{_owner(c)} {what}")
    shown = f"additionalProperties {_extra_keys_shown(old)} -> {_extra_keys_shown(new)}"
    if old is False and new in (MISSING, True):
        effect = "accepts extra keys again" if c.direction == "input" else "may hold keys it does not declare"
        return Finding(c.change, "ADDITIONAL_PROPERTIES_CHANGED", f"{_owner(c)} {effect} ({shown})")
    if c.direction == "output" and new is False:
        return Finding(
            c.change,
            "ADDITIONAL_PROPERTIES_CHANGED",
            f"{_owner(c)} now holds only the keys it declares ({shown})",
        )
    return Finding(c.change, "ADDITIONAL_PROPERTIES_CHANGED", f"{_owner(c)}: {shown}")


def _extra_keys_shown(value: Any) -> str:
    """`false`, `(none)`, or `a schema`: a schema's text can be any size, and the change's own
    values show it."""
    return "a schema" if isinstance(value, dict) and value else _shown(value)


def _default(c: SchemaContext) -> Finding:
    if c.direction == "output":
        return Finding(c.change, "OUTPUT_DEFAULT_CHANGED", f"{_owner(c)}: documented default changed")
    if c.change.before is MISSING and _was_required(c):
        return Finding(
            c.change,
            "DEFAULT_ADDED",
            f"{_owner(c)}: a default was added where callers had to send a value; none relied on it",
        )
    return Finding(
        c.change,
        "DEFAULT_CHANGED",
        f"{_owner(c)}: callers relying on the default get new behaviour",
    )


def _was_required(c: SchemaContext) -> bool:
    """Whether the parameter holding the default was required in the old schema: then every
    call sent it, and no call could rely on a default."""
    if len(c.parent) < 2 or c.parent[-2] != "properties":
        return False
    required = c.node("old", (*c.parent[:-2], "required"))
    return isinstance(required, list) and c.parent[-1] in required


def _definition(c: SchemaContext) -> Finding:
    name = c.member
    if c.change.op == "removed":
        return Finding(c.change, "DEFINITION_REMOVED", f"definition '{name}' was removed")
    if c.change.op == "added":
        return Finding(c.change, "DEFINITION_ADDED", f"definition '{name}' was added")
    return _other(c)


def _defs(c: SchemaContext) -> Finding:
    if c.change.op == "changed":
        return _other(c)
    verb = "added" if c.change.op == "added" else "removed"
    return Finding(c.change, f"DEFINITION_{verb.upper()}", f"definitions were {verb}")


def _simple(rule: str, what: str) -> Callable[[SchemaContext], Finding]:
    return lambda c: Finding(c.change, rule, f"{_owner(c)}: {what}")


def _other(c: SchemaContext) -> Finding:
    return Finding(c.change, "SCHEMA_CHANGED", f"{_owner(c)}: '{c.keyword}' {c.change.op}; review it")


_KEYWORD_HANDLERS: Mapping[str, Callable[[SchemaContext], Finding]] = {
    "description": _simple("DESCRIPTION_CHANGED", "description changed"),
    "title": _simple("TITLE_CHANGED", "title changed"),
    "examples": _simple("EXAMPLES_CHANGED", "examples changed"),
    "$schema": _simple("SCHEMA_DIALECT_CHANGED", "JSON Schema dialect changed"),
    "format": _simple("FORMAT_CHANGED", "format changed"),
    "default": _default,
    "required": _required,
    "type": _type,
    "anyOf": _combinator,
    "oneOf": _combinator,
    "$ref": _type,
    "enum": _enum,
    "const": _enum,
    "pattern": _pattern,
    "additionalProperties": _additional,
    "properties": _properties,
    "$defs": _defs,
    **dict.fromkeys(DEPENDENCY_KEYWORDS, _dependency),
    **{keyword: _bound for keyword in _BOUNDS},
}

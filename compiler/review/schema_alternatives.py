"""What a schema node admits, seen through its combinators: JSON types, listed values, the
alternatives of an `anyOf`/`oneOf` and how the members of two versions pair up, and the
"required group" idiom (`anyOf: [{required: [a]}, {required: [b]}]`, send one of a or b).

Pure functions over JSON Schema nodes; judging what a pair or a group means is the job of
`judge_combinators`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

COMBINATORS = ("anyOf", "oneOf")
# Keywords that document a node without constraining what it admits.
ANNOTATIONS = frozenset({"description", "title", "examples", "default", "$comment", "deprecated"})
# Keywords whose value maps names to schemas, and keywords whose value is one schema.
NAMED_KEYWORDS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
SUBSCHEMA_KEYWORDS = frozenset(
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
# Keywords whose entries are conditions on the object holding them, judged whole.
DEPENDENCY_KEYWORDS = frozenset({"dependentRequired", "dependentSchemas", "dependencies"})


def node_starts(path: Sequence[str]) -> list[int]:
    """Where, in a path inside a schema, each nested schema node starts (0: the root). Past
    `properties / NAME` or `items` the path is inside another node; a path that ends at a
    named member (`properties / NAME`) stops before it, as does data under a plain keyword."""
    starts, index = [0], 0
    while index < len(path):
        keyword = path[index]
        if keyword in NAMED_KEYWORDS and index + 2 < len(path):
            index += 2
        elif keyword in SUBSCHEMA_KEYWORDS and index + 1 < len(path):
            index += 1
        else:
            break
        starts.append(index)
    return starts


def combinator(node: Any) -> str | None:
    """The combinator keyword a node uses (`anyOf` wins if it has both), or None."""
    if not isinstance(node, dict):
        return None
    return next((kind for kind in COMBINATORS if isinstance(node.get(kind), list)), None)


def both_combinators(node: Any) -> bool:
    return isinstance(node, dict) and all(isinstance(node.get(kind), list) for kind in COMBINATORS)


def combinators_differ(old: Any, new: Any) -> bool:
    def members(node: Any) -> list[str]:
        return [canonical(node.get(kind)) if isinstance(node, dict) else "" for kind in COMBINATORS]

    return members(old) != members(new)


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


# Keyword -> the JSON types it constrains; a member of another type ignores it. (enum and
# const constrain the types of their values.)
APPLIES_TO: dict[str, frozenset[str]] = {
    **dict.fromkeys(("maxLength", "minLength", "pattern", "format"), frozenset({"string"})),
    **dict.fromkeys(
        ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
        frozenset({"number", "integer"}),
    ),
    **dict.fromkeys(
        ("items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains"), frozenset({"array"})
    ),
    **dict.fromkeys(
        (
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "minProperties",
            "maxProperties",
        ),
        frozenset({"object"}),
    ),
}


# --- types and listed values --------------------------------------------------------------


def admitted_types(node: Any) -> frozenset[str] | None:
    """What a schema node admits, coarsely: JSON type names (None = anything). A node with both
    its own `type` and a combinator admits the types both allow."""
    if not isinstance(node, dict):
        return None
    own = _own_types(node)
    kind = combinator(node)
    if kind is None:
        return own
    found: set[str] = set()
    for member in node[kind]:
        kinds = admitted_types(member)
        if kinds is None:
            return own
        found |= kinds
    return frozenset(found) if own is None else own & frozenset(found)


def _own_types(node: dict[str, Any]) -> frozenset[str] | None:
    kind = node.get("type")
    if isinstance(kind, str):
        kinds = {kind}
    elif isinstance(kind, list):
        kinds = set(kind)
    elif "$ref" in node:
        kinds = {"ref:" + str(node["$ref"])}
    elif "const" in node or isinstance(node.get("enum"), list):
        values = [node["const"]] if "const" in node else node["enum"]
        kinds = {json_type(v) for v in values}
    else:
        return None
    if "number" in kinds:
        kinds.add("integer")  # every integer is a number
    return frozenset(kinds)


def json_type(value: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "number",
        str: "string",
        list: "array",
        dict: "object",
    }.get(type(value), "null")


def listed_values(node: Any) -> set[str] | None:
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
            values = listed_values(member)
            if values is None:
                return None
            found |= values
        return found
    if "const" in node:
        return {json.dumps(node["const"])}
    if isinstance(node.get("enum"), list):
        return {json.dumps(v) for v in node["enum"]}
    return None


def extra_keys(node: Any) -> Literal["closed", "open", "schema"]:
    """What an object node does with keys it does not declare."""
    if not isinstance(node, dict):
        return "open"
    additional = node.get("additionalProperties", node.get("unevaluatedProperties", True))
    if additional is False:
        return "closed"
    if node.get("patternProperties") or (isinstance(additional, dict) and additional):
        return "schema"
    return "open"


# --- alternatives and pairing -------------------------------------------------------------


def alternatives(node: Any) -> list[Any]:
    """What a node accepts, as alternatives: each combinator member merged with the node's own
    constraints (their conjunction, approximately), or the node itself when it has none. So
    `type: string` and `anyOf: [{type: string, minLength: 1}, {type: null}]` compare member
    by member, wherever the constraints were written."""
    if not isinstance(node, dict):
        return [node]
    base = {k: v for k, v in node.items() if k not in ANNOTATIONS and k not in COMBINATORS}
    kind = combinator(node)
    if kind is not None:
        return [_merged(base, member) for member in node[kind]]
    kinds = base.get("type")
    if isinstance(kinds, list) and len(kinds) > 1 and all(isinstance(k, str) for k in kinds):
        # `type: [string, null]` is `anyOf: [{type: string}, {type: null}]` written short: each
        # keyword constrains only its own type, so each type is an alternative.
        return [{**_applying(base, k), "type": k} for k in kinds]
    return [base]


def _applying(base: dict[str, Any], kind: str) -> dict[str, Any]:
    """The keywords of a node that constrain values of one JSON type."""
    return {k: v for k, v in base.items() if k not in APPLIES_TO or kind in APPLIES_TO[k]}


def _merged(base: dict[str, Any], member: Any) -> Any:
    if isinstance(member, bool):  # boolean schemas: `true` admits anything, `false` nothing
        member = {} if member else {"not": {}}
    if not isinstance(member, dict):
        return member
    out = dict(base)
    for key, value in member.items():
        if key == "required" and isinstance(out.get(key), list) and isinstance(value, list):
            out[key] = [*out[key], *(name for name in value if name not in out[key])]
        elif key == "properties" and isinstance(out.get(key), dict) and isinstance(value, dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def member_label(node: Any, index: int) -> str:
    """`anyOf[1]` for a member, '' for a node that is its own single alternative."""
    kind = combinator(node)
    return f"{kind}[{index}]" if kind else ""


@dataclass(frozen=True)
class Pairing:
    pairs: tuple[tuple[int, int], ...]  # (old index, new index)
    removed: tuple[int, ...]  # old members without a partner
    added: tuple[int, ...]  # new members without a partner


Matcher = Callable[[Sequence[Any], Sequence[Any], list[int], list[int]], list[tuple[int, int]]]


def pair_members(old: Sequence[Any], new: Sequence[Any]) -> Pairing:
    """Pair the alternatives of two versions, surest evidence first: identical members, then a
    shared discriminator (a property whose const/enum values overlap in exactly one member on
    each side), then position when as many members are left on both sides with matching types,
    then a JSON type that only one member on each side has."""
    left_old, left_new = list(range(len(old))), list(range(len(new)))
    pairs: list[tuple[int, int]] = []
    for match in _MATCHERS:
        for i, j in match(old, new, left_old, left_new):
            pairs.append((i, j))
            left_old.remove(i)
            left_new.remove(j)
    return Pairing(tuple(sorted(pairs, key=lambda pair: pair[1])), tuple(left_old), tuple(left_new))


def _identical(
    old: Sequence[Any], new: Sequence[Any], left_old: list[int], left_new: list[int]
) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    free = list(left_new)
    for i in left_old:
        j = next((j for j in free if canonical(old[i]) == canonical(new[j])), None)
        if j is not None:
            pairs.append((i, j))
            free.remove(j)
    return pairs


def _by_discriminator(
    old: Sequence[Any], new: Sequence[Any], left_old: list[int], left_new: list[int]
) -> list[tuple[int, int]]:
    keys_old = {i: _discriminators(old[i]) for i in left_old}
    keys_new = {j: _discriminators(new[j]) for j in left_new}

    def overlap(i: int, j: int) -> bool:
        a, b = keys_old[i], keys_new[j]
        return any(a[name] & b[name] for name in a.keys() & b.keys())

    return _unique_matches(left_old, left_new, overlap)


def _discriminators(member: Any) -> dict[str, set[str]]:
    """Property name -> the values it lists (const or enum), for the properties that list any."""
    properties = member.get("properties") if isinstance(member, dict) else None
    if not isinstance(properties, dict):
        return {}
    found = {}
    for name, schema in properties.items():
        values = (listed_values(schema) or set()) - {"null"}  # null tells no member apart
        if values:
            found[name] = values
    return found


def _by_position(
    old: Sequence[Any], new: Sequence[Any], left_old: list[int], left_new: list[int]
) -> list[tuple[int, int]]:
    if len(left_old) != len(left_new):
        return []
    pairs = list(zip(left_old, left_new, strict=True))
    if all(admitted_types(old[i]) == admitted_types(new[j]) for i, j in pairs):
        return pairs
    return []


def _by_type(
    old: Sequence[Any], new: Sequence[Any], left_old: list[int], left_new: list[int]
) -> list[tuple[int, int]]:
    types_old = {i: admitted_types(old[i]) for i in left_old}
    types_new = {j: admitted_types(new[j]) for j in left_new}
    return _unique_matches(
        left_old, left_new, lambda i, j: types_old[i] is not None and types_old[i] == types_new[j]
    )


def _unique_matches(
    left_old: list[int], left_new: list[int], match: Callable[[int, int], bool]
) -> list[tuple[int, int]]:
    """Pairs (i, j) where i matches only j and j matches only i."""
    candidates = {i: [j for j in left_new if match(i, j)] for i in left_old}
    pairs = []
    for i, found in candidates.items():
        if len(found) == 1 and sum(found[0] in others for others in candidates.values()) == 1:
            pairs.append((i, found[0]))
    return pairs


_MATCHERS: tuple[Matcher, ...] = (_identical, _by_discriminator, _by_position, _by_type)


def types_overlap(a: frozenset[str] | None, b: frozenset[str] | None) -> bool:
    return a is None or b is None or bool(a & b)


# --- required groups ----------------------------------------------------------------------


@dataclass(frozen=True)
class RequiredNeeds:
    """Which sets of keys an object must hold: all of `base`, and (if `group`) every name of
    some member (`anyOf`) or of exactly one member (`oneOf`)."""

    base: frozenset[str]
    kind: str | None
    group: tuple[frozenset[str], ...]

    def accepts(self, keys: frozenset[str]) -> bool:
        if not self.base <= keys:
            return False
        if self.kind is None:
            return True
        matched = sum(names <= keys for names in self.group)
        return matched == 1 if self.kind == "oneOf" else matched >= 1

    def describe(self) -> str:
        """'one of body | reaction', 'exactly one of a + b | c'."""
        options = " | ".join(" + ".join(sorted(names)) or "(nothing)" for names in self.group)
        return ("exactly one of " if self.kind == "oneOf" else "one of ") + options


def required_group(node: Any) -> RequiredNeeds | None:
    """The required needs of a node whose combinator members only list required names."""
    kind = combinator(node)
    if kind is None or not node[kind]:
        return None
    members = node[kind]
    if not all(
        isinstance(m, dict) and isinstance(m.get("required"), list) and m.keys() - ANNOTATIONS == {"required"}
        for m in members
    ):
        return None
    return RequiredNeeds(_base(node), kind, tuple(frozenset(m["required"]) for m in members))


def required_needs(node: Any) -> RequiredNeeds:
    """Required needs of any node: its group if it has one, else its own `required` alone."""
    return required_group(node) or RequiredNeeds(_base(node), None, ())


def _base(node: Any) -> frozenset[str]:
    required = node.get("required") if isinstance(node, dict) else None
    return frozenset(required) if isinstance(required, list) else frozenset()


# Witnesses are searched among pairs of members, each checked against every member: cubic in
# the members. Real groups hold a handful ("send body or reaction"); a hostile tools/list with
# hundreds would take minutes, so larger groups are left to a reviewer.
MAX_REQUIRED_MEMBERS = 32


def required_witnesses(
    old: RequiredNeeds, new: RequiredNeeds
) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """(keys old accepts and new rejects, keys new accepts and old rejects), smallest first;
    None where no such set exists. Candidates are the base sets with up to two member sets
    added, enough to catch both a missing alternative and oneOf's exclusivity."""
    bases = {old.base, new.base}
    groups = [*old.group, *new.group]
    candidates = {
        base | frozenset().union(*chosen)
        for base in bases
        for size in (0, 1, 2)
        for chosen in itertools.combinations(groups, size)
    }
    ordered = sorted(candidates, key=lambda keys: (len(keys), sorted(keys)))
    narrowed = next((keys for keys in ordered if old.accepts(keys) and not new.accepts(keys)), None)
    widened = next((keys for keys in ordered if new.accepts(keys) and not old.accepts(keys)), None)
    return narrowed, widened

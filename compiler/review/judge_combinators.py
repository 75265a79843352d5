"""Judge an `anyOf`/`oneOf` that appeared, vanished or changed. The node is compared as a whole
first (JSON types, listed values, required groups), then member by member: the members of both
versions are paired (`schema_alternatives.pair_members`) and each pair is diffed and judged by
the rules of whole schemas, in the schema's direction. A member left without a partner is an
alternative gained or lost. Only what no pairing proves is left to a reviewer (SCHEMA_CHANGED).

`oneOf`'s exclusivity (a value matching two members is rejected) is modelled for required
groups only; elsewhere oneOf is judged like anyOf.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from typing import Any, Literal

from .diff import Change, diff_schemas
from .judge_context import LEVELS, Direction, Finding, SchemaContext, capped, owner
from .judge_split import Cover, Split, judge_split
from .schema_alternatives import (
    APPLIES_TO,
    MAX_REQUIRED_MEMBERS,
    Pairing,
    RequiredNeeds,
    admitted_types,
    alternatives,
    both_combinators,
    canonical,
    combinator,
    combinators_differ,
    listed_values,
    member_label,
    pair_members,
    required_group,
    required_needs,
    required_witnesses,
    types_overlap,
)
from .value_kinds import describe_values

# judge._judge_schema: judge a change whose path starts at two given schemas (paired members).
SchemaJudge = Callable[[Change, Direction, Any, Any, tuple[str, ...], str], Finding]


# (direction, how the admitted types moved) -> the rule, and what it says without a shift.
_TYPE_RULES = {
    ("input", "widened"): ("PARAM_TYPE_WIDENED", "accepts more types"),
    ("input", "narrowed"): ("PARAM_TYPE_NARROWED", "accepts fewer types"),
    ("input", "changed"): ("PARAM_TYPE_CHANGED", "changed type"),
    ("output", "widened"): ("OUTPUT_TYPE_WIDENED", "may return types it did not before"),
    ("output", "narrowed"): ("OUTPUT_TYPE_NARROWED", "returns fewer types"),
    ("output", "changed"): ("OUTPUT_TYPE_CHANGED", "changed type"),
}


def type_change(
    c: SchemaContext, old: frozenset[str] | None, new: frozenset[str] | None, shift: str | None = None
) -> Finding:
    """`shift` ('decimal text → number'), when given, is the message: it says the change whole."""
    if new is None or (old is not None and old < new):
        how = "widened"
    elif old is None or new < old:
        how = "narrowed"
    else:
        how = "changed"
    rule, said = _TYPE_RULES[c.direction, how]
    who = owner(c)
    return Finding(c.change, rule, f"{who}: {shift}" if shift else f"{who} {said}{_types_moved(old, new)}")


def _types_moved(old: frozenset[str] | None, new: frozenset[str] | None) -> str:
    """' (now also null)': which JSON types came and went, when both sides name theirs."""
    if old is None or new is None:
        return ""
    gained, lost = sorted(new - old), sorted(old - new)
    moved = ([f"now also {', '.join(gained)}"] if gained else []) + (
        [f"no longer {', '.join(lost)}"] if lost else []
    )
    return f" ({'; '.join(moved)})" if moved else ""


def value_shift(c: SchemaContext) -> str | None:
    """'decimal text → number': what the node's values were and are, when both can be said."""
    before, after = describe_values(c.node("old", c.parent)), describe_values(c.node("new", c.parent))
    return f"{before} → {after}" if before and after and before != after else None


def listed_change(c: SchemaContext, old: Collection[str], new: Collection[str]) -> Finding:
    """Listed values (JSON texts) that changed, with the new list spelled out: a reviewer should
    not have to open the schema to learn what replaces a removed value. Sets are shown sorted,
    lists in their declared order."""
    who = owner(c)
    old_list, new_list = _ordered(old), _ordered(new)
    added = [v for v in new_list if v not in old]
    removed = [v for v in old_list if v not in new]
    case = "values changed case; " if _only_case(removed, added) else ""
    gone, came = _shown_values(removed), _shown_values(added)
    if c.direction == "input":
        now = f"now accepts {_shown_values(new_list)}"
        if removed:
            return Finding(c.change, "ENUM_VALUE_REMOVED", f"{who} no longer accepts {gone}; {case}{now}")
        return Finding(c.change, "ENUM_VALUE_ADDED", f"{who} also accepts {came}; {now}")
    now = f"now returns one of {_shown_values(new_list)}"
    if added:
        return Finding(c.change, "OUTPUT_ENUM_VALUE_ADDED", f"{who} may now return {came}; {case}{now}")
    return Finding(c.change, "OUTPUT_ENUM_VALUE_REMOVED", f"{who} no longer returns {gone}; {now}")


# How many listed values a message spells out before it counts the rest.
VALUES_SHOWN = 12


def _ordered(values: Collection[str]) -> list[str]:
    return list(values) if isinstance(values, Sequence) else sorted(values)


def _shown_values(texts: list[str]) -> str:
    shown = ", ".join(texts[:VALUES_SHOWN])
    return shown + (f" and {len(texts) - VALUES_SHOWN} more" if len(texts) > VALUES_SHOWN else "")


def _only_case(removed: list[str], added: list[str]) -> bool:
    """`"asc"` -> `"ASC"`: the same strings, spelled in another case."""

    def folded(texts: list[str]) -> list[str] | None:
        values = [json.loads(text) for text in texts]
        return sorted(v.casefold() for v in values) if all(isinstance(v, str) for v in values) else None

    return bool(removed) and folded(removed) is not None and folded(removed) == folded(added)


def listed_beside(
    c: SchemaContext, findings: list[Finding], shift: str | None, old: set[str], new: set[str]
) -> list[Finding]:
    """The change of listed values beside a type change, unless the shift ('one of a, b → one
    of a or null') listed every value already and weighs as much: a value dropped still weighs
    what it weighs, whatever the types did."""
    if old == new:
        return []
    listed = listed_change(c, old, new)
    said = shift is not None and "..." not in shift
    if said and findings and LEVELS.index(listed.level) >= LEVELS.index(findings[0].level):
        return []
    return [listed]


def as_set(members: list[Any]) -> set[str]:
    return {json.dumps(member, sort_keys=True) for member in members}


def judge_combinator(c: SchemaContext, judge_schema: SchemaJudge) -> Finding:
    """An anyOf/oneOf that appeared, vanished or changed: compare what the node admits as a
    whole (types, listed values, required groups), then member by member."""
    before, after = c.change.before, c.change.after
    if isinstance(before, list) and isinstance(after, list) and as_set(before) == as_set(after):
        return Finding(c.change, "SCHEMA_REORDERED", f"{owner(c)}: '{c.keyword}' members were reordered")
    old, new = c.node("old", c.parent), c.node("new", c.parent)
    if both_combinators(old) or both_combinators(new):
        # anyOf and oneOf on one node constrain it together; lynxc pairs one list at a time.
        return Finding(
            c.change, "SCHEMA_CHANGED", f"{owner(c)}: '{c.keyword}' beside another combinator; review it"
        )
    if required_group(old) or required_group(new):
        return _required_group(c, required_needs(old), required_needs(new))
    findings = []
    old_types, new_types = admitted_types(old), admitted_types(new)
    shift = value_shift(c) if old_types != new_types else None
    if old_types != new_types:
        findings.append(type_change(c, old_types, new_types, shift))
    old_values, new_values = listed_values(old), listed_values(new)
    if old_values is not None and new_values is not None:
        findings += listed_beside(c, findings, shift, old_values, new_values)
    else:
        # With the shift said ('decimal text → number'), a pair of members of different kinds
        # (the decimal text and a double's "NaN" text) is that same change seen member by member.
        findings += _alternatives(c, old, new, judge_schema, same_kind_only=shift is not None)
    if not findings:
        return Finding(
            c.change, "SCHEMA_RESTRUCTURED", f"{owner(c)}: '{c.keyword}' changed form; it admits the same"
        )
    return summed_up(c, findings)


def moved_keyword(c: SchemaContext) -> Finding | None:
    """A constraint written beside the combinator in one version and, unchanged, inside every
    member it applies to in the other (`maxLength` moving with `type: string` into a nullable
    anyOf) still holds: it is not dropped or added, and the combinator's entry, which compares
    whole alternatives, judges what did change."""
    if c.member is not None or c.change.op == "changed":
        return None
    old, new = c.node("old", c.parent), c.node("new", c.parent)
    holder = new if c.change.op == "removed" else old
    kind = combinator(holder)
    if kind is None or not combinators_differ(old, new):
        return None
    value = c.change.before if c.change.op == "removed" else c.change.after
    applies = APPLIES_TO.get(c.keyword) or _value_types(c.keyword, value)
    if applies is None:
        return None
    members = [m for m in holder[kind] if types_overlap(admitted_types(m), applies)]
    if not members or not all(
        isinstance(m, dict) and c.keyword in m and canonical(m[c.keyword]) == canonical(value)
        for m in members
    ):
        return None
    moved = (
        "into the {} members it applies to"
        if c.change.op == "removed"
        else "out of the {} members it applied to"
    )
    return Finding(
        c.change,
        "SCHEMA_RESTRUCTURED",
        f"{owner(c)}: '{c.keyword}' moved {moved.format(kind)} (see '{kind}')",
    )


def _value_types(keyword: str, value: Any) -> frozenset[str] | None:
    if keyword == "const":
        return admitted_types({"const": value})
    if keyword == "enum" and isinstance(value, list):
        return admitted_types({"enum": value})
    return None


def _alternatives(
    c: SchemaContext, old: Any, new: Any, judge_schema: SchemaJudge, *, same_kind_only: bool = False
) -> list[Finding]:
    """Pair the alternatives of both versions; judge each pair with the rules of whole schemas
    and each member left over as an alternative gained or lost. `same_kind_only`: judge only the
    pairs whose members hold the same kind of values."""
    old_alts, new_alts = alternatives(old), alternatives(new)
    pairing = pair_members(old_alts, new_alts)
    split = _split(old, new, pairing, old_alts, new_alts)
    if split is not None:
        return [
            judge_split(
                c, split, _judged_as(c, "input", judge_schema), _judged_as(c, c.direction, judge_schema)
            )
        ]
    found: list[Finding] = []
    for i, j in pairing.pairs:
        if same_kind_only and describe_values(old_alts[i]) != describe_values(new_alts[j]):
            continue
        label = member_label(new, j) if combinator(new) else f"was {member_label(old, i)}"
        found += _pair_findings(c, old_alts[i], new_alts[j], label, judge_schema)
    for i in pairing.removed:
        found += _unpaired(c, "old", i, (old, old_alts), (new, new_alts), judge_schema)
    for j in pairing.added:
        found += _unpaired(c, "new", j, (new, new_alts), (old, old_alts), judge_schema)
    return found


def _pair_findings(
    c: SchemaContext,
    old: Any,
    new: Any,
    label: str,
    judge_schema: SchemaJudge,
    direction: Direction | None = None,
) -> list[Finding]:
    """Diff two paired members and judge every difference as if they were whole schemas (in the
    schema's direction unless told)."""
    label = f"{c.label}.{label}" if c.label and label else c.label or label
    if not isinstance(old, dict) or not isinstance(new, dict):
        return [Finding(c.change, "SCHEMA_CHANGED", f"{owner(c)}: {label or 'a member'} changed; review it")]
    changes = diff_schemas(c.change.tool, c.change.path[:1], old, new)
    return [judge_schema(sub, direction or c.direction, old, new, c.owner_names, label) for sub in changes]


def _judged_as(c: SchemaContext, direction: Direction, judge_schema: SchemaJudge) -> Cover:
    """old, new -> what is not info between them, judged in `direction`."""

    def judged(old: Any, new: Any) -> list[Finding]:
        found = _pair_findings(c, old, new, "", judge_schema, direction)
        return [f for f in found if f.level != "info"]

    return judged


def _split(old: Any, new: Any, pairing: Pairing, old_alts: list[Any], new_alts: list[Any]) -> Split | None:
    """One schema on one side (no combinator) left without a partner among the members of the
    other: it was split into them, or they were merged into it."""
    if (combinator(old) is None) == (combinator(new) is None) or pairing.pairs:
        return None
    side: Literal["old", "new"] = "old" if combinator(old) is None else "new"
    if len(old_alts if side == "old" else new_alts) != 1:
        return None
    single, node, members = (old_alts[0], new, new_alts) if side == "old" else (new_alts[0], old, old_alts)
    parts = [
        (_label(node, k, "new" if side == "old" else "old"), member)
        for k, member in enumerate(members)
        if types_overlap(admitted_types(single), admitted_types(member))
    ]
    return Split(single, side, parts) if parts else None


def _unpaired(
    c: SchemaContext,
    side: Literal["old", "new"],
    index: int,
    mine: tuple[Any, list[Any]],
    theirs: tuple[Any, list[Any]],
    judge_schema: SchemaJudge,
) -> list[Finding]:
    """A member with no partner on the other side. Losing an input member, or gaining an output
    one, breaks unless a member of the other side covers it; with one candidate of its type the
    pair's judgement says why, with several lynxc cannot tell (their union may cover it)."""
    (node, alts), (other_node, others) = mine, theirs
    member, who, kinds = alts[index], owner(c), admitted_types(alts[index])
    if kinds is not None and not types_overlap(kinds, admitted_types(other_node)):
        return []  # a type that appeared or vanished: the type change says it
    label = _label(node, index, side)
    if (c.direction == "input") != (side == "old"):  # an input gains or an output loses a member
        if c.direction == "input":
            return [Finding(c.change, "PARAM_ALTERNATIVE_ADDED", f"{who} also accepts {label}")]
        return [Finding(c.change, "OUTPUT_ALTERNATIVE_REMOVED", f"{who} no longer returns {label}")]
    candidates = [k for k, other in enumerate(others) if types_overlap(kinds, admitted_types(other))]
    judged = {
        k: _pair_findings(c, member, others[k], "", judge_schema)
        if side == "old"
        else _pair_findings(c, others[k], member, "", judge_schema)
        for k in candidates
    }

    def name(k: int) -> str:
        return _label(other_node, k, "new" if side == "old" else "old")

    covering = [k for k, found in judged.items() if all(f.level == "info" for f in found)]
    if covering:
        verb = "accepts all it did" if side == "old" else "already returned all it may"
        change = "dropped" if side == "old" else "added"
        return [
            Finding(c.change, "SCHEMA_RESTRUCTURED", f"{who}: {label} {change}; {name(covering[0])} {verb}")
        ]
    if len(candidates) != 1:
        did = "accepts everything" if side == "old" else "returned everything"
        what = "did" if side == "old" else "may return"
        return [
            Finding(c.change, "SCHEMA_CHANGED", f"{who}: no single member {did} {label} {what}; review it")
        ]
    found = judged[candidates[0]]
    why = "; ".join(dict.fromkeys(f.message for f in found if f.level != "info"))
    if not any(f.level == "breaking" for f in found):  # only unclassified differences: unproven
        return [
            Finding(
                c.change, "SCHEMA_CHANGED", f"{who}: {label} {'dropped' if side == 'old' else 'added'}; {why}"
            )
        ]
    if c.direction == "input":
        return [
            Finding(
                c.change,
                "PARAM_ALTERNATIVE_REMOVED",
                f"{who} no longer accepts all {label} did; against {name(candidates[0])}: {why}",
            )
        ]
    return [
        Finding(
            c.change,
            "OUTPUT_ALTERNATIVE_ADDED",
            f"{who} may return {label}; against {name(candidates[0])}: {why}",
        )
    ]


def _label(node: Any, index: int, side: Literal["old", "new"]) -> str:
    """How messages name a member: by its index in the new version, or in the former one."""
    label = member_label(node, index)
    if side == "new":
        return label or "the new schema"
    return f"the former {label}" if label else "the former schema"


def summed_up(c: SchemaContext, findings: list[Finding]) -> Finding:
    """One finding for one diff entry: the first of the worst level leads, the rest explain."""
    ranked = sorted(findings, key=lambda f: LEVELS.index(f.level))
    reasons = capped(list(dict.fromkeys(f.message for f in ranked)))
    return Finding(c.change, ranked[0].rule_id, "; ".join(reasons))


def _required_group(c: SchemaContext, old: RequiredNeeds, new: RequiredNeeds) -> Finding:
    """`anyOf: [{required: [a]}, {required: [b]}]` beside the properties: send a or b. Judged by
    a witness, a set of keys one version accepts and the other rejects."""
    if len(old.group) + len(new.group) > MAX_REQUIRED_MEMBERS:
        return Finding(
            c.change,
            "SCHEMA_CHANGED",
            f"{owner(c)}: required alternatives of {len(old.group) + len(new.group)} members changed; "
            f"too many to judge (more than {MAX_REQUIRED_MEMBERS}): review it",
        )
    narrowed, widened = required_witnesses(old, new)
    listed = frozenset().union(old.base, new.base, *old.group, *new.group) - (old.base & new.base)
    who = owner(c)
    if c.direction == "input":
        now = f"now requires {new.describe()}" if new.kind else f"no longer requires {old.describe()}"
        if narrowed is not None:
            sending = _sending(narrowed - (old.base & new.base), listed)
            return Finding(
                c.change, "PARAM_BECAME_REQUIRED", f"{who} {now}: a call sending {sending} is rejected"
            )
        if widened is not None:
            sending = _sending(widened - (old.base & new.base), listed)
            return Finding(
                c.change, "PARAM_BECAME_OPTIONAL", f"{who} {now}: a call sending {sending} is now accepted"
            )
    else:
        now = f"now guarantees {new.describe()}" if new.kind else f"no longer guarantees {old.describe()}"
        if widened is not None:
            holding = _sending(widened - (old.base & new.base), listed)
            return Finding(
                c.change, "OUTPUT_REQUIRED_REMOVED", f"{who} {now}: a result with {holding} may come back"
            )
        if narrowed is not None:
            return Finding(c.change, "OUTPUT_REQUIRED_ADDED", f"{who} {now}")
    return Finding(c.change, "SCHEMA_RESTRUCTURED", f"{who}: required alternatives changed form; same effect")


def _sending(keys: frozenset[str], listed: frozenset[str]) -> str:
    """'none of them', 'a and b', 'a but not b, c'."""
    if not keys:
        return "none of them"
    rest = sorted(listed - keys)
    return spoken_and(sorted(keys)) + (f" but not {', '.join(rest)}" if rest else "")


def spoken_and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"

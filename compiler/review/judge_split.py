"""Judge one schema split into `anyOf`/`oneOf` members, or members merged into one schema: an
object that accepted anything becoming "one of two closed shapes", or the reverse.

The single schema is one alternative with no partner among the members, so neither side's
members are "gained" or "lost": they are pieces of it. What matters is how the members'
union compares with the single schema, proven where the rules of whole schemas prove it:

- the union holds all the single schema admits when one member does (judged member by member);
- the union holds nothing more when every member is within the single schema;
- the union misses something when a witness value, which the single schema admits, is
  rejected by every member: an empty object where each member requires a key, or an object
  with an undeclared key where each member is closed.

An input that accepts less breaks callers; an output that may return more breaks consumers.
What cannot be proven either way is left to a reviewer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .judge_context import Finding, SchemaContext, capped, owner
from .schema_alternatives import admitted_types, extra_keys, types_overlap

# Judge `smaller -> bigger` as an input change; what is not info says why bigger does not
# admit all smaller does (empty: bigger admits all of it).
Cover = Callable[[Any, Any], list[Finding]]
_OBJECT = frozenset({"object"})


@dataclass(frozen=True)
class Split:
    single: Any  # the one schema
    single_side: Literal["old", "new"]  # old: split into the members; new: members merged
    parts: Sequence[tuple[str, Any]]  # (label, member) of the members its type overlaps


def judge_split(c: SchemaContext, split: Split, cover: Cover, reasons: Cover) -> Finding:
    """`cover` judges as an input (admits more or less); `reasons` judges old -> new in the
    schema's direction, for the words of the message."""
    single, parts = split.single, [member for _, member in split.parts]
    beyond = [cover(part, single) for part in parts]  # why the single one misses part of each
    union_covers = any(not cover(single, part) for part in parts)  # a member admits all it does
    union_within = not any(beyond)  # no member admits more
    part_beyond = any(_breaks(found) for found in beyond)  # a member admits more, proven
    witness = _witness(single, parts)  # a value it admits that no member does
    # From the old version to the new one: does the new one admit more, or less? None: unproven.
    if split.single_side == "old":
        more = False if union_within else (True if part_beyond else None)
        less = True if witness else (False if union_covers else None)
    else:
        more = True if witness else (False if union_covers else None)
        less = False if union_within else (True if part_beyond else None)
    return _verdict(c, split, more, less, witness, reasons)


def _breaks(findings: list[Finding]) -> bool:
    return any(f.level == "breaking" for f in findings)


def _witness(single: Any, parts: list[Any]) -> str | None:
    """A value the single schema admits and every member rejects, said in words."""
    if not isinstance(single, dict) or not types_overlap(admitted_types(single), _OBJECT):
        return None
    objects = [p for p in parts if types_overlap(admitted_types(p), _OBJECT)]
    needs_nothing = not single.get("required") and not single.get("minProperties")
    if needs_nothing and all(
        isinstance(p, dict) and (p.get("required") or p.get("minProperties")) for p in objects
    ):
        return "an empty object"
    if extra_keys(single) == "open" and all(extra_keys(p) == "closed" for p in objects):
        return "an object with a key no member declares"
    return None


def _verdict(
    c: SchemaContext, split: Split, more: bool | None, less: bool | None, witness: str | None, reasons: Cover
) -> Finding:
    who, single = owner(c), _describe(split.single)
    names, joined = _named(split, "or"), _named(split, "and")
    was_split, is_input = split.single_side == "old", c.direction == "input"
    shape = f"split into {joined}" if was_split else f"{joined} merged into {single}"
    bad, good = (less, more) if is_input else (more, less)
    if bad:
        rule = "PARAM_ALTERNATIVE_REMOVED" if is_input else "OUTPUT_ALTERNATIVE_ADDED"
        shown = (
            f"{witness} {'is rejected' if is_input else 'may come back'}"
            if witness
            else _reasons(c, split, reasons)
        )
        if was_split:
            was = f" (it accepted {single})" if single.startswith("any ") else ""
            how = f"it now accepts only {names}{was}" if is_input else f"{shape}; {names} may return more"
        else:
            how = (
                f"{shape}, which does not accept all they did"
                if is_input
                else f"it may now return {single} in place of {names}"
            )
        return Finding(c.change, rule, f"{who} got {'narrower' if is_input else 'wider'}: {how}; {shown}")
    if bad is None:
        doubt = "accept all it did" if is_input else "return nothing it did not"
        subject = "together they" if was_split else "it"
        why = _reasons(c, split, reasons)
        said = f" ({why})" if why else ""
        return Finding(
            c.change,
            "SCHEMA_CHANGED",
            f"{who}: {shape}; whether {subject} {doubt} is not proven{said}; review it",
        )
    if good is False:
        return Finding(
            c.change,
            "SCHEMA_RESTRUCTURED",
            f"{who}: {shape}; {'together they admit' if was_split else 'it admits'} the same",
        )
    if is_input:
        how = (
            f"{shape}, which together accept all it did and more"
            if was_split
            else f"it now accepts {single} in place of {names}"
        )
        return Finding(c.change, "PARAM_ALTERNATIVE_ADDED", f"{who} got wider: {how}")
    how = f"it now returns only {names}" if was_split else f"it now returns {single} in place of {names}"
    return Finding(c.change, "OUTPUT_ALTERNATIVE_REMOVED", f"{who} got narrower: {how}")


# How many members a message names one by one; past that it gives the range and the count.
MEMBERS_NAMED = 6


def _named(split: Split, conjunction: str) -> str:
    labels = [label for label, _ in split.parts]
    if len(labels) > MEMBERS_NAMED:
        return f"{labels[0]} {conjunction} the {len(labels) - 1} members after it, up to {labels[-1]}"
    return f" {conjunction} ".join(labels)


def _describe(schema: Any) -> str:
    """'any object' for a schema that constrains nothing but its type; else 'a single schema'."""
    if isinstance(schema, dict) and schema.keys() <= {"type"}:
        kinds = admitted_types(schema)
        return "any value" if kinds is None else f"any {' or '.join(sorted(kinds))}"
    return "a single schema"


def _reasons(c: SchemaContext, split: Split, reasons: Cover) -> str:
    """Per member, what is not info between it and the single schema (old -> new)."""
    said: list[str] = []
    for label, part in split.parts:
        old, new = (split.single, part) if split.single_side == "old" else (part, split.single)
        texts = list(dict.fromkeys(_unowned(c, f.message) for f in reasons(old, new)))
        if texts:
            said.append(f"{label}: {', '.join(texts)}")
    return "; ".join(capped(said))


def _unowned(c: SchemaContext, message: str) -> str:
    """A member's reason without the owner the finding already names."""
    who = owner(c)
    return message[len(who) :].lstrip(": ") if message.startswith(who) else message

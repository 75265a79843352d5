"""Judge a change to an object's dependencies: `dependentRequired`, `dependentSchemas` and the
pre-2019 `dependencies` (either form). Each entry is a condition, "when key K is present, ...":
some names become required, some forbidden (`not: {required: [x]}`, `properties: {x: false}`).

Direction decides the verdict. In an input, a condition added or tightened rejects calls that
were accepted (breaking); removed or loosened, it only lets more through (info). In an output,
a condition is a guarantee to the consumer: added, the result says more (info); removed, a
consumer relying on it breaks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .judge_combinators import spoken_and
from .judge_context import Finding, SchemaContext, owner
from .schema_alternatives import ANNOTATIONS, DEPENDENCY_KEYWORDS, canonical

__all__ = ["DEPENDENCY_KEYWORDS", "judge_dependency", "read_condition"]


# direction -> (what a required name is, what a forbidden one is) when the condition holds
_WORDS = {"input": ("required", "forbidden"), "output": ("guaranteed", "left out")}
# (direction, whether the change breaks the other side) -> rule
_RULES = {
    ("input", True): "DEPENDENCY_ADDED",
    ("input", False): "DEPENDENCY_REMOVED",
    ("output", True): "OUTPUT_DEPENDENCY_REMOVED",
    ("output", False): "OUTPUT_DEPENDENCY_ADDED",
}


@dataclass(frozen=True)
class Condition:
    """What one dependency entry asks when its key is present."""

    required: frozenset[str] = frozenset()
    forbidden: frozenset[str] = frozenset()
    rest: str = "{}"  # any other constraint, as canonical JSON: lynxc does not read it


def read_condition(entry: Any) -> Condition:
    """A dependentRequired list, or a dependentSchemas subschema, as required/forbidden names."""
    if entry is None:
        return Condition()
    if isinstance(entry, list):
        return Condition(required=frozenset(str(name) for name in entry))
    if isinstance(entry, bool):
        return Condition() if entry else Condition(rest="false")
    if not isinstance(entry, dict):
        return Condition(rest=canonical(entry))
    rest = {k: v for k, v in entry.items() if k not in ANNOTATIONS}
    required = rest.pop("required", [])
    forbidden = _forbidden_by_not(rest) | _forbidden_by_properties(rest)
    if not isinstance(required, list):
        rest["required"] = required
        required = []
    return Condition(frozenset(map(str, required)), forbidden, canonical(rest))


def _forbidden_by_not(rest: dict[str, Any]) -> frozenset[str]:
    """`not: {required: [x]}` forbids x; `not: {anyOf: [{required: [x]}, {required: [y]}]}`
    forbids each. Taken out of `rest` only when read whole."""
    negated = rest.get("not")
    if not isinstance(negated, dict):
        return frozenset()
    groups = negated.get("anyOf", [negated]) if negated.keys() <= {"anyOf"} else [negated]
    names: set[str] = set()
    for group in groups:
        if not (
            isinstance(group, dict) and group.keys() == {"required"} and isinstance(group["required"], list)
        ):
            return frozenset()
        if len(group["required"]) != 1:  # `not: {required: [a, b]}` forbids the pair, not each
            return frozenset()
        names.add(str(group["required"][0]))
    del rest["not"]
    return frozenset(names)


def _forbidden_by_properties(rest: dict[str, Any]) -> frozenset[str]:
    """`properties: {x: false}` (or `{x: {not: {}}}`) forbids x."""
    properties = rest.get("properties")
    if not isinstance(properties, dict):
        return frozenset()
    banned = {name for name, schema in properties.items() if schema is False or schema == {"not": {}}}
    kept = {name: schema for name, schema in properties.items() if name not in banned}
    if kept:
        rest["properties"] = kept
    else:
        del rest["properties"]
    return frozenset(banned)


def judge_dependency(c: SchemaContext, trigger: str | None) -> list[Finding]:
    """One finding per condition the change touches: `trigger` is the key of the entry the
    change is inside, or None when the whole keyword appeared, vanished or was replaced."""
    old, new = (
        _entries(c.node("old", (*c.parent, c.keyword))),
        _entries(c.node("new", (*c.parent, c.keyword))),
    )
    triggers = [trigger] if trigger is not None else sorted(old.keys() | new.keys())
    found = []
    for key in triggers:
        finding = _condition_change(c, key, read_condition(old.get(key)), read_condition(new.get(key)))
        if finding is not None:
            found.append(finding)
    return found


def _entries(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _condition_change(c: SchemaContext, key: str, old: Condition, new: Condition) -> Finding | None:
    required_word, forbidden_word = _WORDS[c.direction]
    more = _clauses(new.required - old.required, f"now {required_word}") + _clauses(
        new.forbidden - old.forbidden, f"now {forbidden_word}"
    )
    less = _clauses(old.required - new.required, f"no longer {required_word}") + _clauses(
        old.forbidden - new.forbidden, f"no longer {forbidden_word}"
    )
    when = f"{owner(c)}: when '{key}' is {'sent' if c.direction == 'input' else 'returned'}"
    if old.rest != new.rest:
        said = "; ".join([*more, *less])
        other = f"{when}, other conditions changed" + (f" ({said})" if said else "") + "; review it"
        return Finding(c.change, "SCHEMA_CHANGED", other)
    if not more and not less:
        return None
    # An input breaks when a condition asks more of callers; an output when it promises less.
    breaks = bool(more) if c.direction == "input" else bool(less)
    return Finding(c.change, _RULES[c.direction, breaks], f"{when}, {' and '.join([*more, *less])}")


def _clauses(names: frozenset[str], state: str) -> list[str]:
    if not names:
        return []
    return [f"{spoken_and(sorted(names))} {'is' if len(names) == 1 else 'are'} {state}"]

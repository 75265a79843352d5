"""What judging a change produces (a `Finding`) and what a rule sees of the change it judges
(a `SchemaContext`): the keyword, the node holding it, and both versions of the schema."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from ..rules import RULES
from .diff import MISSING, Change

Level = Literal["breaking", "warning", "info"]
LEVELS: tuple[Level, ...] = ("breaking", "warning", "info")
Direction = Literal["input", "output"]


@dataclass(frozen=True)
class Allowance:
    """Why a breaking finding does not fail `lynxc diff`: the head's version bumps the major
    version (the minor one below 1.0) over the version the change starts from, the head's spec
    acknowledges the rule for its version (`server.acknowledge`), or the server has never been
    released in a project that releases (review/versions.py)."""

    by: Literal["version", "acknowledgement", "unreleased"]
    text: str  # for people: `0.1.0 -> 0.2.0, a minor bump below 1.0` / `acknowledged for 0.1.1: reason`
    detail: tuple[tuple[str, str], ...]  # for machines: ("from", "0.1.0"), ("to", "0.2.0") / version, reason

    def to_json(self) -> dict[str, str]:
        return {"by": self.by, **dict(self.detail)}


@dataclass(frozen=True)
class Finding:
    change: Change
    rule_id: str
    message: str
    hint: str | None = None  # a likely explanation beside the verdict, such as a rename
    # The path of another change whose finding already says this one (a `type` removed where
    # the `anyOf` that replaced it is judged whole): the review keeps one finding per change.
    said_by: str | None = None
    # The sibling entries this finding says as well (their own findings were left out).
    folded: tuple[Change, ...] = ()
    allowed: Allowance | None = None  # a breaking change the versions sanction (review/versions.py)

    @property
    def level(self) -> Level:
        return RULES[self.rule_id].severity  # type: ignore[return-value]

    @property
    def gate_level(self) -> Level:
        """What the finding weighs for `lynxc diff --fail-on`: a breaking change the versions
        allow counts as a warning (a reviewer still reads it; it fails `--fail-on warning`)."""
        return "warning" if self.allowed is not None else self.level

    def to_json(self) -> dict[str, Any]:
        out = {"rule": self.rule_id, "level": self.level, "message": self.message, **self.change.to_json()}
        if self.hint:
            out["hint"] = self.hint
        if self.allowed:
            out["allowed"] = self.allowed.to_json()
        if self.folded:
            out["folded"] = [{k: v for k, v in c.to_json().items() if k != "tool"} for c in self.folded]
        return out


@dataclass(frozen=True)
class SchemaContext:
    change: Change
    direction: Direction
    keyword: str  # the schema keyword the change is under
    parent: tuple[str, ...]  # path, inside the schema, of the node holding that keyword
    member: str | None  # for a change to one property or definition: its name
    owner_names: tuple[str, ...]  # property names leading to the node, for messages
    old_root: Any  # the schemas the path starts from: a tool's, or two paired members
    new_root: Any
    label: str = ""  # which combinator member the roots are (`anyOf[1]`), for messages

    def node(self, which: Literal["old", "new"], path: tuple[str, ...]) -> Any:
        node: Any = self.old_root if which == "old" else self.new_root
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return MISSING
            node = node[key]
        return node


DEFINITION_KEYWORDS = frozenset({"$defs", "definitions"})


def owner(c: SchemaContext) -> str:
    """'parameter x' / 'output field a.b (anyOf[1])' / 'parameter x in #/$defs/d' for messages."""
    names = (*c.owner_names, c.member) if c.member and c.keyword == "properties" else c.owner_names
    where = ""
    if names and names[0].startswith("#/"):
        where, names = names[0], names[1:]
    what = "parameter" if c.direction == "input" else "output field"
    side = "input" if c.direction == "input" else "output"
    if names:
        text = f"{what} '{'.'.join(names)}'" + (f" in {where}" if where else "")
    else:
        text = f"{side} definition {where}" if where else side
    return f"{text} ({c.label})" if c.label else text


# How many reasons a finding that sums up several spells out.
REASONS_SHOWN = 4


def capped(reasons: list[str]) -> list[str]:
    """The first REASONS_SHOWN reasons, then how many more there are."""
    if len(reasons) <= REASONS_SHOWN:
        return reasons
    return [*reasons[:REASONS_SHOWN], f"and {len(reasons) - REASONS_SHOWN} more"]


def one_per_change(findings: list[Finding]) -> list[Finding]:
    """One finding per change: a finding another one says (a sibling entry named by
    `said_by`, or the same words for the same tool) is left out, and its change is folded into
    the finding that says it, so every diff entry is still accounted for."""
    by_path = {(f.change.tool, f.change.path_text): f for f in findings}
    first_said: dict[tuple[str, str, str], Finding] = {}
    sayers: list[Finding] = []
    for finding in findings:
        sayer = _sayer(finding, by_path)
        sayer = first_said.setdefault((sayer.change.tool, sayer.rule_id, sayer.message), sayer)
        sayers.append(sayer)
    folded: dict[int, list[Change]] = {}
    for finding, sayer in zip(findings, sayers, strict=True):
        if sayer is not finding:
            folded.setdefault(id(sayer), []).append(finding.change)
    return [
        replace(f, folded=tuple(folded.get(id(f), ()))) if id(f) in folded else f
        for f, sayer in zip(findings, sayers, strict=True)
        if sayer is f
    ]


def _sayer(finding: Finding, by_path: dict[tuple[str, str], Finding]) -> Finding:
    """The finding that says this one: `said_by` followed to an entry that says itself."""
    seen: set[str] = set()
    while finding.said_by is not None and finding.said_by not in seen:
        seen.add(finding.said_by)
        found = by_path.get((finding.change.tool, finding.said_by))
        if found is None:
            break
        finding = found
    return finding


def worst_of(change: Change, moved: list[tuple[str, str]]) -> Finding:
    """One finding for a change that moves several things, as (rule, reason) pairs: the most
    severe rule, every reason."""
    rule = min((rule for rule, _ in moved), key=lambda rule: LEVELS.index(RULES[rule].severity))  # type: ignore[arg-type]
    return Finding(change, rule, "; ".join(text for _, text in moved))

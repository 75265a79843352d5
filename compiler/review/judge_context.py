"""What judging a change produces (a `Finding`) and what a rule sees of the change it judges
(a `SchemaContext`): the keyword, the node holding it, and both versions of the schema."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..rules import RULES
from .diff import MISSING, Change

Level = Literal["breaking", "warning", "info"]
LEVELS: tuple[Level, ...] = ("breaking", "warning", "info")
Direction = Literal["input", "output"]


@dataclass(frozen=True)
class Finding:
    change: Change
    rule_id: str
    message: str
    hint: str | None = None  # a likely explanation beside the verdict, such as a rename

    @property
    def level(self) -> Level:
        return RULES[self.rule_id].severity  # type: ignore[return-value]

    def to_json(self) -> dict[str, Any]:
        out = {"rule": self.rule_id, "level": self.level, "message": self.message, **self.change.to_json()}
        if self.hint:
            out["hint"] = self.hint
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


def owner(c: SchemaContext) -> str:
    """'parameter x' / 'output field a.b (anyOf[1])' for messages."""
    names = (*c.owner_names, c.member) if c.member and c.keyword == "properties" else c.owner_names
    what = "parameter" if c.direction == "input" else "output field"
    text = f"{what} '{'.'.join(names)}'" if names else ("input" if c.direction == "input" else "output")
    return f"{text} ({c.label})" if c.label else text

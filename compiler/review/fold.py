"""Fold findings that say the same thing into one entry, in the order a reviewer reads them.

A release that touches the annotations of 168 tools in the same way is one thing to read, not
168: findings with the same rule, message, hint, operation and path fold into one entry that
lists its tools. Where the values matter they must match too (two descriptions changed
differently stay apart); a no-op's values show nothing a reviewer needs, so they do not count.
Entries come breaking first, then warnings, then info; within a level, the entries that cover
the most findings first.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .diff import MISSING
from .judge import LEVELS, Finding

# Rules whose finding says the change means nothing to a client: the annotations' effective
# hints are the same, list members were reordered, a keyword changed form but admits the same,
# `required` followed parameters that are reported on their own. Their values are never shown.
NO_OP_RULES = frozenset({"ANNOTATION_CHANGED", "SCHEMA_REORDERED", "SCHEMA_RESTRUCTURED", "REQUIRED_CHANGED"})


@dataclass(frozen=True)
class Entry:
    """One or more findings that say the same thing, for different tools."""

    findings: tuple[Finding, ...]

    @property
    def first(self) -> Finding:
        return self.findings[0]

    @property
    def level(self) -> str:
        return self.first.level

    @property
    def tools(self) -> list[str]:
        """The tools the entry is about; empty for a change to a declared resource or the server."""
        names = (f.change.tool for f in self.findings if f.change.of_tool)
        return list(dict.fromkeys(names))  # a change reported twice for one tool names it once

    @property
    def no_op(self) -> bool:
        return is_no_op(self.first)


def is_no_op(finding: Finding) -> bool:
    return finding.rule_id in NO_OP_RULES


def fold(findings: Iterable[Finding]) -> list[Entry]:
    grouped: dict[tuple[Any, ...], list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(_saying(finding), []).append(finding)
    entries = [Entry(tuple(found)) for found in grouped.values()]
    # Within a level the widest entries first (a summary short of room keeps what covers most),
    # then the order of the review (sorted is stable).
    return sorted(entries, key=lambda entry: (LEVELS.index(entry.level), -len(entry.findings)))


def _saying(finding: Finding) -> tuple[Any, ...]:
    change = finding.change
    said = (
        finding.rule_id,
        finding.message,
        finding.hint,
        change.op,
        change.path,
        change.resource,
        change.server,
        finding.allowed,
    )
    if is_no_op(finding):
        return said
    values = [None if v is MISSING else json.dumps(v, sort_keys=True) for v in (change.before, change.after)]
    return (*said, *values)

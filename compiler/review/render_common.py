"""What every review format shares: counts, grouping, how a change is named, and how its values
are shown to a person (the changed region of a changed value, a short form of an added or
removed one, a tool by its name, title, first sentence and parameters; never binary data)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from .binary_values import without_binary
from .compare import ServerReview
from .diff import MISSING, TOOL, Change
from .judge import LEVELS, Finding
from .word_diff import Piece, cut_middle, region

SHORT_VALUE_CHARS = 240  # an added or removed value longer than this is cut in its middle
BRIEF_DESCRIPTION_CHARS = 160
BRIEF_PARAMETERS = 12
_FIRST_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)")


def summary(review: ServerReview) -> str:
    """`4 fields changed (2 breaking, 1 warning, 1 info)` for a `ServerReview`."""
    if not review.findings:
        return "no changes"
    plural = "s" if len(review.findings) != 1 else ""
    allowed = sum(finding.allowed is not None for finding in review.findings)
    also = f"; {allowed} breaking allowed" if allowed else ""
    return f"{len(review.findings)} field{plural} changed ({level_counts(review.findings)}{also})"


def level_counts(findings: Iterable[Finding]) -> str:
    """'2 breaking, 1 warning, 1 info': how many changes there are of each level."""
    levels = [f.level for f in findings]
    return ", ".join(f"{levels.count(level)} {level}" for level in LEVELS)


# The groups of `by_tool` that are no tool: changes to the server as a whole, then to records.
SERVER_GROUP = (0, "")
RESOURCES_GROUP = (2, "")
PROMPTS_GROUP = (3, "")
MCP_RESOURCES_GROUP = (4, "")


def by_tool(findings: tuple[Finding, ...]) -> list[tuple[tuple[int, str], list[Finding]]]:
    """Findings grouped by what they change, in order: the server as a whole, then each tool
    (keyed `(1, name)`), then the declared records, the prompts and the MCP resources; keyed
    apart so no tool name can be taken for the others (their paths name what they change)."""
    grouped: dict[tuple[int, str], list[Finding]] = {}
    for finding in findings:
        change = finding.change
        key = (
            SERVER_GROUP
            if change.server
            else RESOURCES_GROUP
            if change.resource is not None
            else PROMPTS_GROUP
            if change.prompt is not None
            else MCP_RESOURCES_GROUP
            if change.mcp_resource is not None
            else (1, change.tool)
        )
        grouped.setdefault(key, []).append(finding)
    return sorted(grouped.items(), key=lambda item: item[0][0])


def group_heading(group: tuple[int, str]) -> str:
    """A markdown heading's text for a group of `by_tool`."""
    if group == SERVER_GROUP:
        return "Server"
    named = {RESOURCES_GROUP: "Collections", PROMPTS_GROUP: "Prompts", MCP_RESOURCES_GROUP: "MCP resources"}
    return named.get(group, f"`{group[1]}`")


def operation(change: Change) -> str:
    """`find_items: removed Input schema / properties / n`, `removed Resource peps / fields / x`,
    `changed Server / auth / methods`."""
    what = f"{change.op} {change.path_text}"
    return f"{change.tool}: {what}" if change.of_tool else what


def said(finding: Finding) -> str:
    """The message, with its hint where one line holds both."""
    return f"{finding.message} (hint: {finding.hint})" if finding.hint else finding.message


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def changed_region(change: Change) -> list[Piece] | None:
    """The changed words of a value present on both sides, binary data replaced; None when a
    side is missing (an addition or removal shows its value instead)."""
    if change.before is MISSING or change.after is MISSING:
        return None
    return region(without_binary(change.before), without_binary(change.after))


def short_value(value: Any) -> str:
    """A value on one line, binary data replaced, cut in its middle when long."""
    text = json.dumps(without_binary(value), ensure_ascii=False, sort_keys=True)
    return cut_middle(text, SHORT_VALUE_CHARS)


def whole_tool(change: Change) -> dict[str, Any] | None:
    """The tool an added or removed tool finding is about."""
    if change.path != (TOOL,):
        return None
    value = change.after if change.op == "added" else change.before
    return value if isinstance(value, dict) else None


def tool_brief(tool: dict[str, Any]) -> tuple[str, str, list[str]]:
    """(title, first sentence of the description, parameter names) of a tool, bounded: what a
    reviewer needs of a tool added or removed, without its whole JSON."""
    annotations = tool.get("annotations") if isinstance(tool.get("annotations"), dict) else {}
    title = tool.get("title") or annotations.get("title") or ""
    description = tool.get("description") if isinstance(tool.get("description"), str) else ""
    first = _FIRST_SENTENCE.match(description.strip())
    sentence = first.group(1) if first else description.strip()
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    names = list(properties) if isinstance(properties, dict) else []
    return (
        cut_middle(str(without_binary(title)), BRIEF_DESCRIPTION_CHARS),
        cut_middle(str(without_binary(sentence)), BRIEF_DESCRIPTION_CHARS),
        names,
    )


def shown_names(names: list[str], limit: int | None) -> tuple[list[str], int]:
    """The first `limit` names (all when None) and how many are left out."""
    if limit is None or len(names) <= limit:
        return names, 0
    return names[:limit], len(names) - limit


def parameters_text(names: list[str], shown_as: Callable[[str], str] = str) -> str:
    """`a, b and 3 more`, each name as `shown_as` renders it; `none` for a tool without any."""
    shown, more = shown_names(names, BRIEF_PARAMETERS)
    listed = ", ".join(shown_as(name) for name in shown)
    return (listed + (f" and {more} more" if more else "")) or "none"

"""Render reviews for people (text, markdown for pull requests) and machines (json, GitHub
annotations). Values are JSON; text truncates long ones, the other formats keep them whole."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from ..diagnostics import Span
from .compare import ServerReview
from .diff import MISSING, Change
from .judge import LEVELS, Finding
from .resources import resource_span

TEXT_VALUE_LIMIT = 240
RESOURCES_TEXT = "(resources)"  # heads changes to declared records; MCP tool names hold no parentheses
GITHUB_COMMAND = {"breaking": "error", "warning": "warning", "info": "notice"}


def summary(review: ServerReview) -> str:
    if not review.findings:
        return "no changes"
    plural = "s" if len(review.findings) != 1 else ""
    return f"{len(review.findings)} field{plural} changed ({level_counts(review.findings)})"


def level_counts(findings: Iterable[Finding]) -> str:
    """'2 breaking, 1 warning, 1 info': how many changes there are of each level."""
    levels = [f.level for f in findings]
    return ", ".join(f"{levels.count(level)} {level}" for level in LEVELS)


def render_text(reviews: list[ServerReview]) -> str:
    lines: list[str] = []
    for review in reviews:
        lines.append(f"{review.name}: {summary(review)}")
        for tool, findings in by_tool(review.findings):
            lines.append(f"  {tool if tool is not None else RESOURCES_TEXT}")
            for finding in findings:
                change = finding.change
                lines.append(f"    {finding.level:<8} {finding.rule_id}: {change.op} {change.path_text}")
                lines.append(f"             {finding.message}")
                if finding.hint:
                    lines.append(f"             hint: {finding.hint}")
                if change.before is not MISSING:
                    lines.append(f"             - {_short(change.before)}")
                if change.after is not MISSING:
                    lines.append(f"             + {_short(change.after)}")
    return "\n".join(lines) + "\n"


def render_markdown(reviews: list[ServerReview]) -> str:
    """For a pull request comment: only servers that changed get a section."""
    changed = [review for review in reviews if review.findings]
    if not changed:
        return "No schema changes.\n"
    out: list[str] = []
    for review in changed:
        out.append(f"## Schema changes: `{review.name}`\n")
        out.append(f"{summary(review)}.\n")
        for tool, findings in by_tool(review.findings):
            out.append(f"### {group_heading(tool)}\n")
            for finding in findings:
                change = finding.change
                level = f"**{finding.level}**" if finding.level == "breaking" else finding.level
                out.append(
                    f"- {level} `{finding.rule_id}` — {change.op} `{change.path_text}`: {_said(finding)}"
                )
                for label, value in (("Previous value", change.before), ("New value", change.after)):
                    if value is not MISSING:
                        out.append(f"\n  {label}:\n\n  ```json\n{_indent(pretty(value), '  ')}\n  ```")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def markdown_values(change: Change) -> list[str]:
    """The previous and new values of a change as indented JSON blocks under a list item."""
    blocks = []
    for label, value in (("Previous value", change.before), ("New value", change.after)):
        if value is not MISSING:
            blocks.append(f"\n  {label}:\n\n  ```json\n{_indent(pretty(value), '  ')}\n  ```")
    return blocks


def render_json(reviews: list[ServerReview]) -> str:
    servers = []
    for review in reviews:
        servers.append(
            {
                "server": review.name,
                "base": review.base.origin if review.base else None,
                "head": review.head.origin if review.head else None,
                "summary": {level: review.count(level) for level in LEVELS},
                "findings": [finding.to_json() for finding in review.findings],
            }
        )
    return json.dumps({"servers": servers}, indent=2, ensure_ascii=False) + "\n"


def render_github(reviews: list[ServerReview]) -> str:
    """GitHub Actions workflow commands: one annotation per finding, on the spec line when known."""
    lines = []
    for review in reviews:
        for finding in review.findings:
            span = _span(review, finding)
            where = f"file={_escape_property(span.file)},line={span.line},col={span.col}," if span else ""
            title = _escape_property(f"lynxc {finding.rule_id}")
            message = _escape_data(f"{operation(finding.change)}: {_said(finding)}")
            lines.append(f"::{GITHUB_COMMAND[finding.level]} {where}title={title}::{message}")
    return "\n".join(lines) + ("\n" if lines else "")


FORMATS: dict[str, Callable[[list[ServerReview]], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "github": render_github,
}


def _span(review: ServerReview, finding: Finding) -> Span | None:
    """Where the change stands in the head spec: the parameter's line, else the tool's; for a
    resource, the line of the (innermost still declared) field, else the resource's."""
    resource = finding.change.resource
    if resource is not None:
        return resource_span(review.head, finding.change) if review.head else None
    side = (
        review.head if review.head and finding.change.tool in {t["name"] for t in review.head.tools} else None
    )
    if side is None or not side.spans:
        return None
    path = finding.change.path
    if path[:2] == ("Input schema", "properties") and len(path) > 2:
        found = side.spans.get((finding.change.tool, path[2]))
        if found:
            return found
    return side.spans.get((finding.change.tool, None))


def by_tool(findings: tuple[Finding, ...]) -> list[tuple[str | None, list[Finding]]]:
    """Findings grouped by tool, in order; changes to declared records form one group, keyed
    None (their paths name the resource), so no tool name can be taken for it."""
    grouped: dict[tuple[bool, str], list[Finding]] = {}
    for finding in findings:
        change = finding.change
        grouped.setdefault((change.resource is not None, change.tool), []).append(finding)
    return [(None if resource else tool, found) for (resource, tool), found in grouped.items()]


def group_heading(tool: str | None) -> str:
    """A markdown heading's text for a group of `by_tool`."""
    return f"`{tool}`" if tool is not None else "Resources"


def operation(change: Change) -> str:
    """`find_items: removed Input schema / properties / n`, `removed Resource peps / fields / x`."""
    what = f"{change.op} {change.path_text}"
    return what if change.resource is not None else f"{change.tool}: {what}"


def _said(finding: Finding) -> str:
    """The message, with its hint where one line holds both."""
    return f"{finding.message} (hint: {finding.hint})" if finding.hint else finding.message


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= TEXT_VALUE_LIMIT else text[: TEXT_VALUE_LIMIT - 1] + "…"


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")

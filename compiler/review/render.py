"""Render reviews for people (text; markdown for pull requests, in `render_markdown`) and
machines (json, GitHub annotations).

People read breaking changes first, then warnings, then the rest, with findings that say the
same thing folded into one entry (`fold`); a changed value shows its changed words with some
context (`word_diff`), never two long strings cut before the change, and never binary data.
JSON keeps every value exact, for machines, and adds the changed region as `diff`."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable

from ..diagnostics import Span
from .collections import resource_span
from .compare import ServerReview
from .diff import MISSING
from .fold import Entry, fold, is_no_op
from .judge import LEVELS, Finding
from .mcp_resources import mcp_resource_span
from .prompts import prompt_span
from .render_common import (
    by_tool,
    changed_region,
    group_heading,
    level_counts,
    operation,
    parameters_text,
    said,
    short_value,
    summary,
    tool_brief,
    whole_tool,
)
from .render_markdown import markdown_values, render_markdown
from .word_diff import as_json, as_text

__all__ = [
    "FORMATS",
    "by_tool",
    "group_heading",
    "level_counts",
    "markdown_values",
    "operation",
    "render_github",
    "render_json",
    "render_markdown",
    "render_text",
]

GITHUB_COMMAND = {"breaking": "error", "warning": "warning", "info": "notice"}
TEXT_WIDTH = 100
_INDENT = " " * 13  # under the rule, past the level column


def render_text(reviews: list[ServerReview]) -> str:
    lines: list[str] = []
    for review in reviews:
        lines.append(f"{review.name}: {summary(review)}")
        for entry in fold(review.findings):
            lines += _text_entry(entry)
        if review.versions:  # the verdict after the findings it judges
            lines.append(f"  versions: {review.versions}")
    return "\n".join(lines) + "\n"


def _text_entry(entry: Entry) -> list[str]:
    finding, change = entry.first, entry.first.change
    if len(entry.tools) <= 1:
        lines = [f"    {finding.level:<8} {finding.rule_id}: {operation(change)}"]
    else:
        where = f"{change.op} {change.path_text} in {len(entry.tools)} tools"
        lines = [f"    {finding.level:<8} {finding.rule_id}: {where}"]
        lines += textwrap.wrap(
            ", ".join(entry.tools), TEXT_WIDTH, initial_indent=_INDENT, subsequent_indent=_INDENT
        )
    lines.append(f"{_INDENT}{finding.message}")
    if finding.allowed:
        lines.append(f"{_INDENT}allowed: {finding.allowed.text}")
    if finding.hint:
        lines.append(f"{_INDENT}hint: {finding.hint}")
    return lines + [f"{_INDENT}{line}" for line in text_values(finding)]


def text_values(finding: Finding) -> list[str]:
    """What changed, on one line each: `~ words [-old-]{+new+} words`, `+ added`, `- removed`;
    nothing for a no-op."""
    change = finding.change
    if is_no_op(finding):
        return []
    tool = whole_tool(change)
    if tool is not None:
        title, sentence, parameters = tool_brief(tool)
        sign = "+" if change.op == "added" else "-"
        named = f"{title}: " if title else ""
        return [f"{sign} {named}{sentence} (parameters: {parameters_text(parameters)})"]
    pieces = changed_region(change)
    if pieces is not None:
        return [f"~ {as_text(pieces)}"]
    if change.before is not MISSING:
        return [f"- {short_value(change.before)}"]
    return [f"+ {short_value(change.after)}"]


def render_json(reviews: list[ServerReview]) -> str:
    """Values kept exact (a machine may rebuild both sides from them); a changed value also
    gets `diff`, its changed region as equal/delete/insert pieces with elided context."""
    servers = []
    for review in reviews:
        findings = []
        for finding in review.findings:
            shown = finding.to_json()
            pieces = changed_region(finding.change)
            if pieces is not None:
                shown["diff"] = as_json(pieces)
            findings.append(shown)
        servers.append(
            {
                "server": review.name,
                "base": review.base.origin if review.base else None,
                "head": review.head.origin if review.head else None,
                "summary": {level: review.count(level) for level in LEVELS},
                "versions": {
                    "base": review.base.version if review.base else None,
                    "head": review.head.version if review.head else None,
                    "verdict": review.versions,
                },
                "allowed": sum(finding.allowed is not None for finding in review.findings),
                "findings": findings,
            }
        )
    return json.dumps({"servers": servers}, indent=2, ensure_ascii=False) + "\n"


def render_github(reviews: list[ServerReview]) -> str:
    """GitHub Actions workflow commands: one annotation per finding, on the spec line when known,
    its message ending with what changed."""
    lines = []
    for review in reviews:
        head_tools = {tool["name"] for tool in review.head.tools} if review.head else set()
        for finding in review.findings:
            span = _span(review, finding, head_tools)
            where = f"file={_escape_property(span.file)},line={span.line},col={span.col}," if span else ""
            # An allowed breaking change is a warning annotation: an error one reads as a failure.
            command = GITHUB_COMMAND[finding.gate_level]
            allowed = f" (breaking, allowed: {finding.allowed.text})" if finding.allowed else ""
            title = _escape_property(f"lynxc {finding.rule_id}{' (allowed)' if finding.allowed else ''}")
            values = "".join(f" {value}" for value in text_values(finding))
            message = _escape_data(f"{operation(finding.change)}: {said(finding)}{allowed}{values}")
            lines.append(f"::{command} {where}title={title}::{message}")
    return "\n".join(lines) + ("\n" if lines else "")


FORMATS: dict[str, Callable[[list[ServerReview]], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
    "github": render_github,
}


def _span(review: ServerReview, finding: Finding, head_tools: set[str]) -> Span | None:
    """Where the change stands in the head spec: the parameter's line, else the tool's; for a
    resource, the line of the (innermost still declared) field, else the resource's."""
    if finding.change.server:
        return None  # a spec side keeps no line for server.auth: the annotation names no file
    if finding.change.prompt is not None:
        return prompt_span(review.head, finding.change) if review.head else None
    if finding.change.mcp_resource is not None:
        return mcp_resource_span(review.head, finding.change) if review.head else None
    resource = finding.change.resource
    if resource is not None:
        return resource_span(review.head, finding.change) if review.head else None
    side = review.head if finding.change.tool in head_tools else None
    if side is None or not side.spans:
        return None
    path = finding.change.path
    if path[:2] == ("Input schema", "properties") and len(path) > 2:
        found = side.spans.get((finding.change.tool, path[2]))
        if found:
            return found
    return side.spans.get((finding.change.tool, None))


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")

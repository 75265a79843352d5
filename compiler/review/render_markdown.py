"""Markdown reviews: the pull-request summary, and the full report it points to.

The summary is a GitHub comment, so it must stay under GitHub's 65,536-character limit whatever
the size of the change. Per changed server: a line of counts, the breaking findings, then the
warnings (each with its message, path and changed region), then one table of everything else.
It is filled by priority within `max_chars`: the breaking entries of every server, then the
warnings, then the info rows (a server's heading goes in with its first entry); an entry that
does not fit whole is tried in one line, and once even that does not fit, the rest is left out
and a closing line says how much and where the full report is. Folded entries name their first
tools only; added or removed tools show their name, title, first sentence and parameters, never
their JSON.

The full report (`lynxc diff --report PATH`) has no budget: every finding, every tool name,
and the JSON of what was added or removed, with binary data replaced by placeholders.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .binary_values import without_binary
from .compare import ServerReview
from .diff import MISSING, Change
from .fold import Entry, fold
from .judge import LEVELS, Finding
from .render_common import (
    SHORT_VALUE_CHARS,
    changed_region,
    level_counts,
    parameters_text,
    pretty,
    said,
    short_value,
    shown_names,
    summary,
    tool_brief,
    whole_tool,
)
from .word_diff import as_markdown, cut_middle, markdown_inline, value_text

GITHUB_COMMENT_LIMIT = 65_536
DEFAULT_MAX_CHARS = GITHUB_COMMENT_LIMIT - 5_536  # room for what a bot adds around the comment
MIN_MAX_CHARS = 2_000
SUMMARY_TOOLS = 10  # tools named in a folded entry of the summary
SUMMARY_MESSAGE_CHARS = 600
SHOWN_REPORT_PATH = 200
SECTION_TITLES = {"breaking": "Breaking", "warning": "Warnings", "info": "Other changes"}
TABLE_HEAD = "| Tools | Change | Rule | Message |\n| --- | --- | --- | --- |\n"
NO_CHANGES = "No schema changes.\n"
_CLOSING_RESERVE = 600  # the closing line's room, kept free while filling
_PIPE = re.compile(r"(\\*)\|")


def render_markdown(
    reviews: list[ServerReview], max_chars: int = DEFAULT_MAX_CHARS, report: str | None = None
) -> str:
    """The pull-request summary, at most `max_chars` characters; `report` names the file that
    holds the full report, when one is written."""
    changed = [review for review in reviews if review.findings]
    if not changed:
        return NO_CHANGES
    plan = _Plan(max_chars - _CLOSING_RESERVE)
    folded = [fold(review.findings) for review in changed]
    headings = [_server_heading(review) for review in changed]
    for level in LEVELS:
        for index, entries in enumerate(folded):
            for entry in (e for e in entries if e.level == level):
                if plan.full:  # not rendered: only counted
                    plan.left_out += entry.findings
                    continue
                if level == "info":
                    whole, compact = _table_row(entry), _table_row(entry, values=False)
                else:
                    whole, compact = _list_item(entry), _list_item(entry, compact=True)
                plan.add(index, headings[index], level, entry, whole, compact)
    return plan.assemble(changed, folded, report, max_chars)


def render_report(reviews: list[ServerReview]) -> str:
    """Everything, for a file beside the summary: no budget, no table, every tool named, the JSON
    of what was added or removed (binary data replaced)."""
    changed = [review for review in reviews if review.findings]
    out = ["# Schema review: full report\n"]
    if not changed:
        return out[0] + "\n" + NO_CHANGES
    for review in changed:
        out.append(_server_heading(review))
        entries = fold(review.findings)
        for level in LEVELS:
            shown = [entry for entry in entries if entry.level == level]
            if shown:
                out.append(_section_heading(level, shown))
                out += [_list_item(entry, full=True) for entry in shown]
                out.append("")
    return "\n".join(out).rstrip() + "\n"


def markdown_values(change: Change) -> list[str]:
    """The previous and new values of a change as indented JSON blocks under a list item."""
    blocks = []
    for label, value in (("Previous value", change.before), ("New value", change.after)):
        if value is not MISSING:
            blocks.append(f"\n  {label}:\n\n" + _indent("\n".join(_json_block(value)), "  "))
    return blocks


@dataclass
class _Shown:
    server: int
    level: str
    text: str


class _Plan:
    """What goes into the summary, chosen by priority within a budget of characters."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self.full = False  # once something does not fit, nothing after it goes in
        self.headings: dict[int, str] = {}
        self.shown: list[_Shown] = []
        self.left_out: list[Finding] = []
        self.opened: set[tuple[int, str]] = set()

    def add(self, server: int, heading: str, level: str, entry: Entry, whole: str, compact: str) -> None:
        """Show `entry` whole, else in one line; a server's heading goes in with its first entry."""
        opening = 0 if (server, level) in self.opened else _section_cost(level)
        opening += 0 if server in self.headings else len(heading) + 1
        for text in (whole, compact):
            cost = opening + len(text) + 1
            if not self.full and self.used + cost <= self.budget:
                self.used += cost
                self.headings.setdefault(server, heading)
                self.opened.add((server, level))
                self.shown.append(_Shown(server, level, text))
                return
        self.full = True
        self.left_out += entry.findings

    def assemble(
        self, changed: list[ServerReview], folded: list[list[Entry]], report: str | None, max_chars: int
    ) -> str:
        out: list[str] = []
        for index, entries in enumerate(folded):
            if index not in self.headings:
                continue
            out.append(self.headings[index])
            for level in LEVELS:
                texts = [s.text for s in self.shown if s.server == index and s.level == level]
                if not texts:
                    continue
                out.append(_section_heading(level, [e for e in entries if e.level == level]))
                out.append(("" if level != "info" else TABLE_HEAD) + "\n".join(texts) + "\n")
        out.append(self._closing(changed, report, max_chars))
        return "\n".join(part for part in out if part).rstrip() + "\n"

    def _closing(self, changed: list[ServerReview], report: str | None, max_chars: int) -> str:
        where = code(cut_middle(report, SHOWN_REPORT_PATH)) if report else None
        if not self.left_out:
            return f"The full report is in {where}.\n" if where else ""
        total = sum(len(review.findings) for review in changed)
        missing = len(changed) - len(self.headings)
        servers = f"; {missing} of {len(changed)} servers not at all" if missing else ""
        left = self.left_out
        see = f"the full report is in {where}" if where else "write them all with `lynxc diff --report FILE`"
        return (
            f"---\n**{len(left)} of {total} findings are not shown here** ({level_counts(left)}{servers}), "
            f"to keep this comment under {max_chars:,} characters; {see}.\n"
        )


def _section_cost(level: str) -> int:
    """A section's heading, its blank lines, a count of up to six digits, and a table's head."""
    return len(_section_heading(level, [])) + 8 + (len(TABLE_HEAD) if level == "info" else 0)


def _server_heading(review: ServerReview) -> str:
    versions = f"\n{markdown_inline(review.versions)}.\n" if review.versions else ""
    return f"## Schema changes: `{review.name}`\n\n{summary(review)}.\n{versions}"


def _section_heading(level: str, entries: list[Entry]) -> str:
    count = sum(len(entry.findings) for entry in entries)
    return f"### {SECTION_TITLES[level]} ({count})\n"


def _list_item(entry: Entry, *, full: bool = False, compact: bool = False) -> str:
    """`- **breaking** `RULE` — `tool`: op `path`: message`, then the tools of a folded entry and
    what changed; `compact` stops after the first line, `full` (the report) names every tool and
    shows added or removed values whole."""
    finding, change = entry.first, entry.first.change
    level = f"**{finding.level}**" if finding.level == "breaking" else finding.level
    what = f"{_subject(entry)}{_change(change)}"
    allowed = ""
    if finding.allowed:  # an acknowledgement's reason is the author's text: cut like a message
        why = finding.allowed.text
        allowed = f" (allowed: {markdown_inline(why if full else cut_middle(why, SUMMARY_MESSAGE_CHARS))})"
    lines = [f"- {level} {code(finding.rule_id)}{allowed} — {what}: {_said(finding, full)}"]
    if compact:
        return lines[0]
    if len(entry.tools) > 1:
        lines.append(f"  Tools: {_tools(entry.tools, None if full else SUMMARY_TOOLS)}")
    if entry.no_op:
        return "\n".join(lines)
    whole = _whole_values(change) if full else []
    if not whole or _both_sides(change) or whole_tool(change) is not None:  # the JSON follows a summary
        lines.append(f"  > {_values(change)}")
    lines += [f"  {line}".rstrip() for line in whole]
    return "\n".join(lines)


def _table_row(entry: Entry, *, values: bool = True) -> str:
    finding, change = entry.first, entry.first.change
    tools = _tools(entry.tools, SUMMARY_TOOLS) if entry.tools else _not_tool(entry.first.change)
    message = _said(finding)
    shown = _values(change) if values and not entry.no_op else ""
    cells = [
        tools,
        _change(change),
        code(finding.rule_id),
        f"{message} — {shown}" if shown else message,
    ]
    return "| " + " | ".join(cell.replace("\n", " ") for cell in _table_safe(cells)) + " |"


def _values(change: Change) -> str:
    """What changed, on one markdown line: the changed words, or the added or removed value;
    a tool by its title, first sentence and parameters."""
    tool = whole_tool(change)
    if tool is not None:
        title, sentence, parameters = tool_brief(tool)
        named = f"**{markdown_inline(title)}**: " if title else ""
        return f"{named}{markdown_inline(sentence)} · parameters: {parameters_text(parameters, code)}"
    pieces = changed_region(change)
    if pieces is not None:
        return as_markdown(pieces)
    if change.before is not MISSING:
        return f"<del>{markdown_inline(short_value(change.before))}</del>"
    return f"<ins>{markdown_inline(short_value(change.after))}</ins>"


def _whole_values(change: Change) -> list[str]:
    """For the report: an added or removed value in full, as a JSON block; a long changed value
    both ways, folded away under the changed region that says what changed."""
    if not _both_sides(change):
        return ["", *_json_block(change.after if change.before is MISSING else change.before)]
    if max(len(value_text(change.before)), len(value_text(change.after))) <= SHORT_VALUE_CHARS:
        return []  # the region shows it whole
    return [
        "",
        "<details><summary>Previous and new values</summary>",
        "",
        "Previous value:",
        "",
        *_json_block(change.before),
        "",
        "New value:",
        "",
        *_json_block(change.after),
        "",
        "</details>",
    ]


def _json_block(value: Any) -> list[str]:
    """A fenced JSON block, binary data replaced; its fence longer than any run in the text."""
    text = pretty(without_binary(value))
    fence = "```"
    while fence in text:
        fence += "`"
    return [f"{fence}json", *text.splitlines(), fence]


def _both_sides(change: Change) -> bool:
    return change.before is not MISSING and change.after is not MISSING


def _change(change: Change) -> str:
    """`removed tool`, `changed `Input schema / properties / n``."""
    return f"{change.op} tool" if whole_tool(change) is not None else f"{change.op} {code(change.path_text)}"


def _not_tool(change: Change) -> str:
    """The Tools cell of a change to the server, a collection, a prompt or an MCP resource (its
    path names it)."""
    if change.prompt is not None:
        return "(prompts)"
    if change.mcp_resource is not None:
        return "(MCP resources)"
    return "(server)" if change.server else "(collections)"


def _subject(entry: Entry) -> str:
    if not entry.tools:
        return ""  # a collection or the server: its path names it
    if len(entry.tools) == 1:
        return f"{code(entry.tools[0])}: "
    return f"{len(entry.tools)} tools: "


def _tools(names: list[str], limit: int | None) -> str:
    shown, more = shown_names(names, limit)
    listed = ", ".join(code(name) for name in shown)
    return listed + (f" and {more} more" if more else "")


def _said(finding: Finding, full: bool = False) -> str:
    """The message and hint, cut in the summary so one long message cannot crowd out the rest."""
    text = said(finding)
    return markdown_inline(text if full else cut_middle(text, SUMMARY_MESSAGE_CHARS))


def code(text: str) -> str:
    """`text` as a code span, whatever backticks it holds (CommonMark's longer fence)."""
    text = text.replace("\n", " ")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    padded = f" {text} " if text.startswith("`") or text.endswith("`") else text
    return f"{fence}{padded}{fence}"


def _table_safe(cells: list[str]) -> list[str]:
    """Every `|` escaped (an odd number of backslashes before it): one inside a code span still
    ends a table cell on GitHub otherwise."""
    return [_PIPE.sub(_escaped_pipe, cell) for cell in cells]


def _escaped_pipe(match: re.Match[str]) -> str:
    backslashes = match[1]
    return backslashes + ("" if len(backslashes) % 2 else "\\") + "|"


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())

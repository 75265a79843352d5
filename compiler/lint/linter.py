"""`lynxc lint`: run the checks over each server's wire form, apply suppressions, score."""

from __future__ import annotations

from dataclasses import dataclass

from ..wire import ServerWire
from .checks import TOOL_CHECKS, LintFinding, ToolView, check_server, schema_names
from .records import check_record_paths
from .score import ServerScore, score_tool
from .surface import check_surface


@dataclass(frozen=True)
class Suppressed:
    finding: LintFinding
    reason: str


@dataclass(frozen=True)
class LintResult:
    server: ServerWire
    findings: tuple[LintFinding, ...]
    suppressed: tuple[Suppressed, ...]
    score: ServerScore


def lint_server(server: ServerWire) -> LintResult:
    names = [tool["name"] for tool in server.tools]
    words = {tool["name"]: schema_names(tool) for tool in server.tools}
    findings: list[LintFinding] = []
    scores = []
    for tool in server.tools:
        others = tuple(n for n in names if n != tool["name"])
        sibling_words = frozenset().union(*(words[n] for n in others))
        view = ToolView(tool, others, server.spans, server.extras.get(tool["name"]), sibling_words)
        tool_findings = [finding for check in TOOL_CHECKS for finding in check(view)]
        tool_findings += check_record_paths(view, server.resources)
        findings += tool_findings
        scores.append(score_tool(view, tool_findings))
    findings += check_server(server)
    findings += check_surface(server)
    kept, suppressed = [], []
    for finding in findings:
        reason = _suppression(server, finding)
        if reason is None:
            kept.append(finding)
        else:
            suppressed.append(Suppressed(finding, reason))
    return LintResult(server, tuple(kept), tuple(suppressed), ServerScore(tuple(scores)))


def _suppression(server: ServerWire, finding: LintFinding) -> str | None:
    if finding.rule_id in server.suppressions:  # server.lint.suppress: for all the server offers
        return server.suppressions[finding.rule_id]
    extras = server.extras.get(finding.tool or "")
    if extras is not None:
        return extras.suppressions.get(finding.rule_id)
    # A server-wide finding is suppressed when every tool suppresses its rule (server-level lint).
    reasons = [e.suppressions.get(finding.rule_id) for e in server.extras.values()]
    return reasons[0] if reasons and all(reasons) else None

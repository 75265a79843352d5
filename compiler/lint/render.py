"""Lint output: text for people, json, GitHub annotations, and SARIF 2.1.0 for code scanning."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..rules import RULES
from .checks import LintFinding
from .linter import LintResult
from .score import WEIGHTS

SEVERITY_ORDER = ("error", "warning", "info")
GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _where(finding: LintFinding) -> str:
    if finding.span:
        return f"{finding.span}: "
    return f"{finding.tool}: " if finding.tool else ""


def render_text(results: list[LintResult], *, score: bool) -> str:
    lines = []
    for result in results:
        for finding in _sorted(result.findings):
            lines.append(f"{_where(finding)}{finding.severity} {finding.rule_id}: {finding.message}")
        for item in result.suppressed:
            lines.append(f"{_where(item.finding)}suppressed {item.finding.rule_id}: {item.reason}")
        counts = {s: sum(f.severity == s for f in result.findings) for s in SEVERITY_ORDER}
        summary = ", ".join(f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items())
        lines.append(f"{result.server.name}: {len(result.server.tools)} tools, {_surface(result)}{summary}")
        if score:
            lines += _score_lines(result)
    return "\n".join(lines) + "\n"


def _surface(result: LintResult) -> str:
    """`2 prompts, 3 resources, ` for a server that offers any (nothing otherwise)."""
    prompts = len(result.server.prompts or ())
    mcp = result.server.mcp_resources or {}
    resources = len(mcp.get("resources", ())) + len(mcp.get("resourceTemplates", ()))
    counted = [
        f"{n} {what}{'s' if n != 1 else ''}"
        for n, what in ((prompts, "prompt"), (resources, "resource"))
        if n
    ]
    return "".join(f"{text}, " for text in counted)


def _score_lines(result: LintResult) -> list[str]:
    lines = []
    for tool in result.score.tools:
        dims = "  ".join(f"{d.dimension} {d.score}" for d in tool.dimensions)
        lines.append(f"  {tool.tool}: {tool.total:.2f} ({tool.tier})  {dims}")
        for d in tool.dimensions:
            lines.append(f"    {d.dimension} {d.score}: {'; '.join(d.reasons)}")
    server = result.score
    formula = f"0.6 x mean {server.mean:.2f} + 0.4 x min {server.minimum:.2f}"
    lines.append(f"  server score {server.total:.2f} ({server.tier}) = {formula}")
    return lines


def render_json(results: list[LintResult], *, score: bool) -> str:
    out = []
    for result in results:
        entry: dict[str, Any] = {
            "server": result.server.name,
            "source": result.server.origin,
            "findings": [f.to_json() for f in _sorted(result.findings)],
            "suppressed": [{**s.finding.to_json(), "reason": s.reason} for s in result.suppressed],
        }
        if score:
            entry["score"] = score_json(result)
        out.append(entry)
    return json.dumps({"servers": out}, indent=2, ensure_ascii=False) + "\n"


def score_json(result: LintResult) -> dict[str, Any]:
    return {
        "weights": WEIGHTS,
        "tools": [
            {
                "tool": t.tool,
                "total": t.total,
                "tier": t.tier,
                "dimensions": {
                    d.dimension: {"score": d.score, "reasons": list(d.reasons)} for d in t.dimensions
                },
            }
            for t in result.score.tools
        ],
        "server": {
            "total": result.score.total,
            "tier": result.score.tier,
            "mean": round(result.score.mean, 2),
            "minimum": result.score.minimum,
        },
    }


def render_github(results: list[LintResult], *, score: bool) -> str:
    lines = []
    for result in results:
        for finding in _sorted(result.findings):
            span = finding.span
            where = f"file={_prop(span.file)},line={span.line},col={span.col}," if span else ""
            message = _data(f"{finding.tool + ': ' if finding.tool else ''}{finding.message}")
            title = _prop("lynxc " + finding.rule_id)
            lines.append(f"::{GITHUB_COMMAND[finding.severity]} {where}title={title}::{message}")
    return "\n".join(lines) + ("\n" if lines else "")


def render_sarif(results: list[LintResult], *, score: bool) -> str:
    used = sorted({f.rule_id for r in results for f in r.findings})
    rules = [
        {
            "id": rule_id,
            "shortDescription": {"text": RULES[rule_id].purpose},
            "defaultConfiguration": {"level": SARIF_LEVEL[RULES[rule_id].severity]},
            "properties": {"category": RULES[rule_id].category},
        }
        for rule_id in used
    ]
    sarif_results = []
    for result in results:
        for finding in _sorted(result.findings):
            item: dict[str, Any] = {
                "ruleId": finding.rule_id,
                "ruleIndex": used.index(finding.rule_id),
                "level": SARIF_LEVEL[finding.severity],
                "message": {"text": f"{finding.tool + ': ' if finding.tool else ''}{finding.message}"},
            }
            location: dict[str, Any] = {
                "logicalLocations": [{"name": finding.tool or result.server.name, "kind": "function"}]
            }
            if finding.span:
                location["physicalLocation"] = {
                    "artifactLocation": {"uri": finding.span.file},
                    "region": {"startLine": finding.span.line, "startColumn": finding.span.col},
                }
            item["locations"] = [location]
            sarif_results.append(item)
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "lynxc",
                        "informationUri": "https://pypi.org/project/lynxc/",
                        "rules": rules,
                    }
                },
                "results": sarif_results,
            }
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


FORMATS: dict[str, Callable[..., str]] = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
}


def _sorted(findings: tuple[LintFinding, ...]) -> list[LintFinding]:
    return sorted(
        findings, key=lambda f: (f.tool or "", SEVERITY_ORDER.index(f.severity), f.rule_id, f.message)
    )


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")

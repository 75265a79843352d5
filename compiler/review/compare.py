"""Pair the servers of two sides, diff each pair, and judge every change."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..wire import ServerWire, Side
from .auth import diff_server_auth, judge_server_auth
from .collections import diff_resources, judge_resource
from .diff import diff_tools
from .judge import LEVELS, Finding, judge
from .judge_context import one_per_change
from .mcp_resources import diff_mcp_resources, judge_mcp_resource, still_matched
from .prompts import diff_prompts, judge_prompt
from .tool_renames import rename_hints


@dataclass(frozen=True)
class ServerReview:
    name: str
    base: ServerWire | None
    head: ServerWire | None
    findings: tuple[Finding, ...]
    # How the versions judged its breaking findings (review/versions.py), when they did.
    versions: str | None = None

    def count(self, level: str) -> int:
        return sum(finding.level == level for finding in self.findings)


def review(base: Side, head: Side) -> list[ServerReview]:
    """One review per server. Two single-server sides are compared whatever their names (a saved
    tools/list against a spec); otherwise servers are matched by name."""
    if len(base.servers) == 1 and len(head.servers) == 1:
        pairs = [(next(iter(base.servers.values())), next(iter(head.servers.values())))]
    else:
        names = sorted(base.servers.keys() | head.servers.keys())
        pairs = [(base.servers.get(name), head.servers.get(name)) for name in names]
    return [review_pair(old, new) for old, new in pairs]


def review_pair(old: ServerWire | None, new: ServerWire | None) -> ServerReview:
    """Changes to the server's caller authentication first, then tool changes, then changes to
    the declared records, then to prompts and to MCP resources (each compared only when both
    sides can tell what they are)."""
    findings = _server_findings(old, new)
    old_tools = {t["name"]: t for t in (old.tools if old else [])}
    new_tools = {t["name"]: t for t in (new.tools if new else [])}
    changes = diff_tools(list(old_tools.values()), list(new_tools.values()))
    tool_findings = one_per_change([judge(c, old_tools.get(c.tool), new_tools.get(c.tool)) for c in changes])
    renamed = rename_hints(old_tools, new_tools)
    findings += [
        replace(f, hint=renamed[f.change.tool])
        if f.rule_id == "TOOL_REMOVED" and f.change.tool in renamed
        else f
        for f in tool_findings
    ]
    old_resources, new_resources = _resources(old), _resources(new)
    if old_resources is not None and new_resources is not None:
        findings += [judge_resource(c) for c in diff_resources(old_resources, new_resources)]
    old_prompts, new_prompts = _known(old, "prompts", []), _known(new, "prompts", [])
    if old_prompts is not None and new_prompts is not None:
        findings += [judge_prompt(c) for c in diff_prompts(old_prompts, new_prompts)]
    old_mcp, new_mcp = _known(old, "mcp_resources", {}), _known(new, "mcp_resources", {})
    if old_mcp is not None and new_mcp is not None:
        findings += [_hinted(judge_mcp_resource(c), new_mcp) for c in diff_mcp_resources(old_mcp, new_mcp)]
    name = (new or old).name  # type: ignore[union-attr]
    return ServerReview(name, old, new, tuple(findings))


def _server_findings(old: ServerWire | None, new: ServerWire | None) -> list[Finding]:
    """A server on one side only is added or removed whole: its tools say so, not its auth."""
    if old is None or new is None:
        return []
    return [judge_server_auth(c, old.auth, new.auth) for c in diff_server_auth(old.auth, new.auth)]


def _resources(side: ServerWire | None) -> list[dict[str, Any]] | None:
    """A server absent from a side declares no collections; a side that cannot tell (a saved
    tools/list answer) is None, and collections are then not compared at all."""
    return [] if side is None else side.resources


def _hinted(finding: Finding, new: dict[str, Any]) -> Finding:
    """A static resource removed whose URI a template of the new side matches: still readable,
    though no longer listed; the reviewer is told beside the verdict."""
    if finding.rule_id != "RESOURCE_URI_REMOVED" or finding.change.mcp_resource is None:
        return finding
    name = still_matched(finding.change.mcp_resource[1], list(new.get("resourceTemplates", ())))
    if name is None:
        return finding
    return replace(
        finding, hint=f"template '{name}' matches its URI: reads may still work, but it is no longer listed"
    )


def _known(side: ServerWire | None, attribute: str, empty: Any) -> Any:
    """What a side offers of prompts or MCP resources: nothing for a server absent from it; None
    when it cannot tell (a saved tools/list answer, a baseline released before they were kept)."""
    return empty if side is None else getattr(side, attribute)


def worst_level(reviews: list[ServerReview]) -> str | None:
    levels = {finding.level for r in reviews for finding in r.findings}
    return next((level for level in LEVELS if level in levels), None)

"""Released schema baselines and the changelog derived from them.

`schema-changelog/<server>/` holds, per released version, the exact `tools/list` payload
(`<version>.json`) and, in `releases.json`, each version's date. `lynxc release` adds one;
`lynxc build` checks the spec against them and regenerates `CHANGELOG.md` and `changelog.json`.

A server that declares records keeps its resources document in the baseline too, under
`"resources"` (`{"format": 1, "resources": [...]}`), so resource changes are checked and listed
like tool changes. A baseline without that key (older, or of a server without records) declared
none. A server that authenticates callers keeps what tools/list says of it, its top-level `_meta`
"lynxc/auth", the same way; a baseline without it authenticated no one.

Prompts and MCP resources (issue 31) are kept under `"prompts"` (the `prompts/list` entries) and
`"mcpResources"` (`{"resources": [...], "resourceTemplates": [...]}`), written by every release
since, even empty. A baseline without them was released before they were kept: they are unknown
then, and not compared, never read as all removed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, Span
from ..files import write_text_atomic
from ..ir import AUTH_META_KEY, ServerIR
from ..rules import diagnostic
from ..wire import (
    ServerWire,
    auth_of_payload,
    mcp_resources_from_payload,
    prompts_from_payload,
    resources_from_document,
    resources_payload,
    wire_from_ir,
)
from .compare import review_pair
from .judge import Finding
from .render import by_tool, group_heading, level_counts, markdown_values, operation

CHANGELOG_DIR = "schema-changelog"
RELEASES_FILE = "releases.json"
PROMPTS_KEY = "prompts"
MCP_RESOURCES_KEY = "mcpResources"
_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


@dataclass(frozen=True)
class Release:
    version: str
    date: str
    tools: list[dict[str, Any]]
    resources: list[dict[str, Any]] = field(default_factory=list)
    auth: dict[str, Any] | None = None  # tools/list's `_meta` "lynxc/auth"; None: no caller auth
    prompts: list[dict[str, Any]] | None = None  # None: released before prompts were kept
    mcp_resources: dict[str, list[dict[str, Any]]] | None = None  # None: likewise

    def wire(self, name: str, origin: str, version: str | None = None) -> ServerWire:
        """The release as one side of a review."""
        return ServerWire(
            name,
            self.tools,
            origin,
            resources=self.resources,
            auth=self.auth,
            version=version,
            prompts=self.prompts,
            mcp_resources=self.mcp_resources,
        )


@dataclass(frozen=True)
class VersionEntry:
    version: str
    date: str | None  # None: not released yet
    since: str | None  # the version it is compared with; None for the first
    findings: tuple[Finding, ...]


@dataclass(frozen=True)
class Changelog:
    server: str
    versions: tuple[VersionEntry, ...]  # newest first


def semver_key(version: str) -> tuple[Any, ...]:
    """Order versions as semver does: a pre-release sorts before its release."""
    match = _SEMVER.match(version)
    if not match:
        return (0, 0, 0, 0, version)
    major, minor, patch, pre = match.groups()
    return (int(major), int(minor), int(patch), 0 if pre else 1, pre or "")


def needs_major_bump(old: str, new: str) -> bool:
    """True when `new` does not bump what semver reserves for breaking changes: the major
    version, or below 1.0 the minor one."""
    old_major, old_minor = semver_key(old)[:2]
    new_major, new_minor = semver_key(new)[:2]
    if old_major == 0 and new_major == 0:
        return new_minor <= old_minor
    return new_major <= old_major


def folder(project: Path, server: str) -> Path:
    return project / CHANGELOG_DIR / server


def load_releases(project: Path, server: str) -> tuple[list[Release], list[Diagnostic]]:
    base = folder(project, server)
    index = base / RELEASES_FILE
    if not index.is_file():
        return [], []
    shown = f"{CHANGELOG_DIR}/{server}/{RELEASES_FILE}"
    try:
        listed = json.loads(index.read_text(encoding="utf-8"))["releases"]
        releases = []
        for item in listed:
            payload = json.loads((base / f"{item['version']}.json").read_text(encoding="utf-8"))
            declared = payload.get("resources")
            resources = [] if declared is None else _resources(declared, item["version"])
            auth = auth_of_payload(payload)
            prompts, mcp = _surface(payload, item["version"])
            releases.append(
                Release(item["version"], item["date"], payload["tools"], resources, auth, prompts, mcp)
            )
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        return [], [diagnostic("BASELINE_INVALID", f"cannot read the released baselines: {err}", Span(shown))]
    return sorted(releases, key=lambda r: semver_key(r.version)), []


def _resources(document: Any, version: str) -> list[dict[str, Any]]:
    try:
        return resources_from_document(document)
    except ValueError as err:
        raise ValueError(f"{version}.json: resources: {err}") from None


def _surface(
    payload: dict[str, Any], version: str
) -> tuple[list[dict[str, Any]] | None, dict[str, list[dict[str, Any]]] | None]:
    """A baseline's prompts and MCP resources; None for each it does not keep (released before)."""
    try:
        prompts = prompts_from_payload(payload) if PROMPTS_KEY in payload else None
    except ValueError as err:
        raise ValueError(f"{version}.json: prompts: {err}") from None
    try:
        mcp = mcp_resources_from_payload(payload[MCP_RESOURCES_KEY]) if MCP_RESOURCES_KEY in payload else None
    except ValueError as err:
        raise ValueError(f"{version}.json: {MCP_RESOURCES_KEY}: {err}") from None
    return prompts, mcp


def write_release(
    project: Path,
    server: ServerIR,
    tools: list[dict[str, Any]],
    date: str,
    resources: list[dict[str, Any]] | None = None,
) -> Path:
    """Record `server.version` as released on `date`: its tools/list payload (with what it says
    of caller authentication, when the server has any), and its resources (default: what the IR
    declares) when it declares any."""
    if resources is None:
        resources = wire_from_ir(server, "").resources or []
    base = folder(project, server.name)
    base.mkdir(parents=True, exist_ok=True)
    index = base / RELEASES_FILE
    listed = json.loads(index.read_text(encoding="utf-8"))["releases"] if index.is_file() else []
    if any(item["version"] == server.version for item in listed):
        raise ValueError(f"{server.name} {server.version} is already released")
    baseline = base / f"{server.version}.json"
    # The baseline first, then the index that lists it: a kill in between leaves an unlisted
    # baseline that the next `lynxc release` overwrites, never an index naming a missing file.
    payload: dict[str, Any] = {"tools": tools}
    if server.auth is not None:  # a server without caller auth keeps the baseline it always had
        payload["_meta"] = {AUTH_META_KEY: server.auth.wire()}
    if resources:  # a server without records keeps the baseline it always had
        payload["resources"] = resources_payload(resources)
    # Always, even empty: a later release compares them (a baseline without them cannot tell).
    current = wire_from_ir(server, "")
    payload[PROMPTS_KEY] = current.prompts or []
    payload[MCP_RESOURCES_KEY] = current.mcp_resources or {"resources": [], "resourceTemplates": []}
    write_text_atomic(baseline, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    listed.append({"version": server.version, "date": date})
    listed.sort(key=lambda item: semver_key(item["version"]))
    write_text_atomic(index, json.dumps({"releases": listed}, indent=2) + "\n")
    return baseline


def check_version(server: ServerIR, current: ServerWire, releases: list[Release]) -> list[Diagnostic]:
    """A released version must not change; a new one must be newer, and bump major (minor
    below 1.0) for a breaking change unless the spec acknowledges it."""
    same = next((r for r in releases if r.version == server.version), None)
    if same is not None:
        findings = _findings(same, current)
        if not findings:
            return []
        fields = "; ".join(f.change.located for f in findings[:8])
        more = f" and {len(findings) - 8} more" if len(findings) > 8 else ""
        return [
            diagnostic(
                "VERSION_NOT_BUMPED",
                f"{server.name} {server.version} is released, yet {len(findings)} changed: {fields}{more}",
                server.version_span,
                "bump server.version, then `lynxc release` when it ships",
            )
        ]
    newer = [r.version for r in releases if semver_key(r.version) > semver_key(server.version)]
    if newer:
        return [
            diagnostic(
                "VERSION_NOT_INCREASING",
                f"version {server.version} is older than the released {newer[-1]}",
                server.version_span,
            )
        ]
    if not releases:
        return []
    latest = releases[-1]
    if not needs_major_bump(latest.version, server.version):
        return []
    acknowledged = {a.rule for a in server.acknowledgements if a.version == server.version}
    problems = []
    for finding in _findings(latest, current):
        if finding.level == "breaking" and finding.rule_id not in acknowledged:
            problems.append(
                diagnostic(
                    "BREAKING_CHANGE_UNACKNOWLEDGED",
                    f"{finding.rule_id} since {latest.version}: {operation(finding.change)} "
                    f"({finding.message})",
                    server.version_span,
                    "bump the major version (the minor one below 1.0), or add to server.acknowledge: "
                    f"{{version: {server.version}, rule: {finding.rule_id}, reason: ...}}",
                )
            )
    return problems


def build_changelog(server: ServerIR, current: ServerWire, releases: list[Release]) -> Changelog:
    entries: list[VersionEntry] = []
    previous: Release | None = None
    for release in releases:
        findings = () if previous is None else tuple(_findings(previous, _wire(release)))
        entries.append(
            VersionEntry(release.version, release.date, previous.version if previous else None, findings)
        )
        previous = release
    if all(r.version != server.version for r in releases):
        findings = () if previous is None else tuple(_findings(previous, current))
        entries.append(VersionEntry(server.version, None, previous.version if previous else None, findings))
    return Changelog(server.name, tuple(reversed(entries)))


def render_markdown(changelog: Changelog, heading: str = "#") -> str:
    """Sections in the seeds' style: per version its date and "N schema fields changed", with how
    many are breaking (and warnings, infos), then one entry per field with its previous and new
    value; the first version says First observed."""
    lines = []
    for entry in changelog.versions:
        when = entry.date or "unreleased"
        lines.append(f"{heading}# v{entry.version} ({when})\n")
        if entry.since is None:
            lines.append("First observed.\n")
            continue
        count = len(entry.findings)
        plural = "s" if count != 1 else ""
        counts = level_counts(entry.findings)
        lines.append(f"{count} schema field{plural} changed since v{entry.since} ({counts}).\n")
        for tool, findings in by_tool(entry.findings):
            lines.append(f"{heading}## {group_heading(tool)}\n")
            for finding in findings:
                change = finding.change
                hint = f" (hint: {finding.hint})" if finding.hint else ""
                lines.append(
                    f"- {change.op} `{change.path_text}` — {finding.level} `{finding.rule_id}`{hint}"
                )
                lines.extend(markdown_values(change))
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def render_json(changelog: Changelog, header: str = "") -> str:
    versions = [
        {
            "version": entry.version,
            "date": entry.date,
            "released": entry.date is not None,
            "since": entry.since,
            "firstObserved": entry.since is None,
            "changedFields": len(entry.findings),
            "breakingFields": sum(finding.level == "breaking" for finding in entry.findings),
            "entries": [finding.to_json() for finding in entry.findings],
        }
        for entry in changelog.versions
    ]
    document = {"_generated": header, "server": changelog.server, "versions": versions}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def changelog_files(changelog: Changelog, header_lines: list[str]) -> dict[str, str]:
    base = f"{CHANGELOG_DIR}/{changelog.server}"
    header = "\n".join(f"<!-- {line} -->" for line in header_lines)
    title = f"# Schema changelog: {changelog.server}\n\n"
    return {
        f"{base}/CHANGELOG.md": f"{header}\n\n{title}{render_markdown(changelog)}",
        f"{base}/changelog.json": render_json(changelog, " ".join(header_lines)),
    }


def _findings(release: Release, new: ServerWire) -> list[Finding]:
    return list(review_pair(release.wire(new.name, "baseline"), new).findings)


def _wire(release: Release) -> ServerWire:
    return release.wire("", f"v{release.version}")

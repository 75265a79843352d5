"""Version-aware verdicts: a breaking change that the versions sanction does not fail a review.

`lynxc build` already holds a spec to semver (`changelog.check_version`): a breaking change since
the latest release needs a major bump (a minor one below 1.0) or an acknowledgement in
`server.acknowledge`. `lynxc diff` judges by the same rule, so a pull request that bumps the
version correctly passes CI and one that does not fails:

- The version a change starts from (the reference) is the newest release older than HEAD's
  version when the project has released the server, else BASE's version. A release wins over
  BASE because what clients hold is the released contract: on a branch already at an
  unreleased 0.2.0 (bumped from the released 0.1.0), more breaking changes are still part of
  0.2.0.
- A breaking finding is allowed when HEAD's version bumps major (minor below 1.0) over the
  reference, or when HEAD's spec acknowledges its rule for HEAD's version.
- Nothing is allowed when HEAD's version is already released and HEAD differs from that
  release (a released version must not change), or when HEAD says no version (a saved
  tools/list answer, a tools.json).

Allowed findings stay breaking in every format, marked with why; `Finding.gate_level` says what
they weigh for `--fail-on` (a warning: a reviewer still reads them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ..wire import ServerWire
from .changelog import Release, load_releases, needs_major_bump, semver_key
from .compare import ServerReview, review_pair
from .judge_context import Allowance


def judge_project_versions(reviews: list[ServerReview], project: Path) -> list[ServerReview]:
    """`judge_versions` with the releases recorded in the project's schema-changelog/ (unreadable
    baselines count as none: `lynxc build` reports them)."""
    return judge_versions(reviews, {r.name: load_releases(project, r.name)[0] for r in reviews})


def judge_versions(reviews: list[ServerReview], releases: Mapping[str, list[Release]]) -> list[ServerReview]:
    """Each review with its breaking findings allowed where the versions say so; `releases`
    holds each server's recorded releases (oldest first), by name."""
    return [_judge(review, releases.get(review.name, [])) for review in reviews]


def _judge(review: ServerReview, releases: list[Release]) -> ServerReview:
    head = review.head
    if head is None or head.version is None or not review.count("breaking"):
        return review
    version = head.version
    same = next((r for r in releases if r.version == version), None)
    if same is not None and _differs(same, head):
        return replace(
            review,
            versions=f"{version} is released and must not change: breaking changes need a new version",
        )
    older = [r.version for r in releases if semver_key(r.version) < semver_key(version)]
    reference = older[-1] if older else (review.base.version if review.base else None)
    bumped = reference is not None and not needs_major_bump(reference, version)
    acknowledged = {rule: reason for v, rule, reason in head.acknowledgements if v == version}
    by_version = None
    if bumped and reference is not None:
        text = f"{reference} -> {version}, {_bump(reference)}"
        by_version = Allowance("version", text, (("from", reference), ("to", version)))
    findings = []
    for finding in review.findings:
        allowed = None
        if finding.level == "breaking":
            allowed = by_version or _acknowledged(acknowledged, finding.rule_id, version)
        findings.append(replace(finding, allowed=allowed) if allowed else finding)
    return replace(review, findings=tuple(findings), versions=_note(reference, version, bumped, bool(older)))


def _differs(release: Release, head: ServerWire) -> bool:
    origin = f"release:{head.name}@{release.version}"
    baseline = ServerWire(head.name, release.tools, origin, resources=release.resources, auth=release.auth)
    return bool(review_pair(baseline, head).findings)


def _bump(reference: str) -> str:
    return "a minor bump below 1.0" if semver_key(reference)[0] == 0 else "a major bump"


def _acknowledged(acknowledged: dict[str, str], rule: str, version: str) -> Allowance | None:
    if rule not in acknowledged:
        return None
    reason = acknowledged[rule]
    return Allowance(
        "acknowledgement", f"acknowledged for {version}: {reason}", (("version", version), ("reason", reason))
    )


def _note(reference: str | None, version: str, bumped: bool, released: bool) -> str:
    since = f"the release {reference}" if released else str(reference)
    if bumped:
        return f"breaking changes allowed: {version} follows {since} with {_bump(str(reference))}"
    if reference is None:
        return "BASE says no version: only server.acknowledge allows a breaking change"
    major, minor = semver_key(str(reference))[:2]
    needed, least = (
        ("the minor version (below 1.0)", f"0.{minor + 1}.0")
        if major == 0
        else ("the major version", f"{major + 1}.0.0")
    )
    return (
        f"{version} follows {since} without bumping {needed}: make it {least} or later, or acknowledge "
        f"each breaking rule in server.acknowledge for {version}"
    )

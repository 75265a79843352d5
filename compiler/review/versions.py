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
- In a project that has released any server, a server of its specs/ with no release yet
  promises nothing: its breaking changes are allowed (the default BASE, `release:`, shows it as
  added; an explicit `git:main` gives the same verdict). Before a project's first release, every
  commit is the contract, as `git:HEAD` has always judged it. Other inputs (saved tools/list
  answers, specs outside specs/) are judged by their versions alone.

Allowed findings stay breaking in every format, marked with why; `Finding.gate_level` says what
they weigh for `--fail-on` (a warning: a reviewer still reads them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from ..wire import ServerWire
from .changelog import CHANGELOG_DIR, RELEASES_FILE, Release, load_releases, needs_major_bump, semver_key
from .compare import ServerReview, review_pair
from .judge_context import Allowance


def released_servers(project: Path) -> list[str]:
    """The servers of the project with at least one release recorded by `lynxc release`."""
    return sorted(index.parent.name for index in (project / CHANGELOG_DIR).glob(f"*/{RELEASES_FILE}"))


def judge_project_versions(reviews: list[ServerReview], project: Path) -> list[ServerReview]:
    """`judge_versions` with the releases recorded in the project's schema-changelog/. A server
    whose baselines cannot be read is not judged by versions (nothing allowed; `lynxc build`
    reports them): an error never loosens a verdict."""
    released_project = bool(released_servers(project))
    judged = []
    for review in reviews:
        releases, problems = load_releases(project, review.name)
        unreleased = released_project and not releases and _in_specs(review.head, project)
        judged.append(review if problems else _judge(review, releases, unreleased))
    return judged


def judge_versions(
    reviews: list[ServerReview],
    releases: Mapping[str, list[Release]],
    *,
    unreleased: frozenset[str] = frozenset(),
) -> list[ServerReview]:
    """Each review with its breaking findings allowed where the versions say so; `releases`
    holds each server's recorded releases (oldest first), by name; `unreleased` names the
    servers not released yet in a project that has released others."""
    return [_judge(r, releases.get(r.name, []), r.name in unreleased) for r in reviews]


def _judge(review: ServerReview, releases: list[Release], unreleased: bool) -> ServerReview:
    head = review.head
    if head is None or not review.count("breaking"):
        return review
    if unreleased:
        return _unreleased(review)
    if head.version is None:
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


def _in_specs(head: ServerWire | None, project: Path) -> bool:
    """Whether HEAD's server is declared in the project's specs/ (where its spans point)."""
    specs = (project / "specs").resolve()
    spans = [
        *(head.spans.values() if head else ()),
        *(head.resource_spans.values() if head else ()),
        *(head.prompt_spans.values() if head else ()),
        *(head.mcp_resource_spans.values() if head else ()),
    ]
    return bool(spans) and all(Path(span.file).resolve().is_relative_to(specs) for span in spans)


def _unreleased(review: ServerReview) -> ServerReview:
    name = review.name
    allowance = Allowance("unreleased", f"{name} has no release yet", (("server", name),))
    findings = tuple(replace(f, allowed=allowance) if f.level == "breaking" else f for f in review.findings)
    note = f"{name} has no release yet, so it promises nothing: breaking changes pass until it is released"
    return replace(review, findings=findings, versions=note)


def _differs(release: Release, head: ServerWire) -> bool:
    baseline = release.wire(head.name, f"release:{head.name}@{release.version}")
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

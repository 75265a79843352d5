"""Prompts and MCP resources in releases: a release keeps them, the changelog lists their changes
in the seeds' format, `lynxc build`'s version check and `lynxc diff`'s verdict hold them to semver
like tools, a baseline released before they were kept reads as unknown (never as all removed),
and `lynxc diff` compares two git revisions of a generated folder.

The IR's prompts and MCP resources are built here (PromptIR, McpResourceIR), since the spec
front end that fills them (PROMPTS, RESOURCES of issue 31) is not on this branch yet."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lynxc.compiler.diagnostics import Span
from lynxc.compiler.ir import AcknowledgementIR, McpResourceIR, PromptIR, ServerIR, canonical_json
from lynxc.compiler.lower.server import compile_spec
from lynxc.compiler.review.changelog import (
    build_changelog,
    check_version,
    load_releases,
    render_json,
    render_markdown,
    write_release,
)
from lynxc.compiler.review.compare import review_pair
from lynxc.compiler.review.versions import judge_versions
from lynxc.compiler.wire import wire_from_ir
from tests.fixtures.git_repo import commit, git, lynxc

RULES = Path(__file__).parent / "diff_rules"
SPEC = RULES / "TOOL_REMOVED/after.yaml"  # server `rules`, one tool


def prompt(required: bool = False) -> PromptIR:
    entry = {
        "name": "summarize_pep",
        "description": "Ask for a summary of one PEP.",
        "arguments": [{"name": "number", "description": "The PEP number, e.g. 8.", "required": required}],
    }
    return PromptIR(
        "summarize_pep",
        canonical_json(entry),
        Span("specs/rules/server.yaml", 9, 5),
        (("number", Span("specs/rules/server.yaml", 12, 9)),),
        "{}",
    )


def template(uri_template: str = "pep://{number}") -> McpResourceIR:
    entry = {"uriTemplate": uri_template, "name": "pep", "mimeType": "application/json"}
    return McpResourceIR("pep", True, canonical_json(entry), Span("specs/rules/server.yaml", 20, 5), "{}")


def server(
    version: str, *, required: bool = False, uri_template: str = "pep://{number}", **more: Any
) -> ServerIR:
    result = compile_spec(SPEC, check_backends=False)
    assert result.value is not None
    return replace(
        result.value,
        version=version,
        prompts=(prompt(required),),
        mcp_resources=(template(uri_template),),
        **more,
    )


def released(project: Path, ir: ServerIR, date: str = "2026-01-01") -> None:
    write_release(project, ir, wire_from_ir(ir, "").tools, date)


def test_a_release_keeps_prompts_and_mcp_resources(tmp_path: Path) -> None:
    released(tmp_path, server("1.0.0"))
    baseline = json.loads((tmp_path / "schema-changelog/rules/1.0.0.json").read_text())
    assert baseline["prompts"] == [json.loads(prompt().wire_json)]
    assert baseline["mcpResources"] == {"resources": [], "resourceTemplates": [template().wire]}
    (release,), problems = load_releases(tmp_path, "rules")
    assert not problems and release.prompts == baseline["prompts"]


def test_the_changelog_lists_prompt_and_template_changes_with_their_values(tmp_path: Path) -> None:
    released(tmp_path, server("1.0.0"))
    head = server("2.0.0", required=True, uri_template="pep://{number}.json")
    releases, _ = load_releases(tmp_path, "rules")
    changelog = build_changelog(head, wire_from_ir(head, "spec"), releases)
    text = render_markdown(changelog)
    assert "2 schema fields changed since v1.0.0 (2 breaking, 0 warning, 0 info)." in text
    assert (
        "### Prompts\n\n- changed `Prompt summarize_pep / arguments / number / required` — breaking " in text
    )
    assert "`PROMPT_ARGUMENT_BECAME_REQUIRED`" in text
    assert "### MCP resources\n\n- changed `Resource template pep / uriTemplate` — breaking " in text
    assert '"pep://{number}.json"' in text  # the new value, in the seeds' From/To blocks
    entries = json.loads(render_json(changelog))["versions"][0]["entries"]
    assert [(e["path"], e["before"], e["after"]) for e in entries] == [
        ("Prompt summarize_pep / arguments / number / required", False, True),
        ("Resource template pep / uriTemplate", "pep://{number}", "pep://{number}.json"),
    ]


def test_a_removed_template_reads_as_the_seeds_line(tmp_path: Path) -> None:
    released(tmp_path, server("1.0.0"))
    head = replace(server("2.0.0"), mcp_resources=())
    releases, _ = load_releases(tmp_path, "rules")
    text = render_markdown(build_changelog(head, wire_from_ir(head, "spec"), releases))
    assert "- removed `Resource template pep` — breaking `RESOURCE_TEMPLATE_REMOVED`" in text


def test_build_holds_a_breaking_prompt_change_to_semver(tmp_path: Path) -> None:
    released(tmp_path, server("1.0.0"))
    releases, _ = load_releases(tmp_path, "rules")
    patch = server("1.0.1", required=True)
    (problem,) = check_version(patch, wire_from_ir(patch, "spec"), releases)
    assert problem.rule_id == "BREAKING_CHANGE_UNACKNOWLEDGED"
    assert "PROMPT_ARGUMENT_BECAME_REQUIRED since 1.0.0: changed Prompt summarize_pep" in problem.message
    major = server("2.0.0", required=True)
    assert check_version(major, wire_from_ir(major, "spec"), releases) == []
    ack = AcknowledgementIR("1.0.1", "PROMPT_ARGUMENT_BECAME_REQUIRED", "only our own client", Span("x"))
    acknowledged = server("1.0.1", required=True, acknowledgements=(ack,))
    assert check_version(acknowledged, wire_from_ir(acknowledged, "spec"), releases) == []
    changed = server("1.0.0", required=True)  # a released version must not change
    (problem,) = check_version(changed, wire_from_ir(changed, "spec"), releases)
    assert problem.rule_id == "VERSION_NOT_BUMPED"


def test_diff_allows_a_breaking_prompt_change_only_with_a_major_bump(tmp_path: Path) -> None:
    released(tmp_path, server("1.0.0"))
    releases, _ = load_releases(tmp_path, "rules")
    base = releases[0].wire("rules", "release:rules@1.0.0", "1.0.0")
    for version, allowed in (("1.1.0", False), ("2.0.0", True)):
        head = wire_from_ir(server(version, required=True), "spec")
        (judged,) = judge_versions([review_pair(base, head)], {"rules": releases})
        (finding,) = judged.findings
        assert finding.rule_id == "PROMPT_ARGUMENT_BECAME_REQUIRED"
        assert (finding.allowed is not None) is allowed


def test_a_baseline_released_before_prompts_were_kept_reads_as_unknown(tmp_path: Path) -> None:
    released(tmp_path, server("1.0.0"))
    baseline = tmp_path / "schema-changelog/rules/1.0.0.json"
    payload = json.loads(baseline.read_text())
    del payload["prompts"], payload["mcpResources"]  # as every baseline before issue 31
    baseline.write_text(json.dumps(payload))
    releases, problems = load_releases(tmp_path, "rules")
    assert not problems and releases[0].prompts is None and releases[0].mcp_resources is None
    head = replace(server("1.0.1"), prompts=(), mcp_resources=())  # nothing "removed"
    assert check_version(head, wire_from_ir(head, "spec"), releases) == []
    assert build_changelog(head, wire_from_ir(head, "spec"), releases).versions[0].findings == ()


@pytest.mark.parametrize(
    ("key", "value", "says"),
    [
        ("prompts", [{"title": "x"}], '1.0.0.json: prompts: expected "prompts"'),
        (
            "mcpResources",
            {"resources": [{"name": "no uri"}]},
            '1.0.0.json: mcpResources: expected "resources"',
        ),
    ],
)
def test_a_bad_baseline_is_one_clear_problem(tmp_path: Path, key: str, value: Any, says: str) -> None:
    released(tmp_path, server("1.0.0"))
    baseline = tmp_path / "schema-changelog/rules/1.0.0.json"
    payload = json.loads(baseline.read_text())
    payload[key] = value
    baseline.write_text(json.dumps(payload))
    releases, (problem,) = load_releases(tmp_path, "rules")
    assert releases == [] and problem.rule_id == "BASELINE_INVALID" and says in problem.message


def test_lynxc_diff_between_two_git_revisions_of_a_generated_folder(tmp_path: Path) -> None:
    """Two commits of a generated folder (tools.json, prompts.json, resources.json), compared as
    a pull request's CI compares them: breaking fails, and every format names the change."""
    project = tmp_path / "repo"
    folder = project / "generated/surface"
    shutil.copytree(RULES / "PROMPT_ARGUMENT_BECAME_REQUIRED/before/surface", folder)
    git(project, "init", "-q", "-b", "main")
    commit(project, "before")
    for name in ("prompts.json", "resources.json"):
        after = RULES / "RESOURCE_TEMPLATE_NARROWED/after/surface" / name
        if name == "prompts.json":
            after = RULES / "PROMPT_ARGUMENT_BECAME_REQUIRED/after/surface" / name
        shutil.copy(after, folder / name)
    commit(project, "after")
    done = lynxc(project, "diff", "git:HEAD~1:generated/surface", "git:HEAD:generated/surface")
    assert done.returncode == 1, done.stderr
    assert (
        "breaking PROMPT_ARGUMENT_BECAME_REQUIRED: changed Prompt summarize_pep / arguments / style"
        in done.stdout
    )
    assert "breaking RESOURCE_TEMPLATE_NARROWED: changed Resource template pep / uriTemplate" in done.stdout
    shown = lynxc(project, "diff", "git:HEAD~1:generated/surface", "generated/surface", "--format", "json")
    findings = json.loads(shown.stdout)["servers"][0]["findings"]
    assert [(f["rule"], f.get("prompt"), f.get("resourceTemplate")) for f in findings] == [
        ("PROMPT_ARGUMENT_BECAME_REQUIRED", "summarize_pep", None),
        ("RESOURCE_TEMPLATE_NARROWED", None, "pep"),
    ]
    same = lynxc(project, "diff", "git:HEAD:generated/surface", "generated/surface")
    assert same.returncode == 0 and "no changes" in same.stdout

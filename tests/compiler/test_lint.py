"""`lynxc lint`: every rule has a fixture that triggers it and one that does not; scores are
calibrated on the seed pages; whatever `tdqs lint` reports, `lynxc lint` reports too."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lynxc.compiler.diff_inputs import load_side
from lynxc.compiler.lint import lint_server
from lynxc.compiler.rules import LINT_CATEGORIES, RULES
from tests.conftest import DATA, LYNXC, ROOT

RULE_FIXTURES = Path(__file__).parent / "lint_rules"
CALIBRATION = Path(__file__).parent / "lint_calibration"
LINT_RULES = sorted(r for r, rule in RULES.items() if rule.category in LINT_CATEGORIES)
TDQS = shutil.which("tdqs") or str(Path(sys.executable).with_name("tdqs"))


def lint(path: Path):
    side = load_side(str(path), ROOT)
    assert not side.diagnostics, [d.render() for d in side.diagnostics]
    return [lint_server(server) for server in side.servers.values()]


def rules_in(path: Path) -> set[str]:
    return {f.rule_id for result in lint(path) for f in result.findings}


def test_every_lint_rule_has_a_fixture_pair() -> None:
    assert sorted(p.name for p in RULE_FIXTURES.iterdir() if p.is_dir()) == LINT_RULES


@pytest.mark.parametrize("rule_id", LINT_RULES)
def test_rule_fixture_triggers_and_clean_twin_does_not(rule_id: str) -> None:
    folder = RULE_FIXTURES / rule_id
    bad = next(folder.glob("bad.*"))
    good = next(folder.glob("good.*"))
    assert rule_id in rules_in(bad)
    assert rule_id not in rules_in(good)


# The seed pages' TDQS reviews: overall score and per dimension
# (purpose, usage, behaviour, parameters, conciseness, completeness).
PAGES = {
    "agent-tool-grep": ("grep", 4.0, (5, 3, 4, 3, 5, 4)),
    "lynx-deep_search": ("deep_search", 4.4, (5, 5, 4, 3, 5, 4)),
    "dot-search_project_text": ("search_project_text", 4.6, (5, 4, 5, 4, 4, 5)),
    "foxnose-search_records": ("search_records", 4.8, (5, 5, 5, 4, 4, 5)),
    "groundhog-research": ("research", 4.9, (5, 5, 5, 4, 5, 5)),
}


def seed_score(fixture: str):
    tool, _, _ = PAGES[fixture]
    (result,) = lint(CALIBRATION / f"{fixture}.json")
    return next(score for score in result.score.tools if score.tool == tool)


@pytest.mark.parametrize("fixture", PAGES)
def test_calibration_within_half_a_point_of_the_page(fixture: str) -> None:
    _, page, page_dims = PAGES[fixture]
    score = seed_score(fixture)
    assert abs(score.total - page) <= 0.5, (score.total, page)
    differing = [d.dimension for d, p in zip(score.dimensions, page_dims, strict=True) if d.score != p]
    assert len(differing) <= 1, differing  # at most one dimension off (grep's usage: 2 vs 3)


def test_calibration_keeps_the_pages_ordering() -> None:
    totals = [seed_score(fixture).total for fixture in PAGES]  # PAGES is in the pages' order
    assert totals == sorted(totals) and len(set(totals)) == len(totals)


@pytest.mark.parametrize(
    ("name", "tool", "highest_tier"),
    [
        ("poor-tautological", "lookup", "C"),
        ("poor-undocumented", "do_thing", "D"),
        ("poor-vague", "process", "C"),
    ],
)
def test_poor_definitions_score_low(name: str, tool: str, highest_tier: str) -> None:
    (result,) = lint(CALIBRATION / f"{name}.json")
    score = next(s for s in result.score.tools if s.tool == tool)
    assert score.tier >= highest_tier, (score.total, score.tier)  # "C" < "D" alphabetically: C or worse
    assert score.total < 3.0


@functools.cache
def tdqs_findings(path: Path) -> list[dict]:
    done = subprocess.run(
        [TDQS, "lint", "--file", str(path), "--format", "json", "--fail-on", "never"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)["findings"]


# tdqs rule -> (lynxc rule, severity as tdqs reports it -> lynxc's)
PARITY = {
    "no-description": {"error": "TOOL_DESCRIPTION_REQUIRED"},
    "tautological-description": {"error": "DESCRIPTION_TAUTOLOGICAL"},
    "missing-annotations": {"warning": "ANNOTATIONS_MISSING"},
    "undocumented-parameters": {"warning": "PARAMS_UNDOCUMENTED", "info": "PARAMS_PARTLY_DOCUMENTED"},
    "no-output-schema": {"info": "OUTPUT_SCHEMA_MISSING"},
    "shadow-candidate": {"warning": "SHADOWED_BY_CHEAPER_SIBLING"},
}
PARITY_INPUTS = sorted(
    [
        *CALIBRATION.glob("*.json"),
        *RULE_FIXTURES.glob("*/*.json"),
        *(DATA / "mcp-tool-versions").glob("*.json"),
    ]
)


@pytest.mark.parametrize("path", PARITY_INPUTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_whatever_tdqs_reports_lynxc_reports(path: Path) -> None:
    ours = {(f.tool, f.rule_id, f.severity) for r in lint(path) for f in r.findings}
    for finding in tdqs_findings(path):
        rule = PARITY[finding["rule"]][finding["severity"]]
        assert (finding["tool"], rule, RULES[rule].severity) in ours, finding


def test_parity_inputs_exercise_every_tdqs_rule() -> None:
    seen = {(f["rule"], f["severity"]) for path in PARITY_INPUTS for f in tdqs_findings(path)}
    assert seen == {(rule, severity) for rule, by in PARITY.items() for severity in by}


def run_lint(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([LYNXC, "lint", *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_bundled_specs_pass_with_fail_on_warning() -> None:
    done = run_lint("--fail-on", "warning", "--score")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dot-harness: 3 tools, 0 errors, 0 warnings, 0 infos" in done.stdout


def test_formats_and_exit_codes() -> None:
    bad = RULE_FIXTURES / "PARAM_BOUND_MISMATCH" / "bad.json"
    assert run_lint(str(bad)).returncode == 1  # an error, --fail-on error by default
    assert run_lint(str(bad), "--fail-on", "never").returncode == 0
    warning_only = RULE_FIXTURES / "ANNOTATIONS_MISSING" / "bad.json"
    assert run_lint(str(warning_only)).returncode == 0
    assert run_lint(str(warning_only), "--fail-on", "warning").returncode == 1
    sarif = json.loads(run_lint(str(bad), "--format", "sarif").stdout)
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert any(r["ruleId"] == "PARAM_BOUND_MISMATCH" and r["level"] == "error" for r in results)
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert all(rules[r["ruleIndex"]]["id"] == r["ruleId"] for r in results)
    github = run_lint(str(bad), "--format", "github").stdout
    assert "::error title=lynxc PARAM_BOUND_MISMATCH::find_notes: 'limit' says at most 100" in github
    data = json.loads(run_lint(str(bad), "--format", "json", "--score").stdout)
    assert (
        data["servers"][0]["score"]["tools"][0]["dimensions"]["parameters"]["score"] == 2
    )  # capped by an error
    missing = run_lint(str(ROOT / "nope.json"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_spec_findings_point_at_lines_and_suppressions_need_a_known_rule(tmp_path: Path) -> None:
    bad = RULE_FIXTURES / "CAP_LITERAL_IN_DESCRIPTION" / "bad.yaml"
    spec = tmp_path / "counter.yaml"
    shutil.copy(bad, spec)
    done = run_lint(spec.name, cwd=tmp_path)
    assert "counter.yaml:10:18: warning CAP_LITERAL_IN_DESCRIPTION: writes cap max_items (50)" in done.stdout
    text = spec.read_text().replace(
        "    caps:\n",
        "    lint:\n      suppress:\n"
        "        - {rule: CAP_LITERAL_IN_DESCRIPTION, reason: fixed at 50.}\n"
        "    caps:\n",
    )
    spec.write_text(text)
    quiet = run_lint(spec.name, "--fail-on", "warning", cwd=tmp_path)
    assert quiet.returncode == 0 and "suppressed CAP_LITERAL_IN_DESCRIPTION: fixed at 50." in quiet.stdout
    spec.write_text(text.replace("rule: CAP_LITERAL_IN_DESCRIPTION", "rule: CAP_LITERAL"))
    unknown = run_lint(spec.name, cwd=tmp_path)
    assert unknown.returncode == 2
    assert "error SUPPRESSION_RULE_UNKNOWN: 'CAP_LITERAL' is not a lint rule" in unknown.stderr
    assert "did you mean 'CAP_LITERAL_IN_DESCRIPTION'?" in unknown.stderr

"""`lynxc lint`: every rule has a fixture that triggers it and one that does not; scores are
calibrated on the seed pages; whatever `tdqs lint` reports, `lynxc lint` reports too."""

from __future__ import annotations

import functools
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lynxc.compiler.inputs import load_side
from lynxc.compiler.lint.linter import LintResult, lint_server
from lynxc.compiler.rules import LINT_CATEGORIES, RULES
from lynxc.compiler.wire import ServerWire
from tests.conftest import DATA, LYNXC, ROOT

RULE_FIXTURES = Path(__file__).parent / "lint_rules"
CALIBRATION = Path(__file__).parent / "lint_calibration"
LINT_RULES = sorted(r for r, rule in RULES.items() if rule.category in LINT_CATEGORIES)


def lint(path: Path):
    side = load_side(str(path), ROOT)
    assert not side.diagnostics, [d.render() for d in side.diagnostics]
    return [lint_server(server) for server in side.servers.values()]


def rules_in(path: Path) -> set[str]:
    return {f.rule_id for result in lint(path) for f in result.findings}


def lint_tools(*tools: dict) -> LintResult:
    """Lint tools given inline, as a saved tools/list of a server lynxc did not build."""
    return lint_server(ServerWire("inline", list(tools), "inline"))


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
def test_calibration_within_a_fifth_of_a_point_of_the_page(fixture: str) -> None:
    _, page, page_dims = PAGES[fixture]
    score = seed_score(fixture)
    assert round(abs(score.total - page), 2) <= 0.2, (score.total, page)
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


# The low end, where the seeds say nothing: thin definitions as they are found on servers lynxc
# did not build. Each entry states what a TDQS-style reviewer would give per dimension (purpose,
# usage, behaviour, parameters, conciseness, completeness) and why; the test checks lynxc's total
# against the range those reviews span, and the tier. The rubric's own anchors (tdqs-*.json, from
# the reference package's scoring prompt) are checked against their published totals.
LOW_END = {
    # "Gets the weather for a city." and an undescribed `city`, nothing else. Purpose 3: a verb and a
    # resource, but which weather (now? a forecast? units?); Usage 2: no guidance; Behaviour 1: no
    # annotations and nothing disclosed; Parameters 2-3: 0% coverage, "for a city" only hints at the
    # one parameter; Conciseness 2-3: under-specified, not concise; Completeness 1-2: what comes back
    # is unsaid. 1.75-2.5: C or D (issue 11: public reviews give such tools 1.7-2.5).
    ("thin-get_weather", "get_weather"): ((1.7, 2.5), "CD"),
    # "Lists the tables in the database.", no parameters. Purpose 4: clear verb and resource; Usage 2;
    # Behaviour 1-2: "lists" implies a read, nothing is disclosed; Parameters 4: the baseline for no
    # parameters; Conciseness 3: a one-liner; Completeness 2: names only? schemas too? 2.2-2.9: C.
    ("thin-list_tables", "list_tables"): ((2.2, 2.9), "C"),
    # Two sentences, the second explaining the described `state` parameter's default; no annotations.
    # Purpose 4-5: specific verb, resource and scope; Usage 2-3: a refinement hint, no when/when-not;
    # Behaviour 1-2: nothing on read-only, rate limits or paging; Parameters 4: 100% coverage plus the
    # default of `state`; Conciseness 4-5: short and every word earns its place; Completeness 2:
    # results and errors unsaid. 2.7-3.3: B or C.
    ("thin-search_issues", "search_issues"): ((2.7, 3.3), "BC"),
    # An annotated one-liner beside a sibling it does not name. Purpose 3-4: "current" separates it
    # from the forecast only by inference; Usage 2; Behaviour 2-3: annotations carry read-only and
    # open-world, the text adds nothing; Parameters 3: 100% coverage; Conciseness 3; Completeness 2.
    # 2.45-3.0: C.
    ("medium-weather", "get_current_weather"): ((2.4, 3.0), "C"),
    # A medium definition: what it returns, when to use it and the sibling for the other case, a limit
    # and an error, annotations. Purpose 5; Usage 5; Behaviour 4-5: annotations plus the 7-day limit
    # and the error case, no rate limit; Parameters 3-4: 100% coverage, the text adds the day limit;
    # Conciseness 5; Completeness 4: returns and errors stated, no output schema. 4.4-4.75: A.
    ("medium-weather", "get_forecast"): ((4.2, 4.9), "A"),
}
# The reference rubric's calibration examples: (tool, published total, tier, how close lynxc must
# come). update_drive (4/2/2/3/4/2) is an unannotated one-liner: lynxc differs on Conciseness
# only (3: under-specified). process (1/1/1/1/2/1) is a one-word tautology: lynxc's floor of 2
# for a described tool stands where the example gives 1 (the rubric's own anchors say 2 for a
# tautology and for no guidance), so it lands in the same tier, further off.
RUBRIC_ANCHORS = {
    "tdqs-update_drive": ("update_drive", 2.9, "C", 0.2),
    "tdqs-process": ("process", 1.1, "D", 0.8),
}


def calibration_score(fixture: str, tool: str):
    (result,) = lint(CALIBRATION / f"{fixture}.json")
    return next(score for score in result.score.tools if score.tool == tool)


@pytest.mark.parametrize(("fixture", "tool"), LOW_END, ids=lambda v: v)
def test_thin_definitions_score_as_reviews_do(fixture: str, tool: str) -> None:
    (low, high), tiers = LOW_END[fixture, tool]
    score = calibration_score(fixture, tool)
    assert low <= score.total <= high and score.tier in tiers, (score.total, score.tier, score.dimensions)


@pytest.mark.parametrize("fixture", RUBRIC_ANCHORS)
def test_rubric_anchors_keep_their_tier(fixture: str) -> None:
    tool, published, tier, within = RUBRIC_ANCHORS[fixture]
    score = calibration_score(fixture, tool)
    assert score.tier == tier, (score.total, score.dimensions)
    assert round(abs(score.total - published), 2) <= within, (score.total, score.dimensions)


def test_silence_scores_one_and_a_one_liner_is_not_concise() -> None:
    """Issue 11: Behaviour with no annotations and nothing disclosed is 1, not the floor of 2; a
    one-liner that leaves the agent guessing is under-specified (Conciseness 2-3), not concise."""
    dims = {d.dimension: d for d in calibration_score("thin-get_weather", "get_weather").dimensions}
    assert dims["behaviour"].score == 1, dims["behaviour"].reasons
    assert dims["conciseness"].score in (2, 3), dims["conciseness"].reasons
    assert any("under-specified" in reason for reason in dims["conciseness"].reasons)
    disclosed = lint_tools(
        {
            "name": "get_weather",
            "description": "Gets the weather for a city. An unknown city is an error.",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
        }
    )
    (score,) = disclosed.score.tools
    assert {d.dimension: d.score for d in score.dimensions}["behaviour"] >= 2


READ_ONLY = {"readOnlyHint": True, "destructiveHint": False}


def read_only_claims(description: str) -> list[str]:
    tool = {"name": "find_notes", "description": description, "annotations": READ_ONLY}
    return [f.message for f in lint_tools(tool).findings if f.rule_id == "READ_ONLY_CONTRADICTED"]


@pytest.mark.parametrize(
    "description",
    [
        "List the issues of a repository. It does not modify any issue.",  # issue 11
        "Blame a file: for each line, the commit that last modified each line.",  # issue 11
        "Return the size, owner and last modified date of a file.",
        "Search only the files added or modified against a base branch.",
        "Read a file; it never writes to disk and does not delete or overwrite anything.",
        "Read-only: it does not create, update, modify or delete any issue.",
        "Read a file. It doesn\u2019t modify it.",
        "Check the notes and change nothing; nothing is deleted.",
        "Read a file without modifying it.",
        "Inspect the index; it modifies nothing.",
        "Find stale notes. To delete one, call `delete_note`.",
        "Find notes you may want to delete or archive.",
        "Preview the notes that `purge_notes` would delete.",
        "List deleted notes still in the trash, and when each was deleted.",
        "Fetch a page: sends a GET request to the URL and reads the answer.",
        "Count the writes and drops per table.",
    ],
)
def test_read_only_not_contradicted_by_negation_past_tense_or_others(description: str) -> None:
    assert read_only_claims(description) == []


@pytest.mark.parametrize(
    ("description", "claim"),
    [
        ("Read a note; it deletes the file once read.", "deletes"),
        ("Find notes. Notes older than a year are deleted.", "are deleted"),
        ("Creates a new record in the database.", "Creates"),  # the rubric's contradiction example
        ("Delete the note with this id.", "Delete"),
        ("List notes, but it overwrites the index as it goes.", "overwrites"),
        ("Sync notes: it does not ask first and deletes what is gone upstream.", "deletes"),
        ("Export notes: writes a zip file to the downloads folder.", "writes"),
        ("Summarise a thread and sends it to the team channel.", "sends"),
    ],
)
def test_read_only_contradicted_by_a_present_claim(description: str, claim: str) -> None:
    (message,) = read_only_claims(description)
    assert f"'{claim}'" in message


NOTES_OUTPUT = {"type": "object", "properties": {"notes": {"type": "array"}}}


def unknown_references(description: str, *, output: dict | None = None) -> set[str]:
    find = {
        "name": "find_notes",
        "description": description,
        "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}},
    }
    if output is not None:
        find["outputSchema"] = output
    read = {
        "name": "read_note",
        "description": "Read one note.",
        "inputSchema": {"type": "object", "properties": {"note_ref": {"type": "string"}}},
        "outputSchema": {"type": "object", "properties": {"body_text": {"type": "string"}}},
    }
    findings = lint_tools(find, read).findings
    return {f.message.split("`")[1] for f in findings if f.rule_id == "TOOL_REFERENCE_UNKNOWN"}


@pytest.mark.parametrize(
    "description",
    [
        # reStructuredText inline literals are values and code, not references (issue 11)
        "Find notes by phrase; pass the ``note_id`` of a hit to `read_note`.",
        "Find notes. Set ``sort_order`` to ``created_at`` for the oldest first.",
        "Find notes. Use ``read_note`` for the text; ``max_hits`` caps the list.",
        # output field names (issue 11), whether or not an output schema lists them
        "Find notes. Returns `note_id`, `created_at` and a `match_score` for each hit.",
        "Find notes. Each hit carries a `snippet_text` field; `total_hits` is the count.",
        "Find notes. Pass a hit's `note_ref` to `read_note`, which returns `body_text`.",
    ],
)
def test_tool_reference_ignores_rst_literals_and_field_names(description: str) -> None:
    assert unknown_references(description) == set()


@pytest.mark.parametrize(
    "description",
    [
        "Find notes. To open one in full, call `open_note_fully` with its id.",
        "Find notes. Returns note ids; pass them to `open_note_fully` for the text.",
        "Find notes. Returns ids you can pass to `open_note_fully`.",
        "Find notes. Use ``read_note`` or `open_note_fully` for the text.",
        "Find notes; the `open_note_fully` tool reads one.",
    ],
)
def test_tool_reference_still_catches_unknown_tools(description: str) -> None:
    assert unknown_references(description, output=NOTES_OUTPUT) == {"open_note_fully"}


@functools.cache
def tdqs_findings(path: Path) -> list[dict]:
    """`tdqs lint` on `path`, through tdqs's own command-line function in this process (a child
    process per input cost a Python start each, over 80 inputs, and again on every worker)."""
    from tdqs.cli.run_cli import run_cli

    stdout, stderr = io.StringIO(), io.StringIO()
    argv = ["lint", "--file", str(path), "--format", "json", "--fail-on", "never"]
    code = run_cli(argv=argv, env=os.environ, stdout=stdout, stderr=stderr)
    assert code == 0, stderr.getvalue()
    return json.loads(stdout.getvalue())["findings"]


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


def _convert_units(**descriptions: str) -> dict:
    """A one-tool server's tool, as a newcomer writes it; `descriptions` replace parameter ones."""
    params = {
        "value": "The number to convert, in `from_unit`; any finite number.",
        "from_unit": "Unit the value is in, as a symbol such as 'km' or 'mi'.",
        "to_unit": "Unit to express the result in, as a symbol such as 'km' or 'mi'.",
        **descriptions,
    }
    return {
        "name": "convert_units",
        "title": "Convert units",
        "description": (
            "Convert a length between metric and imperial units. Use it when the user gives a length "
            "in one unit and wants another; it cannot convert mass or time. Pure computation. Returns "
            "the converted value; an unknown unit is an error naming the units it knows."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                name: {"type": "number" if name == "value" else "string", "description": text}
                for name, text in params.items()
            },
            "required": list(params),
        },
        "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
    }


def _reasons(result: LintResult, dimension: str) -> tuple[str, ...]:
    (tool,) = result.score.tools
    return next(d.reasons for d in tool.dimensions if d.dimension == dimension)


@pytest.mark.parametrize("text", ["Unit wanted.", "The unit.", "Units.", "The desired unit value."])
def test_a_parameter_description_that_restates_its_name_is_flagged_whatever_the_filler(text: str) -> None:
    found = lint_tools(_convert_units(to_unit=text, from_unit=text)).findings
    flagged = {f.param for f in found if f.rule_id == "PARAM_DESCRIPTION_RESTATES_NAME"}
    assert flagged == {"from_unit", "to_unit"}
    assert not any(
        f.rule_id == "PARAM_DESCRIPTION_RESTATES_NAME" for f in lint_tools(_convert_units()).findings
    )


def test_a_servers_only_tool_is_not_marked_down_for_naming_no_alternative() -> None:
    """It has none to name; it earns the mark by saying where it stops ("it cannot convert mass
    or time"), which is what naming an alternative would tell the agent."""
    alone = lint_tools(_convert_units())
    assert "the server's only tool: says what it does not cover" in _reasons(alone, "usage")
    assert not any("names no alternative tool" in r for r in _reasons(alone, "usage"))
    silent = _convert_units()
    silent["description"] = silent["description"].replace("; it cannot convert mass or time", "")
    assert "no alternative to name" in " ".join(_reasons(lint_tools(silent), "usage"))
    sibling = {**_convert_units(), "name": "convert_mass", "title": "Convert mass"}
    with_sibling = lint_server(ServerWire("inline", [_convert_units(), sibling], "inline"))
    usage = next(d for d in with_sibling.score.tools[0].dimensions if d.dimension == "usage")
    assert "names no alternative tool" in usage.reasons


def test_the_parameters_short_of_the_full_mark_are_named() -> None:
    tool = _convert_units()
    tool["inputSchema"]["properties"]["value"].pop("description")
    tool["description"] = tool["description"].replace("length", "distance")
    reasons = _reasons(lint_tools(tool), "parameters")
    assert (
        "short of the full mark: value has no schema description; from_unit, to_unit not explained "
        "in the description (two thirds should be)"
    ) in reasons

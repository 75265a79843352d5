"""What a reviewer reads of `lynxc diff`: breaking findings first, findings that say the same thing
folded, no JSON for a no-op, the markdown summary under GitHub's comment limit with the full
report in a file, no binary data, and the changed words of a changed value in every format.

Minimal before/after pairs are in `diff_render/<case>/`; the large case is built here."""

from __future__ import annotations

import base64
import json
import re
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from lynxc.compiler.inputs import load_side
from lynxc.compiler.review.binary_values import without_binary
from lynxc.compiler.review.compare import ServerReview, review, review_pair
from lynxc.compiler.review.diff import Change
from lynxc.compiler.review.judge import Finding
from lynxc.compiler.review.render import markdown_values, render_markdown, render_text
from lynxc.compiler.review.word_diff import as_text, region
from lynxc.compiler.wire import ServerWire
from tests.compiler.test_diff_versions import PAIRS
from tests.conftest import LYNXC, ROOT

CASES = Path(__file__).parent / "diff_render"
FORMATS = ("text", "markdown", "json", "github")
# A base64 run longer than this is a payload, not a placeholder's few characters.
GITHUB_COMMENT_LIMIT = 65_536
BASE64_RUN = re.compile(r"base64,[A-Za-z0-9+/=]{40,}")


def diff(before: Path, after: Path, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LYNXC, "diff", str(before), str(after), "--fail-on", "never", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def case(name: str, fmt: str, *args: str) -> str:
    done = diff(CASES / name / "before.json", CASES / name / "after.json", "--format", fmt, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_markdown_puts_breaking_then_warnings_then_a_table_and_folds_no_ops() -> None:
    markdown = case("fold_and_order", "markdown")
    breaking, warnings, table = (
        markdown.index(h) for h in ("### Breaking (1)", "### Warnings (1)", "| Tools |")
    )
    assert breaking < warnings < table
    assert markdown.index("`PARAM_REMOVED` — `zeta`") < warnings  # zeta sorts last by name, shows first
    assert markdown.index("`DEFAULT_CHANGED` — `alpha`") < table
    # Three identical no-ops are one row naming the three tools, without any JSON.
    (row,) = [line for line in markdown.splitlines() if "ANNOTATION_CHANGED" in line]
    assert row.startswith("| `alpha`, `beta`, `gamma` | added `Annotations` |")
    assert "```" not in markdown and '{"openWorldHint": true}' not in markdown
    assert row.endswith(
        "| annotations added: openWorldHint true written out, the values MCP assumes when absent; "
        "effective hints are the same |"
    )
    # The warning shows what changed, word-diff style.
    assert "> <del>10</del><ins>20</ins>" in markdown


def test_text_orders_and_folds_the_same_way() -> None:
    lines = case("fold_and_order", "text").splitlines()
    rules = [line.split()[1] for line in lines if line.startswith("    ") and not line.startswith("     ")]
    assert rules == ["PARAM_REMOVED:", "DEFAULT_CHANGED:", "ANNOTATION_CHANGED:"]
    folded = lines.index("    info     ANNOTATION_CHANGED: added Annotations in 3 tools")
    assert lines[folded + 1].strip() == "alpha, beta, gamma"
    assert lines[folded + 2].strip() == (
        "annotations added: openWorldHint true written out, the values MCP assumes when absent; "
        "effective hints are the same"
    )
    assert len(lines) == folded + 3  # no values under a no-op
    assert "             ~ [-10-]{+20+}" in lines


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_shows_the_changed_words_of_a_long_description(fmt: str) -> None:
    before = json.loads((CASES / "long_description/before.json").read_text())["tools"][0]["description"]
    assert len(before) > 1_250 and before.index("at most 100 per call") > 1_200
    output = case("long_description", fmt)
    shown = {
        "text": "~ … sorted by path, at most [-100-]{+500+} per call{+, then paged+}.",
        "markdown": "at most <del>100</del><ins>500</ins> per call<ins>, then paged</ins>.",
        "github": "at most [-100-]{+500+} per call{+, then paged+}.",
    }
    if fmt == "json":
        pieces = json.loads(output)["servers"][0]["findings"][0]["diff"]
        assert [p for p in pieces if p["op"] != "equal"] == [
            {"op": "delete", "text": "100"},
            {"op": "insert", "text": "500"},
            {"op": "insert", "text": ", then paged"},
        ]
        assert pieces[0]["text"].startswith("…") and len(pieces[0]["text"]) < 100  # context, not it all
    else:
        assert shown[fmt] in output
        assert len(output) < 1_000  # the region, not both 1,300-character strings


def test_an_added_tool_is_summarized_and_its_icon_never_inlined(tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    outputs = {fmt: case("binary_icon", fmt, "--report", str(report)) for fmt in FORMATS}
    row = next(line for line in outputs["markdown"].splitlines() if "TOOL_ADDED" in line)
    assert "**Draw**: Draw a picture. · parameters: `prompt`, `size`" in row
    assert "```" not in outputs["markdown"] and "icons" not in outputs["markdown"]
    written = report.read_text()
    assert '"src": "data:image/png;base64,… (3.0 KB, sha256 ' in written  # the full report shows the JSON
    for text in (outputs["text"], outputs["markdown"], outputs["github"], written):
        assert not BASE64_RUN.search(text)
    # JSON is for machines: the exact value, which a consumer may need to rebuild the tool.
    finding = json.loads(outputs["json"])["servers"][0]["findings"][0]
    assert BASE64_RUN.search(finding["after"]["icons"][0]["src"])


def test_binary_placeholders_keep_type_size_and_a_hash() -> None:
    payload = base64.b64encode(b"\x89PNG" + bytes(3000)).decode()
    value = {"icons": [{"src": f"data:image/png;base64,{payload}"}], "note": "see data:,hi"}
    shown = without_binary(value)
    src = shown["icons"][0]["src"]
    assert re.fullmatch(r"data:image/png;base64,… \(2\.9 KB, sha256 [0-9a-f]{8}\)", src)
    assert shown["note"] == "see data:,hi"  # a short plain data: URI reads fine as it is
    other = without_binary({"icons": [{"src": f"data:image/png;base64,{payload[:-8]}AAAAAAAA"}]})
    assert other["icons"][0]["src"] != src  # a changed icon of the same size still shows as changed
    assert without_binary("data:text/plain," + "x" * 500).startswith("data:text/plain,… (500 B")


def big_change(tmp_path: Path) -> tuple[Path, Path]:
    """A release a summary cannot hold: 300 tools added with base64 icons and long descriptions,
    200 tools whose annotations change without changing a hint, one tool removed (breaking),
    and a 1,300-character description changed near its end."""
    icon = "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 16).decode()
    prose = (
        "This tool reads records from the archive, filters them by the fields the caller names, sorts "
        "them by date and returns them with their metadata, their provenance and a cursor. "
    ) * 8
    long = prose[:1_250] + " At most 100 records per call."

    def tool(name: str, **extra: object) -> dict[str, object]:
        return {"name": name, "description": f"{name}: {prose}", "inputSchema": {"type": "object"}, **extra}

    quiet = [tool(f"quiet_{i:03}") for i in range(200)]
    before = [*quiet, tool("doomed"), tool("archive", description=long)]
    after = [
        *[{**t, "annotations": {"readOnlyHint": False}} for t in quiet],
        tool("archive", description=long.replace("At most 100 records", "At most 25 records")),
        *[tool(f"new_{i:03}", title=f"New {i}", icons=[{"src": icon}]) for i in range(300)],
    ]
    paths = tmp_path / "before.json", tmp_path / "after.json"
    for path, tools in zip(paths, (before, after), strict=True):
        path.write_text(json.dumps({"tools": tools}))
    return paths


def test_a_huge_change_keeps_the_summary_under_the_comment_limit(tmp_path: Path) -> None:
    before, after = big_change(tmp_path)
    report = tmp_path / "out" / "diff-report.md"
    done = diff(before, after, "--format", "markdown", "--report", str(report))
    summary = done.stdout
    assert done.returncode == 0, done.stderr
    assert len(summary) <= 60_000 < GITHUB_COMMENT_LIMIT
    assert summary.index("`TOOL_REMOVED` — `doomed`") < summary.index("| Tools |")
    assert (
        "| 200 tools" not in summary and "`quiet_000`, `quiet_001`" in summary and "and 190 more" in summary
    )
    assert not BASE64_RUN.search(summary) and not BASE64_RUN.search(report.read_text())
    assert "At most <del>100</del><ins>25</ins> records" in summary
    closing = summary.rstrip().splitlines()[-1]
    assert re.search(r"\*\*\d+ of 502 findings are not shown here\*\*", closing)
    assert f"the full report is in `{report}`" in closing
    # The report holds every finding: every tool named, every section complete.
    written = report.read_text()
    findings = json.loads(diff(before, after, "--format", "json").stdout)["servers"][0]["findings"]
    assert len(findings) == 502
    for finding in findings:
        assert f"`{finding['tool']}`" in written and f"`{finding['rule']}`" in written
    assert "### Breaking (1)" in written and "### Other changes (501)" in written
    (archive,) = [f for f in findings if f["tool"] == "archive"]
    assert [p["text"] for p in archive["diff"] if p["op"] != "equal"] == ["100", "25"]
    # Text, JSON and GitHub annotations show the changed words of the long description too.
    for fmt in ("text", "github"):
        assert "At most [-100-]{+25+} records" in diff(before, after, "--format", fmt).stdout


@pytest.mark.parametrize("max_chars", [2_000, 5_000, 20_000])
def test_the_summary_fills_its_budget_by_priority(tmp_path: Path, max_chars: int) -> None:
    before, after = big_change(tmp_path)
    reviews = review(load_side(str(before), ROOT), load_side(str(after), ROOT))
    summary = render_markdown(reviews, max_chars=max_chars, report="diff-report.md")
    assert len(summary) <= max_chars
    assert "`TOOL_REMOVED` — `doomed`" in summary  # the breaking finding always fits
    assert "the full report is in `diff-report.md`" in summary


def test_the_full_report_is_named_even_when_everything_fits(tmp_path: Path) -> None:
    report = tmp_path / "r.md"
    summary = case("fold_and_order", "markdown", "--report", str(report))
    assert summary.rstrip().endswith(f"The full report is in `{report}`.")
    assert "### Breaking (1)" in report.read_text() and "not shown" not in summary


@pytest.mark.parametrize(
    ("old", "new"), PAIRS, ids=[f"{a.stem}..{b.stem.rsplit('_', 1)[1]}" for a, b in PAIRS]
)
def test_every_real_version_pair_renders_a_summary_under_the_limit(old: Path, new: Path) -> None:
    reviews = review(load_side(str(old), ROOT), load_side(str(new), ROOT))
    summary = render_markdown(reviews)
    assert len(summary) <= 60_000 and not BASE64_RUN.search(summary)
    assert "```" not in summary  # never a JSON block in the summary


def test_bad_options_and_an_unwritable_report_end_in_one_clear_line(tmp_path: Path) -> None:
    pair = CASES / "fold_and_order"
    small = diff(pair / "before.json", pair / "after.json", "--max-chars", "100")
    assert small.returncode == 2 and "--max-chars: expected a whole number of at least 2000" in small.stderr
    blocked = tmp_path / "file"
    blocked.write_text("")
    unwritable = diff(pair / "before.json", pair / "after.json", "--report", str(blocked / "r.md"))
    assert unwritable.returncode == 2 and "lynxc diff: cannot write the report" in unwritable.stderr
    assert "Traceback" not in small.stderr + unwritable.stderr


def test_markdown_text_from_a_tool_cannot_break_the_table() -> None:
    pieces = region("Use a|b and <script>x</script> *here*", "Use a|b and <script>y</script> *here*")
    assert as_text(pieces) == "Use a|b and <script>[-x-]{+y+}</script> *here*"
    old = {"name": "t|x", "description": "Pick a | b. <img src=x>"}
    new = {**old, "description": "Pick a | c. <img src=x>"}
    markdown = render_markdown([review_pair(ServerWire("s", [old], "a"), ServerWire("s", [new], "b"))])
    (row,) = [line for line in markdown.splitlines() if "DESCRIPTION_CHANGED" in line]
    assert len(re.findall(r"(?<!\\)\|", row)) == 5  # four cells: no pipe of the text splits one
    assert "<img" not in row and "&lt;img src=x&gt;" in row


def test_a_huge_description_diff_is_bounded() -> None:
    words = " ".join(f"w{i}" for i in range(150_000))  # about 1 MB
    started = time.process_time()
    near_end = as_text(region(words + " end", words.replace("w149990 ", "x149990 ") + " stop"))
    # Nothing shared at either end: the middle is too long for difflib, shown replaced whole.
    everywhere = as_text(region("start " + words, words.replace(" ", "_") + " stop"))
    assert time.process_time() - started < 2.0
    assert "[-w149990-]{+x149990+}" in near_end and "[-end-]{+stop+}" in near_end
    assert len(near_end) < 500 and len(everywhere) < 1_000
    assert everywhere.startswith("[-start w0 w1") and everywhere.endswith("w149999 stop+}")


def test_more_servers_than_the_budget_holds_are_counted_not_cut_mid_line() -> None:
    old, new = {"name": "t", "description": "Old."}, {"name": "t", "description": "New."}
    reviews = [
        review_pair(ServerWire(f"s{i}", [old], "a"), ServerWire(f"s{i}", [new], "b")) for i in range(500)
    ]
    summary = render_markdown(reviews, max_chars=2_000)
    assert len(summary) <= 2_000 and "## Schema changes: `s0`" in summary
    shown = summary.count("## Schema changes:")
    hidden = 500 - shown
    assert (
        f"**{hidden} of 500 findings are not shown here** (0 breaking, 0 warning, {hidden} info; " in summary
    )
    assert f"{hidden} of 500 servers not at all), to keep this comment under 2,000 characters" in summary


def test_the_changelog_values_never_inline_binary_data() -> None:
    icon = "data:image/png;base64," + base64.b64encode(bytes(4096)).decode()
    change = Change("added", "t", ("Icons",), after=[{"src": icon}])
    (block,) = markdown_values(change)
    assert not BASE64_RUN.search(block) and "data:image/png;base64,… (4.0 KB, sha256 " in block


def test_a_change_reported_twice_names_its_tool_once() -> None:
    change = Change("changed", "t", ("Input schema", "properties", "x", "type"), "string", ["string", "null"])
    finding = Finding(change, "PARAM_TYPE_WIDENED", "parameter 'x' accepts more types")
    reviews = [ServerReview("s", None, None, (finding, finding))]
    text = render_text(reviews)
    assert "    info     PARAM_TYPE_WIDENED: t: changed Input schema / properties / x / type\n" in text
    assert "tools" not in text
    assert "| `t` | changed `Input schema / properties / x / type` |" in render_markdown(reviews)


def test_the_report_holds_a_long_changed_value_whole(tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    case("long_description", "markdown", "--report", str(report))
    written = report.read_text()
    for side in ("before", "after"):
        description = json.loads((CASES / f"long_description/{side}.json").read_text())["tools"][0][
            "description"
        ]
        assert json.dumps(description) in written
    assert written.index("at most <del>100</del><ins>500</ins>") < written.index("<details>")


def test_one_huge_message_cannot_crowd_out_the_summary() -> None:
    change = Change("removed", "t", ("Input schema", "properties", "x"), before={"type": "string"})
    huge = Finding(change, "PARAM_REMOVED", "parameter 'x' removed; " + "really " * 20_000)
    other = Finding(replace(change, tool="u"), "PARAM_REMOVED", "parameter 'x' removed")
    summary = render_markdown([ServerReview("s", None, None, (huge, other))], max_chars=5_000)
    assert len(summary) <= 5_000 and "`u`: removed" in summary and "not shown" not in summary

"""The pull-request workflow on real git history: a project made by `lynxc init`, released at
0.1.0 and committed on main, then branches that change it the way pull requests do. `lynxc diff`
(default BASE: the released contract) passes a breaking change that bumps the version or
acknowledges it, and fails one that does not, naming the rule."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from lynxc.compiler.review.changelog import Release
from lynxc.compiler.review.compare import review_pair
from lynxc.compiler.review.versions import judge_versions
from lynxc.compiler.wire import ServerWire
from tests.fixtures.git_repo import commit, git, lynxc, released_demo

SPEC = Path("specs/demo.yaml")
# A breaking change: a new required parameter (PARAM_ADDED_REQUIRED).
MODE = (
    "      mode:\n        type: string\n        required: true\n        enum: [fast, exact]\n"
    "        description: How to count, fast or exact.\n"
)
ANCHOR = "    output:\n"
# Another: an output field removed (OUTPUT_PROPERTY_REMOVED, and OUTPUT_REQUIRED_REMOVED).
LINES = (
    "        lines: {type: integer, minimum: 0, description: Line count; a final line without a newline "
    "counts.}\n"
)


def edit(
    project: Path, version: str | None = None, *, mode: bool = False, lines: bool = False, ack: str = ""
) -> None:
    """Change the demo spec as a pull request would: a new version, breaking changes, an
    acknowledgement (`server.acknowledge` entries, as YAML lines)."""
    path = project / SPEC
    text = path.read_text()
    if version is not None:
        text = text.replace(text.split("version: ", 1)[1].split("\n", 1)[0], version, 1)
    if mode:
        text = text.replace(ANCHOR, MODE + ANCHOR, 1)
        text = text.replace("arguments: {text: ", "arguments: {mode: fast, text: ")  # the examples too
        backend = project / "demo_backend.py"  # the backend must honour the new parameter
        backend.write_text(backend.read_text().replace('params={"text"}', 'params={"text", "mode"}'))
    if lines:
        assert LINES in text
        text = text.replace(LINES, "").replace(
            "required: [words, lines, characters]", "required: [words, characters]"
        )
        text = re.sub(r"lines: \d+, ", "", text)  # the examples expect no line count any more
    if ack:
        text = text.replace("  title: Demo\n", f"  title: Demo\n  acknowledge:\n{ack}", 1)
    path.write_text(text)


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`lynxc init demo`, built, released at 0.1.0 and committed on main."""
    return released_demo(tmp_path_factory.mktemp("released") / "project")


@pytest.fixture
def repo(released: Path, tmp_path: Path) -> Path:
    """A copy of the released project (its git history too), on a pull request's branch."""
    project = tmp_path / "project"
    shutil.copytree(released, project)
    git(project, "checkout", "-q", "-b", "pr")
    return project


def test_a_bumped_breaking_change_passes_and_says_why(repo: Path) -> None:
    edit(repo, "0.2.0", mode=True)
    done = lynxc(repo, "diff")  # default BASE: the release 0.1.0
    assert done.returncode == 0, done.stdout + done.stderr
    assert "demo: 2 fields changed (1 breaking, 0 warning, 1 info; 1 breaking allowed)" in done.stdout
    assert "allowed: 0.1.0 -> 0.2.0, a minor bump below 1.0" in done.stdout
    assert "versions: breaking changes allowed: 0.2.0 follows the release 0.1.0" in done.stdout
    commit(repo, "count modes")
    against_main = lynxc(repo, "diff", "git:main")  # what a pull request's CI passes
    assert against_main.returncode == 0 and "allowed: 0.1.0 -> 0.2.0" in against_main.stdout
    # A baseline file given as a path is that release, with its version.
    baseline = lynxc(repo, "diff", "schema-changelog/demo/0.1.0.json", "specs")
    assert baseline.returncode == 0 and "allowed: 0.1.0 -> 0.2.0" in baseline.stdout
    # Still breaking for a stricter gate: an allowed change weighs a warning.
    assert lynxc(repo, "diff", "--fail-on", "warning").returncode == 1


def test_an_unbumped_breaking_change_fails_naming_the_rule(repo: Path) -> None:
    edit(repo, "0.1.1", mode=True)  # a patch bump is not enough below 1.0
    done = lynxc(repo, "diff")
    assert done.returncode == 1
    assert "breaking PARAM_ADDED_REQUIRED: count_words: added Input schema / properties / mode" in done.stdout
    assert "allowed" not in done.stdout.split("versions:")[0]
    assert (
        "versions: 0.1.1 follows the release 0.1.0 without bumping the minor version (below 1.0)"
        in done.stdout
    )
    commit(repo, "count modes, unbumped")
    assert lynxc(repo, "diff", "git:main").returncode == 1
    assert lynxc(repo, "diff", "git:main", "--fail-on", "never").returncode == 0


def test_an_acknowledged_breaking_change_passes(repo: Path) -> None:
    ack = "    - {version: 0.1.1, rule: PARAM_ADDED_REQUIRED, reason: Counting needs to know how.}\n"
    edit(repo, "0.1.1", mode=True, lines=True, ack=ack)
    done = lynxc(repo, "diff", "--format", "json")
    (server,) = json.loads(done.stdout)["servers"]
    verdicts = {f["rule"]: f.get("allowed") for f in server["findings"] if f["level"] == "breaking"}
    assert verdicts == {
        "PARAM_ADDED_REQUIRED": {
            "by": "acknowledgement",
            "version": "0.1.1",
            "reason": "Counting needs to know how.",
        },
        "OUTPUT_PROPERTY_REMOVED": None,  # the other breaking changes are not acknowledged
        "OUTPUT_REQUIRED_REMOVED": None,
    }
    assert done.returncode == 1
    path = repo / SPEC
    second = "".join(
        f"    - {{version: 0.1.1, rule: {rule}, reason: Nobody read it.}}\n"
        for rule in ("OUTPUT_PROPERTY_REMOVED", "OUTPUT_REQUIRED_REMOVED")
    )
    path.write_text(path.read_text().replace(ack, ack + second))
    done = lynxc(repo, "diff")
    assert done.returncode == 0, done.stdout
    assert "allowed: acknowledged for 0.1.1: Nobody read it." in done.stdout
    # The build agrees: it builds (no BREAKING_CHANGE_UNACKNOWLEDGED), and then the diff still passes.
    built = lynxc(repo, "build")
    assert built.returncode == 0, built.stderr
    assert lynxc(repo, "diff").returncode == 0


def test_more_breaking_changes_on_an_unreleased_bumped_version_pass(repo: Path) -> None:
    """main is already at an unreleased 0.2.0 (breaking, bumped); a pull request adds another
    breaking change: the release is still 0.1.0, so 0.2.0 allows it, against the release and
    against main alike."""
    git(repo, "checkout", "-q", "main")
    edit(repo, "0.2.0", mode=True)
    commit(repo, "0.2.0: count modes")
    git(repo, "checkout", "-q", "-b", "pr2")
    edit(repo, lines=True)
    commit(repo, "drop lines")
    for base in ([], ["git:main"], ["release:"], ["release:demo@0.1.0"]):
        done = lynxc(repo, "diff", *base)
        assert done.returncode == 0, (base, done.stdout, done.stderr)
        assert "OUTPUT_PROPERTY_REMOVED" in done.stdout and "allowed: 0.1.0 -> 0.2.0" in done.stdout


def test_a_minor_bump_above_1_0_fails_and_a_major_one_passes(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    assert lynxc(project, "init", "demo").returncode == 0
    edit(project, "1.0.0")
    assert lynxc(project, "release", "demo", "--date", "2026-01-01").returncode == 0
    commit(project, "demo 1.0.0")
    edit(project, "1.1.0", mode=True)
    minor = lynxc(project, "diff")
    assert minor.returncode == 1 and "without bumping the major version" in minor.stdout
    edit(project, "2.0.0")
    assert lynxc(project, "diff").returncode == 0


def test_changing_a_released_version_fails(repo: Path) -> None:
    edit(repo, mode=True)  # still 0.1.0, which is released
    done = lynxc(repo, "diff")
    assert done.returncode == 1
    assert "versions: 0.1.0 is released and must not change" in done.stdout


def test_a_pull_request_that_records_its_release(repo: Path) -> None:
    edit(repo, "0.2.0", mode=True)
    assert lynxc(repo, "release", "demo", "--date", "2026-02-01").returncode == 0
    commit(repo, "release 0.2.0")
    assert lynxc(repo, "diff").stdout == "demo: no changes\n"  # the latest release is the head
    against_main = lynxc(repo, "diff", "git:main")
    assert against_main.returncode == 0 and "allowed: 0.1.0 -> 0.2.0" in against_main.stdout
    older = lynxc(repo, "diff", "release:demo@0.1.0", "--format", "markdown")
    assert older.returncode == 0
    assert "`PARAM_ADDED_REQUIRED` (allowed: 0.1.0 -&gt; 0.2.0, a minor bump below 1.0)" in older.stdout


def test_a_server_without_a_release_promises_nothing(repo: Path) -> None:
    """Beside a released server, one never released is new against the releases, and its
    breaking changes are allowed against a git ref too: it has no contract yet."""
    assert lynxc(repo, "init", "other").returncode == 0
    done = lynxc(repo, "diff")
    assert done.returncode == 0
    assert "other: 1 field changed (0 breaking, 0 warning, 1 info)" in done.stdout
    assert "TOOL_ADDED" in done.stdout and "demo: no changes" in done.stdout
    commit(repo, "another server")
    spec = repo / "specs/other.yaml"
    spec.write_text(spec.read_text().replace("value: 100000", "value: 1000"))
    against_head = lynxc(repo, "diff", "git:HEAD")
    assert against_head.returncode == 0, against_head.stdout
    assert "allowed: other has no release yet" in against_head.stdout
    assert "versions: other has no release yet, so it promises nothing" in against_head.stdout


def test_the_first_pull_request_of_a_project_compares_with_nothing(tmp_path: Path) -> None:
    """main before any spec (the repository's first lynxc pull request, as the Action diffs it):
    every server is new, the review passes; a ref that names no commit is still an error."""
    project = tmp_path / "project"
    (project / "service").mkdir(parents=True)
    git(project, "init", "-q", "-b", "main")
    (project / "README.md").write_text("A repository before lynxc.\n")
    commit(project, "before lynxc")
    service = project / "service"  # a project in a subfolder: specs/ is relative to it
    assert lynxc(service, "init", "demo").returncode == 0
    done = lynxc(service, "diff", "git:main")
    assert done.returncode == 0, done.stderr
    assert "demo: 1 field changed (0 breaking, 0 warning, 1 info)" in done.stdout
    assert "TOOL_ADDED" in done.stdout
    missing = lynxc(service, "diff", "git:no-such-branch")
    assert missing.returncode == 2 and "git:no-such-branch" in missing.stderr


def test_github_annotations_of_allowed_changes_are_warnings(repo: Path) -> None:
    edit(repo, "0.2.0", mode=True)
    lines = lynxc(repo, "diff", "--format", "github").stdout.splitlines()
    added = next(line for line in lines if "PARAM_ADDED_REQUIRED" in line)
    assert added.startswith("::warning file=specs/demo.yaml,line=")
    assert "title=lynxc PARAM_ADDED_REQUIRED (allowed)::" in added
    assert "(breaking, allowed: 0.1.0 -> 0.2.0, a minor bump below 1.0)" in added


def test_release_sides_that_cannot_be_read(repo: Path, tmp_path: Path) -> None:
    unknown = lynxc(repo, "diff", "release:nope")
    assert unknown.returncode == 2
    assert (
        unknown.stderr
        == "lynxc diff: release:nope: nope has no release in schema-changelog/nope/ (`lynxc release nope`)\n"
    )
    version = lynxc(repo, "diff", "release:demo@9.9.9")
    assert version.returncode == 2 and "demo has no release 9.9.9 (released: 0.1.0)" in version.stderr
    bad = lynxc(repo, "diff", "release:../x")
    assert bad.returncode == 2 and "expected release:[SERVER[@VERSION]]" in bad.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    none = lynxc(empty, "diff", "release:", str(repo / "specs"))
    assert none.returncode == 2 and "no server has a release" in none.stderr


# --- the rule itself, on wire forms (no processes) ------------------------------------------------

OLD = [{"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}}]
NEW = [{"name": "t", "inputSchema": {"type": "object", "properties": {}}}]


def verdict(base: str | None, head: str | None, released: list[str], acks=()) -> list[object]:
    review = review_pair(
        ServerWire("s", OLD, "base", version=base),
        ServerWire("s", NEW, "head", version=head, acknowledgements=acks),
    )
    releases = [Release(v, "2026-01-01", OLD if v == base else NEW) for v in released]
    (judged,) = judge_versions([review], {"s": releases})
    return [f.allowed.to_json() if f.allowed else None for f in judged.findings if f.level == "breaking"]


@pytest.mark.parametrize(
    ("base", "head", "released", "allowed"),
    [
        ("0.1.0", "0.2.0", [], {"by": "version", "from": "0.1.0", "to": "0.2.0"}),
        ("0.1.0", "0.1.1", [], None),
        ("1.2.0", "2.0.0", [], {"by": "version", "from": "1.2.0", "to": "2.0.0"}),
        ("1.2.0", "1.3.0", [], None),
        # An unreleased base: the release it follows is what counts.
        ("0.2.0", "0.2.0", ["0.1.0"], {"by": "version", "from": "0.1.0", "to": "0.2.0"}),
        ("0.2.0", "0.2.1", ["0.1.0"], {"by": "version", "from": "0.1.0", "to": "0.2.1"}),
        # A base older than the last release: the last release counts (stricter, never looser).
        ("0.1.0", "0.2.1", ["0.1.0", "0.2.0"], None),
        (None, "0.2.0", ["0.1.0"], {"by": "version", "from": "0.1.0", "to": "0.2.0"}),
        (None, "0.2.0", [], None),  # a saved tools/list says no version
        ("0.1.0", None, [], None),
    ],
)
def test_which_version_a_change_starts_from(
    base: str | None, head: str | None, released: list[str], allowed: object
) -> None:
    assert verdict(base, head, released) == [allowed]


def test_acknowledgements_count_for_their_version_only() -> None:
    ack = ("0.1.1", "PARAM_REMOVED", "never honoured")
    assert verdict("0.1.0", "0.1.1", [], (ack,)) == [
        {"by": "acknowledgement", "version": "0.1.1", "reason": "never honoured"}
    ]
    assert verdict("0.1.0", "0.1.2", [], (ack,)) == [None]


def test_unreadable_baselines_never_loosen_a_verdict(repo: Path) -> None:
    edit(repo, "0.2.0", mode=True)
    commit(repo, "count modes")
    (repo / "schema-changelog/demo/releases.json").write_text("{not json")
    default = lynxc(repo, "diff")  # the releases are the default BASE: they cannot be read
    assert default.returncode == 2 and "cannot read the released baselines" in default.stderr
    against_main = lynxc(repo, "diff", "git:main")
    assert against_main.returncode == 1 and "allowed" not in against_main.stdout

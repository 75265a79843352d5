"""`lynxc diff` as a reviewer runs it on a pull request: git refs, formats, exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import DATA, LYNXC, ROOT


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    project = tmp_path / "repo"
    # Without pagila: its two sides would each start a PostgreSQL; a Postgres spec's diff is
    # tested in tests/compiler/sql/postgres/test_build.py (a migration that shows in the diff).
    shutil.copytree(ROOT / "specs", project / "specs", ignore=shutil.ignore_patterns("pagila"))
    git(project, "init", "-q", "-b", "main")
    git(project, "-c", "user.email=ci@example.invalid", "-c", "user.name=ci", "add", "-A")
    git(project, "-c", "user.email=ci@example.invalid", "-c", "user.name=ci", "commit", "-qm", "base")
    spec = project / "specs/dot-harness/search_project_text.yaml"
    text = spec.read_text()
    text = text.replace(
        "      maximum: caps.max_matches\n      default: 100\n", "      maximum: 50\n      default: 50\n"
    )
    text = text.replace(
        "    caseSensitive:\n",
        "    wholeWord:\n      type: boolean\n      required: true\n"
        "      description: Match whole words only.\n    caseSensitive:\n",
    )
    spec.write_text(text)
    return project


def diff(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["lynxc", "diff", *args], capture_output=True, text=True, cwd=project, executable=LYNXC
    )


def test_default_compares_git_head_with_the_working_specs(repo: Path) -> None:
    done = diff(repo)
    assert done.returncode == 1, done.stderr  # breaking changes, --fail-on breaking
    assert "dot-harness: 4 fields changed (2 breaking, 1 warning, 1 info)" in done.stdout
    tool = "search_project_text"
    added = f"breaking PARAM_ADDED_REQUIRED: {tool}: added Input schema / properties / wholeWord"
    assert added in done.stdout
    assert (
        f"breaking MAXIMUM_DECREASED: {tool}: changed Input schema / properties / maxResults / maximum"
        in done.stdout
    )
    assert "warning  DEFAULT_CHANGED" in done.stdout  # the text format lists the warnings too
    unchanged = diff(repo, "git:HEAD", "git:main").stdout.splitlines()
    assert "dot-harness: no changes" in unchanged and all(line.endswith(": no changes") for line in unchanged)


def test_github_annotations_point_at_the_spec_lines(repo: Path) -> None:
    # Also the warning gate (the output does not depend on --fail-on, nor the exit on --format).
    done = diff(repo, "git:main", "specs", "--format", "github", "--fail-on", "warning")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("::warning ") and "DEFAULT_CHANGED" in line for line in lines)
    spec = "specs/dot-harness/search_project_text.yaml"
    added = next(line for line in lines if "wholeWord" in line and line.startswith("::error"))
    assert added.startswith(f"::error file={spec},line=")
    line_number = int(added.split("line=")[1].split(",")[0])
    assert (repo / spec).read_text().splitlines()[line_number - 1].strip() == "wholeWord:"
    assert any(line.startswith("::notice ") for line in lines)


def test_markdown_and_json_and_fail_on_levels(repo: Path) -> None:
    """Each run checks a format and a --fail-on level: the output does not depend on --fail-on,
    nor the exit code on --format. (The default level, breaking, with the text format:
    test_default_compares_git_head_with_the_working_specs; warning, with github: the test above.)"""
    markdown = diff(repo, "--format", "markdown", "--fail-on", "any")
    assert markdown.returncode == 1, markdown.stderr
    assert (
        "## Schema changes: `dot-harness`" in markdown.stdout
        and "**breaking** `PARAM_ADDED_REQUIRED`" in markdown.stdout
    )
    done = diff(repo, "--format", "json", "--fail-on", "never")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    summaries = {s["server"]: s["summary"] for s in report["servers"]}
    assert summaries.pop("dot-harness") == {"breaking": 2, "warning": 1, "info": 1}
    assert all(summary == {"breaking": 0, "warning": 0, "info": 0} for summary in summaries.values())


def test_info_only_change_passes_the_default_gate(repo: Path) -> None:
    git(repo, "checkout", "--", "specs")
    spec = repo / "specs/dot-harness/read_project_text.yaml"
    spec.write_text(
        spec.read_text().replace("First line to return, 1-based.", "First line to return (1-based).")
    )
    done = diff(repo)
    assert done.returncode == 0 and "DESCRIPTION_CHANGED" in done.stdout
    # The changed spec alone (the other servers have no findings to gate on: the run above).
    any_level = diff(repo, "git:HEAD:specs/dot-harness", "specs/dot-harness", "--fail-on", "any")
    assert any_level.returncode == 1 and "DESCRIPTION_CHANGED" in any_level.stdout


def test_bad_inputs_exit_2_with_a_clear_message(repo: Path, tmp_path: Path) -> None:
    ref = diff(repo, "git:no-such-ref")
    assert ref.returncode == 2 and ref.stderr.startswith("lynxc diff: git:no-such-ref:")
    missing = diff(repo, str(tmp_path / "nope.json"), "specs")
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr
    (tmp_path / "bad.json").write_text('{"tools": 3}')
    bad = diff(repo, str(tmp_path / "bad.json"), "specs")
    assert bad.returncode == 2 and "expected a tools/list answer" in bad.stderr
    assert "Traceback" not in ref.stderr + missing.stderr + bad.stderr


def test_saved_tools_list_against_a_spec() -> None:
    saved = DATA / "mcp-tool-versions/server-memory_2026.8.31.json"
    done = diff(ROOT, str(saved), "specs/dot-harness", "--fail-on", "never")
    assert done.returncode == 0
    assert "TOOL_REMOVED" in done.stdout and "TOOL_ADDED" in done.stdout


HOSTILE_TOOLS_LISTS = {
    "deep brackets": ("[" * 100_000 + "]" * 100_000, "nests deeper than 100 levels"),
    "deep schema": (
        '{"tools": [{"name": "a", "inputSchema": ' + '{"a": ' * 500 + "1" + "}" * 500 + "}]}",
        "nests deeper than 100 levels",
    ),
    "NaN": ('{"tools": [{"name": "a", "inputSchema": {"maximum": NaN}}]}', "NaN is not JSON"),
    "too large": ('{"tools": []}' + " " * (17 * 2**20), "over the limit of 16 MiB"),
}


@pytest.mark.parametrize("case", HOSTILE_TOOLS_LISTS)
@pytest.mark.parametrize("verb", ["diff", "lint"])
def test_hostile_saved_tools_lists_end_in_one_clear_line(tmp_path: Path, verb: str, case: str) -> None:
    text, message = HOSTILE_TOOLS_LISTS[case]
    saved = tmp_path / "tools.json"
    saved.write_text(text)
    args = [str(saved), str(saved)] if verb == "diff" else [str(saved)]
    done = subprocess.run([LYNXC, verb, *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


def test_a_git_ref_cannot_smuggle_an_option(tmp_path: Path) -> None:
    out = tmp_path / "written.tar"
    done = subprocess.run(
        [LYNXC, "--project", str(ROOT), "diff", f"git:--output={out}", "specs"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "expected git:REF[:PATH]" in done.stderr
    assert not out.exists()


LIBRARY_SERVER = """\
lynxc: 1
server: {name: library, version: 0.1.0}
"""
BOOKS = """\
lynxc: 1
collection:
  name: books
  title: Books
  description: One book of the catalogue.
  key: isbn
  fields:
    isbn: {type: string, required: true, description: The book's ISBN.}
    title: {type: string, required: true, description: The book's title.}
    status:
      type: enum
      values: [shelved, lent, lost]
      description: Where the book is.
    pages: {type: integer, description: How many pages it has.}
    summary: {type: text, description: What the book is about.}
  keyword: [title, summary]
  sort: [title]
  max_text_chars: 2000
"""


@pytest.fixture
def library(tmp_path: Path) -> Path:
    """A project whose committed spec declares a resource, and a working copy that changes it."""
    project = tmp_path / "library"
    (project / "specs/library").mkdir(parents=True)
    (project / "specs/library/server.yaml").write_text(LIBRARY_SERVER)
    (project / "specs/library/books.yaml").write_text(BOOKS)
    git(project, "init", "-q", "-b", "main")
    git(project, "-c", "user.email=ci@example.invalid", "-c", "user.name=ci", "add", "-A")
    git(project, "-c", "user.email=ci@example.invalid", "-c", "user.name=ci", "commit", "-qm", "base")
    changed = (
        BOOKS.replace("[shelved, lent, lost]", "[shelved, lent]")
        .replace("    pages: {type: integer, description: How many pages it has.}\n", "")
        .replace("max_text_chars: 2000", "max_text_chars: 500")
        .replace("The book's title.", "The title on its cover.")
    )
    (project / "specs/library/books.yaml").write_text(changed)
    return project


def test_resource_changes_between_two_spec_versions(library: Path) -> None:
    done = diff(library)  # git:HEAD against the working specs
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "library: 4 fields changed (2 breaking, 1 warning, 1 info)"
    found = [line.strip() for line in lines if line.startswith("    ") and not line.startswith("     ")]
    assert found == [  # breaking first, then warnings, then the rest
        "breaking COLLECTION_FIELD_REMOVED: removed Collection books / fields / pages",
        "breaking COLLECTION_ENUM_VALUE_REMOVED: changed Collection books / fields / status / values",
        "warning  COLLECTION_TEXT_LIMIT_LOWERED: changed Collection books / max_text_chars",
        "info     COLLECTION_DESCRIPTION_CHANGED: changed Collection books / fields / title / description",
    ]
    # The same two versions as folders: a spec folder and the one at a git ref.
    folders = diff(library, "git:main:specs/library", "specs/library", "--format", "json")
    report = json.loads(folders.stdout)["servers"][0]
    assert report["summary"] == {"breaking": 2, "warning": 1, "info": 1}
    assert report["findings"][0] == {
        "rule": "COLLECTION_FIELD_REMOVED",
        "level": "breaking",
        "message": report["findings"][0]["message"],
        "op": "removed",
        "collection": "books",
        "path": "Collection books / fields / pages",
        "before": {"description": "How many pages it has.", "required": False, "type": "integer"},
    }


def test_resource_annotations_point_at_the_resource_file(library: Path) -> None:
    lines = diff(library, "--format", "github").stdout.splitlines()
    spec = library / "specs/library/books.yaml"
    text = spec.read_text().splitlines()
    removed = next(line for line in lines if "fields / pages" in line)
    enum = next(line for line in lines if "status / values" in line)
    assert removed.startswith("::error file=specs/library/books.yaml,line=")  # the resource: pages is gone
    assert enum.startswith("::error file=specs/library/books.yaml,line=")
    at = [int(line.split("line=")[1].split(",")[0]) for line in (removed, enum)]
    assert text[at[0] - 1].strip() == "name: books"
    assert text[at[1] - 1].strip() == "status:"


def test_unchanged_resources_and_a_saved_tools_list(library: Path, tmp_path: Path) -> None:
    assert diff(library, "git:main", "git:main").stdout == "library: no changes\n"
    built = subprocess.run(
        [LYNXC, "--project", str(library), "build"], capture_output=True, text=True, check=False
    )
    assert built.returncode == 0, built.stderr
    # A tools/list answer cannot tell what a server declares: only its tools are compared.
    saved = library / "generated/library/tools.json"
    done = diff(library, str(saved), "specs")
    assert done.returncode == 0 and done.stdout == "library: no changes\n"


# --- auth (issue 27) ----------------------------------------------------------------------------

SHOP = """\
lynxc: 1
server:
  name: shop
  version: {version}
  settings:
    keys_file: {{type: string, default: keys.json, description: The API keys file.}}
{auth}tools:
- name: orders
  backend: tests.fixtures.backends:echo
  description: {{purpose: List the orders of a customer.}}
  annotations: {{readOnlyHint: true}}
{tool_auth}  parameters:
    customer_email: {{type: string, required: true, {claim}description: The customer's email.}}
    limit: {{type: integer, default: 10, description: How many orders.}}
"""


def test_a_spec_that_starts_authenticating_callers_is_breaking(tmp_path: Path) -> None:
    """v2 authenticates callers with API keys, requires a scope of its tool and binds a parameter
    to the caller's email: three breaking findings, each once."""
    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    v1.mkdir(), v2.mkdir()
    (v1 / "server.yaml").write_text(SHOP.format(version="1.0.0", auth="", tool_auth="", claim=""))
    (v2 / "server.yaml").write_text(
        SHOP.format(
            version="1.1.0",  # a minor bump above 1.0: breaking changes still fail (2.0.0 allows them)
            auth="  auth: {scopes: [orders:read], api_keys: {file: {setting: keys_file}}}\n",
            tool_auth="  auth: {scopes: [orders:read]}\n",
            claim="from_claim: email, ",
        )
    )
    done = diff(tmp_path, "v1", "v2", "--format", "json")
    assert done.returncode == 1, done.stderr  # breaking: the default --fail-on
    (report,) = json.loads(done.stdout)["servers"]
    assert report["summary"] == {"breaking": 3, "warning": 0, "info": 1}
    found = [(f["rule"], f["level"], f["path"]) for f in report["findings"]]
    assert found == [
        ("SERVER_AUTH_CHANGED", "breaking", "Server / auth"),
        ("PARAM_BOUND_TO_CLAIM", "breaking", "Input schema / properties / customer_email"),
        ("REQUIRED_CHANGED", "info", "Input schema / required"),
        ("TOOL_SCOPE_ADDED", "breaking", "Meta / lynxc/auth"),
    ]
    bound = report["findings"][1]
    assert bound["message"] == (
        "'customer_email' now comes from the caller's 'email' claim; callers that send it are refused"
    )
    assert "PARAM_REMOVED" not in done.stdout
    # The text and GitHub forms say the same; a server change has no spec line to point at.
    text = diff(tmp_path, "v1", "v2").stdout
    assert text.startswith("shop: 4 fields changed (3 breaking, 0 warning, 1 info)\n")
    github = diff(tmp_path, "v1", "v2", "--format", "github").stdout.splitlines()
    assert github[0].startswith("::error title=lynxc SERVER_AUTH_CHANGED::added Server / auth: ")
    assert github[1].startswith("::error file=v2/server.yaml,line=15,")  # the parameter's line
    # Back again: callers must send the parameter, and anyone may call.
    back = json.loads(diff(tmp_path, "v2", "v1", "--format", "json").stdout)["servers"][0]
    assert [f["rule"] for f in back["findings"]] == [
        "SERVER_AUTH_REMOVED",
        "PARAM_CLAIM_UNBOUND_REQUIRED",
        "REQUIRED_CHANGED",
        "TOOL_SCOPE_REMOVED",
    ]


def test_records_bound_to_a_claim_in_a_spec(library: Path) -> None:
    """`bind` in a resource spec: callers lose the rows of others (breaking); dropping it widens
    what every caller sees (a warning a reviewer must read)."""
    server = library / "specs/library/server.yaml"
    server.write_text(
        "lynxc: 1\nserver:\n  name: library\n  version: 0.1.0\n  settings:\n"
        "    keys_file: {type: string, default: keys.json, description: The API keys file.}\n"
        "  auth: {scopes: [books:read], api_keys: {file: {setting: keys_file}}}\n"
    )
    books = library / "specs/library/books.yaml"
    books.write_text(BOOKS)
    before = diff(library, "specs", "specs")
    assert before.stdout == "library: no changes\n", before.stderr
    shutil.copytree(library / "specs", library / "bound")
    (library / "bound/library/books.yaml").write_text(BOOKS + "  bind: {status: {from_claim: shelf}}\n")
    bound = diff(library, "specs", "bound")
    assert bound.returncode == 1
    added = "breaking COLLECTION_BIND_ADDED: added Collection books / bind"
    assert bound.stdout.splitlines()[1].strip() == added
    unbound = diff(library, "bound", "specs", "--fail-on", "warning")
    assert unbound.returncode == 1
    assert "warning  COLLECTION_BIND_REMOVED: removed Collection books / bind" in unbound.stdout

"""Released baselines, version rules and the generated changelog, as a user drives them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lynxc.compiler.review.changelog import needs_major_bump, semver_key
from tests.conftest import LYNXC, ROOT

SPEC = """\
lynxc: 1
server:
  name: shop
  version: {version}
{extra}tools:
  - name: find_items
    backend: tests.fixtures.backends:echo
    description:
      purpose: {purpose}
    parameters:
      q: {{type: string, required: true, description: Text to find.}}
{params}"""
N_PARAM = "      n: {type: integer, minimum: 1, description: How many.}\n"


def lynxc(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([LYNXC, "--project", str(project), *args], capture_output=True, text=True, env=env)


def write(
    project: Path, version: str, purpose: str = "Find items.", params: str = N_PARAM, extra: str = ""
) -> None:
    (project / "specs").mkdir(parents=True, exist_ok=True)
    text = SPEC.format(version=version, purpose=purpose, params=params, extra=extra)
    (project / "specs" / "shop.yaml").write_text(text)


@pytest.fixture(scope="module")
def released_shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """shop 0.1.0 built and released once; each test changes a copy of it (`project`)."""
    built = tmp_path_factory.mktemp("shop") / "project"
    write(built, "0.1.0")
    return built_and_released(built, "shop", "2026-01-02")


def built_and_released(project: Path, server: str, date: str) -> Path:
    assert lynxc(project, "build").returncode == 0
    done = lynxc(project, "release", server, "--date", date)
    assert done.returncode == 0, done.stderr
    return project


@pytest.fixture
def project(released_shop: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(released_shop, tmp_path / "project"))


def test_release_records_the_exact_tools_list(project: Path) -> None:
    baseline = json.loads((project / "schema-changelog/shop/0.1.0.json").read_text())
    generated = json.loads((project / "generated/shop/tools.json").read_text())
    # Prompts and MCP resources are kept even when there are none: a later release compares them.
    empty = {"resources": [], "resourceTemplates": []}
    assert baseline == {"tools": generated["tools"], "prompts": [], "mcpResources": empty}
    releases = json.loads((project / "schema-changelog/shop/releases.json").read_text())
    assert releases == {"releases": [{"version": "0.1.0", "date": "2026-01-02"}]}
    changelog = (project / "schema-changelog/shop/CHANGELOG.md").read_text()
    assert "## v0.1.0 (2026-01-02)\n\nFirst observed." in changelog
    assert lynxc(project, "release", "shop").returncode == 1  # already released


def test_changing_a_released_version_is_an_error_naming_the_fields(project: Path) -> None:
    write(project, "0.1.0", purpose="Find items by text.")
    done = lynxc(project, "build")
    assert done.returncode == 1
    assert (
        "specs/shop.yaml:4:12: error VERSION_NOT_BUMPED: shop 0.1.0 is released, yet 1 changed" in done.stderr
    )
    assert "find_items: Description" in done.stderr


def test_a_bump_shows_as_an_unreleased_section(project: Path) -> None:
    write(project, "0.1.1", purpose="Find items by text.")
    assert lynxc(project, "build").returncode == 0
    changelog = (project / "schema-changelog/shop/CHANGELOG.md").read_text()
    assert changelog.index("## v0.1.1 (unreleased)") < changelog.index("## v0.1.0 (2026-01-02)")
    assert "1 schema field changed since v0.1.0 (0 breaking, 0 warning, 1 info)." in changelog
    assert "- changed `Description` — info `DESCRIPTION_CHANGED`" in changelog
    assert '"Find items."' in changelog and '"Find items by text."' in changelog
    readme = (project / "generated/shop/README.md").read_text()
    assert "## Schema changelog" in readme and "### v0.1.1 (unreleased)" in readme
    data = json.loads((project / "schema-changelog/shop/changelog.json").read_text())
    assert [(v["version"], v["released"], v["changedFields"]) for v in data["versions"]] == [
        ("0.1.1", False, 1),
        ("0.1.0", True, 0),
    ]
    assert data["versions"][1]["firstObserved"] is True


def test_breaking_change_needs_a_major_bump_or_an_acknowledgement(project: Path) -> None:
    write(project, "0.1.1", params="")  # removes parameter n
    done = lynxc(project, "build")
    assert done.returncode == 1
    assert "error BREAKING_CHANGE_UNACKNOWLEDGED: PARAM_REMOVED since 0.1.0: find_items" in done.stderr

    acknowledged = (
        "  acknowledge:\n    - {version: 0.1.1, rule: PARAM_REMOVED, reason: n was never honoured.}\n"
    )
    write(project, "0.1.1", params="", extra=acknowledged)
    assert lynxc(project, "build").returncode == 0

    write(project, "0.2.0", params="")  # below 1.0 a minor bump is the breaking bump
    assert lynxc(project, "build").returncode == 0
    assert lynxc(project, "release", "shop", "--date", "2026-02-03").returncode == 0
    changelog = (project / "schema-changelog/shop/CHANGELOG.md").read_text()
    assert "## v0.2.0 (2026-02-03)" in changelog
    assert "- removed `Input schema / properties / n` — breaking `PARAM_REMOVED`" in changelog


def test_older_version_and_unknown_acknowledgement(project: Path) -> None:
    write(project, "0.0.9")
    older = lynxc(project, "build")
    assert (
        older.returncode == 1
        and "VERSION_NOT_INCREASING: version 0.0.9 is older than the released 0.1.0" in (older.stderr)
    )
    write(
        project, "0.1.1", extra="  acknowledge:\n    - {version: 0.1.1, rule: PARAM_REMOVD, reason: typo.}\n"
    )
    unknown = lynxc(project, "build")
    assert unknown.returncode == 1
    assert "error ACKNOWLEDGE_RULE_UNKNOWN: 'PARAM_REMOVD' is not a diff rule" in unknown.stderr
    assert "did you mean 'PARAM_REMOVED'?" in unknown.stderr


@pytest.mark.parametrize(
    ("old", "new", "major"),
    [
        ("0.1.0", "0.1.1", True),
        ("0.1.0", "0.2.0", False),
        ("1.2.0", "1.9.0", True),
        ("1.2.0", "2.0.0", False),
    ],
)
def test_major_bump_rule(old: str, new: str, major: bool) -> None:
    assert needs_major_bump(old, new) is major


def test_semver_order() -> None:
    versions = ["1.0.0", "0.10.0", "0.9.1", "1.0.0-rc.1", "0.9.10"]
    assert sorted(versions, key=semver_key) == ["0.9.1", "0.9.10", "0.10.0", "1.0.0-rc.1", "1.0.0"]


def test_the_changelog_shows_a_rename_hint(project: Path) -> None:
    """A probable rename reads as one breaking removal with its hint, as `lynxc diff` shows it."""
    renamed = N_PARAM.replace("      n:", "      count:")
    write(
        project,
        "0.2.0",
        params=renamed,
        extra="  acknowledge:\n    - {version: 0.2.0, rule: PARAM_REMOVED, reason: renamed}\n",
    )
    done = lynxc(project, "build")
    assert done.returncode == 0, done.stderr
    changelog = (project / "schema-changelog/shop/CHANGELOG.md").read_text()
    assert (
        "- removed `Input schema / properties / n` — breaking `PARAM_REMOVED` "
        "(hint: probably renamed to 'count'" in changelog
    )


RECORDS_SPEC = """\
lynxc: 1
server:
  name: library
  version: {version}
collections:
  - name: books
    title: Books
    description: One book of the catalogue.
    key: isbn
    fields:
      isbn: {{type: string, required: true, description: The book's ISBN.}}
      title: {{type: string, required: true, description: The book's title.}}
      status: {{type: enum, values: [{statuses}], description: Where the book is.}}
{more}    keyword: [title]
"""
PAGES = "      pages: {type: integer, description: How many pages it has.}\n"


def write_records(
    project: Path, version: str, statuses: str = "shelved, lent, lost", more: str = PAGES
) -> None:
    (project / "specs").mkdir(parents=True, exist_ok=True)
    text = RECORDS_SPEC.format(version=version, statuses=statuses, more=more)
    (project / "specs" / "library.yaml").write_text(text)


@pytest.fixture(scope="module")
def released_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """library 0.1.0 built and released once; each test changes a copy of it (`library`)."""
    built = tmp_path_factory.mktemp("library") / "project"
    write_records(built, "0.1.0")
    return built_and_released(built, "library", "2026-03-01")


@pytest.fixture
def library(released_library: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(released_library, tmp_path / "project"))


def test_a_release_keeps_the_resources_document(library: Path) -> None:
    baseline = json.loads((library / "schema-changelog/library/0.1.0.json").read_text())
    generated = json.loads((library / "generated/library/collections.json").read_text())
    assert baseline["resources"] == {"format": 1, "resources": generated["resources"]}
    assert [r["name"] for r in baseline["resources"]["resources"]] == ["books"]


def test_removed_field_and_narrowed_enum_need_the_breaking_bump(library: Path) -> None:
    write_records(library, "0.1.1", statuses="shelved, lent", more="")
    done = lynxc(library, "build")
    assert done.returncode == 1
    assert (
        "error BREAKING_CHANGE_UNACKNOWLEDGED: COLLECTION_FIELD_REMOVED since 0.1.0: "
        "removed Collection books / fields / pages (field 'pages' was removed" in done.stderr
    )
    assert (
        "error BREAKING_CHANGE_UNACKNOWLEDGED: COLLECTION_ENUM_VALUE_REMOVED since 0.1.0: "
        "changed Collection books / fields / status / values (field 'status' no longer allows \"lost\""
        in done.stderr
    )

    write_records(library, "0.2.0", statuses="shelved, lent", more="")  # below 1.0 the minor bump
    done = lynxc(library, "build")
    assert done.returncode == 0, done.stderr
    changelog = (library / "schema-changelog/library/CHANGELOG.md").read_text()
    section = changelog.split("## v0.2.0 (unreleased)\n", 1)[1].split("## v0.1.0", 1)[0]
    assert "2 schema fields changed since v0.1.0 (2 breaking, 0 warning, 0 info)." in section
    data = json.loads((library / "schema-changelog/library/changelog.json").read_text())
    assert (data["versions"][0]["changedFields"], data["versions"][0]["breakingFields"]) == (2, 2)
    assert "### Collections\n" in section
    assert "- removed `Collection books / fields / pages` — breaking `COLLECTION_FIELD_REMOVED`" in section
    assert '  Previous value:\n\n  ```json\n  {\n    "description": "How many pages it has.",' in section
    assert (
        "- changed `Collection books / fields / status / values` — breaking `COLLECTION_ENUM_VALUE_REMOVED`"
        in (section)
    )
    assert '  New value:\n\n  ```json\n  [\n    "shelved",\n    "lent"\n  ]\n  ```' in section
    entries = json.loads((library / "schema-changelog/library/changelog.json").read_text())["versions"][0]
    assert [(e["op"], e["collection"], e["path"], e["rule"]) for e in entries["entries"]] == [
        ("removed", "books", "Collection books / fields / pages", "COLLECTION_FIELD_REMOVED"),
        ("changed", "books", "Collection books / fields / status / values", "COLLECTION_ENUM_VALUE_REMOVED"),
    ]
    readme = (library / "generated/library/README.md").read_text()
    assert "#### Collections\n\n- removed `Collection books / fields / pages`" in readme


def test_a_released_version_must_not_change_its_resources(library: Path) -> None:
    write_records(library, "0.1.0", statuses="shelved, lent, lost, sold")
    done = lynxc(library, "build")
    assert done.returncode == 1
    assert (
        "VERSION_NOT_BUMPED: library 0.1.0 is released, yet 1 changed: "
        "Collection books / fields / status / values" in done.stderr
    )


def test_a_baseline_without_resources_declared_none(library: Path) -> None:
    """Baselines written before records existed hold only tools: their resources are none, so
    the resources a later version declares show as added."""
    baseline = library / "schema-changelog/library/0.1.0.json"
    payload = json.loads(baseline.read_text())
    del payload["resources"]
    baseline.write_text(json.dumps(payload))
    write_records(library, "0.1.1")
    done = lynxc(library, "build")
    assert done.returncode == 0, done.stderr
    changelog = (library / "schema-changelog/library/CHANGELOG.md").read_text()
    assert "- added `Collection books` — info `COLLECTION_ADDED`" in changelog


def test_an_unreadable_resources_baseline_is_reported(library: Path) -> None:
    baseline = library / "schema-changelog/library/0.1.0.json"
    payload = json.loads(baseline.read_text())
    payload["resources"]["format"] = 9
    baseline.write_text(json.dumps(payload))
    done = lynxc(library, "build")
    assert done.returncode == 1
    assert (
        "BASELINE_INVALID: cannot read the released baselines: 0.1.0.json: resources: "
        "expected a collections document of format 1, found 9" in done.stderr
    )


# --- auth (issue 27) ----------------------------------------------------------------------------

AUTH_SPEC = """\
lynxc: 1
server:
  name: shop
  version: {version}
  settings:
    keys_file: {{type: string, default: keys.json, description: The API keys file.}}
  auth:
    scopes: [{scopes}]
    api_keys: {{file: {{setting: keys_file}}}}
{extra}tools:
  - name: find_items
    backend: tests.fixtures.backends:echo
    description:
      purpose: Find items.
    auth: {{scopes: [items:read]}}
    parameters:
      q: {{type: string, required: true, from_claim: email, description: Text to find.}}
{params}"""
AUTH_RULES = ("SERVER_AUTH_CHANGED", "PARAM_BOUND_TO_CLAIM", "TOOL_SCOPE_ADDED")


def write_auth(project: Path, version: str, scopes: str = "items:read", extra: str = "") -> None:
    text = AUTH_SPEC.format(version=version, scopes=scopes, extra=extra, params=N_PARAM)
    (project / "specs" / "shop.yaml").write_text(text)


def test_auth_changes_need_the_breaking_bump_and_show_in_the_changelog(project: Path) -> None:
    write_auth(project, "0.1.1")
    done = lynxc(project, "build")
    assert done.returncode == 1
    for rule in AUTH_RULES:
        assert f"error BREAKING_CHANGE_UNACKNOWLEDGED: {rule} since 0.1.0: " in done.stderr, rule
    assert "SERVER_AUTH_CHANGED since 0.1.0: added Server / auth (the server now authenticates" in (
        done.stderr
    )

    # server.acknowledge finds the new rules like any other.
    acknowledged = "  acknowledge:\n" + "".join(
        f"    - {{version: 0.1.1, rule: {rule}, reason: callers now sign in.}}\n" for rule in AUTH_RULES
    )
    write_auth(project, "0.1.1", extra=acknowledged)
    done = lynxc(project, "build")
    assert done.returncode == 0, done.stderr
    changelog = (project / "schema-changelog/shop/CHANGELOG.md").read_text()
    section = changelog.split("## v0.1.1 (unreleased)\n", 1)[1].split("## v0.1.0", 1)[0]
    assert "(3 breaking, 0 warning, 1 info)" in section
    assert section.index("### Server\n") < section.index("### `find_items`\n")
    assert "- added `Server / auth` — breaking `SERVER_AUTH_CHANGED`" in section
    assert '  New value:\n\n  ```json\n  {\n    "methods": [\n      "api_keys"\n    ],' in section
    assert "- removed `Input schema / properties / q` — breaking `PARAM_BOUND_TO_CLAIM`" in section
    assert "- added `Meta / lynxc/auth` — breaking `TOOL_SCOPE_ADDED`" in section
    entries = json.loads((project / "schema-changelog/shop/changelog.json").read_text())["versions"][0]
    assert entries["entries"][0] == {
        "rule": "SERVER_AUTH_CHANGED",
        "level": "breaking",
        "message": entries["entries"][0]["message"],
        "op": "added",
        "scope": "server",
        "path": "Server / auth",
        "after": {"methods": ["api_keys"], "scopes_supported": ["items:read"]},
    }

    # The release keeps the server's auth in its baseline: the same version reads back unchanged,
    # and a change to it is a change of the released version.
    assert lynxc(project, "release", "shop", "--date", "2026-02-03").returncode == 0
    baseline = json.loads((project / "schema-changelog/shop/0.1.1.json").read_text())
    assert baseline["_meta"] == {"lynxc/auth": {"methods": ["api_keys"], "scopes_supported": ["items:read"]}}
    assert lynxc(project, "build", "--check").returncode == 0
    write_auth(project, "0.1.1", scopes="items:read, items:write", extra=acknowledged)
    done = lynxc(project, "build")
    assert done.returncode == 1
    assert "VERSION_NOT_BUMPED: shop 0.1.1 is released, yet 1 changed: Server / auth / scopes_supported" in (
        done.stderr
    )

"""Issue 31's rename of the spec surface: declared records are `collections:` (`collection:`
files), and `prompts:`/`resources:` (`prompt:`/`resource:` files) declare MCP prompts and
resources. A spec written before the rename gets one clear SPEC_KEY_RENAMED per records entry,
at its place, instead of the MCP resource model's errors; `lynxc diff` still reads it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lynxc.compiler.cli import main
from lynxc.compiler.diagnostics import Span
from lynxc.compiler.lower.server import compile_spec
from lynxc.compiler.rules import RENAMED_RULES, RULES, Rule, renamed_rule
from lynxc.compiler.spec.load import load_spec
from tests.conftest import ROOT

FOXNOSE = ROOT / "specs" / "foxnose-knowledge"

HEAD = "lynxc: 1\nserver: {name: demo, version: 1.0.0}\n"
BOOKS = """\
  name: books
  key: isbn
  fields:
    isbn: {type: string, required: true}
    title: {type: string}
  keyword: [title]
"""
SURFACE = """\
prompts:
  - name: summarize_book
    title: Summarize a book
    description: Ask for a summary of one book of the catalogue.
    arguments:
      isbn: {description: "The book's ISBN, e.g. 978-0.", required: true,
             complete: {collection: books, field: isbn}, sample: "978-0"}
    messages:
      - {role: user, text: "Summarize the book {{ isbn }}."}
      - {role: user, resource: "book://{{ isbn }}"}
resources:
  - {name: guide, uri: "docs://demo/guide", description: The guide., mime_type: text/plain, text: Hi.}
  - name: book
    uri_template: "book://{isbn}"
    description: One book as JSON.
    mime_type: application/json
    record: {collection: books}
    variables: {isbn: {description: The ISBN., complete: {collection: books, field: isbn}}}
"""


def item(body: str) -> str:
    """`body` (a mapping indented by two) as an entry of a list under a top-level key."""
    first, *rest = body.splitlines(keepends=True)
    return "  - " + first[2:] + "".join("  " + line for line in rest)


def test_collections_prompts_and_mcp_resources_parse_from_a_server_file(tmp_path: Path) -> None:
    spec = tmp_path / "demo.yaml"
    spec.write_text(HEAD + "collections:\n" + item(BOOKS) + SURFACE)
    loaded = load_spec(spec)
    assert loaded.diagnostics == () and loaded.value is not None
    source = loaded.value
    assert [(c.collection.name, c.base) for c in source.collections] == [("books", ("collections", 0))]
    assert [(p.prompt.name, p.base) for p in source.prompts] == [("summarize_book", ("prompts", 0))]
    assert [(r.resource.name, r.base) for r in source.resources] == [
        ("guide", ("resources", 0)),
        ("book", ("resources", 1)),
    ]
    assert source.prompts[0].doc.span(source.prompts[0].base).line == 11
    # Not lowered yet: the server compiles with its records tools and nothing more.
    compiled = compile_spec(spec, check_backends=False)
    assert compiled.value is not None, [d.render() for d in compiled.diagnostics]
    assert [r.name for r in compiled.value.collections] == ["books"]


def test_collection_prompt_and_resource_files_of_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "server.yaml").write_text(HEAD)
    (folder / "books.yaml").write_text("lynxc: 1\ncollection:\n" + BOOKS)
    (folder / "guide.yaml").write_text(
        "lynxc: 1\nresource: {name: guide, uri: 'docs://g', description: G., mime_type: text/plain, "
        "text: G.}\n"
    )
    (folder / "ask.yaml").write_text(
        "lynxc: 1\nprompt: {name: ask, description: Ask., messages: [{text: 'Ask {{ x }}.'}]}\n"
    )
    loaded = load_spec(folder)
    assert loaded.diagnostics == () and loaded.value is not None
    assert [(c.collection.name, c.base) for c in loaded.value.collections] == [("books", ("collection",))]
    assert [(p.prompt.name, p.base) for p in loaded.value.prompts] == [("ask", ("prompt",))]
    assert [(r.resource.name, r.base) for r in loaded.value.resources] == [("guide", ("resource",))]


def test_records_under_resources_are_one_renamed_error_each_at_the_entry(tmp_path: Path) -> None:
    spec = tmp_path / "old.yaml"
    guide = "  - {name: guide, uri: 'docs://g', description: G., mime_type: text/plain, text: G.}\n"
    spec.write_text(HEAD + "resources:\n" + guide + item(BOOKS) + item(BOOKS.replace("books", "films")))
    found = compile_spec(spec).diagnostics
    assert [(d.rule_id, d.span.line, d.span.col) for d in found] == [
        ("SPEC_KEY_RENAMED", 5, 5),
        ("SPEC_KEY_RENAMED", 11, 5),
    ]
    assert "declared records are now `collections:`" in found[0].message
    assert "`resources:` now declares MCP resources" in found[0].message
    assert found[0].hint == "rename 'resources' to 'collections'"


@pytest.mark.parametrize("shape", ["key", "fields"])
def test_a_resource_file_of_records_is_one_renamed_error(tmp_path: Path, shape: str) -> None:
    """Either records-only key is enough; the MCP resource model's errors (missing uri, unknown
    key...) are not shown beside it."""
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "server.yaml").write_text(HEAD)
    body = "  name: books\n" + ("  key: isbn\n" if shape == "key" else "  fields: {isbn: {type: string}}\n")
    (folder / "books.yaml").write_text("lynxc: 1\nresource:\n" + body)
    found = compile_spec(folder).diagnostics
    assert [(d.rule_id, d.span.file, d.span.line, d.span.col) for d in found] == [
        ("SPEC_KEY_RENAMED", f"{folder}/books.yaml".removeprefix(f"{Path.cwd()}/"), 2, 1)
    ]
    assert found[0].hint == "rename 'resource' to 'collection'"


def test_the_command_line_names_the_renamed_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "old.yaml"
    spec.write_text(HEAD + "resources:\n" + item(BOOKS))
    with pytest.raises(SystemExit) as done:
        main(["build", "--check", str(spec)])
    assert done.value.code == 1
    err = capsys.readouterr().err
    assert "old.yaml:4:5: error SPEC_KEY_RENAMED: declared records are now `collections:`" in err
    assert "Traceback" not in err


def test_diff_reads_a_side_written_before_the_rename(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The base of the pull request that renames still declares `resources:`/`resource:`:
    `lynxc diff` reads it as collections, so the review shows no change, not an error."""
    old = tmp_path / "foxnose-knowledge"
    shutil.copytree(FOXNOSE, old, ignore=shutil.ignore_patterns("data"))
    for item in ("peps.yaml", "sections.yaml", "countries.yaml"):
        path = old / item
        path.write_text(path.read_text().replace("\ncollection:\n", "\nresource:\n"))
    assert compile_spec(old, check_backends=False).value is None  # refused when built
    with pytest.raises(SystemExit) as done:
        main(["diff", str(old), str(FOXNOSE)])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == "foxnose-knowledge: no changes"


def test_every_records_rule_id_is_renamed_and_an_old_one_names_the_new() -> None:
    # No records rule keeps its old ID, and every old ID maps to a current COLLECTION_ rule; the
    # spec-level errors are in tests/compiler/malformed/rule-id-renamed.yaml.
    assert RENAMED_RULES
    for old, new in RENAMED_RULES.items():
        assert old.startswith("RESOURCE_") and new == "COLLECTION_" + old.removeprefix("RESOURCE_")
        assert new in RULES and old not in RULES
        assert RULES[new].category in ("collection", "diff", "auth")
    found = renamed_rule("RESOURCE_KEY_CHANGED", Span("server.yaml", 3, 5))
    assert (
        found is not None
        and found.rule_id == "RULE_ID_RENAMED"
        and "'COLLECTION_KEY_CHANGED'" in found.message
    )
    assert renamed_rule("RESOURCE_NOT_A_RULE", Span("server.yaml")) is None


def test_an_old_id_that_is_a_current_rule_again_is_that_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    # MCP resources have RESOURCE_* rules of their own: an ID that names one is not a rename.
    monkeypatch.setitem(RULES, "RESOURCE_CHANGED", Rule("RESOURCE_CHANGED", "warning", "diff", "MCP's own."))
    assert renamed_rule("RESOURCE_CHANGED", Span("server.yaml")) is None


@pytest.mark.parametrize("verb", ["load", "embed"])
def test_load_and_embed_name_a_collection(verb: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([verb, "--help"])
    shown = capsys.readouterr().out
    assert "COLLECTION" in shown and "RESOURCE" not in shown and "resource" not in shown

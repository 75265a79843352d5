"""agent-tool through the generated server and a real MCP client: every mode and format
(golden text), cursor paging, caps at their boundaries, encodings, ignore rules, binaries,
an explosive regex, bad patterns and paths outside the roots.

Regenerate goldens with `LYNXC_UPDATE_GOLDENS=1 pytest tests/e2e/test_agent_tool.py`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import stdio_client

pytestmark = pytest.mark.anyio
GOLDEN = Path(__file__).parent / "agent_tool_goldens"
UPDATE = os.environ.get("LYNXC_UPDATE_GOLDENS") == "1"


def write(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    write(
        root / "src" / "main.rs",
        "use std::io;\n\nfn main() {\n    helper_test();\n}\n\nfn helper_test() {}\n",
    )
    write(root / "src" / "lib.py", "def parse():\n    return 1  # TODO tidy\n\n\ndef render():\n    pass\n")
    write(root / "docs" / "notes.md", "# Notes\nTODO: write docs\nfn in prose\n")
    write(root / "crlf.txt", b"foo\r\nbar foo\r\nfoo\r\n")
    write(root / "utf16le.txt", "\ufeffhello fn world\n".encode("utf-16-le"))
    write(root / "utf16be.txt", "\ufeffbig fn endian\n".encode("utf-16-be"))
    write(root / "latin1.txt", "caf\xe9 fn\n".encode("latin-1"))
    write(root / "image.bin", b"\x89PNG\x00\x00fn binary\n")
    write(root / "node_modules" / "dep" / "index.js", "function fn() {}\n")
    write(root / "build" / "out.rs", "fn generated() {}\n")
    write(root / ".hidden" / "secret.rs", "fn hidden() {}\n")
    write(root / "ignored_by_git" / "x.rs", "fn ignored() {}\n")
    write(root / ".gitignore", "ignored_by_git/\n")
    write(root / "long.txt", "x" * 50 + "needle" + "y" * 5000 + "\n")
    return root


async def grep(client, **arguments) -> tuple[str, dict]:
    result = await client.call_tool("grep", arguments)
    assert not result.is_error, result.content[0].text
    return result.content[0].text, result.structured_content


CASES = {
    "content-compact": {"pattern": r"fn \w+"},
    "content-classic": {"pattern": r"fn \w+", "output_format": "classic"},
    "content-context-compact": {"pattern": "TODO", "context": 1},
    "content-context-classic": {"pattern": "TODO", "context": 1, "output_format": "classic"},
    "content-before-after": {"pattern": "helper_test", "before": 2, "after": 0, "output_format": "classic"},
    "files": {"pattern": "fn", "output_mode": "files_with_matches"},
    "files-classic": {"pattern": "fn", "output_mode": "files_with_matches", "output_format": "classic"},
    "count-compact": {"pattern": "fn|def", "output_mode": "count"},
    "count-classic": {"pattern": "fn|def", "output_mode": "count", "output_format": "classic"},
    "glob-filter": {"pattern": "fn", "glob": "*.rs"},
    "not-recursive": {"pattern": "foo", "recursive": False},
    "ignore-case": {"pattern": "todo", "ignore_case": True, "output_mode": "files_with_matches"},
    "hidden-and-ignored": {
        "pattern": "fn",
        "include_hidden": True,
        "include_ignored": True,
        "output_mode": "files_with_matches",
    },
    "absolute-paths": {"pattern": "parse", "relative_paths": False},
    "crlf-anchors": {"pattern": "^foo$"},
    "encodings": {"pattern": "fn (world|endian)|caf"},
    "long-line": {"pattern": "needle", "max_line_chars": 80},
    "no-match": {"pattern": "zzz_nothing"},
}


@pytest.mark.parametrize("case", CASES)
async def test_golden_output(tree: Path, case: str) -> None:
    async with stdio_client("agent-tool", {"roots": [str(tree)]}) as client:
        text, structured = await grep(client, **CASES[case])
    rendered = (
        text.replace(str(tree), "<ROOT>")
        + "\n---\n"
        + json.dumps(
            {k: v for k, v in structured.items() if k != "output"}, indent=1, sort_keys=True
        ).replace(str(tree), "<ROOT>")
        + "\n"
    )
    golden = GOLDEN / f"{case}.txt"
    if UPDATE:
        golden.write_text(rendered)
    assert rendered == golden.read_text()


async def test_rules_hold(tree: Path) -> None:
    async with stdio_client("agent-tool", {"roots": [str(tree)]}) as client:
        _, plain = await grep(client, pattern="fn", output_mode="files_with_matches")
        _, binary = await grep(client, pattern="fn binary")
        _, explicit = await grep(client, pattern="fn binary", path="image.bin")
        _, crlf = await grep(client, pattern="^foo$")
        _, utf16 = await grep(client, pattern="world|endian")
    assert "node_modules/dep/index.js" not in plain["files"] and "build/out.rs" not in plain["files"]
    assert ".hidden/secret.rs" not in plain["files"] and "ignored_by_git/x.rs" not in plain["files"]
    assert binary["matches"] == [] and binary["skipped_binaries"] == 1
    assert explicit["total"] == 1 and explicit["skipped_binaries"] == 0  # a file named in path is searched
    assert [m["line"] for m in crlf["matches"]] == [1, 3]
    assert {m["path"] for m in utf16["matches"]} == {"utf16le.txt", "utf16be.txt"}


async def test_cursor_pages_through_10000_matches_exactly_once(tmp_path: Path) -> None:
    for index in range(100):
        write(
            tmp_path / f"d{index % 7}" / f"f{index:03}.txt", "".join(f"hit {line}\n" for line in range(100))
        )
    seen: list[tuple[str, int]] = []
    cursor = None
    pages = 0
    async with stdio_client("agent-tool", {"roots": [str(tmp_path)]}) as client:
        while True:
            arguments = {"pattern": "hit", "max_results": 999, **({"cursor": cursor} if cursor else {})}
            _, page = await grep(client, **arguments)
            seen += [(m["path"], m["line"]) for m in page["matches"]]
            pages += 1
            cursor = page["next_cursor"]
            assert page["has_more"] == (cursor is not None)
            if cursor is None:
                break
    assert len(seen) == 10_000 and len(set(seen)) == 10_000
    assert seen == sorted(seen)
    assert pages == 11


async def test_caps_and_argument_errors(tree: Path) -> None:
    async with stdio_client("agent-tool", {"roots": [str(tree)]}) as client:
        ok = await client.call_tool("grep", {"pattern": "fn", "context": 1000, "max_results": 100000})
        over_context = await client.call_tool("grep", {"pattern": "fn", "context": 1001})
        over_results = await client.call_tool("grep", {"pattern": "fn", "max_results": 100001})
        over_line = await client.call_tool("grep", {"pattern": "fn", "max_line_chars": 32769})
        over_output = await client.call_tool("grep", {"pattern": "fn", "max_output_chars": 131073})
        cursor_with_context = await client.call_tool("grep", {"pattern": "fn", "cursor": "x", "context": 2})
        alias_clash = await client.call_tool("grep", {"pattern": "fn", "path": "src", "file_path": "docs"})
        forged = await client.call_tool("grep", {"pattern": "fn", "cursor": "bm90IGEgY3Vyc29y"})
    assert not ok.is_error
    assert (
        over_context.is_error
        and "context: Input should be less than or equal to 1000" in over_context.content[0].text
    )
    assert (
        over_results.is_error
        and "max_results: Input should be less than or equal to 100000" in over_results.content[0].text
    )
    assert over_line.is_error and "max_line_chars" in over_line.content[0].text
    assert over_output.is_error and "max_output_chars" in over_output.content[0].text
    assert (
        cursor_with_context.is_error
        and "cannot be combined with context lines" in cursor_with_context.content[0].text
    )
    assert alias_clash.is_error and "file_path: an alias of path" in alias_clash.content[0].text
    assert forged.is_error and "cursor: not a cursor this tool returned" in forged.content[0].text


async def test_output_cap_cuts_at_a_line_and_pages_on(tmp_path: Path) -> None:
    write(tmp_path / "many.txt", "".join(f"match number {i:04}\n" for i in range(300)))
    async with stdio_client("agent-tool", {"roots": [str(tmp_path)]}) as client:
        text, first = await grep(client, pattern="match", max_results=300, max_output_chars=1000)
        _, second = await grep(
            client, pattern="match", max_results=300, max_output_chars=1000, cursor=first["next_cursor"]
        )
    body = text.split("\n[output cut")[0]
    assert len(body) <= 1000 and first["output_truncated"] is True
    assert all(line.startswith(("many.txt", "  ")) for line in body.splitlines())
    assert first["matches"][-1]["line"] + 1 == second["matches"][0]["line"]


async def test_explosive_regex_answers_and_bad_patterns_quote_ripgrep(tmp_path: Path) -> None:
    write(tmp_path / "evil.txt", "a" * 100_000 + "!\n" + "a" * 50 + "\n")
    async with stdio_client("agent-tool", {"roots": [str(tmp_path)]}) as client:
        _, evil = await grep(client, pattern="(a+)+$", max_line_chars=10)
        bad = await client.call_tool("grep", {"pattern": "(unclosed"})
        backref = await client.call_tool("grep", {"pattern": r"(a)\1"})
        bad_glob = await client.call_tool("grep", {"pattern": "a", "glob": "{unclosed"})
    assert [m["line"] for m in evil["matches"]] == [2]  # linear-time engine: only the line ending in a's
    assert (
        bad.is_error
        and "regex parse error" in bad.content[0].text
        and "unclosed group" in bad.content[0].text
    )
    assert backref.is_error and "backreferences are not supported" in backref.content[0].text
    assert bad_glob.is_error and "ripgrep" in bad_glob.content[0].text


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/etc", "is outside the configured roots"),
        ("../outside", "contains '..'"),
        ("link_out", "'link_out' is a symlink; symlinks are never followed"),
        ("link_out/secret.txt", "'link_out' is a symlink"),
        ("src\x00x", "must not contain NUL"),
        ("missing", "'missing' does not exist"),
    ],
)
async def test_paths_outside_the_roots_are_refused(
    tree: Path, tmp_path: Path, path: str, message: str
) -> None:
    outside = tmp_path / "outside"
    write(outside / "secret.txt", "fn SECRET\n")
    (tree / "link_out").symlink_to(outside)
    async with stdio_client("agent-tool", {"roots": [str(tree)]}) as client:
        refused = await client.call_tool("grep", {"pattern": "fn", "path": path})
        everything = await client.call_tool(
            "grep", {"pattern": "SECRET", "include_hidden": True, "include_ignored": True}
        )
    assert refused.is_error and message in refused.content[0].text
    assert everything.structured_content["matches"] == []  # the symlink inside the root is not followed


async def test_glob_and_read(tree: Path) -> None:
    async with stdio_client("agent-tool", {"roots": [str(tree)]}) as client:
        rust = (await client.call_tool("glob", {"pattern": "*.rs"})).structured_content
        capped = (await client.call_tool("glob", {"pattern": "*", "max_results": 2})).structured_content
        utf16 = (await client.call_tool("read", {"path": "utf16be.txt"})).structured_content
        latin = (await client.call_tool("read", {"file_path": str(tree / "latin1.txt")})).structured_content
        part = (
            await client.call_tool("read", {"path": "src/main.rs", "offset": 3, "limit": 2})
        ).structured_content
        binary = await client.call_tool("read", {"path": "image.bin"})
        folder = await client.call_tool("read", {"path": "src"})
        past = await client.call_tool("read", {"path": "crlf.txt", "offset": 10})
    assert rust["files"] == ["src/main.rs"]  # build/, node_modules/, hidden and gitignored skipped
    assert capped["has_more"] is True and len(capped["files"]) == 2
    assert utf16["encoding"] == "utf-16 (BOM)" and "big fn endian" in utf16["output"]
    assert latin["encoding"] == "utf-8 (invalid bytes replaced)" and "caf\ufffd fn" in latin["output"]
    assert (
        part["output"]
        == "     3\tfn main() {\n     4\t    helper_test();\n[lines 5-7 not shown: continue with offset 5]"
    )
    assert part["next_offset"] == 5
    assert binary.is_error and "binary file" in binary.content[0].text
    assert folder.is_error and "is a folder; use glob" in folder.content[0].text
    assert past.is_error and "past the end" in past.content[0].text


async def test_dot_ignore_files_are_respected(tmp_path: Path) -> None:
    write(tmp_path / "keep.txt", "needle kept\n")
    write(tmp_path / "generated" / "skip.txt", "needle skipped\n")
    write(tmp_path / ".ignore", "generated/\n")
    async with stdio_client("agent-tool", {"roots": [str(tmp_path)]}) as client:
        _, default = await grep(client, pattern="needle", output_mode="files_with_matches")
        _, everything = await grep(
            client, pattern="needle", output_mode="files_with_matches", include_ignored=True
        )
    assert default["files"] == ["keep.txt"]
    assert everything["files"] == ["generated/skip.txt", "keep.txt"]

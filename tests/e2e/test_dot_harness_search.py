"""search_project_text through the generated server and a real MCP client (stdio and HTTP)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from tests.conftest import http_server, stdio_client

pytestmark = pytest.mark.anyio


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write(root / "src" / "app.py", "def parse_config():\n    return PARSE\n")
    write(root / "src" / "crlf.txt", b"first Needle\r\nsecond\r\nthird needle\r\n")
    write(root / "src" / "lone_cr.txt", b"alpha\rneedle beta\nlast")
    write(root / "src" / "bom.txt", "\ufeffneedle at start\n".encode())
    write(root / "docs" / "unicode.md", "Straße ÄRGER ärger\ncafe\u0301 and caf\u00e9\n")
    write(root / ".hidden" / "secret.txt", "needle hidden\n")
    write(root / ".env", "needle=dotfile\n")
    for excluded in ("node_modules", "dist", "build", "coverage", ".git"):
        write(root / excluded / "x.txt", "needle excluded\n")
    write(root / "a-b.txt", "needle dash\n")
    write(root / "a" / "z.txt", "needle nested\n")
    return root


async def search(client: Client, **arguments) -> dict:
    result = await client.call_tool("search_project_text", {"workspace": "proj", **arguments})
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def test_literal_case_insensitive_search_sorted_by_path_then_line(project: Path) -> None:
    async with stdio_client(settings={"workspaces": {"proj": str(project)}}) as client:
        out = await search(client, query="NEEDLE")
    found = [(m["path"], m["line"], m["column"]) for m in out["matches"]]
    assert found == [
        ("a-b.txt", 1, 1),
        ("a/z.txt", 1, 1),
        ("src/bom.txt", 1, 1),  # BOM dropped: the match is at column 1
        ("src/crlf.txt", 1, 7),
        ("src/crlf.txt", 3, 7),
        ("src/lone_cr.txt", 1, 7),  # a lone CR stays inside line 1
    ]
    lone_cr = next(m for m in out["matches"] if m["path"] == "src/lone_cr.txt")
    assert lone_cr["excerpt"] == "alpha\rneedle beta"
    crlf = next(m for m in out["matches"] if m["path"] == "src/crlf.txt")
    assert crlf["excerpt"] == "first Needle"  # CRLF ending is not part of the line
    assert out["scanComplete"] is True and out["incompleteReasons"] == []
    assert out["matchedLines"] == 6 and out["matchedFiles"] == 5
    assert out["skippedEntries"]["hidden"] == 2  # .env and .hidden
    assert out["skippedEntries"]["excluded"] == 5
    assert out["excludedDirectoryNames"] == [".git", "node_modules", "dist", "build", "coverage"]
    assert out["sourceTrust"] == "untrusted"
    digest = __import__("hashlib").sha256((project / "src/crlf.txt").read_bytes()).hexdigest()
    assert crlf["sha256"] == digest


async def test_case_sensitive_unicode_without_normalization(project: Path) -> None:
    async with stdio_client(settings={"workspaces": {"proj": str(project)}}) as client:
        folded = await search(client, query="ärger", path="docs")
        exact = await search(client, query="ärger", path="docs", caseSensitive=True)
        composed = await search(client, query="caf\u00e9", path="docs")
    assert folded["matchedLines"] == 1 and folded["matches"][0]["column"] == 8  # ÄRGER matched first
    assert exact["matches"][0]["column"] == 14
    # 'café' composed matches only the composed spelling (column 11), not 'cafe' + U+0301.
    assert [(m["line"], m["column"]) for m in composed["matches"]] == [(2, 11)]


async def test_hidden_and_excluded_roots(project: Path) -> None:
    async with stdio_client(settings={"workspaces": {"proj": str(project)}}) as client:
        hidden = await search(client, query="needle", includeHidden=True)
        excluded_root = await search(client, query="needle", path="node_modules")
        git_root = await search(client, query="needle", path=".git")
    hidden_paths = {m["path"] for m in hidden["matches"]}
    assert {".env", ".hidden/secret.txt"} <= hidden_paths
    assert ".git/x.txt" not in hidden_paths  # .git stays excluded with includeHidden
    assert [m["path"] for m in excluded_root["matches"]] == ["node_modules/x.txt"]
    assert [m["path"] for m in git_root["matches"]] == [".git/x.txt"]


async def test_max_depth(project: Path) -> None:
    async with stdio_client(settings={"workspaces": {"proj": str(project)}}) as client:
        direct = await search(client, query="needle", maxDepth=0)
        one = await search(client, query="needle", maxDepth=1)
    assert [m["path"] for m in direct["matches"]] == ["a-b.txt"]
    assert direct["scanComplete"] is False and direct["incompleteReasons"] == ["maxDepth"]
    assert direct["depthLimitedDirectories"] == 3  # a, docs, src
    assert one["scanComplete"] is True and one["depthLimitedDirectories"] == 0


async def test_single_file_path_and_errors(project: Path) -> None:
    async with stdio_client(settings={"workspaces": {"proj": str(project)}}) as client:
        single = await search(client, query="needle", path="src/crlf.txt")
        unknown = await client.call_tool("search_project_text", {"workspace": "nope", "query": "x"})
        multiline = await client.call_tool("search_project_text", {"workspace": "proj", "query": "a\nb"})
        missing = await client.call_tool("search_project_text", {"workspace": "proj"})
        extra = await client.call_tool(
            "search_project_text", {"workspace": "proj", "query": "x", "regex": True}
        )
    assert single["matchedLines"] == 2 and single["path"] == "src/crlf.txt"
    assert unknown.is_error and "unknown workspace 'nope' (authorized: proj)" in unknown.content[0].text
    assert (
        multiline.is_error and "query" in multiline.content[0].text and "pattern" in multiline.content[0].text
    )
    assert missing.is_error and "query: required parameter is missing" in missing.content[0].text
    assert extra.is_error and "regex: unknown parameter" in extra.content[0].text


async def test_over_http(project: Path) -> None:
    with http_server(settings={"workspaces": {"proj": str(project)}}) as url:
        async with Client(url) as client:
            tools = await client.list_tools()
            out = await search(client, query="parse_config")
    assert [t.name for t in tools.tools] == ["list_project_files", "read_project_text", "search_project_text"]
    assert out["matches"][0]["path"] == "src/app.py"


async def test_tools_list_is_the_generated_tools_json() -> None:
    expected = json.loads((Path(__file__).parents[2] / "generated/dot-harness/tools.json").read_text())
    async with stdio_client() as client:
        listed = await client.list_tools()
    wire = [tool.model_dump(by_alias=True, exclude_none=True) for tool in listed.tools]
    assert wire == expected["tools"]


async def test_progress_notifications(tmp_path: Path) -> None:
    for index in range(60):
        write(tmp_path / f"f{index:03}.txt", "needle\n")
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with stdio_client(settings={"workspaces": {"proj": str(tmp_path)}}) as client:
        result = await client.call_tool(
            "search_project_text", {"workspace": "proj", "query": "needle"}, progress_callback=on_progress
        )
    assert not result.is_error
    assert seen == [(25, 500), (50, 500)]


async def test_an_incomplete_scan_says_what_was_missed_and_what_to_do(tmp_path: Path) -> None:
    """The quick start's first search: binaries skipped and the candidate cap reached. The text a
    client shows says so in words, with counts, and keeps the reason codes for the structure."""
    root = tmp_path / "project"
    write(root / "logo.png", b"\x89PNG\r\n\x1a\n\x00\x00needle")
    write(root / "data.bin", b"needle\x00\x01")
    write(root / "huge.txt", "needle\n" * 200_000)  # over the 1 MiB a file may hold
    for i in range(600):
        write(root / "src" / f"m{i:03}.py", "needle = 1\n")
    async with stdio_client(settings={"workspaces": {"proj": str(root)}}) as client:
        result = await client.call_tool("search_project_text", {"workspace": "proj", "query": "needle"})
        listed = await client.call_tool("list_project_files", {"workspace": "proj", "maxDepth": 0})
    out = result.structured_content
    assert out["incompleteReasons"] == ["invalidText", "fileTooLarge", "candidateLimit"]
    head = result.content[0].text.splitlines()[0]
    assert head.endswith(
        "scan incomplete, so counts are lower bounds: 2 files skipped as not UTF-8 text (binaries, NUL "
        "bytes) [invalidText]; 1 file skipped as larger than one call reads [fileTooLarge]; stopped "
        "after 500 files, the most one call searches (pass a narrower path) [candidateLimit]"
    )
    assert (
        listed.content[0]
        .text.splitlines()[0]
        .endswith("walk incomplete: 1 folder below maxDepth not entered (raise maxDepth) [maxDepth]")
    )

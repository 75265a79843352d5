"""Every cap of the DOT server at its boundary: exactly at it passes, one over is reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import stdio_client

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024


async def search(root: Path, **arguments) -> dict:
    async with stdio_client(settings={"workspaces": {"w": str(root)}}) as client:
        result = await client.call_tool("search_project_text", {"workspace": "w", **arguments})
    assert not result.is_error, result.content[0].text
    return result.structured_content


def files(root: Path, count: int, prefix: str = "f", text: str = "needle\n") -> None:
    root.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        (root / f"{prefix}{index:04}").write_text(text)


@pytest.mark.parametrize(("count", "complete"), [(2000, True), (2001, False)])
async def test_enumerated_children(tmp_path: Path, count: int, complete: bool) -> None:
    files(tmp_path, count, prefix=".h")  # hidden entries count towards the cap but are not candidates
    out = await search(tmp_path, query="needle")
    assert out["scanComplete"] is complete
    assert out["entriesScanned"] == 2000
    assert out["incompleteReasons"] == ([] if complete else ["entryLimit"])


@pytest.mark.parametrize(("count", "complete"), [(500, True), (501, False)])
async def test_candidate_files(tmp_path: Path, count: int, complete: bool) -> None:
    files(tmp_path, count)
    out = await search(tmp_path, query="needle", maxResults=1)
    assert out["filesConsidered"] == 500 and out["filesSearched"] == 500
    assert out["matchedLines"] == 500  # counting continues past maxResults
    assert out["resultsTruncated"] is True and len(out["matches"]) == 1
    assert out["scanComplete"] is complete
    assert out["incompleteReasons"] == ([] if complete else ["candidateLimit"])


@pytest.mark.parametrize(("size", "searched"), [(MIB, True), (MIB + 1, False)])
async def test_file_size(tmp_path: Path, size: int, searched: bool) -> None:
    body = b"needle\n" + b"x" * (size - 8) + b"\n"
    (tmp_path / "big.txt").write_bytes(body)
    assert len(body) == size
    out = await search(tmp_path, query="needle")
    assert out["matchedLines"] == (1 if searched else 0)
    assert out["skippedFiles"]["oversized"] == (0 if searched else 1)
    assert out["bytesRead"] == (size if searched else 0)


@pytest.mark.parametrize(("count", "complete"), [(16, True), (17, False)])
async def test_total_bytes(tmp_path: Path, count: int, complete: bool) -> None:
    body = b"needle\n" + b"y" * (MIB - 8) + b"\n"
    for index in range(count):
        (tmp_path / f"part{index:02}.txt").write_bytes(body)
    out = await search(tmp_path, query="needle")
    assert out["bytesRead"] == 16 * MIB
    assert out["matchedLines"] == 16
    assert out["scanComplete"] is complete
    assert out["incompleteReasons"] == ([] if complete else ["totalBytesLimit"])


@pytest.mark.parametrize(("lines", "truncated"), [(100, False), (101, True)])
async def test_matches(tmp_path: Path, lines: int, truncated: bool) -> None:
    (tmp_path / "many.txt").write_text("needle\n" * lines)
    out = await search(tmp_path, query="needle")
    assert len(out["matches"]) == 100
    assert out["matchedLines"] == lines
    assert out["resultsTruncated"] is truncated
    assert out["scanComplete"] is True  # truncating results is not an incomplete scan


@pytest.mark.parametrize("length", [600, 601, 5000])
async def test_excerpt_keeps_the_first_match_whole(tmp_path: Path, length: int) -> None:
    query = "N" * 40
    line = "a" * (length - 40 - 5) + query + "b" * 5
    (tmp_path / "long.txt").write_text(line + "\n")
    out = await search(tmp_path, query=query, caseSensitive=True)
    match = out["matches"][0]
    assert len(match["excerpt"]) == min(length, 600)
    assert query in match["excerpt"]
    start = match["column"] - 1 - match["excerptStart"]
    assert match["excerpt"][start : start + 40] == query
    assert line[match["excerptStart"] : match["excerptStart"] + len(match["excerpt"])] == match["excerpt"]


async def test_query_as_long_as_an_excerpt(tmp_path: Path) -> None:
    query = "q" * 600
    (tmp_path / "x.txt").write_text("z" * 1000 + query + "z" * 1000 + "\n")
    out = await search(tmp_path, query=query)
    assert out["matches"][0]["excerpt"] == query


async def test_json_output_never_exceeds_64_kib(tmp_path: Path) -> None:
    # 100 matches of 600 characters of 3-byte UTF-8 would be ~180 KB of JSON.
    (tmp_path / "wide.txt").write_text(("needle" + "€" * 594 + "\n") * 150)
    out = await search(tmp_path, query="needle")
    size = len(json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode())
    assert size <= 65536
    assert 0 < len(out["matches"]) < 100
    assert out["resultsTruncated"] is True and out["matchedLines"] == 150
    # Control characters escape to six bytes each in JSON; the cap still holds.
    (tmp_path / "wide.txt").write_text(("needle" + "\x01" * 594 + "\n") * 150)
    out = await search(tmp_path, query="needle")
    assert len(json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode()) <= 65536


async def test_read_project_text_ranges_sha_and_output_cap(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\nthree")
    big = "".join(f"line {index:05} " + "x" * 90 + "\n" for index in range(2000))
    (tmp_path / "big.txt").write_text(big)
    async with stdio_client(settings={"workspaces": {"w": str(tmp_path)}}) as client:
        whole = (
            await client.call_tool("read_project_text", {"workspace": "w", "path": "a.txt"})
        ).structured_content
        middle = await client.call_tool(
            "read_project_text",
            {
                "workspace": "w",
                "path": "a.txt",
                "startLine": 2,
                "endLine": 2,
                "expectedSha256": whole["sha256"],
            },
        )
        stale = await client.call_tool(
            "read_project_text", {"workspace": "w", "path": "a.txt", "expectedSha256": "0" * 64}
        )
        past = await client.call_tool(
            "read_project_text", {"workspace": "w", "path": "a.txt", "startLine": 9}
        )
        first = (
            await client.call_tool("read_project_text", {"workspace": "w", "path": "big.txt"})
        ).structured_content
        rest = (
            await client.call_tool(
                "read_project_text",
                {"workspace": "w", "path": "big.txt", "startLine": first["nextStartLine"]},
            )
        ).structured_content
    assert whole["text"] == "one\r\ntwo\nthree" and whole["totalLines"] == 3
    assert middle.structured_content["text"] == "two\n"
    assert stale.is_error and "has changed (sha256 is now" in stale.content[0].text
    assert "one" not in stale.content[0].text
    assert past.is_error and "past the end" in past.content[0].text
    assert first["truncated"] is True and first["text"].endswith("\n")
    assert len(json.dumps(first, ensure_ascii=False, separators=(",", ":")).encode()) <= 65536
    assert (
        first["text"] + rest["text"][: len(big) - len(first["text"])]
        == big[: len(first["text"]) + len(rest["text"])]
    )
    assert rest["startLine"] == first["endLine"] + 1


async def test_list_project_files(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "m.py").write_text("x = 1\n")
    (tmp_path / "README.md").write_text("hi\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / ".cache").mkdir()
    async with stdio_client(settings={"workspaces": {"w": str(tmp_path)}}) as client:
        full = (await client.call_tool("list_project_files", {"workspace": "w"})).structured_content
        shallow = (
            await client.call_tool("list_project_files", {"workspace": "w", "maxDepth": 0, "maxResults": 1})
        ).structured_content
    assert [(e["path"], e["kind"], e["sizeBytes"]) for e in full["entries"]] == [
        ("README.md", "file", 3),
        ("src", "directory", None),
        ("src/pkg", "directory", None),
        ("src/pkg/m.py", "file", 6),
    ]
    assert full["skippedEntries"]["excluded"] == 1 and full["skippedEntries"]["hidden"] == 1
    assert shallow["entries"] == [{"path": "README.md", "kind": "file", "sizeBytes": 3}]
    assert shallow["truncated"] is True
    assert shallow["incompleteReasons"] == ["maxDepth"]

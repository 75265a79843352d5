"""lynx-mcp end to end: `lynxc index`, then list_sources, search and deep_search over stdio."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from lynxc.runtime.backends.lynx.lease import writer_lock
from tests.conftest import LYNXC, ROOT, settings_args, stdio_client

pytestmark = pytest.mark.anyio

CODE = {
    "engine/camera.py": (
        "class Camera:\n"
        "    def clamp_zoom(self, level):\n"
        '        """Keep the zoom between its limits."""\n'
        "        return max(1, min(level, 8))\n"
    ),
    "engine/net.py": 'def open_socket(host, port):\n    """Connect to a TCP server."""\n    return None\n',
    "engine/Loader.cs": (
        "class ConfigLoader {\n  public Settings ParseConfigFile(string p) { return null; }\n}\n"
    ),
}
DOCS = {
    "guide.md": "# Guide\n\n## Zoom\nThe camera zoom is clamped to a range.\n\n## Network\nSockets use TCP.\n"
}


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("lynx")
    for files, folder in ((CODE, "code"), (DOCS, "docs")):
        for rel, text in files.items():
            (base / folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / folder / rel).write_text(text)
    settings = {
        "sources": [
            {"name": "code", "root": str(base / "code"), "kind": "code"},
            {"name": "docs", "root": str(base / "docs"), "kind": "docs"},
        ],
        "index_dir": str(base / "index"),
        "embedder": "minilm",
    }
    done = subprocess.run(
        [LYNXC, "--project", str(ROOT), "index", "lynx-mcp", *settings_args(settings)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "code: 3 files, 3 (re)indexed" in done.stderr and "docs: 1 files, 1 (re)indexed" in done.stderr
    assert f"code: [{'#' * 30}] 3/3 files, updating the search indices" in done.stderr  # the bar
    return settings


async def call(client, tool: str, **arguments):
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


async def test_list_sources_and_search(settings: dict) -> None:
    code_root = Path(settings["sources"][0]["root"])
    async with stdio_client("lynx-mcp", settings) as client:
        listed = await call(client, "list_sources")
        hits = await call(client, "search", query="keep the camera zoom within limits")
        only_cs = await call(client, "search", query="parse configuration", extensions=[".cs"])
        outline = await call(client, "search", query="tcp connection", source="code", outline=True)
        (code_root / "engine/net.py").write_text("def open_socket(host, port, timeout):\n    return None\n")
        drifted = await call(client, "list_sources")
    by_name = {s["name"]: s for s in listed["sources"]}
    assert by_name["code"]["files_indexed"] == 3 and by_name["code"]["chunks"] >= 4
    assert by_name["code"]["drift"] == {"changed": 0, "added": 0, "removed": 0}
    assert {s["name"]: s["drift"]["changed"] for s in drifted["sources"]} == {"code": 1, "docs": 0}
    top = hits["results"][0]
    assert (top["path"], top["symbol"]) in {
        ("engine/camera.py", "Camera.clamp_zoom"),
        ("guide.md", "Guide > Zoom"),
    }
    assert hits["sources"] == ["code", "docs"] and hits["mode"] == "hybrid"
    assert all(0 <= h["score"] <= 1 for h in hits["results"])
    assert [h["path"] for h in only_cs["results"]] and all(
        h["path"].endswith(".cs") for h in only_cs["results"]
    )
    assert outline["results"][0]["text"] == "def open_socket(host, port):"


async def test_deep_search_passes_or_warns_with_progress(settings: dict) -> None:
    seen = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, message))

    async with stdio_client("lynx-mcp", settings) as client:
        strong = await client.call_tool(
            "deep_search",
            {
                "queries": ["zzz qqq nonsense", "camera zoom limits"],
                "min_score": 0.3,
                "min_results": 1,
                "return_all_variants": True,
            },
            progress_callback=progress,
        )
        weak = await call(
            client, "deep_search", queries=["quantum chromodynamics", "baroque opera"], min_score=0.9
        )
        bad_mode = await client.call_tool("deep_search", {"queries": ["a", "b"], "mode": "dense"})
        too_few = await client.call_tool("deep_search", {"queries": ["only one"]})
        unknown = await client.call_tool("search", {"query": "x", "source": "nope"})
        no_word = await client.call_tool("search", {"query": " ?! "})
        bad_extension = await client.call_tool("search", {"query": "zoom", "extensions": [".py", "*.cs"]})
        bad_glob = await client.call_tool("search", {"query": "zoom", "file_glob": "src/[ab"})
        listed = await call(client, "search", query="tcp connection", source=["code", "docs"], top_k=2)
        blank = await client.call_tool("deep_search", {"queries": ["camera", "  "]})
        empty = await client.call_tool("deep_search", {"queries": ["camera", ""]})
    result = strong.structured_content
    assert result["passed"] is True and result["winning_variant"] == 1
    assert [v["passed"] for v in result["variants"]] == [False, True]
    assert seen[0][1] == "phrasing 1: zzz qqq nonsense" and seen[-1][1] == "done"
    assert weak["passed"] is False and "no phrasing reached" in weak["warning"] and weak["results"]
    assert bad_mode.is_error and "mode override applies to a single source" in bad_mode.content[0].text
    assert too_few.is_error and "queries: List should have at least 2 items" in too_few.content[0].text
    assert unknown.is_error and "source: unknown 'nope' (sources: code, docs)" in unknown.content[0].text
    assert no_word.is_error and "query: must hold a word" in no_word.content[0].text
    assert (
        bad_extension.is_error
        and "extensions.1: '*.cs' is not a file extension" in bad_extension.content[0].text
    )
    assert (
        bad_glob.is_error
        and "file_glob" in bad_glob.content[0].text
        and "never closed" in bad_glob.content[0].text
    )
    assert listed["sources"] == ["code", "docs"] and len(listed["results"]) == 2
    assert blank.is_error and "queries.1: must hold a word (a letter or digit)" in blank.content[0].text
    assert empty.is_error and "queries.1: String should have at least 1 character" in empty.content[0].text


async def test_missing_index_is_a_clear_error(tmp_path: Path) -> None:
    settings = {"sources": [{"name": "code", "root": str(tmp_path)}], "index_dir": str(tmp_path / "none")}
    async with stdio_client("lynx-mcp", settings) as client:
        result = await client.call_tool("search", {"query": "anything"})
    assert result.is_error and "run `lynxc index lynx-mcp` first" in result.content[0].text


async def test_several_servers_serve_one_index_while_lynxc_index_writes(tmp_path: Path) -> None:
    root = tmp_path / "code"
    root.mkdir()
    for i in range(100):
        (root / f"m{i:03}.py").write_text(f"def handler_{i}():\n    return {i}\n")
    settings = {
        "sources": [{"name": "code", "root": str(root)}],
        "index_dir": str(tmp_path / "index"),
        "embedder": "static",
    }
    command = [LYNXC, "--project", str(ROOT), "index", "lynx-mcp", *settings_args(settings)]
    assert subprocess.run(command, capture_output=True).returncode == 0
    for i in range(100, 400):  # the second run indexes these while both servers answer
        (root / f"m{i:03}.py").write_text(f"def handler_{i}():\n    return {i}\n")
    newer = {"query": "handler", "path_contains": "m3"}
    async with stdio_client("lynx-mcp", settings) as first, stdio_client("lynx-mcp", settings) as second:
        writer = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        answers = 0
        while writer.poll() is None or answers < 10:
            for client in (first, second):
                assert len((await call(client, "search", query="handler", top_k=5))["results"]) == 5
                assert len((await call(client, "search", **newer))["results"]) in (0, 10)
                answers += 1
        assert writer.wait() == 0, writer.stderr.read() if writer.stderr else ""
        for client in (first, second):  # the new commit is seen by servers that were already up
            assert len((await call(client, "search", **newer))["results"]) == 10
            assert (await call(client, "list_sources"))["sources"][0]["files_indexed"] == 400
    with writer_lock(settings["index_dir"]):  # as if another run were writing
        busy = subprocess.run(command, capture_output=True, text=True)
    assert busy.returncode == 1 and "another `lynxc index` is writing" in busy.stderr


@pytest.fixture(scope="module")
def stdlib_index(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Real code larger than the candidate pool: the standard library's `email` and `json`
    packages, indexed by `lynxc index` with the fast static embedder."""
    import email
    import json

    base = tmp_path_factory.mktemp("stdlib")
    settings = {
        "sources": [
            {"name": "email", "root": os.path.dirname(email.__file__), "include": ["**/*.py"]},
            {"name": "json", "root": os.path.dirname(json.__file__), "include": ["**/*.py"]},
        ],
        "index_dir": str(base / "index"),
        "embedder": "static",
    }
    command = [LYNXC, "--project", str(ROOT), "index", "lynx-mcp", *settings_args(settings)]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return settings


QUERIES = ["parse an email address", "encode a header with a charset", "decode json text", "quote a string"]


@pytest.mark.parametrize("mode", ["hybrid", "sparse", "dense"])
@pytest.mark.parametrize("fusion", ["rrf", None])
async def test_the_top_does_not_depend_on_top_k_and_scores_descend(
    stdlib_index: dict, mode: str, fusion: str | None
) -> None:
    # keyword_weight 0.5 mixes both rankings (static's own measured weight, 1.0, is BM25 alone)
    chosen = {"fusion": fusion} if fusion else {"keyword_weight": 0.5}
    settings = {**stdlib_index, "mode": mode, **chosen}
    seen: set[str] = set()
    async with stdio_client("lynx-mcp", settings) as client:
        for query in QUERIES:
            small = (await call(client, "search", query=query, top_k=5))["results"]
            ten = (await call(client, "search", query=query))["results"]
            large = (await call(client, "search", query=query, top_k=100))["results"]
            assert len(small) == 5 and len(ten) == 10 and len(large) == 100
            assert large[:10] == ten and ten[:5] == small
            scores = [hit["score"] for hit in large]
            assert scores == sorted(scores, reverse=True) and scores[-1] >= 0 and scores[0] <= 1
            assert all(0 <= hit["similarity"] <= 1 for hit in large)
            if mode == "dense":
                assert all(hit["score"] == hit["similarity"] for hit in large)
            seen |= {hit["source"] for hit in large}
    assert seen == {"email", "json"}  # both sources fused


async def test_deep_search_thresholds_similarity_in_every_mode(stdlib_index: dict) -> None:
    async with stdio_client("lynx-mcp", stdlib_index) as client:
        for mode in ("hybrid", "sparse", "dense"):
            result = await call(
                client,
                "deep_search",
                queries=["parse an email address", "split an address header"],
                source="email",
                mode=mode,
                min_score=0.5,
                min_results=2,
                return_all_variants=True,
            )
            strong = [hit for hit in result["results"] if hit["similarity"] >= 0.5]
            chosen = result["variants"][result["winning_variant"]]
            assert chosen["strong"] == len(strong) and chosen["passed"] == (len(strong) >= 2)
            assert chosen["top_similarity"] == max(hit["similarity"] for hit in result["results"])


async def test_a_server_without_the_files_serves_the_index_with_drift_unknown(
    settings: dict, tmp_path: Path
) -> None:
    """A replica serving a shared index need not have the sources' folders; indexing does."""
    elsewhere = {
        **settings,
        "sources": [{**s, "root": str(tmp_path / "not-here")} for s in settings["sources"]],
    }
    async with stdio_client("lynx-mcp", elsewhere) as client:
        listed = await call(client, "list_sources")
        text = (await client.call_tool("list_sources", {})).content[0].text
        hits = await call(client, "search", query="keep the camera zoom within limits", source="code")
    assert [(s["name"], s["files_indexed"], s["drift"]) for s in listed["sources"]] == [
        ("code", 3, None),
        ("docs", 1, None),
    ]
    assert "drift unknown (its folder is not on this server)" in text
    assert hits["results"][0]["path"] == "engine/camera.py"
    done = subprocess.run(
        [LYNXC, "--project", str(ROOT), "index", "lynx-mcp", *settings_args(elsewhere)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[0] == (
        f"lynxc index: source 'code': root '{tmp_path / 'not-here'}' is not a folder"
    )


async def test_built_in_folder_skips_are_said_and_yield_to_include(tmp_path: Path) -> None:
    """A real package folder named `build` is indexed when `include` names it, and the skip
    list is published: every built-in folder is named in the `sources` setting's description."""
    from lynxc.runtime.backends.vendored import VENDOR_DIRS
    from lynxc.runtime.definition import load_definition

    root = tmp_path / "repo"
    for rel, text in {
        "build/backend.py": "def compile_wheel(project):\n    return project\n",
        "node_modules/left/pad.py": "def pad_left(text):\n    return text\n",
        "src/app.py": "def main():\n    return 0\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    settings = {
        "sources": [
            {"name": "named", "root": str(root), "include": ["build/**", "src/**"]},
            {"name": "default", "root": str(root)},
            {"name": "replaced", "root": str(root), "exclude": ["node_modules/"]},
        ],
        "index_dir": str(tmp_path / "index"),
        "embedder": "static",
    }
    command = [LYNXC, "--project", str(ROOT), "index", "lynx-mcp", *settings_args(settings)]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    async with stdio_client("lynx-mcp", settings) as client:
        listed = await call(client, "list_sources")
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        found = await call(client, "search", query="compile wheel", source="named")
    assert {s["name"]: s["files_indexed"] for s in listed["sources"]} == {
        "named": 2,
        "default": 1,
        "replaced": 2,
    }
    assert found["results"][0]["path"] == "build/backend.py"
    assert "build, dist, target, vendor, node_modules" in tools["list_sources"].description
    described = load_definition(ROOT / "generated/lynx-mcp").settings_schema["sources"]["description"]
    listed_dirs = described.split("build output (", 1)[1].split(")", 1)[0]
    assert sorted(" ".join(listed_dirs.split()).split(", ")) == sorted(VENDOR_DIRS), described


WEB_QUESTION_CORPUS = {
    "a1.py": "import os\n\n\ndef path_is_regular_file(path):\n    return os.path.isfile(path)\n",
    # sharing the question's words, about something else
    "a2.py": (
        "import sys\n\n\ndef check_python_version(minimum):\n"
        '    """Check the running Python is new enough; exit if it is not."""\n'
        "    if sys.version_info < minimum:\n        raise SystemExit('python too old')\n"
    ),
    "a3.py": (
        "def bump_counter(registry, name):\n"
        '    """Python metrics: if the counter exists, add one; check the registry file first."""\n'
        "    registry[name] = registry.get(name, 0) + 1\n"
    ),
    "a4.py": (
        "def tax_due(income):\n"
        '    """Python tax rules: if a second income exists, file a check with the return."""\n'
        "    return income * 0.2\n"
    ),
    # sharing nothing with it
    "b1.py": "def pad_left(text, width):\n    return text.rjust(width)\n",
    "b2.py": "def mean(values):\n    return sum(values) / len(values)\n",
    "b3.py": "def celsius(fahrenheit):\n    return (fahrenheit - 32) * 5 / 9\n",
    "b4.py": "def greet(name):\n    return f'hello {name}'\n",
    "b5.py": "def squares(n):\n    return [i * i for i in range(n)]\n",
}


async def test_hybrid_keeps_the_dense_answer_to_a_web_style_question(tmp_path: Path) -> None:
    """ "python check if file exists": BM25 favours the files sharing those words and the dense
    ranking has the answer first; hybrid (the default) keeps it first instead of letting BM25's
    matches of common words outvote it (bench/retrieval_quality.py's web-questions set)."""
    for name, text in WEB_QUESTION_CORPUS.items():
        (tmp_path / "code" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "code" / name).write_text(text)
    settings = {
        "sources": [{"name": "code", "root": str(tmp_path / "code")}],
        "index_dir": str(tmp_path / "index"),
    }
    command = [LYNXC, "--project", str(ROOT), "index", "lynx-mcp", *settings_args(settings)]
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    firsts = {}
    for mode in ("sparse", "dense", "hybrid"):
        async with stdio_client("lynx-mcp", {**settings, "mode": mode}) as client:
            found = await call(client, "search", query="python check if file exists")
        firsts[mode] = found["results"][0]["path"]
    assert firsts["sparse"] != "a1.py" and firsts["dense"] == "a1.py"  # the case this is about
    assert firsts["hybrid"] == "a1.py"

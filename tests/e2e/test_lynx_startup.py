"""lynx-mcp refuses to index with an embedder that does not match its index, and a server says
so on every call and on stderr, instead of failing the first search with a raw LanceDB error.
The server checks after it answers: opening the index (LanceDB and pyarrow load, seconds) never
stands between a client and `initialize` or `tools/list`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lynxc.runtime.backends.retrieval.embedders import DIMENSIONS, get_embedder
from tests.conftest import LYNXC, ROOT, settings_args


def lynxc(*args: str, settings: dict) -> subprocess.CompletedProcess[str]:
    command = [LYNXC, "--project", str(ROOT), *args, *settings_args(settings)]
    return subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def static_index(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """An index built with the `static` embedder (64-d vectors)."""
    base = tmp_path_factory.mktemp("lynx-startup")
    (base / "code").mkdir()
    (base / "code/net.py").write_text('def open_socket(host, port):\n    """Connect."""\n    return None\n')
    settings = {
        "sources": [{"name": "code", "root": str(base / "code")}],
        "index_dir": str(base / "index"),
        "embedder": "static",
    }
    done = lynxc("index", "lynx-mcp", settings=settings)
    assert done.returncode == 0, done.stderr
    return settings


def mismatch(index: str) -> str:
    return (
        f"setting 'embedder': the index {index!r} holds 64-d vectors for source 'code' "
        "(built with 'static'), but embedder 'minilm' makes 384-d vectors: use --set embedder=static, "
        f"or delete {index!r} and run `lynxc index` again with this embedder"
    )


def test_indexing_with_another_embedder_is_refused(static_index: dict) -> None:
    done = lynxc("index", "lynx-mcp", settings={**static_index, "embedder": "minilm"})
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"lynxc index: {mismatch(static_index['index_dir'])}\n"


class RawSession:
    """`lynxc serve` over stdio, spoken to line by line, so a test can look at the process
    between two answers."""

    def __init__(self, settings: dict) -> None:
        command = [LYNXC, "--project", str(ROOT), "serve", "lynx-mcp", *settings_args(settings)]
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        self.process = subprocess.Popen(command, text=True, **pipes)
        self.next_id = 0

    def send(self, method: str, params: dict | None = None, notify: bool = False) -> Any:
        assert self.process.stdin and self.process.stdout
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params or {}}
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        if notify:
            return None
        for line in self.process.stdout:
            answer = json.loads(line)
            if answer.get("id") == self.next_id:
                return answer["result"]
        raise AssertionError(f"the server closed without answering {method}: {self.close()}")

    def initialize(self) -> Any:
        client = {"name": "test", "version": "0"}
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
        return self.send("initialize", params)

    def mapped(self) -> str:
        """The files the server process has mapped (its shared libraries among them)."""
        return Path(f"/proc/{self.process.pid}/maps").read_text()

    def close(self) -> str:
        """Ends the session; the server's stderr."""
        assert self.process.stdin and self.process.stderr
        self.process.stdin.close()
        self.process.wait(timeout=60)
        return self.process.stderr.read()


def test_the_server_answers_before_it_opens_the_index(static_index: dict) -> None:
    session = RawSession(static_index)
    try:
        assert session.initialize()["serverInfo"]["name"] == "lynx-mcp"
        assert "lancedb" not in session.mapped() and "pyarrow" not in session.mapped()
        session.send("notifications/initialized", notify=True)
        assert len(session.send("tools/list")["tools"]) == 3
        listed = session.send("tools/call", {"name": "list_sources", "arguments": {}})
    finally:
        stderr = session.close()
    assert not listed["isError"] and listed["structuredContent"]["sources"][0]["files_indexed"] == 1
    assert stderr == ""


def test_a_server_with_another_embedder_answers_and_says_why_it_cannot_search(static_index: dict) -> None:
    session = RawSession({**static_index, "embedder": "minilm"})
    try:
        session.initialize()
        session.send("notifications/initialized", notify=True)
        tools = session.send("tools/list")["tools"]
        calls = [
            session.send("tools/call", {"name": name, "arguments": arguments})
            for name, arguments in [("search", {"query": "open a socket"}), ("list_sources", {})]
        ]
    finally:
        stderr = session.close()
    problem = mismatch(static_index["index_dir"])
    assert len(tools) == 3
    for name, answer in zip(["search", "list_sources"], calls, strict=True):
        refused = f"tool {name!r} cannot run with this server's settings (fix them and restart the server)"
        assert answer["isError"] and answer["content"][0]["text"] == f"{refused}: {problem}"
    assert stderr == f"lynxc serve: {problem}\n"  # once, when the check found it


def test_an_index_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "index").write_text("")
    done = lynxc("serve", "lynx-mcp", settings={"index_dir": str(tmp_path / "index")})
    assert done.returncode == 2
    assert f"lynxc serve: setting 'index_dir': '{tmp_path}/index' is a file, not a folder" in done.stderr


@pytest.mark.parametrize("name", sorted(DIMENSIONS))
def test_declared_dimensions_are_the_models(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert get_embedder(name).dimension == DIMENSIONS[name]

"""`lynxc dev` end to end: a real `lynxc dev` process on a project made by `lynxc init`, real MCP
clients over HTTP and stdio, real edits of the files on disk. Every wait polls with a generous
deadline; nothing asserts a time."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import mcp_types as types
import psutil
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.conftest import LYNXC, free_port

pytestmark = pytest.mark.anyio
DEADLINE = 60.0

# The init backend, plus two calls for the tests: "progress" reports progress once; "wait" writes
# .flags/started, then blocks until .flags/release exists, so that a swap can happen mid-call.
SLOW_BACKEND = """
import asyncio
from pathlib import Path

FLAGS = Path(__file__).parent / ".flags"  # a hidden folder: lynxc dev does not watch it


@backend(params={"text"}, caps={"max_text_chars"})
async def count_words(params, ctx):
    text = params.text
    if text == "progress":
        await ctx.report_progress(1, 2, "half way")
    if text == "wait":
        FLAGS.mkdir(exist_ok=True)
        (FLAGS / "started").write_text("")
        while not (FLAGS / "release").exists():
            await asyncio.sleep(0.05)
    return {"words": WORDS, "lines": len(text.splitlines()), "characters": len(text)}
"""


class DevProcess:
    """A `lynxc dev` subprocess whose stderr is collected as it arrives."""

    def __init__(self, project: Path, *args: str):
        self.project = project
        self.process = subprocess.Popen(
            [LYNXC, "--project", str(project), "dev", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, fragment: str, count: int = 1) -> None:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            if self.text.count(fragment) >= count:
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"lynxc dev never printed {fragment!r} ({count}x):\n{self.text}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    subprocess.run([LYNXC, "--project", str(tmp_path), "init", "demo"], check=True, capture_output=True)
    backend = tmp_path / "demo_backend.py"
    head = backend.read_text().split("@backend(")[0]
    backend.write_text(head + SLOW_BACKEND.replace("WORDS", "len(text.split())"))
    return tmp_path


@contextmanager
def dev_http(project: Path) -> Iterator[tuple[DevProcess, str]]:
    port = free_port()
    dev = DevProcess(project, "--port", str(port))
    try:
        dev.wait_for("watching for changes")
        dev.wait_for("demo: serving build 1")
        yield dev, f"http://127.0.0.1:{port}/mcp"
    finally:
        dev.stop()


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


class Notifications:
    def __init__(self) -> None:
        self.tools_changed = 0

    async def __call__(self, message: object) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            message.root if hasattr(message, "root") else message, types.ToolListChangedNotification
        ):
            self.tools_changed += 1

    async def wait(self, count: int) -> None:
        with anyio.fail_after(DEADLINE):
            while self.tools_changed < count:
                await anyio.sleep(0.05)


async def description(client: Client) -> str:
    tool = (await client.list_tools()).tools[0]
    return tool.description or ""


def add_tool(spec: Path, name: str) -> None:
    """A second tool: a copy of the first under another name, bound to the same backend."""
    text = spec.read_text()
    head, tools = text.split("tools:\n", 1)
    copy = tools.replace("name: count_words", f"name: {name}").replace("title: Count words", f"title: {name}")
    spec.write_text(f"{head}tools:\n{tools}{copy}")


async def wait_until(check: Callable[[], bool]) -> None:
    with anyio.fail_after(DEADLINE):
        while not check():
            await anyio.sleep(0.05)


async def test_http_session_survives_edits_and_broken_builds(project: Path) -> None:
    spec = project / "specs" / "demo.yaml"
    heard = Notifications()
    with dev_http(project) as (dev, url):
        async with Client(url, mode="legacy", message_handler=heard) as client:
            assert client.server_capabilities.tools.list_changed is True
            assert "Count the words" in await description(client)

            edit(spec, "Count the words,", "Count all the words,")
            await heard.wait(1)
            assert "Count all the words" in await description(client)

            edit(
                project / "demo_backend.py", '"words": len(text.split())', '"words": 100 * len(text.split())'
            )
            dev.wait_for("demo: serving build 3")
            result = await client.call_tool("count_words", {"text": "a b"})
            assert result.structured_content == {"words": 200, "lines": 1, "characters": 3}

            add_tool(spec, "count_words_again")
            await heard.wait(2)
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert names == ["count_words", "count_words_again"]
            result = await client.call_tool("count_words_again", {"text": "a"})
            assert result.structured_content == {"words": 100, "lines": 1, "characters": 1}

            edit(spec, "type: string", "type: strnig")
            dev.wait_for("build failed; still serving the last good build of demo")
            assert re.search(r"specs/demo\.yaml:\d+:\d+: error PARAM_TYPE_UNKNOWN", dev.text), dev.text
            result = await client.call_tool("count_words", {"text": "a b"})
            assert result.structured_content == {"words": 200, "lines": 1, "characters": 3}

            edit(spec, "type: strnig", "type: string")
            dev.wait_for("demo: serving build 5")
            # The same session, never re-initialized, still answers.
            assert "Count all the words" in await description(client)


async def test_http_modern_client_hears_through_listen(project: Path) -> None:
    spec = project / "specs" / "demo.yaml"
    with dev_http(project) as (_dev, url):
        async with Client(url) as client:
            assert "Count the words" in await description(client)
            async with client.listen(tools_list_changed=True) as subscription:
                edit(spec, "Count the words,", "Count each of the words,")
                with anyio.fail_after(DEADLINE):
                    async for _event in subscription:
                        break
            assert "Count each of the words" in await description(client)


async def test_a_call_in_flight_during_a_swap_completes(project: Path) -> None:
    spec = project / "specs" / "demo.yaml"
    results: list[types.CallToolResult] = []
    with dev_http(project) as (dev, url):
        async with Client(url, mode="legacy") as client:

            async def slow_call() -> None:
                results.append(await client.call_tool("count_words", {"text": "wait"}))

            async with anyio.create_task_group() as group:
                group.start_soon(slow_call)
                await wait_until((project / ".flags" / "started").exists)
                edit(spec, "Count the words,", "Count all the words,")
                dev.wait_for("demo: serving build 2")
                assert "Count all the words" in await description(client)
                (project / ".flags" / "release").write_text("")
            (result,) = results
            assert not result.is_error
            assert result.structured_content == {"words": 1, "lines": 1, "characters": 4}


async def test_stdio_process_stays_while_children_swap(project: Path) -> None:
    spec = project / "specs" / "demo.yaml"
    heard = Notifications()
    log = project.parent / "dev-stderr.txt"
    params = StdioServerParameters(
        command=LYNXC,
        args=["--project", str(project), "dev", "demo", "--transport", "stdio"],
        env=dict(os.environ),
    )
    with log.open("w") as errlog:
        from mcp.client.stdio import stdio_client

        async with Client(
            stdio_client(params, errlog=errlog), mode="legacy", message_handler=heard
        ) as client:
            (dev,) = [p for p in psutil.Process().children() if "dev" in p.cmdline()]
            serve_before = {p.pid for p in dev.children(recursive=True)}
            assert "Count the words" in await description(client)

            edit(spec, "Count the words,", "Count all the words,")
            await heard.wait(1)
            assert "Count all the words" in await description(client)
            result = await client.call_tool("count_words", {"text": "a b c"})
            assert result.structured_content == {"words": 3, "lines": 1, "characters": 5}
            assert dev.is_running()  # the very process the client started
            # The first build's server was retired (its process ended); dev itself stays.
            await wait_until(lambda: bool(serve_before - {p.pid for p in dev.children(recursive=True)}))
        dev.wait(timeout=30)
    assert "demo: serving build 2" in log.read_text()


async def test_progress_and_protocol_errors_pass_through(project: Path) -> None:
    reports: list[tuple[float, float | None, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        reports.append((value, total, message))

    with dev_http(project) as (_dev, url):
        async with Client(url, mode="legacy") as client:
            result = await client.call_tool("count_words", {"text": "progress"}, progress_callback=progress)
            assert result.structured_content == {"words": 1, "lines": 1, "characters": 8}
            assert reports == [(1, 2, "half way")]
            with pytest.raises(MCPError) as raised:
                await client.call_tool("count_wrods", {"text": "a"})
            assert raised.value.code == types.INVALID_PARAMS


async def test_several_servers_share_one_port(project: Path) -> None:
    subprocess.run([LYNXC, "--project", str(project), "init", "other"], check=True, capture_output=True)
    port = free_port()
    dev = DevProcess(project, "--port", str(port))
    try:
        dev.wait_for("watching for changes")
        assert "/mcp)" not in dev.text  # no bare /mcp when it would be ambiguous
        for name in ("demo", "other"):
            async with Client(f"http://127.0.0.1:{port}/{name}/mcp", mode="legacy") as client:
                assert client.server_info is not None and client.server_info.name == name
                assert [tool.name for tool in (await client.list_tools()).tools] == ["count_words"]
        edit(project / "specs" / "other.yaml", "Count the words,", "Count all the words,")
        dev.wait_for("other: serving build 2")
        # A spec's edit rebuilds and restarts its own server only.
        assert re.search(r"changed: specs/other\.yaml; rebuilding other$", dev.text, re.MULTILINE), dev.text
        assert "demo: serving build 2" not in dev.text
    finally:
        dev.stop()


def test_killed_dev_leaves_no_orphans(project: Path) -> None:
    """Even kill -9, which no handler sees: each child's stdin closes and it ends."""
    with dev_http(project) as (dev, _url):
        children = psutil.Process(dev.process.pid).children(recursive=True)
        assert children
        dev.process.kill()
        dev.process.wait()
    _gone, alive = psutil.wait_procs(children, timeout=30)
    assert not alive, [p.cmdline() for p in alive]


def test_stop_leaves_no_orphans(project: Path) -> None:
    with dev_http(project) as (dev, _url):
        process = psutil.Process(dev.process.pid)
        children = process.children(recursive=True)
        assert children, "a served build runs as a child process"
        dev.stop()
        assert dev.process.returncode == 0, dev.text
    _gone, alive = psutil.wait_procs(children, timeout=30)
    assert not alive, [p.cmdline() for p in alive]


def test_usage_errors_are_one_line(project: Path) -> None:
    done = subprocess.run(
        [LYNXC, "--project", str(project), "dev", "nope"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.strip() == f"lynxc dev: no spec for server 'nope' in {project / 'specs'} (specs: demo)"


def test_help_names_the_options() -> None:
    done = subprocess.run([LYNXC, "dev", "--help"], capture_output=True, text=True, timeout=60, check=True)
    for option in ("SERVER", "--transport", "--host", "--port", "--set"):
        assert option in done.stdout


def test_a_busy_port_is_one_line(project: Path) -> None:
    import socket

    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        done = subprocess.run(
            [LYNXC, "--project", str(project), "dev", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 1
    assert done.stderr.startswith(f"lynxc dev: cannot listen on 127.0.0.1:{port}: "), done.stderr
    assert "Traceback" not in done.stderr


if sys.platform == "win32":  # pragma: no cover - signals and /proc are POSIX
    pytestmark = pytest.mark.skip

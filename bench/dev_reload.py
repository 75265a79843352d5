"""From saving a spec to the new tools/list reaching a connected client: `lynxc dev` (over HTTP
and over stdio, the client stays connected and hears tools/list_changed) against the old loop
(`lynxc build`, then start `lynxc serve` again and connect a new client until it lists the new
tools). Each edit changes the tool's description; median and p90 over the edits, side by side.

    python bench/dev_reload.py [--edits N] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from smoke import parse_args_with_smoke

LYNXC = str(Path(sys.executable).with_name("lynxc"))
DEADLINE = 120.0
# Between two saves in the dev loop; lynxc dev warms its next processes in this time (0.5 s after
# a swap). Not timed.
PAUSE = 1.0


def _edit(spec: Path, number: int) -> str:
    """Rewrite the description's purpose; returns the text the new tools/list must show."""
    marker = f"edit number {number}"
    lines = spec.read_text().splitlines(keepends=True)
    for index, line in enumerate(lines):
        if line.lstrip().startswith("purpose:"):
            indent = line[: len(line) - len(line.lstrip())]
            lines[index] = f"{indent}purpose: Count the words, lines and characters of a text ({marker}).\n"
    spec.write_text("".join(lines))
    return marker


async def _description(client: Client) -> str:
    return (await client.list_tools()).tools[0].description or ""


class _Heard:
    def __init__(self) -> None:
        self.count = 0

    async def __call__(self, message: object) -> None:
        if isinstance(message, types.ServerNotification) and isinstance(
            getattr(message, "root", message), types.ToolListChangedNotification
        ):
            self.count += 1


async def _dev_loop(client: Client, heard: _Heard, spec: Path, edits: int) -> list[float]:
    times = []
    for number in range(edits):
        await anyio.sleep(PAUSE)  # a person reads the answer before the next save
        before = heard.count
        started = time.perf_counter()
        marker = _edit(spec, number)
        with anyio.fail_after(DEADLINE):
            while True:  # the client acts on the notification: a fresh tools/list
                while heard.count == before:
                    await anyio.sleep(0.005)
                if marker in await _description(client):
                    break
                before = heard.count
        times.append(time.perf_counter() - started)
    return times


@asynccontextmanager
async def _dev_http(project: Path, heard: _Heard) -> AsyncIterator[Client]:
    port = _free_port()
    log = open(project.parent / "dev-http.log", "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [LYNXC, "--project", str(project), "dev", "--port", str(port)], stderr=log, stdout=subprocess.DEVNULL
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        with anyio.fail_after(DEADLINE):
            while "serving build 1" not in (project.parent / "dev-http.log").read_text():
                await anyio.sleep(0.05)
        async with Client(url, mode="legacy", message_handler=heard) as client:
            yield client
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@asynccontextmanager
async def _dev_stdio(project: Path, heard: _Heard) -> AsyncIterator[Client]:
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=LYNXC,
        args=["--project", str(project), "dev", "demo", "--transport", "stdio"],
        env=dict(os.environ),
    )
    with open(project.parent / "dev-stdio.log", "w") as log:
        async with Client(stdio_client(params, errlog=log), mode="legacy", message_handler=heard) as client:
            yield client


async def _old_loop_stdio(project: Path, spec: Path, edits: int) -> list[float]:
    """Build, then the client starts `lynxc serve` again (as an MCP client's stdio entry does)."""
    times = []
    params = StdioServerParameters(
        command=LYNXC, args=["--project", str(project), "serve", "demo"], env=dict(os.environ)
    )
    for number in range(100, 100 + edits):
        started = time.perf_counter()
        marker = _edit(spec, number)
        subprocess.run([LYNXC, "--project", str(project), "build"], check=True, capture_output=True)
        async with Client(params, mode="legacy") as client:
            assert marker in await _description(client)
        times.append(time.perf_counter() - started)
    return times


async def _old_loop_http(project: Path, spec: Path, edits: int) -> list[float]:
    """Build, restart `lynxc serve --transport http`, reconnect until the new tools are listed."""
    times = []
    for number in range(200, 200 + edits):
        started = time.perf_counter()
        marker = _edit(spec, number)
        subprocess.run([LYNXC, "--project", str(project), "build"], check=True, capture_output=True)
        port = _free_port()
        serve = [
            LYNXC,
            "--project",
            str(project),
            "serve",
            "demo",
            "--transport",
            "http",
            "--port",
            str(port),
        ]
        process = subprocess.Popen(serve, stderr=subprocess.DEVNULL)
        try:
            with anyio.fail_after(DEADLINE):
                while True:
                    try:
                        async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy") as client:
                            assert marker in await _description(client)
                            break
                    except Exception:  # not listening yet
                        await anyio.sleep(0.02)
            times.append(time.perf_counter() - started)
        finally:
            process.terminate()
            process.wait(timeout=30)
    return times


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _row(name: str, times: list[float], reference: list[float] | None) -> str:
    median = statistics.median(times)
    p90 = sorted(times)[max(0, round(0.9 * len(times)) - 1)]
    ratio = f"old/dev {statistics.median(reference) / median:4.1f}x" if reference else ""
    return f"{name:<44} {median * 1000:8.0f} ms {p90 * 1000:8.0f} ms   {ratio}"


async def _measure(edits: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder) / "project"
        project.mkdir()
        subprocess.run([LYNXC, "--project", str(project), "init", "demo"], check=True, capture_output=True)
        subprocess.run([LYNXC, "--project", str(project), "build"], check=True, capture_output=True)
        spec = project / "specs" / "demo.yaml"
        old = {
            "HTTP": await _old_loop_http(project, spec, edits),
            "stdio": await _old_loop_stdio(project, spec, edits),
        }
        dev: dict[str, list[float]] = {}
        for transport, open_client in (("HTTP", _dev_http), ("stdio", _dev_stdio)):
            heard = _Heard()
            async with open_client(project, heard) as client:
                await _description(client)
                dev[transport] = await _dev_loop(client, heard, spec, edits)
    print(f"save -> new tools/list at the client, {edits} edits of a tool description (lynxc init project)")
    print(f"{'':<44} {'median':>11} {'p90':>11}")
    for transport in ("HTTP", "stdio"):
        print(_row(f"{transport}: old loop (build, restart serve, reconnect)", old[transport], None))
        print(_row(f"{transport}: lynxc dev (client stays connected)", dev[transport], old[transport]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=8, help="edits per loop (default 8)")
    args = parse_args_with_smoke(parser, edits=2)
    anyio.run(_measure, args.edits)


if __name__ == "__main__":
    main()

"""Shared helpers: run generated servers as real processes and talk to them with `mcp.Client`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.fixtures import parallel

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"  # third-party test data, with its licences (see its README)
LYNXC = str(Path(sys.executable).with_name("lynxc"))


def pytest_configure(config: pytest.Config) -> None:
    parallel.register(config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    parallel.assign_groups(config, items)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def lynxc_command(*args: str) -> list[str]:
    return [LYNXC, "--project", str(ROOT), *args]


def settings_args(settings: dict[str, object]) -> list[str]:
    args = []
    for name, value in settings.items():
        args += ["--set", f"{name}={json.dumps(value)}"]
    return args


@asynccontextmanager
async def stdio_client(
    server: str = "dot-harness", settings: dict[str, object] | None = None, project: Path = ROOT
) -> AsyncIterator[Client]:
    command = [LYNXC, "--project", str(project), "serve", server, *settings_args(settings or {})]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params) as client:
        yield client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def http_process(
    server: str = "dot-harness",
    settings: dict[str, object] | None = None,
    host: str = "127.0.0.1",
    options: tuple[str, ...] = (),
) -> Iterator[tuple[int, subprocess.Popen]]:
    """A `lynxc serve --transport http` process, once it listens; yields its port and the
    process, and stops it afterwards."""
    port = free_port()
    command = lynxc_command("serve", server, "--transport", "http", "--host", host, "--port", str(port))
    process = subprocess.Popen(
        command + list(options) + settings_args(settings or {}), stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"server exited: {process.stderr.read()}")
            try:
                socket.create_connection((host, port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError("server did not start listening within 30 s")
        yield port, process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


@contextmanager
def http_server(
    server: str = "dot-harness", settings: dict[str, object] | None = None, host: str = "127.0.0.1"
) -> Iterator[str]:
    """A `lynxc serve --transport http` process; yields its MCP URL."""
    with http_process(server, settings, host) as (port, _):
        yield f"http://{host}:{port}/mcp"

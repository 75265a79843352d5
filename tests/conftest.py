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

# With PYTHONDONTWRITEBYTECODE set (as on the machines the suite's time is measured on), pytest
# rewrote and compiled every test module anew in each xdist worker: 7.6 s of CPU per worker
# instead of 3.1 s, the run's first 27 s instead of 13 on two cores. The variable keeps bytecode
# out of the source tree; so does a prefix folder in the user's own cache folder (not the shared
# temporary folder: another user could plant bytecode there), where this process (and each
# worker) now keeps it. A prefix chosen by the user (PYTHONPYCACHEPREFIX) is theirs; subprocesses
# (servers, `lynxc`) keep the environment as it is. A folder that cannot be written only costs
# the time again.
if sys.dont_write_bytecode and sys.pycache_prefix is None:
    CACHE_HOME = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    sys.pycache_prefix = os.path.join(CACHE_HOME, "lynxc-tests", "pycache")
    sys.dont_write_bytecode = False

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

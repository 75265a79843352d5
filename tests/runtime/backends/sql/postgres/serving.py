"""Serving a test-written Postgres server: a `lynxc serve --transport http` process of a project
folder, and waits on pg_stat_activity."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from tests.conftest import LYNXC, free_port

WAIT_SECONDS = 15.0


@contextmanager
def http_serving(
    project: Path, name: str, settings: dict[str, object]
) -> Iterator[tuple[str, subprocess.Popen]]:
    """The server's MCP URL and process, once it listens; stopped afterwards."""
    port = free_port()
    command = [LYNXC, "--project", str(project), "serve", name, "--transport", "http", "--port", str(port)]
    for key, value in settings.items():
        command += ["--set", f"{key}={json.dumps(value)}"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"server exited: {process.stderr.read() if process.stderr else ''}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("server did not listen within 30 s") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def sessions(dsn: str, server: str, running: str | None = None) -> list[tuple]:
    """(pid, state, query) of the server's sessions (its application_name) on the database;
    with `running`, only those running a statement that contains that text."""
    sql = "SELECT pid, state, query FROM pg_stat_activity WHERE application_name = %s"
    params: list[object] = [f"lynxc {server}"]
    if running is not None:
        sql += " AND state = 'active' AND query LIKE %s"
        params.append(f"%{running}%")
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(sql, params).fetchall()


def wait_until(condition: Callable[[], bool], seconds: float = WAIT_SECONDS) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()

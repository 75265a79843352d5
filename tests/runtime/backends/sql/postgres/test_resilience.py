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
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import psycopg
import pytest
from mcp import Client

from lynxc.compiler.lower.sql.postgres.ephemeral import UNPRIVILEGED
from lynxc.runtime.backends.sql.postgres import login
from lynxc.runtime.backends.sql.postgres.catalog import PgCatalog
from lynxc.runtime.backends.sql.postgres.login import check_login
from tests.conftest import LYNXC
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
LOGIN_CATALOG = PgCatalog(
    dsn_setting=DSN_SETTING,
    writable=False,
    shape="",
    timeout_setting="sql_timeout_seconds",
    pool_size_setting="postgres_pool_size",
    tools={},
)


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


def login_role(server: PostgresServer) -> None:
    """The role lynxc_app, its password PASSWORD-right, which pg_hba.conf makes log in with a
    password (the fixture's other roles are trusted)."""
    hba = server.data_dir / "pg_hba.conf"
    with server.connect(autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'lynxc_app'").fetchone() is not None:
            return
        conn.execute(f"CREATE ROLE lynxc_app LOGIN PASSWORD '{PASSWORD}-right'")
        conn.execute(f"GRANT {SUPERUSER} TO lynxc_app")
        stat = hba.stat()
        hba.write_text("host all lynxc_app 127.0.0.1/32 scram-sha-256\n" + hba.read_text())
        os.chown(hba, stat.st_uid, stat.st_gid)
        conn.execute("SELECT pg_reload_conf()")


def as_app(dsn: str, password: str) -> str:
    return dsn.replace(f"{SUPERUSER}@", f"lynxc_app:{password}@")


def test_a_wrong_password_is_one_line_at_start_up(own_postgres: PostgresServer, tmp_path: Path) -> None:
    """No client, no call: the server logs in before serving, says why the database refused in
    one line naming the setting, and exits like a server given a bad setting."""
    dsn = database_with_schema(own_postgres)
    project = project_for(tmp_path, "pg-login", dsn)
    login_role(own_postgres)
    wrong = as_app(dsn, PASSWORD)
    command = [LYNXC, "--project", str(project), "serve", "pg-login", "--set", f"{DSN_SETTING}={wrong}"]
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "", done
    assert PASSWORD not in done.stderr
    assert done.stderr.splitlines() == [
        f"lynxc serve: database refused the login of setting 'database_url' ({as_app(dsn, '***')}): "
        'password authentication failed for user "lynxc_app"'
    ], done.stderr


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda dsn: dsn.replace(f"{SUPERUSER}@", "no_such_role@"), 'role "no_such_role" does not exist'),
        (lambda dsn: dsn.rpartition("/")[0] + "/no_such_db", 'database "no_such_db" does not exist'),
        (
            lambda dsn: as_app(dsn, "").replace("lynxc_app:@", "lynxc_app@"),
            "fe_sendauth: no password supplied",
        ),
    ],
    ids=["role", "database", "no-password"],
)
def test_each_refused_login_is_a_start_up_problem(
    own_postgres: PostgresServer, change: Callable[[str], str], reason: str
) -> None:
    login_role(own_postgres)
    notes: list[str] = []
    problems = check_login(
        LOGIN_CATALOG, {DSN_SETTING: change(own_postgres.dsn("postgres"))}, "t", notes.append
    )
    assert notes == [] and len(problems) == 1, (problems, notes)
    assert problems[0].startswith("database refused the login of setting 'database_url' (postgresql://")
    assert problems[0].endswith(f"): {reason}"), problems


def test_an_unreadable_dsn_is_a_start_up_problem_that_quotes_no_password() -> None:
    notes: list[str] = []
    url = "postgresql://app:pass word@127.0.0.1/db"
    problems = check_login(LOGIN_CATALOG, {DSN_SETTING: url}, "t", notes.append)
    assert notes == [] and len(problems) == 1 and "pass word" not in problems[0], problems
    assert problems[0].startswith("setting 'database_url' is not a PostgreSQL URL or DSN: "), problems


def test_a_database_that_does_not_answer_delays_serving_only_boundedly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A listener that never answers (a host dropping packets): the check gives up after its
    bound and the server serves; the bound here is shortened for the test's sake."""
    monkeypatch.setattr(login, "LOGIN_CHECK_SECONDS", 0.2)
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        notes: list[str] = []
        problems = check_login(
            LOGIN_CATALOG,
            {DSN_SETTING: f"postgresql://app:{PASSWORD}@127.0.0.1:{port}/db"},
            "t",
            notes.append,
        )
    assert problems == [] and len(notes) == 1, (problems, notes)
    assert "setting 'database_url' did not answer a login within 0.2 s; serving anyway" in notes[0]


async def test_a_password_changed_under_a_running_server_heals(
    own_postgres: PostgresServer, tmp_path: Path
) -> None:
    """Mid-serve, a refused login is a tool error (the process cannot be stopped under its
    clients) and heals once the database takes the password again, without a restart."""
    dsn = database_with_schema(own_postgres)
    project = project_for(tmp_path, "pg-rotate", dsn)
    login_role(own_postgres)
    right = as_app(dsn, f"{PASSWORD}-right")
    with http_serving(project, "pg-rotate", {DSN_SETTING: right}) as (url, process):
        before = await call(url, "item", {"id": 1})
        with own_postgres.connect(autocommit=True) as conn:
            conn.execute("ALTER ROLE lynxc_app PASSWORD 'rotated-elsewhere'")
            conn.execute(  # its pooled sessions end: the next call logs in again
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
                ["lynxc pg-rotate"],
            )
        try:
            refused = [await call(url, "item", {"id": 1}) for _ in range(2)]
        finally:
            with own_postgres.connect(autocommit=True) as conn:
                conn.execute(f"ALTER ROLE lynxc_app PASSWORD '{PASSWORD}-right'")
        healed = await call(url, "item", {"id": 1})
        process.terminate()
        stderr = process.stderr.read() if process.stderr else ""
    assert before == healed == (False, {"id": "1", "name": "lamp", "price": "12.50"})
    for failed, message in refused:
        assert failed and message == (
            "database refused the login of setting 'database_url': "
            'password authentication failed for user "lynxc_app"'
        ), message
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
        with http_serving(project, "pg-restart", {DSN_SETTING: dsn}) as (late_url, late):
            for served_url in (url, late_url):
                failed, message = await call(served_url, "item", {"id": 2})
                assert failed and message.startswith("database unreachable: "), message
            restarted = _start(own_postgres)
            try:
                answers = [await call(served_url, "item", {"id": 2}) for served_url in (url, late_url)]
            finally:
                _stop(restarted.pid)
                restarted.wait()
            late.terminate()
            late_stderr = late.stderr.read() if late.stderr else ""
    assert answers == [(False, {"id": "2", "name": "desk", "price": "99.00"})] * 2
    # the late server said once, at start-up, that it serves without its database
    noted = [line for line in late_stderr.splitlines() if "at start-up" in line]
    assert (
        len(noted) == 1 and "lynxc serve: the database of setting 'database_url' is unreachable" in noted[0]
    )
    assert noted[0].endswith('serving anyway: its tools answer "database unreachable" until it is back')


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

"""client_logging: what a request's log channel sends (redacted, bounded, at most so many per
request), what a session's level keeps (bounded too), and a real backend's timeout at warning
(run_sql on real DuckDB). The wire (setLevel, the 2026-07-28 opt-in, stdio and HTTP) is
tests/e2e/test_logging.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest

from lynxc.runtime.backends.sql import connection
from lynxc.runtime.backends.sql.tools import run_sql
from lynxc.runtime.client_logging import (
    LEVELS,
    MAX_MESSAGE_CHARS,
    MAX_MESSAGES_PER_REQUEST,
    ClientLog,
    SessionLevels,
)
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

from .backends.sql.sqldata import FakeServer, catalog_text, column, context, tool, write_data

Sent = list[tuple[str, Any, str | None]]


def channel(allowed: tuple[str, ...] = LEVELS) -> tuple[ClientLog, Sent]:
    sent: Sent = []

    async def send(level: str, data: Any, name: str | None) -> None:
        sent.append((level, data, name))

    return ClientLog(send, frozenset(allowed), "a_tool"), sent


def test_messages_are_redacted_and_bounded() -> None:
    log, sent = channel()

    async def main() -> None:
        await log.log("info", "connecting to postgresql://app:hunter2@db/prod")
        await log.log(
            "debug", "x" * (MAX_MESSAGE_CHARS + 10), dsn="host=db password=hunter2", n=3, nested={"a": [1]}
        )

    anyio.run(main)
    assert sent[0] == ("info", "connecting to postgresql://app:***@db/prod", "a_tool")
    level, data, _ = sent[1]
    assert level == "debug" and len(data["message"]) == MAX_MESSAGE_CHARS + 3
    assert data["dsn"] == "host=db password=***" and data["n"] == 3 and data["nested"] == {"a": [1]}


def test_levels_not_asked_for_are_dropped_and_a_request_sends_a_bounded_number() -> None:
    log, sent = channel(("warning", "error"))

    async def main() -> None:
        await log.log("info", "not asked for")
        for n in range(MAX_MESSAGES_PER_REQUEST + 50):
            await log.log("error", f"error {n}")

    anyio.run(main)
    assert len(sent) == MAX_MESSAGES_PER_REQUEST + 1
    assert sent[-1][0] == "warning" and "dropped" in sent[-1][1]
    assert not log.wants("error")


def test_an_unknown_level_is_a_clear_error() -> None:
    log, _ = channel()
    with pytest.raises(ValueError, match="log level 'verbose' is not one of debug, info"):
        anyio.run(log.log, "verbose", "hello")


def test_a_client_gone_away_does_not_fail_the_call() -> None:
    async def send(level: str, data: Any, name: str | None) -> None:
        raise anyio.BrokenResourceError

    anyio.run(ClientLog(send, frozenset(LEVELS)).log, "info", "to no one")


def test_session_levels_are_per_session_and_bounded() -> None:
    levels = SessionLevels(limit=2)

    def http(session: str | None) -> Any:
        headers = {"mcp-session-id": session} if session else {}
        return SimpleNamespace(request=SimpleNamespace(headers=headers))

    async def main() -> None:
        for session, level in (("a", "debug"), ("b", "error"), ("c", "warning")):
            await levels.set_level(http(session), types.SetLevelRequestParams(level=level))
        await levels.set_level(http(None), types.SetLevelRequestParams(level="debug"))

    anyio.run(main)
    assert levels.level(http("a")) == "info"  # forgotten: the oldest of three, over the limit of 2
    assert (levels.level(http("b")), levels.level(http("c"))) == ("error", "warning")
    assert levels.level(http(None)) == "info"  # stateless HTTP: no session to remember a level for


def test_a_sql_timeout_is_logged_at_warning(tmp_path: Path) -> None:
    slow = "SELECT count(*) AS n FROM range(100000000000) a, range(1000) b WHERE a.range + b.range = $x"
    tools = {"slow": tool(slow, [column("n", "BIGINT")], {"x": "BIGINT"})}
    server = FakeServer(tmp_path, catalog_text(tools, database={"setting": "db_file", "writable": False}))
    settings = {**write_data(tmp_path), "sql_timeout_seconds": 0.3}
    log, sent = channel()
    ctx: ToolContext = dataclasses.replace(context(server, "slow", settings), client_log=log)
    try:
        with pytest.raises(ToolError, match=r"ran longer than 0\.3 s"):
            anyio.run(run_sql, {"x": 7}, ctx)
    finally:
        connection.close_databases()
    [(level, data, name)] = sent
    assert level == "warning" and name == "a_tool"
    assert data["message"] == "SQL statement of 'slow' stopped at the 0.3 s timeout"
    assert data["statement"] == slow and data["timeout_setting"] == "sql_timeout_seconds"


def test_the_levels_are_the_sdks_in_its_order() -> None:
    from typing import get_args

    assert get_args(types.LoggingLevel) == LEVELS

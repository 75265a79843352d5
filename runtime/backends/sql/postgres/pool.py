"""One pool of Postgres connections per served server, opened on its first call.

A psycopg_pool.AsyncConnectionPool, `max_size` from the implied setting `postgres_pool_size`
(default 10), no connection kept when idle (min_size 0: a server nobody calls holds no session).
Each new connection is configured once (`configure`): the session settings values are read
back in (DateStyle ISO, IntervalStyle iso_8601, TimeZone UTC, extra_float_digits 3,
bytea_output hex), `idle_in_transaction_session_timeout` (a client that stalls mid-transaction
releases its locks) and `client_connection_check_interval` (a backend whose client died, a
server killed mid-call, notices it during the query and ends rather than running on). Its
`application_name` names lynxc and the server, so a DBA can tell its sessions apart. Every
checkout runs the pool's `check`, so a connection the database dropped (pg_terminate_backend, a
restart) is replaced instead of failing a call: a connection idle for a while gets an empty
round trip; one back in the pool for less than CHECK_IDLE_SECONDS only a look at its socket
without waiting (a backend that ended wrote its FATAL message and closed, so the socket reads),
which saves a round trip per call when calls follow each other.

When the database is unreachable, a call does not wait out its timeout on a pool that keeps
retrying: the pool records each failed connection attempt, and the next call tries one direct
connection first; if that fails too, it answers "database unreachable: ..." at once; once it
succeeds, the pool is replaced by a fresh one (the old one may sit in a long back-off), and the
drift check runs again, since the database may have been migrated while it was down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import select
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from lynxc.runtime.errors import ToolError
from lynxc.runtime.redact import RedactingFilter, redact

from .catalog import DEFAULT_POOL_SIZE, PgCatalog
from .failures import login_refusal, unreachable
from .session import SESSION_SETTINGS

IDLE_IN_TRANSACTION_MS = 60_000
CLIENT_CHECK_MS = 1_000
CONNECT_TIMEOUT_SECONDS = 5
CHECK_IDLE_SECONDS = 2.0  # idle longer than this: an empty round trip before use
APPLICATION_NAME_LIMIT = 63  # Postgres truncates longer names (NAMEDATALEN - 1)
logger = logging.getLogger("lynxc serve")


@dataclass
class _Failures:
    """The last failed connection attempt of a pool (None once one succeeds)."""

    last: BaseException | None = None
    reported: bool = False  # a refused login is logged once per process, not per retry
    # Set while the last attempt failed: a call waiting for a connection stops waiting then.
    event: asyncio.Event = field(default_factory=asyncio.Event)

    def failed(self, err: BaseException) -> None:
        self.last = err
        self.event.set()

    def succeeded(self) -> None:
        self.last = None
        self.event.clear()


@dataclass
class ServerPool:
    catalog: PgCatalog
    dsn: str
    size: int
    application_name: str
    failures: _Failures = field(default_factory=_Failures)
    pool: Any = None  # psycopg_pool.AsyncConnectionPool
    # Per tool: why it cannot run on this database (drift.py); None until checked.
    problems: dict[str, str] | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def open(self) -> None:
        self.pool = _new_pool(self)
        await self.pool.open(wait=False)

    @asynccontextmanager
    async def connection(self, seconds: float) -> AsyncIterator[Any]:
        """A checked connection, waiting at most `seconds` for one to be free."""
        if self.failures.last is not None:
            await self._recover()
        pool = self.pool
        conn = await self._checkout(pool, seconds)
        try:
            yield conn
        finally:
            conn.returned_at = time.monotonic()
            await pool.putconn(conn)

    async def _checkout(self, pool: Any, seconds: float) -> Any:
        """A connection of `pool`; a failed connection attempt while waiting ends the wait at
        once (the pool would retry until the timeout, the caller learns nothing meanwhile)."""
        from psycopg_pool import PoolTimeout

        failures = self.failures
        getting = asyncio.ensure_future(pool.getconn(timeout=seconds))
        failing = asyncio.ensure_future(failures.event.wait())
        handed = False
        try:
            await asyncio.wait({getting, failing}, return_when=asyncio.FIRST_COMPLETED)
            if getting.done() and not getting.cancelled() and getting.exception() is None:
                handed = True
                return getting.result()
        finally:
            failing.cancel()
            if not getting.done():
                getting.cancel()
                with contextlib.suppress(BaseException):
                    await getting
            if not handed and getting.done() and not getting.cancelled() and getting.exception() is None:
                await pool.putconn(getting.result())  # got one just as the wait ended
        if failures.last is not None:
            raise self._unreachable(failures.last)
        if isinstance(getting.exception(), PoolTimeout):
            raise ToolError(
                f"no database connection was free within {seconds:g} s: all {self.size} are busy "
                f"(setting {self.catalog.pool_size_setting!r})"
            )
        raise getting.exception()  # type: ignore[misc]

    async def drift_problems(self, conn: Any) -> dict[str, str]:
        """Each tool's drift, checked once per pool on its first connection."""
        if self.problems is None:
            async with self._lock:
                if self.problems is None:
                    from .drift import check_tools

                    self.problems = await check_tools(conn, self.catalog)
                    for problem in self.problems.values():
                        logger.error("%s", problem)
        return self.problems

    async def _recover(self) -> None:
        """After failed attempts: one direct connection says whether the database is back."""
        import psycopg

        async with self._lock:
            if self.failures.last is None:
                return  # another call found it back already
            try:
                probe = await psycopg.AsyncConnection.connect(self.dsn, **_connect_kwargs(self))
            except psycopg.Error as err:
                self.failures.failed(err)
                raise self._unreachable(err) from None
            await probe.close()
            old, self.failures = self.pool, _Failures(reported=self.failures.reported)
            self.problems = None
            await self.open()
            asyncio.get_running_loop().create_task(old.close(timeout=1))

    def _unreachable(self, err: BaseException) -> ToolError:
        reason = login_refusal(err)
        if reason is not None:
            return ToolError(f"database refused the login of setting {self.catalog.dsn_setting!r}: {reason}")
        return unreachable(err)

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.close()


def _connect_kwargs(pool: ServerPool) -> dict[str, Any]:
    return {
        "autocommit": True,  # each call opens its own transaction (run.py), READ ONLY
        "application_name": pool.application_name,
        "connect_timeout": CONNECT_TIMEOUT_SECONDS,
        "client_encoding": "UTF8",
    }


def _new_pool(server_pool: ServerPool) -> Any:
    import psycopg
    from psycopg_pool import AsyncConnectionPool

    failures = server_pool.failures
    catalog = server_pool.catalog

    class RecordingConnection(psycopg.AsyncConnection):
        """Records the pool's connection attempts (the pool itself only retries and logs)."""

        returned_at = 0.0  # time.monotonic() when last put back in the pool (_check)

        @classmethod
        async def connect(cls, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
            try:
                conn = await super().connect(*args, **kwargs)
            except psycopg.Error as err:
                failures.failed(err)
                reason = login_refusal(err)
                if reason is not None and not failures.reported:
                    failures.reported = True  # one line, not one per retry
                    logger.error(
                        "database refused the login of setting %r (%s): %s",
                        catalog.dsn_setting,
                        redact(server_pool.dsn),
                        reason,
                    )
                raise
            failures.succeeded()
            return conn

    return AsyncConnectionPool(
        server_pool.dsn,
        min_size=0,
        max_size=server_pool.size,
        open=False,
        kwargs=_connect_kwargs(server_pool),
        connection_class=RecordingConnection,
        configure=_configure,
        check=_check,
        name=server_pool.application_name,
        reconnect_timeout=60,
    )


async def _check(conn: Any) -> None:
    """Raise if `conn` is not usable (the pool then drops it and hands out another)."""
    from psycopg import pq
    from psycopg_pool import AsyncConnectionPool

    recent = time.monotonic() - getattr(conn, "returned_at", 0.0) < CHECK_IDLE_SECONDS
    if recent and conn.pgconn.status == pq.ConnStatus.OK and not _readable(conn.pgconn):
        return
    await AsyncConnectionPool.check_connection(conn)


def _readable(pgconn: Any) -> bool:
    """Whether an idle connection's socket has something to read: a backend's last words."""
    try:
        ready, _, _ = select.select([pgconn.socket], [], [], 0)
    except Exception:
        return True  # the full check will say what is wrong
    return bool(ready)


async def _configure(conn: Any) -> None:
    settings = {
        **SESSION_SETTINGS,
        "idle_in_transaction_session_timeout": str(IDLE_IN_TRANSACTION_MS),
        "client_connection_check_interval": str(CLIENT_CHECK_MS),
    }
    calls = ", ".join("set_config(%s, %s, false)" for _ in settings)
    await conn.execute(f"SELECT {calls}", [item for pair in settings.items() for item in pair])


# --- one pool per server, settings and event loop ------------------------------------------------

_pools: dict[tuple, ServerPool] = {}


def pool_size(catalog: PgCatalog, settings: Mapping[str, Any]) -> int:
    value = settings.get(catalog.pool_size_setting, DEFAULT_POOL_SIZE)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolError(f"setting {catalog.pool_size_setting!r}: {value!r} is not a positive integer")
    return value


def dsn(catalog: PgCatalog, settings: Mapping[str, Any]) -> str:
    value = settings.get(catalog.dsn_setting)
    if not isinstance(value, str) or not value.strip():
        raise ToolError(f"setting {catalog.dsn_setting!r} is not set: give the database's URL or DSN")
    return value


async def pool_for(server: Any, catalog: PgCatalog, settings: Mapping[str, Any]) -> ServerPool:
    """The pool of `server` for these settings, created and opened (without waiting for a
    connection) on first use."""
    _install_log_redaction()
    url, size = dsn(catalog, settings), pool_size(catalog, settings)
    loop = asyncio.get_running_loop()
    key = (str(getattr(server, "folder", id(server))), id(catalog), url, size, id(loop))
    found = _pools.get(key)
    if found is None or found.catalog is not catalog:
        name = f"lynxc {getattr(server, 'name', 'server')}"[:APPLICATION_NAME_LIMIT]
        found = _pools[key] = ServerPool(catalog=catalog, dsn=url, size=size, application_name=name)
        await found.open()
    return found


async def close_pools() -> None:
    """Close every pool of the running loop (tests; a served process just exits)."""
    loop_id = id(asyncio.get_running_loop())
    for key in [key for key in _pools if key[-1] == loop_id]:
        await _pools.pop(key).close()


_redaction_installed = False


def _install_log_redaction() -> None:
    """psycopg's own log lines (a pool's failed attempts) quote what the driver said: redacted,
    and the pool's per-retry warnings left out (the pool logs its own one line above)."""
    global _redaction_installed
    if _redaction_installed:
        return
    _redaction_installed = True
    for name in ("psycopg", "psycopg.pool"):
        logging.getLogger(name).addFilter(RedactingFilter())
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)

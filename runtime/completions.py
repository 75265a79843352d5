"""`completion/complete` (issue 31): suggestions for a prompt's argument (ref/prompt) or a
resource template's variable (ref/resource, by its uriTemplate), from the build's
completions.json.

A source is a fixed list (`values`), the distinct values of a collection's field (the records
backend's frame, honouring the collection's `bind`: a caller sees only their own records'
values), a SQL statement over the server's data (bound parameters: `$value` and the other
arguments of `context.arguments`) or a function. Answers hold at most 100 values with `total`
and `hasMore` set honestly; a source that fails or takes longer than COMPLETION_SECONDS gives an
empty list and a logged error, never a dead request.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import math
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from .context import ToolContext
from .prompt_templates import MAX_ARGUMENT_BYTES, MAX_SQL_VALUES, MAX_VALUES
from .prompt_templates import sql_statement as sql_statement  # where tests find it

logger = logging.getLogger("lynxc.runtime")

MAX_VALUE_BYTES = MAX_ARGUMENT_BYTES  # what the user typed, and each context argument
COMPLETION_SECONDS = 2.0
PREPARE_SECONDS = 60.0  # opening a collection's frame or the SQL database, once per server process
RECORDS_COMPLETION = "lynxc.runtime.backends.records.completion"  # imported by name, like backends
SQL_CONNECTION = "lynxc.runtime.backends.sql.connection"
SQLITE_DATABASE = "lynxc.runtime.backends.sql.sqlite.database"


class CompletionHost:
    def __init__(
        self,
        document: Mapping[str, Any],
        prompt_arguments: Mapping[str, Sequence[str]],
        definition: Any,
        settings: Mapping[str, Any],
        *,
        seconds: float = COMPLETION_SECONDS,
    ):
        self._prompts = document.get("prompts", {})
        self._resources = document.get("resources", {})
        self._prompt_arguments = prompt_arguments  # every prompt and its arguments, completed or not
        self.definition = definition
        self.settings = settings
        self.seconds = seconds
        self._preparing: dict[tuple[Any, ...], asyncio.Future[Any]] = {}

    async def complete(
        self, ctx: Any, params: types.CompleteRequestParams, caller: Any = None, client_log: Any = None
    ) -> types.CompleteResult:
        ref, argument = params.ref, params.argument
        if len(argument.value.encode("utf-8", "surrogatepass")) > MAX_VALUE_BYTES:
            raise MCPError(types.INVALID_PARAMS, f"argument.value is over {MAX_VALUE_BYTES} bytes")
        given = dict(params.context.arguments or {}) if params.context is not None else {}
        if any(len(str(v).encode("utf-8", "surrogatepass")) > MAX_VALUE_BYTES for v in given.values()):
            raise MCPError(types.INVALID_PARAMS, f"a context argument is over {MAX_VALUE_BYTES} bytes")
        if isinstance(ref, types.PromptReference):
            declared = self._prompt_arguments.get(ref.name)
            if declared is None:
                raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {ref.name!r}", {"prompt": ref.name})
            if argument.name not in declared:
                raise MCPError(
                    types.INVALID_PARAMS,
                    f"prompt {ref.name!r} has no argument {argument.name!r}",
                    {"argument": argument.name},
                )
            source = self._prompts.get(ref.name, {}).get(argument.name)
            where = f"argument {argument.name!r} of prompt {ref.name!r}"
        else:
            source = self._resources.get(ref.uri, {}).get(argument.name)
            where = f"variable {argument.name!r} of {ref.uri}"
        if source is None:
            return _answer([], 0, False)
        context = ToolContext(
            tool="completion/complete",
            caps={},
            settings=self.settings,
            server=self.definition,
            caller=caller,
            **({"client_log": client_log} if client_log is not None else {}),
        )
        values, total, more = await self._run(source, argument.value, given, context, where)
        return _answer(values, total, more)

    async def _run(
        self, source: Mapping[str, Any], value: str, given: dict[str, str], context: ToolContext, where: str
    ) -> tuple[list[str], int | None, bool]:
        if "values" in source:
            prefix = value.casefold()
            found = [v for v in source["values"] if v.casefold().startswith(prefix)]
            return found[:MAX_VALUES], len(found), len(found) > MAX_VALUES
        try:
            found = await self._read(source, value, given, context)
        except TimeoutError:
            logger.error("completion of %s took over %s s and was stopped", where, self.seconds)
            await context.log("error", f"completion of {where} took over {self.seconds} s and was stopped")
            return [], 0, False
        except Exception as err:
            logger.error("completion of %s failed: %s\n%s", where, err, traceback.format_exc())
            await context.log("error", f"completion of {where} failed: {type(err).__name__}: {err}")
            return [], 0, False
        texts = list(dict.fromkeys(_text(v) for v in found if v is not None))
        if "function" in source:  # the function gave all it has
            return texts[:MAX_VALUES], len(texts), len(texts) > MAX_VALUES
        more = len(texts) > MAX_VALUES
        return texts[:MAX_VALUES], None if more else len(texts), more

    async def _read(
        self, source: Mapping[str, Any], value: str, given: dict[str, str], context: ToolContext
    ) -> list[Any]:
        """The source's values. Opening the data a source reads (a collection's frame, the SQL
        database) is bounded by PREPARE_SECONDS and goes on when a request stops waiting, so the
        next one finds it open; the lookup itself is bounded by `self.seconds`."""
        if "collection" in source:
            records = importlib.import_module(RECORDS_COMPLETION)
            key = ("collection", source["collection"], source["field"], _caller_key(context.caller))
            prepared = await self._prepared(
                key, lambda: records.prepare(context, source["collection"], source["field"])
            )
            if prepared is None:
                return []
            with anyio.fail_after(self.seconds):
                return await records.field_values(context, prepared, value, MAX_SQL_VALUES)
        if "sql" in source and source.get("engine") == "sqlite":
            sqlite = importlib.import_module(SQLITE_DATABASE)
            server = self.definition

            async def open_sqlite() -> Any:
                return await context.run_sync(
                    sqlite.sqlite_database_for, server, server.sql_catalog(), self.settings
                )

            database = await self._prepared(("sqlite",), open_sqlite)
            params = {name: value if name == "value" else given.get(name, "") for name in source["params"]}
            with anyio.fail_after(self.seconds):
                return await context.run_sync(
                    _sqlite_rows, database, source["statement"], params, self.seconds
                )
        if "sql" in source:
            engine = importlib.import_module(SQL_CONNECTION)
            server = self.definition

            async def open_database() -> Any:
                return await context.run_sync(
                    engine.database_for, server, server.sql_catalog(), self.settings
                )

            database = await self._prepared(("sql",), open_database)
            params = {name: value if name == "value" else given.get(name, "") for name in source["params"]}
            with anyio.fail_after(self.seconds):
                return await _run_sql(context, engine, database, source["statement"], params)
        module_name, _, attr = source["function"].partition(":")
        fn = getattr(importlib.import_module(module_name), attr)
        with anyio.fail_after(self.seconds):
            found = await fn(value, given)
        if not isinstance(found, list | tuple):
            raise TypeError(f"{source['function']} returned {type(found).__name__}, not a list of strings")
        return list(found)

    async def _prepared(self, key: tuple[Any, ...], open_: Callable[[], Awaitable[Any]]) -> Any:
        """What `open_` opens (the backends keep what they opened: a frame per table version,
        a database per server); one opening per key at a time, shielded, so a request that
        stops waiting leaves it to finish for the next."""
        task = self._preparing.get(key)
        if task is None:
            task = self._preparing[key] = asyncio.ensure_future(open_())
            task.add_done_callback(lambda done: self._forget(key, done))
        return await asyncio.wait_for(asyncio.shield(task), PREPARE_SECONDS)

    def _forget(self, key: tuple[Any, ...], done: asyncio.Future[Any]) -> None:
        self._preparing.pop(key, None)
        if not done.cancelled() and done.exception() is not None:  # retrieved: logged by whoever waits
            logger.debug("opening completion data failed: %s", done.exception())


async def _run_sql(
    context: ToolContext, engine: Any, database: Any, statement: str, params: dict[str, str]
) -> list[Any]:
    """Through the SQL backend's engine code: the server's sandboxed DuckDB, one interruptible
    cursor; a completion stopped by the time limit interrupts its statement."""
    call = engine.Call(database)
    try:
        rows = await context.run_sync(call.run, lambda cursor: cursor.execute(statement, params).fetchall())
    except BaseException:
        call.stop()
        raise
    return [row[0] for row in rows]


def _sqlite_rows(database: Any, statement: str, params: dict[str, str], seconds: float) -> list[Any]:
    """A SQLite source's values, on one pooled connection (read-only, the tools' authorizer),
    stopped by SQLite's progress handler once `seconds` have passed."""
    deadline = time.monotonic() + seconds
    with database.connection() as pooled:
        pooled.connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
        pooled.access.reset()
        rows = pooled.connection.execute(statement, params).fetchall()
    return [row[0] for row in rows]


def _caller_key(caller: Any) -> Any:
    """A caller's identity, for what is prepared per caller (a bound collection's visibility)."""
    return None if caller is None else repr(caller)


def _text(value: Any) -> str:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else str(value)


def _answer(values: list[str], total: int | None, more: bool) -> types.CompleteResult:
    return types.CompleteResult(completion=types.Completion(values=values, total=total, has_more=more))

"""Does each tool still fit the served database? Checked on a pool's first connection.

For each tool, the statement the build prepared is prepared again (never run) and described:
its parameters must still be inferred with the recorded types and its result columns must keep
their names; then the catalog entries it depends on (depends.py) are read again and compared
with the build's record. A tool whose database changed answers every call with what changed,
naming the tool and the column, while the other tools keep working (the same contract as the
DuckDB drift check in ../connection.py).
"""

from __future__ import annotations

from typing import Any

from .catalog import PgCatalog, PgTool
from .depends import read_depends
from .failures import first_line

_DESCRIBED = b"lynxc_drift"


async def check_tools(conn: Any, catalog: PgCatalog) -> dict[str, str]:
    """Tool name -> why it no longer fits the database (only the tools that drifted)."""
    problems = {}
    for tool in catalog.tools.values():
        changes = await _changes(conn, tool)
        if changes:
            problems[tool.name] = (
                f"{tool.name!r} no longer fits the database it serves ({'; '.join(changes)}): the server "
                "was built against another schema; run `lynxc build` against this database and restart"
            )
    return problems


async def _changes(conn: Any, tool: PgTool) -> list[str]:
    described = await _describe(conn, tool.wrapped)
    if isinstance(described, str):
        return [f"its statement no longer prepares: {described}"]
    params, columns = described
    changes = []
    for param, oid in zip(tool.params, params, strict=False):
        if param.oid and oid != param.oid:
            changes.append(f"parameter `{param.name}` is now read as type OID {oid}, was {param.type}")
    if len(params) != len(tool.params):
        changes.append(f"it now takes {len(params)} parameters, was {len(tool.params)}")
    names = [column.name for column in tool.columns]
    if columns != names:
        changes.append(f"its columns are now ({', '.join(columns)}), were ({', '.join(names)})")
    live = await read_depends(conn, tool.depends.as_dict())
    for relation, recorded in tool.depends.relations.items():
        for column, was in recorded.items():
            now = live["relations"][relation][column]
            if now != was:
                changes.append(f"column `{column}` of {relation} is now {now}, was {was}")
    for name, was in tool.depends.types.items():
        if live["types"][name] != was:
            changes.append(f"type {name} is now {live['types'][name]}, was {was}")
    return changes


async def _describe(conn: Any, statement: str) -> tuple[list[int], list[str]] | str:
    """(parameter type OIDs, result column names) of `statement` prepared with unknown-typed
    parameters, or Postgres's error."""
    from psycopg import generators, pq

    pgconn = conn.pgconn
    async with conn.lock:
        pgconn.send_prepare(_DESCRIBED, statement.encode(), None)
        (prepared,) = await conn.wait(generators.execute(pgconn))
        if prepared.status != pq.ExecStatus.COMMAND_OK:
            return first_line((prepared.error_message or b"").decode(errors="replace"))
        try:
            pgconn.send_describe_prepared(_DESCRIBED)
            (described,) = await conn.wait(generators.execute(pgconn))
        finally:
            pgconn.send_query(b"DEALLOCATE " + _DESCRIBED)
            await conn.wait(generators.execute(pgconn))
    params = [described.param_type(i) for i in range(described.nparams)]
    columns = [(described.fname(i) or b"").decode() for i in range(described.nfields)]
    return params, columns

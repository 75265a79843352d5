"""Postgres errors as the messages a tool call answers with (never a protocol error).

Messages go to the caller and to the server's log: every text passes through `redact`, since a
driver quotes the DSN it failed to reach.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from lynxc.runtime.errors import ToolError
from lynxc.runtime.redact import redact

from ..timeouts import StatementTimeout
from .catalog import PgParam, PgTool

# Postgres names the bound parameter it could not read: "unnamed portal parameter $2 = '...'".
_PARAMETER = re.compile(r"portal parameter \$([0-9]+)")
# A login the database refuses, as opposed to one it cannot answer (down, unreachable, full):
# invalid authorization (a role that does not exist, pg_hba.conf), invalid password, no such
# database. psycopg gives no SQLSTATE for a failed connection (libpq keeps only the text:
# psycopg/psycopg#1188), so the server's message is matched as well: Postgres's own English
# texts of those states, plus libpq's for a password the server asked for and the DSN lacks.
# A server with translated messages (lc_messages) is then taken as unreachable: it is served,
# and every call answers with its message.
LOGIN_REFUSED_STATES = frozenset({"28000", "28P01", "3D000"})
_LOGIN_REFUSED = re.compile(
    r'[A-Za-z]+ authentication failed for user "[^"\n]*"'
    r'|role "[^"\n]*" (?:does not exist|is not permitted to log in)'
    r'|database "[^"\n]*" does not exist'
    r"|no pg_hba\.conf entry for [^\n]*"
    r"|pg_hba\.conf rejects connection [^\n]*"
    r"|fe_sendauth: no password supplied"
)


def first_line(text: str) -> str:
    return redact(text.strip().splitlines()[0] if text.strip() else text)


def unreachable(err: BaseException | str) -> ToolError:
    return ToolError(f"database unreachable: {first_line(str(err))}")


def login_refusal(err: BaseException) -> str | None:
    """Why the database refused to log in (its own words, redacted), or None when `err` is not
    a refused login."""
    text = str(err)
    found = _LOGIN_REFUSED.search(text)
    if found is not None:
        return redact(found.group(0).strip())
    if getattr(err, "sqlstate", None) in LOGIN_REFUSED_STATES:
        return first_line(text)
    return None


def statement_error(err: Any, tool: PgTool, timeout_setting: str, seconds: float) -> ToolError:
    """A psycopg.Error raised by a tool's statement -> the call's error, by SQLSTATE."""
    state = getattr(err, "sqlstate", None) or ""
    diag = getattr(err, "diag", None)
    message = first_line(getattr(diag, "message_primary", None) or str(err))
    if state == "57014":
        return StatementTimeout(
            f"the statement ran longer than {seconds:g} s (setting {timeout_setting!r}) and was "
            "cancelled on the server; narrow it with more specific arguments"
        )
    if state == "25006":
        return ToolError(
            f"{tool.name!r} is read-only and its statement tried to write ({message}); nothing was written"
        )
    if state.startswith("22"):
        name = _parameter_named(getattr(diag, "context", None) or "", tool.params)
        return ToolError(f"{name}: {message}" if name else f"invalid input: {message}")
    if state.startswith("08") or state in ("57P01", "57P02", "57P03"):
        return unreachable(message)
    return ToolError(f"PostgreSQL {state or 'error'}: {message}")


def _parameter_named(context: str, params: Sequence[PgParam]) -> str | None:
    found = _PARAMETER.search(context)
    if found is None:
        return None
    index = int(found.group(1)) - 1
    return params[index].name if 0 <= index < len(params) else None

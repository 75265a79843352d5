"""The error of a statement stopped at the timeout setting, whatever the engine: a ToolError like
any other for the client, told apart so the call can say so in the client's log at warning."""

from __future__ import annotations

from lynxc.runtime.errors import ToolError


class StatementTimeout(ToolError):
    """The statement ran past `sql_timeout_seconds` and was stopped."""

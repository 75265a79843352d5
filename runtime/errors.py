"""Errors a backend raises to answer a call with `isError: true` and a message for the caller."""

from __future__ import annotations


class ToolError(Exception):
    """A failure the caller can act on (bad path, hash mismatch): its message is sent as is."""


class ToolCancelled(ToolError):
    """The client cancelled the request; blocking work stops at its next check."""


# How the host words the errors it answers for a tool, at the start of the message. The host
# (host.py) writes them and `lynxc test` (compiler/testing/) reads them to tell who refused a
# call, so both take them from here.
def invalid_arguments_prefix(tool: str) -> str:
    """The host refused the arguments (the inputSchema, or a claim that could not be bound)."""
    return f"invalid arguments for {tool!r}: "


def forbidden_prefix(tool: str) -> str:
    """The caller may not call the tool (a scope it lacks)."""
    return f"{tool!r} refused: "


def crashed_prefix(tool: str) -> str:
    """The backend raised something other than ToolError."""
    return f"{tool!r} failed: "


def invalid_result_prefix(tool: str) -> str:
    """The backend's result broke the tool's outputSchema (the host withheld it)."""
    return f"{tool!r} produced an invalid result at "


def unsendable_result_prefix(tool: str) -> str:
    """The backend's result was not JSON."""
    return f"{tool!r} produced a value that is not JSON at "

"""Errors a backend raises to answer a call with `isError: true` and a message for the caller."""

from __future__ import annotations


class ToolError(Exception):
    """A failure the caller can act on (bad path, hash mismatch): its message is sent as is."""


class ToolCancelled(ToolError):
    """The client cancelled the request; blocking work stops at its next check."""

"""The one error a bad document gives: the file and the JSON pointer where it went wrong."""

from __future__ import annotations


class OpenAPIError(Exception):
    """The document cannot be imported at all (not OpenAPI, a $ref to nowhere, too large...)."""

    def __init__(self, location: str, pointer: str, message: str) -> None:
        super().__init__(message)
        self.location = location
        self.pointer = pointer
        self.message = message

    def __str__(self) -> str:
        where = f"{self.location}#{self.pointer}" if self.pointer else self.location
        return f"{where}: {self.message}"


class Unmappable(Exception):
    """One operation cannot be mapped faithfully: it is skipped with this reason, never half-imported."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

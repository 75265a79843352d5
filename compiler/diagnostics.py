"""Diagnostics: what the compiler says about a spec, with the place it says it about."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

Severity = Literal["error", "warning", "info", "breaking"]  # "breaking": diff rules only

T = TypeVar("T")


@dataclass(frozen=True, order=True)
class Span:
    """A position in a source file; line and column are 1-based, as editors count."""

    file: str
    line: int = 1
    col: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True)
class Diagnostic:
    rule_id: str
    severity: Severity
    message: str
    span: Span
    hint: str | None = None

    def render(self) -> str:
        text = f"{self.span}: {self.severity} {self.rule_id}: {self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


@dataclass(frozen=True)
class Result(Generic[T]):
    """A value plus what was said while computing it; `value` is None when errors stopped it."""

    value: T | None
    diagnostics: tuple[Diagnostic, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return self.value is not None and not has_errors(self.diagnostics)


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    return any(d.severity == "error" for d in diagnostics)


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    return sorted(diagnostics, key=lambda d: (d.span, d.rule_id, d.message))

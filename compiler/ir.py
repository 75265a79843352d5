"""The IR: frozen, resolved, deterministic. Everything downstream of lowering reads only this.

JSON schemas are held as canonical JSON text so the IR stays immutable and hashable; the
properties below hand out fresh copies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .diagnostics import Span


@dataclass(frozen=True)
class CapIR:
    name: str
    value: int
    max: int
    unit: str
    description: str


@dataclass(frozen=True)
class ParamIR:
    """A parameter's facts for documentation; the schema itself is in ToolIR.input_schema."""

    name: str
    required: bool
    span: Span


@dataclass(frozen=True)
class ToolIR:
    name: str
    title: str | None
    description: str
    annotations: tuple[tuple[str, bool], ...]
    input_schema_json: str
    output_schema_json: str | None
    caps: tuple[CapIR, ...]
    params: tuple[ParamIR, ...]
    backend: str
    backend_target: str
    span: Span
    # every description as written (before caps are filled in) and where: lint checks for
    # numbers that should have been cap placeholders
    description_sources: tuple[tuple[Span, str], ...] = ()
    suppressions: tuple[tuple[str, str], ...] = ()  # (rule, reason), server-wide ones included

    @property
    def input_schema(self) -> dict[str, Any]:
        return json.loads(self.input_schema_json)

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return json.loads(self.output_schema_json) if self.output_schema_json else None

    @property
    def cap_values(self) -> dict[str, int]:
        return {cap.name: cap.value for cap in self.caps}


@dataclass(frozen=True)
class SettingIR:
    name: str
    schema_json: str
    description: str | None

    @property
    def schema(self) -> dict[str, Any]:
        return json.loads(self.schema_json)


@dataclass(frozen=True)
class SpecFileIR:
    path: str
    sha256: str


@dataclass(frozen=True)
class AcknowledgementIR:
    version: str
    rule: str
    reason: str
    span: Span


@dataclass(frozen=True)
class ServerIR:
    name: str
    version: str
    title: str | None
    instructions: str | None
    settings: tuple[SettingIR, ...]
    tools: tuple[ToolIR, ...]
    spec_files: tuple[SpecFileIR, ...]
    version_span: Span
    acknowledgements: tuple[AcknowledgementIR, ...] = ()


def canonical_json(value: Any) -> str:
    """Stable text for a JSON value: key order as written, no whitespace noise. NaN and Infinity
    are refused (the spec checks refuse them first): they are not JSON."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

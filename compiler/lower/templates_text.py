"""Description templates: `{caps.NAME}` (a cap's value), `{caps.NAME.max}` (its hard maximum) and
a format such as `{caps.NAME:bytes}` are filled from the caps, so documentation and enforcement
cannot drift apart. `{{` and `}}` stand for literal braces."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
CAP_PLACEHOLDER = re.compile(r"caps\.([A-Za-z_][A-Za-z0-9_]*(?:\.max)?)(?::([a-z]+))?$")


def format_bytes(value: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size and value % size == 0:
            return f"{value // size} {unit}"
    return f"{value} bytes"


FORMATS: Mapping[str, Callable[[int], str]] = {
    "bytes": format_bytes,
    "n": lambda value: f"{value:,}",
}


@dataclass(frozen=True)
class TemplateProblem:
    rule_id: str
    message: str
    hint: str | None
    offset: int


def render(text: str, caps: Mapping[str, int]) -> tuple[str, list[TemplateProblem]]:
    problems: list[TemplateProblem] = []

    def fill(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole in ("{{", "}}"):
            return whole[0]
        inner = match.group(1)
        cap = CAP_PLACEHOLDER.match(inner.strip())
        if cap is None:
            problems.append(
                TemplateProblem(
                    "DESCRIPTION_TEMPLATE_UNKNOWN",
                    f"'{whole}' is not a placeholder lynxc knows",
                    "quote a cap as {caps.NAME}; write {{ and }} for literal braces",
                    match.start(),
                )
            )
            return whole
        name, fmt = cap.group(1), cap.group(2)
        if name not in caps:
            problems.append(
                TemplateProblem(
                    "CAP_UNKNOWN",
                    f"'{whole}' names no cap of this tool",
                    ("declared caps: " + ", ".join(sorted(n for n in caps if not n.endswith(".max"))))
                    if caps
                    else "declare it under 'caps:'",
                    match.start(),
                )
            )
            return whole
        if fmt is not None and fmt not in FORMATS:
            problems.append(
                TemplateProblem(
                    "DESCRIPTION_FORMAT_UNKNOWN",
                    f"'{whole}' uses an unknown format '{fmt}'",
                    "known formats: " + ", ".join(sorted(FORMATS)),
                    match.start(),
                )
            )
            return whole
        value = caps[name]
        return FORMATS[fmt](value) if fmt else str(value)

    return PLACEHOLDER.sub(fill, text), problems

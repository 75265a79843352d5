"""CSS numbers and lengths in px: the one reader of `12px`, `1.5em`, `-.5rem`, `0`, shared by
media queries (media.py) and the hidden-text rules (hidden_css.py), which differ only in what
their relative units are worth. Standard library only."""

from __future__ import annotations

import re

NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?"
LENGTH = re.compile(rf"({NUMBER})([a-z%]*)")
# Physical units in CSS px (CSS's 96 px to the inch).
ABSOLUTE_PX = {
    "px": 1.0,
    "pt": 4 / 3,
    "pc": 16.0,
    "in": 96.0,
    "cm": 96 / 2.54,
    "mm": 96 / 25.4,
    "q": 96 / 101.6,
}


def length_px(
    value: str, *, em: float, units: dict[str, float], percent_of: float | None = None
) -> float | None:
    """A CSS length in px (`units`: px per unit, em and ex/ch aside), or None when it cannot be
    known here (calc(), auto, a unit not in `units`, a percentage without a base)."""
    match = LENGTH.fullmatch(value.strip())
    if match is None:
        return None
    number, unit = float(match[1]), match[2]
    if unit == "":
        return 0.0 if number == 0 else None
    if unit == "%":
        return None if percent_of is None else number * percent_of / 100
    if unit == "em":
        return number * em
    if unit in ("ex", "ch"):
        return number * em / 2
    factor = units.get(unit)
    return None if factor is None else number * factor

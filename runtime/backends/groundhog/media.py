"""Media queries, evaluated for the screens people read pages on.

Text counts as hidden when no reader sees it. A page that hides a teaser from 765px up
(`@media (min-width:765px){.teaser{display:none}}`) shows it to every phone reader: that is
layout, not hiding, and the teaser is content. So a rule in `@media` holds on some of SCREENS and
not on others, and hidden.py calls text hidden only when every screen hides it. The screens span
what people use (a phone and a tablet upright, a laptop and a wide desktop), all `screen` media
with scripts on, a light scheme and no preference for reduced motion or contrast: `print` and
`speech` rules never apply, nor do features that hold on no such screen (`(grid)`, `tv`,
`prefers-color-scheme: dark`). An attacker gains nothing from the spread: text shown on one
screen only is seen by people on that screen; text hidden on every one of them is found.

`media_screens` answers with a bit mask over SCREENS (bit i for SCREENS[i]), the query list's
meaning on each. Level 4 range syntax (`(width >= 765px)`, `(400px <= width <= 700px)`) is read
too; a feature this module does not know holds on no screen, as in a browser that lacks it.
Standard library only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .css_units import ABSOLUTE_PX, LENGTH, NUMBER, length_px


@dataclass(frozen=True)
class Screen:
    name: str
    width: float  # CSS px of the viewport
    height: float
    dppx: float  # device pixels per CSS px
    pointer: str  # "fine" (a mouse, which hovers) or "coarse" (a finger, which does not)


# The laptop comes first: a reason is reported as the first screen that hides the text sees it.
SCREENS = (
    Screen("laptop", 1280, 800, 1, "fine"),
    Screen("desktop", 1920, 1080, 1, "fine"),
    Screen("tablet", 820, 1180, 2, "coarse"),
    Screen("phone", 390, 844, 3, "coarse"),
)
EVERY_SCREEN = (1 << len(SCREENS)) - 1

# `em` and `rem` in a media query are the initial font size, 16px, whatever the page sets.
QUERY_EM_PX = 16.0
_QUERY_PX = {**ABSOLUTE_PX, "rem": QUERY_EM_PX}
_DPPX = {"dppx": 1.0, "x": 1.0, "dpi": 1 / 96, "dpcm": 2.54 / 96}
_RATIO = re.compile(rf"({NUMBER})\s*(?:/\s*({NUMBER}))?")
_RANGE_PART = re.compile(r"\s*(<=|>=|<|>|=)\s*")
_FEATURE_NAME = re.compile(r"[a-z-]+")


def _length(value: str) -> float | None:
    return length_px(value, em=QUERY_EM_PX, units=_QUERY_PX)


def _resolution(value: str) -> float | None:
    match = LENGTH.fullmatch(value.strip())
    factor = _DPPX.get(match[2]) if match else None
    return None if match is None or factor is None else float(match[1]) * factor


def _ratio(value: str) -> float | None:
    match = _RATIO.fullmatch(value.strip())
    if match is None:
        return None
    denominator = float(match[2]) if match[2] else 1.0
    return float(match[1]) / denominator if denominator else None


# A range feature: its value on a screen, and how a query's value is read.
_RANGES = {
    "width": (lambda s: s.width, _length),
    "device-width": (lambda s: s.width, _length),
    "height": (lambda s: s.height, _length),
    "device-height": (lambda s: s.height, _length),
    "aspect-ratio": (lambda s: s.width / s.height, _ratio),
    "device-aspect-ratio": (lambda s: s.width / s.height, _ratio),
    "resolution": (lambda s: s.dppx, _resolution),
    "-webkit-device-pixel-ratio": (lambda s: s.dppx, _ratio),
    "-moz-device-pixel-ratio": (lambda s: s.dppx, _ratio),
}
_COMPARE = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "=": lambda a, b: a == b,
}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}


def _discrete(name: str, value: str | None, screen: Screen) -> bool | None:
    """A discrete feature on `screen`, None when this module does not know it. Without a value,
    a feature holds when its value would not be none (or 0)."""
    touch = screen.pointer == "coarse"
    values = {
        "orientation": "landscape" if screen.width > screen.height else "portrait",
        "hover": "none" if touch else "hover",
        "any-hover": "none" if touch else "hover",
        "pointer": screen.pointer,
        "any-pointer": screen.pointer,
        "scripting": "enabled",
        "prefers-color-scheme": "light",
        "prefers-reduced-motion": "no-preference",
        "prefers-reduced-transparency": "no-preference",
        "prefers-contrast": "no-preference",
        "forced-colors": "none",
        "inverted-colors": "none",
        "display-mode": "browser",
        "update": "fast",
        "overflow-block": "scroll",
        "overflow-inline": "scroll",
        "color-gamut": "srgb",
        "dynamic-range": "standard",
        "color": "8",
        "color-index": "0",
        "monochrome": "0",
        "grid": "0",
    }
    if name not in values:
        return None
    if value is None:
        return values[name] not in ("none", "0")
    return values[name] == value


def _feature(text: str, screen: Screen) -> bool:
    """One parenthesised feature: `min-width: 765px`, `hover`, `width >= 765px`, `400px < width < 700px`."""
    if ":" in text:
        name, _, value = (part.strip() for part in text.partition(":"))
        prefix, _, base = name.partition("-")  # min--moz-device-pixel-ratio too
        if prefix in ("min", "max") and base in _RANGES:
            return _range(base, ">=" if prefix == "min" else "<=", value, screen)
        for vendor in ("-webkit-min-", "-webkit-max-"):
            if name.startswith(vendor) and (base := "-webkit-" + name[len(vendor) :]) in _RANGES:
                return _range(base, ">=" if "min" in vendor else "<=", value, screen)
        if name in _RANGES:
            return _range(name, "=", value, screen)
        return bool(_discrete(name, value, screen))
    pieces = _RANGE_PART.split(text)
    if len(pieces) == 1:  # a feature alone: `(hover)`, `(color)`
        name = text.strip()
        return bool(_discrete(name, None, screen)) if _FEATURE_NAME.fullmatch(name) else False
    if len(pieces) == 3:  # `width >= 765px` or `765px <= width`
        left, op, right = pieces
        if left in _RANGES:
            return _range(left, op, right, screen)
        return right in _RANGES and _range(right, _FLIPPED[op], left, screen)
    if len(pieces) == 5 and pieces[2] in _RANGES:  # `400px <= width < 700px`
        low, op1, name, op2, high = pieces
        return _range(name, _FLIPPED[op1], low, screen) and _range(name, op2, high, screen)
    return False


def _range(name: str, op: str, value: str, screen: Screen) -> bool:
    """The screen's `name` compared with `value` (`width >= 765px`); False for a value not read."""
    measure, read = _RANGES[name]
    wanted = read(value)
    return wanted is not None and _COMPARE[op](measure(screen), wanted)


_AND = re.compile(r"\s+and\s+|(?<=\))\s*and\s*(?=\()")


def _query_holds(query: str, screen: Screen) -> bool:
    """One query of a list (`only screen and (max-width: 600px)`, `not print`) on `screen`."""
    words = query.strip()
    negate = words.startswith("not ")
    words = words.removeprefix("not ").removeprefix("only ").strip()
    holds = True
    for part in _AND.split(words):
        part = part.strip()
        if part.startswith("(") and part.endswith(")"):
            if not _feature(part[1:-1].strip(), screen):
                holds = False
                break
        elif part not in ("all", "screen", ""):  # print, speech, or a type no screen has
            holds = False
            break
    return holds != negate


@lru_cache(maxsize=1024)
def media_screens(query: str) -> int:
    """The bit mask of SCREENS on which a media query list (`@media`'s prelude, a `media`
    attribute) holds: every screen for an empty list, none for one that names only print."""
    query = " ".join(query.lower().split())
    if not query:
        return EVERY_SCREEN
    mask = 0
    for one in query.split(","):
        for bit, screen in enumerate(SCREENS):
            if _query_holds(one, screen):
                mask |= 1 << bit
    return mask

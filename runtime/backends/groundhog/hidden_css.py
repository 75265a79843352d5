"""What a page's CSS says about whether its text can be seen: inline styles and `<style>`
rules, matched against the page (selectors read by cssselect, matched in sets: _Index), cascaded
(specificity, order, !important), custom properties substituted, and read
for the properties that hide text. The rules of hidden.py's module docstring; this module only
answers "which declarations apply to this element" and "does this style hide it".

`@media` rules (and `<style media>`) are evaluated for each of media.SCREENS, a phone to a wide
desktop: each rule carries the screens it holds on, `Stylesheets.screens` names one screen of
each kind the page's rules tell apart, and `cascade` answers for one of them (hidden.py calls
text hidden only when every kind hides it). Lengths in vw or % are a 1280x800 laptop's. Stylesheets are
split with regular expressions rather than a CSS tokenizer: this runs on every page read, a page
may carry a megabyte of CSS, and only selectors and declaration blocks are needed (tinycss2
parses colours). Rules that cannot match (a class, id or tag the page lacks, a pseudo-element, a
hover or focus state) and declarations that cannot hide anything on this page are dropped before
any selector is compiled.

Matching is bounded by work done, never by the clock (pages parsed side by side share it): the
distinct selectors compiled, the (rule, element) matches recorded, and the elements tested
(_Index). Rules that can hide are matched first; when a budget runs out among them, the elements
the rest may match are reported as unchecked, and hidden.py takes them out."""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .css_units import ABSOLUTE_PX, LENGTH, NUMBER, length_px
from .media import EVERY_SCREEN, SCREENS, media_screens

OPACITY_HIDDEN = 0.05
FONT_HIDDEN_PX = 2.0
OFF_SCREEN_PX = -1000.0
# An absolutely or fixed positioned box pushed this far up or left (top, left) is off the page:
# its containing block is, on nearly every page, near the top left corner. On the article
# benchmark's 181 pages, -50px would take out two boxes a reader sees (a logo at top:-75px, a
# share bar at left:-50px); -100px takes out nothing.
OFF_SCREEN_PLACED_PX = -100.0
TEXT_INDENT_PX = -999.0
COLOUR_TOLERANCE = 10 / 255  # per channel: #fafafa on #ffffff is the same colour to a reader
VIEWPORT = (float(SCREENS[0].width), float(SCREENS[0].height))  # lengths in vw, vh and %
ROOT_FONT_PX = 16.0
# Budgets for hostile stylesheets, counted in work done (never in wall-clock time, which pages
# parsed side by side would share); a real page (the article benchmark's largest carries 1 MB of
# CSS) needs a fraction of each. Running out fails closed (see read_stylesheets).
MAX_STYLESHEET_CHARS = 6_000_000  # more than a fetched page holds (5 MB)
MAX_SELECTORS = 4_000  # distinct selectors matched against the page
MAX_MATCHES = 2_000_000  # (rule, element) pairs recorded
# Elements tested or reached by selector matching (_Index): about 1.5 s of CPU. The benchmark's
# pages need at most 450,000; ten copies of the heaviest one's body (a 5 MB page), 2.9 million.
MAX_MATCH_WORK = 20_000_000
# A backstop for costs the count misses, well above what it allows: CPU time of this thread,
# which other threads do not consume.
MATCH_CPU_SECONDS = 6.0


# --- CSS values -----------------------------------------------------------------------------

_ABSOLUTE_PX = {
    **ABSOLUTE_PX,
    "vw": VIEWPORT[0] / 100,
    "vh": VIEWPORT[1] / 100,
    "vmin": VIEWPORT[1] / 100,
    "vmax": VIEWPORT[0] / 100,
    "rem": ROOT_FONT_PX,
}
_FONT_KEYWORDS = {
    "xx-small": 9.0,
    "x-small": 10.0,
    "small": 13.0,
    "medium": 16.0,
    "large": 18.0,
    "x-large": 24.0,
    "xx-large": 32.0,
    "xxx-large": 48.0,
}
_FUNCTION = re.compile(r"([a-z0-9-]+)\(([^()]*)\)")


def _length_px(value: str, em: float = ROOT_FONT_PX, percent_of: float | None = None) -> float | None:
    """A CSS length in px on the laptop screen, or None when it cannot be known here (calc(),
    auto, a percentage without a base)."""
    return length_px(value, em=em, units=_ABSOLUTE_PX, percent_of=percent_of)


def _arguments(text: str) -> list[str]:
    return [part for part in re.split(r"[\s,]+", text.strip()) if part and part != "/"]


def _top_level_words(value: str) -> list[str]:
    """`rgb(1, 2, 3) no-repeat url(x y)` -> its space-separated words, parentheses kept whole."""
    words, depth, current = [], 0, []
    for ch in value:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        if ch.isspace() and depth == 0:
            if current:
                words.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return words


Colour = tuple[float, float, float, float]
BLACK: Colour = (0.0, 0.0, 0.0, 1.0)
WHITE: Colour = (1.0, 1.0, 1.0, 1.0)


@lru_cache(maxsize=4096)
def colour(value: str) -> Colour | str | None:
    """A CSS colour as RGBA in [0, 1], "currentcolor", or None for anything else."""
    import tinycss2.color3

    if len(value) > 100:
        return None  # not a colour, and not worth a place in the cache
    try:
        parsed = tinycss2.color3.parse_color(value)
    except Exception:  # a value tinycss2 cannot tokenise is not a colour
        return None
    if parsed is None:
        return None
    if isinstance(parsed, str):
        return "currentcolor"
    return (parsed.red, parsed.green, parsed.blue, parsed.alpha)


def hex_colour(rgba: Colour) -> str:
    text = "#" + "".join(f"{round(channel * 255):02x}" for channel in rgba[:3])
    return text if rgba[3] >= 1 else f"{text} at alpha {rgba[3]:.2f}"


def same_colour(a: Colour, b: Colour) -> bool:
    tolerance = COLOUR_TOLERANCE
    return abs(a[0] - b[0]) <= tolerance and abs(a[1] - b[1]) <= tolerance and abs(a[2] - b[2]) <= tolerance


def _font_size_word(value: str) -> str | None:
    """The size inside a `font` shorthand: `italic bold 12px/30px Georgia` -> 12px,
    `0/0 a` -> 0; None for a system font."""
    head = value.split(",")[0].replace("/", " / ")
    words = head.split()
    if "/" in words:
        at = words.index("/")
        return words[at - 1] if at else None
    for word in words:
        if word in _FONT_KEYWORDS:
            return word
        match = LENGTH.fullmatch(word)
        if match and (match[2] or float(match[1]) == 0):
            return word
    return None


def opacity(value: str) -> float | None:
    value = value.strip()
    try:
        return float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        return None


# Properties read, after shorthands are expanded.
_PROPERTIES = frozenset(
    {
        "display",
        "visibility",
        "opacity",
        "filter",
        "content-visibility",
        "font-size",
        "position",
        "left",
        "top",
        "right",
        "bottom",
        "margin-left",
        "margin-top",
        "text-indent",
        "transform",
        "translate",
        "scale",
        "clip",
        "clip-path",
        "width",
        "height",
        "max-width",
        "max-height",
        "min-width",
        "min-height",
        "overflow-x",
        "overflow-y",
        "padding-top",
        "padding-bottom",
        "color",
        "background-color",
        "background-image",
        "text-shadow",
        "-webkit-text-fill-color",
        "background-clip",
        "-webkit-background-clip",
    }
)
_SHORTHANDS = frozenset({"font", "margin", "overflow", "background", "padding"})
# A declaration block worth parsing names one of these (font-size, margin-left, clip-path...).
_DECLARED = re.compile(
    r"(?:display|visibility|opacity|filter|content-visibility|font|position|left|top|right|bottom|margin|"
    r"text-indent|transform|translate|scale|clip|width|height|overflow|padding|color|background|"
    r"text-shadow|-webkit-text-fill-color|-webkit-background-clip)[\w-]*\s*:",
    re.IGNORECASE,
)
_IMPORTANT = re.compile(r"!\s*important\s*$")

Declaration = tuple[str, str, bool]  # (property, value, important)


def _split_declarations(text: str) -> list[str]:
    """`a: b; c: url(x;y)` -> its declarations; semicolons inside parentheses do not split."""
    if "(" not in text:
        return text.split(";")
    parts, depth, last = [], 0, 0
    for match in re.finditer(r"[();]", text):
        ch = match.group()
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            parts.append(text[last : match.start()])
            last = match.end()
    parts.append(text[last:])
    return parts


def declarations(text: str, *, custom: bool = False) -> tuple[Declaration, ...]:
    """The declarations of a style attribute or rule block that this module reads, lower case,
    shorthands expanded into the longhands read; with `custom`, custom properties too."""
    if "/*" in text:
        text = re.sub(r"/\*.*?(?:\*/|$)", "", text, flags=re.S)
    found: list[Declaration] = []
    for part in _split_declarations(text):
        name, colon, value = part.partition(":")
        if not colon:
            continue
        name = name.strip().lower()
        variable = custom and name.startswith("--")
        if name not in _PROPERTIES and name not in _SHORTHANDS and not variable:
            continue
        value = value.strip().lower()
        important = False
        if "!" in value:
            stripped = _IMPORTANT.sub("", value)
            important = stripped != value
            value = stripped.strip()
        if variable or ("var(" in value and name in _SHORTHANDS):
            # a shorthand is expanded once its variables are known (resolve_variables)
            if len(value) <= MAX_VARIABLE_CHARS:
                found.append((name, value, important))
            continue
        found.extend((prop, val, important) for prop, val in _expand(name, value))
    return tuple(found)


# --- custom properties ------------------------------------------------------------------------

MAX_VARIABLE_CHARS = 1000  # a value, substituted or not: no colour or length is longer
_MAX_SUBSTITUTIONS = 32


def substitute(value: str, variables: dict[str, str]) -> str | None:
    """`value` with its var() references replaced (by the variable, else the fallback), or None
    when one cannot be (undefined without a fallback, a cycle, a value grown too long): the
    declaration is then void, as in a browser."""
    for _ in range(_MAX_SUBSTITUTIONS):
        start = value.find("var(")
        if start < 0:
            return value
        depth, end = 0, -1
        for at in range(start + 3, len(value)):
            ch = value[at]
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    end = at
                    break
        if end < 0:
            return None
        name, comma, fallback = value[start + 4 : end].partition(",")
        replacement = variables.get(name.strip())
        if replacement is None:
            if not comma:
                return None
            replacement = fallback.strip()
        value = value[:start] + replacement + value[end + 1 :]
        if len(value) > MAX_VARIABLE_CHARS:
            return None
    return None


def resolve_variables(
    style: dict[str, tuple[str, str]], variables: dict[str, str]
) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """An element's style with var() substituted, and the custom properties its children
    inherit (`variables` plus those the style declares)."""
    own = {prop: entry[0] for prop, entry in style.items() if prop.startswith("--")}
    if own:
        variables = {**variables, **own}
    if not own and not any("var(" in entry[0] for entry in style.values()):
        return style, variables
    resolved: dict[str, tuple[str, str]] = {}
    for prop, (value, source) in style.items():
        if prop.startswith("--"):
            continue
        if "var(" in value:
            value = substitute(value, variables)
            if value is None:
                continue  # void: as if not declared (inherited, or the initial value)
        if prop in _SHORTHANDS:
            for longhand, part in _expand(prop, value):
                resolved[longhand] = (part, source)
        else:
            resolved[prop] = (value, source)
    return resolved, variables


def _expand(name: str, value: str) -> Iterable[tuple[str, str]]:
    if name in _PROPERTIES:
        return ((name, value),)
    if name == "background":
        if value in ("inherit", "initial", "unset", "revert"):
            return (("background-color", value), ("background-image", value))
        if re.search(r"(?:url|gradient|image-set|image|element|cross-fade)\(", value):
            # an image (often a long data: URL): the colour behind the text is unknown anyway
            return (("background-color", "transparent"), ("background-image", "url"))
        found = next((word for word in _top_level_words(value) if isinstance(colour(word), tuple)), None)
        return (("background-color", found or "transparent"), ("background-image", "none"))
    if len(value) > 200:
        return ()  # no margin, padding, overflow or font that hides text is this long
    words = _top_level_words(value)
    if name == "font":
        size = _font_size_word(value)
        return (("font-size", size),) if size else ()
    if name == "margin" and words:
        return (
            ("margin-top", words[0]),
            ("margin-left", words[-1] if len(words) == 4 else words[min(1, len(words) - 1)]),
        )
    if name == "padding" and words:
        return (("padding-top", words[0]), ("padding-bottom", words[2] if len(words) > 2 else words[0]))
    if name == "overflow" and words:
        return (("overflow-x", words[0]), ("overflow-y", words[-1]))
    return ()


def _clip_is_empty(value: str) -> bool:
    match = _FUNCTION.search(value)
    if not match or match[1] != "rect":
        return False
    edges = [None if part == "auto" else _length_px(part) for part in _arguments(match[2])]
    if len(edges) != 4:
        return False
    top, right, bottom, left = edges
    return (top is not None and bottom is not None and bottom <= top) or (
        left is not None and right is not None and right <= left
    )


def _clip_path_is_empty(value: str) -> bool:
    match = _FUNCTION.search(value)
    if not match:
        return False
    args = _arguments(match[2].split(" round ")[0])
    if match[1] == "inset" and args:
        sides = [(_length_px(a, percent_of=100.0) if a.endswith("%") else None) for a in args]
        top, right = sides[0], sides[1] if len(sides) > 1 else sides[0]
        bottom = sides[2] if len(sides) > 2 else top
        left = sides[3] if len(sides) > 3 else right
        return (top is not None and bottom is not None and top + bottom >= 100) or (
            left is not None and right is not None and left + right >= 100
        )
    if match[1] in ("circle", "ellipse") and args:
        return _length_px(args[0]) == 0
    return False


def _transform_hides(value: str) -> str | None:
    """Why a transform hides its element ("scaled to nothing", "moved off-screen"), or None."""
    for name, args_text in _FUNCTION.findall(value):
        args = _arguments(args_text)
        numbers = [opacity(a) for a in args]
        if name in ("scale", "scale3d") and any(n == 0 for n in numbers[:2]):
            return "scaled to nothing"
        if name in ("scalex", "scaley") and numbers and numbers[0] == 0:
            return "scaled to nothing"
        if name == "matrix" and len(numbers) == 6:
            a, b, c, d, e, f = numbers[:6]
            if (a == 0 and b == 0) or (c == 0 and d == 0):
                return "scaled to nothing"
            if any(x is not None and x <= OFF_SCREEN_PX for x in (e, f)):
                return "moved off-screen"
        if name in ("translate", "translatex", "translatey", "translate3d") and any(
            (px := _length_px(a)) is not None and px <= OFF_SCREEN_PX for a in args[:2]
        ):
            return "moved off-screen"
    return None


# --- stylesheets ----------------------------------------------------------------------------

_CSS_TOKEN = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|/\*.*?(?:\*/|$)|[{}]", re.S)
_GROUPING_AT_RULES = ("@media", "@supports", "@layer", "@document", "@-moz-document", "@scope")


def _split_stylesheet(css: str, screens: int = EVERY_SCREEN) -> list[tuple[str, str, int]]:
    """(selector list, declaration block, the screens it holds on) of every style rule that holds
    on one of `screens` at least, in order: `@media` evaluated (media.media_screens),
    `@supports`/`@layer` entered, other at-rules (font faces, keyframes, pages) and nested rules
    skipped. Regular expressions, not a tokenizer: this runs on every page and a page may carry a
    megabyte of CSS."""
    rules: list[tuple[str, str, int]] = []
    # Open blocks: a group (an at-rule holding rules: the screens it holds on, an int) or
    # ["rule", selectors, declaration parts, where the current part starts, screens]; blocks
    # being skipped are only counted.
    stack: list[Any] = []
    start = 0
    skipping = 0  # depth inside skipped blocks
    for match in _CSS_TOKEN.finditer(css):
        token = match.group()
        if token == "{":
            prelude = css[start : match.start()]
            start = match.end()
            if skipping:
                skipping += 1
                continue
            if stack and not isinstance(stack[-1], int):  # a rule nested in a rule (CSS nesting): skipped
                rule = stack[-1]
                rule[2].append(css[rule[3] : match.start()].rpartition(";")[0])
                skipping = 1
                continue
            within = stack[-1] if stack else screens  # the screens the enclosing groups hold on
            if "/*" in prelude:
                prelude = re.sub(r"/\*.*?(?:\*/|$)", "", prelude, flags=re.S)
            prelude = prelude.rpartition(";")[2].strip()  # after any @import or @charset
            if prelude.startswith("@"):
                name = re.match(r"@[\w-]*", prelude).group().lower()  # "@media(min-width:9px)" too
                held = within & media_screens(prelude[6:]) if name == "@media" else within
                if name in _GROUPING_AT_RULES and held:
                    stack.append(held)
                else:
                    skipping = 1
                continue
            stack.append(["rule", prelude, [], start, within])
        elif token == "}":
            if skipping:
                skipping -= 1
                if skipping == 0 and stack and not isinstance(stack[-1], int):
                    stack[-1][3] = match.end()  # the parent rule's declarations resume
                start = match.end()
                continue
            if stack:
                block = stack.pop()
                if not isinstance(block, int):
                    block[2].append(css[block[3] : match.start()])
                    rules.append((block[1], ";".join(block[2]), block[4]))
            start = match.end()
    return rules


_SELECTOR_WORD = re.compile(r"(::?|[.#]|)((?:[\w-]|\\.)+)")
_PSEUDO_ELEMENTS = frozenset(
    {"before", "after", "first-line", "first-letter", "marker", "placeholder", "selection", "backdrop"}
)
# States a page does not start in: a rule for them shows or hides on interaction, not at load.
_STATES = frozenset({"hover", "active", "focus", "focus-within", "focus-visible", "visited", "target"})


def _could_match(selector: str, index: _Index) -> bool:
    """False when the selector names a pseudo-element (its boxes are not the element's text) or
    a tag, id or class the page does not have: most rules of a site-wide stylesheet fail here,
    before anything is compiled."""
    simple = selector
    if "[" in simple:
        simple = re.sub(r"\[[^\]]*\]", "", simple)
    if "(" in simple:
        for _ in range(3):
            simple = re.sub(r"\([^()]*\)", "", simple)
    if "|" in simple:
        return True  # namespaces: match for real
    for prefix, word in _SELECTOR_WORD.findall(simple):
        if "\\" in word:
            if re.search(r"\\[0-9a-fA-F]", word):
                continue
            word = re.sub(r"\\(.)", r"\1", word)
        if prefix == "::" or (
            prefix == ":" and (word.lower() in _PSEUDO_ELEMENTS or word.lower() in _STATES)
        ):
            return False
        if prefix == "." and word not in index.classes():
            return False
        if prefix == "#" and word not in index.ids():
            return False
        if prefix == "" and word[0].isalpha() and not index.has_tag(word.lower()):
            return False
    return True


def _split_selectors(text: str) -> list[str]:
    """A selector list at its top-level commas (not those inside :is(...) or [a=","])."""
    if "(" not in text and "[" not in text:
        return [part.strip() for part in text.split(",") if part.strip()]
    parts, depth, last = [], 0, 0
    for match in re.finditer(r"[()\[\],]", text):
        ch = match.group()
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif depth == 0:
            parts.append(text[last : match.start()].strip())
            last = match.end()
    parts.append(text[last:].strip())
    return [part for part in parts if part]


@dataclass
class Stylesheets:
    """What the walk needs from the page's stylesheets."""

    # element -> (specificity, order, declarations, source, the screens the rule holds on)
    matched: dict[Any, list[tuple[tuple[int, int, int], int, tuple[Declaration, ...], str, int]]]
    external: bool  # a stylesheet we did not read: colours may be set where we cannot see
    notices: list[str] = field(default_factory=list)  # why some of the CSS was not applied
    uses_variables: bool = False  # var() somewhere: the walk substitutes custom properties
    variables: dict[str, str] = field(default_factory=dict)  # those of :root, html and body
    # When rules that can hide were left unapplied (a budget ran out, the CSS was cut): the
    # elements they may hide, with all they hold, or all of the page's (`unchecked_all`).
    unchecked: set[Any] = field(default_factory=set)
    unchecked_all: bool = False
    # One screen (its bit in media.SCREENS) of each kind the rules tell apart: the screens on
    # which exactly the same rules hold are one kind, and one of them answers for all.
    screens: tuple[int, ...] = (1,)


_RELATIVE_FONT = re.compile(rf"({NUMBER})(em|ex|ch|%)")


class _Hiding:
    """Which declarations can hide what they apply to, alone or together with others: nested
    opacities multiply and relative font sizes compound, a position completes an offset or a
    clip and an overflow a size, a colour meets the same background. The groups (_GROUP_OF) of
    those are worth matching at all; the other declarations of a group can only override them,
    showing content again."""

    def __init__(self, found: list[Declaration], external: bool) -> None:
        text_colours: set[Colour] = set() if external else {BLACK}
        backgrounds: set[Colour] = set() if external else {WHITE}
        for prop, value, _ in found:
            if prop in ("color", "background-color"):
                parsed = colour(value)
                if isinstance(parsed, tuple):
                    (text_colours if prop == "color" else backgrounds).add(parsed)
        self.every_colour = len(text_colours) * len(backgrounds) > 250_000
        opaque = [b for b in backgrounds if b[3] >= 0.9]
        self.text_colours = {
            t
            for t in text_colours
            if self.every_colour or t[3] <= 0.1 or any(same_colour(t, b) for b in opaque)
        }
        self.backgrounds = {
            b
            for b in opaque
            if self.every_colour or any(t[3] > 0.1 and same_colour(t, b) for t in text_colours)
        }
        self.groups: set[str] = set()
        for prop, value, _ in found:
            group = self._group(prop, value)
            if group:
                self.groups.add(group)
        if "small" in self.groups and "overflow" in self.groups:
            self.groups.add("size")

    def hides(self, prop: str, value: str) -> bool:
        group = self._group(prop, value)
        if group == "position":
            return "offset" in self.groups or "clip" in self.groups
        if group in ("small", "overflow"):
            return "size" in self.groups
        return group is not None

    def _group(self, prop: str, value: str) -> str | None:
        """The group of a declaration that hides, or helps to: "position", "small" and
        "overflow" only complete another declaration."""
        if prop == "display":
            return "display" if value.startswith("none") else None
        if prop == "visibility":
            return "visibility" if value in ("hidden", "collapse") else None
        if prop in ("opacity", "filter"):
            number = opacity(value) if prop == "opacity" else filter_opacity(value)
            return "opacity" if number is not None and number < 1 else None  # they multiply
        if prop == "content-visibility":
            return "content-visibility" if value == "hidden" else None
        if prop == "font-size":
            px = font_px(value, ROOT_FONT_PX)
            relative = _RELATIVE_FONT.fullmatch(value)
            shrinks = value == "smaller" or (
                relative is not None and float(relative[1]) < (100 if relative[2] == "%" else 1)
            )  # compounds down the tree
            return "font-size" if shrinks or (px is not None and px < FONT_HIDDEN_PX) else None
        if prop in ("left", "top", "right", "margin-left", "margin-top", "translate"):
            px = _length_px(value.split()[0]) if value else None
            limit = OFF_SCREEN_PLACED_PX if prop in ("left", "top") else OFF_SCREEN_PX
            return "offset" if px is not None and px <= limit else None
        if prop == "transform":
            return "offset" if _transform_hides(value) else None
        if prop == "scale":
            return "offset" if opacity(value.split()[0] if value else "") == 0 else None
        if prop == "text-indent":
            px = _length_px(value.split()[0], percent_of=VIEWPORT[0]) if value else None
            return "offset" if px is not None and px <= TEXT_INDENT_PX else None
        if (prop == "clip" and _clip_is_empty(value)) or (prop == "clip-path" and _clip_path_is_empty(value)):
            return "clip"
        if prop == "position":
            return "position" if value in _POSITIONED else None
        if prop in ("width", "height", "max-width", "max-height"):
            px = _length_px(value)
            return "small" if px is not None and px <= 1 else None
        if prop in ("overflow-x", "overflow-y"):
            return "overflow" if value in ("hidden", "clip") else None
        if prop in ("color", "background-color"):
            parsed = colour(value)
            pool = self.text_colours if prop == "color" else self.backgrounds
            return "colour" if isinstance(parsed, tuple) and parsed in pool else None
        return None


_POSITIONED = frozenset({"absolute", "fixed", "relative", "sticky"})


_GROUP_OF = {
    "display": "display",
    "visibility": "visibility",
    "opacity": "opacity",
    "filter": "opacity",
    "content-visibility": "content-visibility",
    "font-size": "font-size",
    "position": "offset clip",
    "left": "offset",
    "top": "offset",
    "right": "offset",
    "bottom": "offset",  # with top: stretched back on the page
    "margin-left": "offset",
    "margin-top": "offset",
    "text-indent": "offset",
    "transform": "offset",
    "translate": "offset",
    "scale": "offset",
    "clip": "clip",
    "clip-path": "clip",
    "width": "size offset",  # an off-screen box this wide or tall may reach back on the page
    "height": "size offset",
    "max-width": "size",
    "max-height": "size",
    "min-width": "size",
    "min-height": "size",
    "overflow-x": "size",
    "overflow-y": "size",
    "padding-top": "size",
    "padding-bottom": "size",
    "color": "colour",
    "background-color": "colour",
    "background-image": "colour",
    "text-shadow": "colour",
    "-webkit-text-fill-color": "colour",
    "background-clip": "colour",
    "-webkit-background-clip": "colour",
    # shorthands holding var(), expanded when resolved
    "background": "colour",
    "font": "font-size",
    "margin": "offset",
    "padding": "size",
    "overflow": "size",
}


def filter_opacity(value: str) -> float | None:
    match = re.search(r"opacity\(([^)]*)\)", value)
    return opacity(match[1]) if match else None


def _first_chars(sheets: list[tuple[str, int]], limit: int) -> list[tuple[str, int]]:
    """The sheets cut to their first `limit` characters in all."""
    kept: list[tuple[str, int]] = []
    for text, held in sheets:
        if limit <= 0:
            break
        kept.append((text[:limit], held))
        limit -= len(text)
    return kept


def _screen_kinds(masks: list[int]) -> tuple[int, ...]:
    """One screen bit per kind of screen: screens on which the same masks hold behave alike."""
    kinds: dict[tuple[bool, ...], int] = {}
    distinct = sorted(set(masks))
    for number in range(len(SCREENS)):
        kinds.setdefault(tuple(bool(mask >> number & 1) for mask in distinct), 1 << number)
    return tuple(kinds.values())


def is_stylesheet_link(element: Any) -> bool:
    """A `<link>` a browser applies as a stylesheet at load: rel names stylesheet but not
    alternate (a style the reader must choose), not disabled, with an href, outside <template>
    and <noscript>."""
    rel = (element.get("rel") or "").lower().split()
    return (
        "stylesheet" in rel
        and "alternate" not in rel
        and element.get("disabled") is None
        and bool((element.get("href") or "").strip())
        and not any(True for _ in element.iterancestors("template", "noscript"))
    )


def read_stylesheets(
    doc: Any, inline_styles: list[str], linked: Mapping[str, str] | None = None
) -> Stylesheets:
    """Match the `<style>` rules, and those of the linked stylesheets read (`linked`: each
    `<link>`'s href as written -> its CSS), that can hide something against the page's elements
    (`inline_styles`: the page's style attributes, which decide what can hide). Sheets apply in
    the page's order, each under its media attribute; a linked sheet not in `linked` is unread.

    Rules that can hide are matched first, the rules that can only override them after, so that
    no number of harmless rules spends the budgets before a hiding one. When a budget runs out
    among the rules that can hide, the elements those left may match are `unchecked`: the walk
    takes them out (fails closed). Among the others, what their unapplied rules would show again
    stays hidden."""
    linked = linked or {}
    external = False  # a stylesheet linked and not read
    sheets: list[tuple[str, int]] = []  # (CSS, the screens its media attribute holds on)
    for node in doc.iter("style", "link"):
        if node.tag == "link":
            if not is_stylesheet_link(node):
                continue
            text = linked.get(node.get("href").strip())
            external = external or text is None
        elif any(True for _ in node.iterancestors("template", "noscript")):
            continue
        else:
            text = node.text
        held = media_screens(node.get("media") or "")
        if text and held:
            sheets.append((text, held))
    css = "".join(text for text, _ in sheets)
    if "@import" in css:
        external = True
    page = Stylesheets({}, external)
    page.uses_variables = "var(" in css or any("var(" in style for style in inline_styles)
    if len(css) > MAX_STYLESHEET_CHARS:
        page.notices.append(
            f"{len(css)} characters of <style>: only the first {MAX_STYLESHEET_CHARS} were read"
        )
        sheets = _first_chars(sheets, MAX_STYLESHEET_CHARS)
        page.unchecked_all = True  # the rules not read may hide anything
    index = _Index(doc)
    variables = page.uses_variables
    rules: list[tuple[list[str], tuple[Declaration, ...], int]] = []
    root_variables: list[tuple[int, int, str, str]] = []  # (rank, order, name, value)
    # Each sheet is split alone, as a browser parses it: a brace left open ends with its sheet.
    split = [rule for text, held in sheets if text.strip() for rule in _split_stylesheet(text, held)]
    for number, (selectors, block, held) in enumerate(split):
        custom = variables and "--" in block
        if not custom and not _DECLARED.search(block):
            continue
        found = None
        if custom:
            ranks = [_ROOT_RANK.get("".join(s.split()).lower()) for s in _split_selectors(selectors)]
            rank = max((r for r in ranks if r is not None), default=None)
            # Custom properties are the first screen's (the laptop's) for every screen: a page
            # whose variables change with the width is judged as that screen sees it.
            if rank is not None and held & 1:
                found = declarations(block, custom=True)
                root_variables.extend((rank, number, d[0], d[1]) for d in found if d[0].startswith("--"))
        candidates = [s for s in _split_selectors(selectors) if _could_match(s, index)]
        if candidates:
            found = found if found is not None else declarations(block, custom=custom)
            if found:
                rules.append((candidates, found, held))
    parsed_inline = [declarations(style, custom=variables) for style in inline_styles]
    every = [d for _, decls, _ in rules for d in decls] + [d for decls in parsed_inline for d in decls]
    known: dict[str, str] = {}  # a value for each custom property, to judge what can hide
    used_by: dict[str, set[str]] = {}  # custom property -> the properties whose values use it
    if variables:
        body = doc.find("body")
        for rank, element in ((8, doc), (9, body)):
            if element is not None and element.get("style"):
                for name, value, _ in declarations(element.get("style"), custom=True):
                    if name.startswith("--"):
                        root_variables.append((rank, 0, name, value))
        page.variables = {name: value for _, _, name, value in sorted(root_variables)}
        known = {d[0]: d[1] for d in every if d[0].startswith("--")}
        known.update(page.variables)
        used_by = _variable_uses(every)
    # What can hide: the declarations, and each custom property's values where they are used.
    hiding = _Hiding(
        _resolved(every, known)
        + _resolved([(p, d[1], False) for d in every if d[0] in used_by for p in used_by[d[0]]], known),
        external,
    )
    groups = hiding.groups
    if doc.xpath("boolean(//*[@hidden] | //dialog[not(@open)])"):
        groups.add("display")  # a rule may give a `hidden` element, a closed dialog, its display back
    group_of = dict(_GROUP_OF)
    for name, props in used_by.items():
        group_of[name] = " ".join({g for p in props for g in _GROUP_OF.get(p, "").split()})
    # Each selector keeps its place in the page's order, whichever pass matches it.
    can_hide: list[tuple[list[str], tuple[Declaration, ...], int, int]] = []
    can_show: list[tuple[list[str], tuple[Declaration, ...], int, int]] = []
    order = 0
    for selectors, rule_declarations, held in rules:
        kept = tuple(d for d in rule_declarations if any(g in groups for g in group_of.get(d[0], "").split()))
        if not kept:
            continue
        as_used = [(p, d[1], False) for d in kept if d[0] in used_by for p in used_by[d[0]]]
        hides = any(hiding.hides(prop, value) for prop, value, _ in _resolved(list(kept) + as_used, known))
        (can_hide if hides else can_show).append((selectors, kept, order, held))
        order += len(selectors)
    page.screens = _screen_kinds([held for *_, held in can_hide + can_show])
    matcher = _Matcher(index, page.matched)
    left = matcher.run(can_hide)
    if left:
        page.notices.append(
            f"stylesheet too large: its budget of {matcher.exhausted} ran out after {matcher.applied} "
            f"selectors; {len(left)} more, of rules that can hide content, were not applied"
        )
        if not page.unchecked_all:
            suspects = _suspects(left, index)
            if suspects is None:
                page.unchecked_all = True
            else:
                page.unchecked = suspects
        return page
    left = matcher.run(can_show)
    if left:
        page.notices.append(
            f"stylesheet too large: its budget of {matcher.exhausted} ran out after {matcher.applied} "
            f"selectors; {len(left)} more, of rules that can only show content again, were not "
            "applied: what they would show is taken out with what they hide"
        )
    return page


# Selectors for the page's root and body, whose custom properties every element inherits (in
# this order of precedence: :root beats html, body's reach the text first).
_ROOT_RANK = {"html": 0, ":root": 1, "html:root": 2, "body": 3, "html>body": 4, "htmlbody": 4}


_VARIABLE_USE = re.compile(r"var\(\s*(--[\w-]+)")


def _variable_uses(found: list[Declaration]) -> dict[str, set[str]]:
    """Custom property -> the properties (not custom) whose values use it, directly or through
    other custom properties."""
    edges = [
        (prop, name) for prop, value, _ in found if "var(" in value for name in _VARIABLE_USE.findall(value)
    ]
    used_by: dict[str, set[str]] = {}
    for prop, name in edges:
        if not prop.startswith("--"):
            used_by.setdefault(name, set()).add(prop)
    for _ in range(8):  # chains of variables are short
        grown = False
        for prop, name in edges:
            if prop.startswith("--") and prop in used_by:
                into = used_by.setdefault(name, set())
                size = len(into)
                into |= used_by[prop]
                grown = grown or len(into) != size
        if not grown:
            break
    return used_by


def _resolved(found: Iterable[Declaration], variables: dict[str, str]) -> list[Declaration]:
    """Declarations with var() substituted and shorthands expanded, custom properties and void
    values left out."""
    out: list[Declaration] = []
    for prop, value, important in found:
        if prop.startswith("--"):
            continue
        if "var(" in value:
            substituted = substitute(value, variables)
            if substituted is None:
                continue
            value = substituted
        if prop in _SHORTHANDS:
            out.extend((longhand, part, important) for longhand, part in _expand(prop, value))
        else:
            out.append((prop, value, important))
    return out


class _Matcher:
    """Rules matched against the page, within the budgets."""

    def __init__(self, index: _Index, matched: dict[Any, list[Any]]) -> None:
        self.index = index
        self.matched = matched
        self.selected: dict[str, Any] = {}
        self.matches = 0
        self.applied = 0  # selectors
        self.exhausted = ""  # which budget ran out
        self.cpu_started = time.thread_time()

    def _spent(self) -> str:
        if len(self.selected) >= MAX_SELECTORS:
            return f"{MAX_SELECTORS} distinct selectors"
        if self.matches >= MAX_MATCHES:
            return f"{MAX_MATCHES} matches"
        if self.index.work >= MAX_MATCH_WORK:
            return f"{MAX_MATCH_WORK} element tests"
        if time.thread_time() - self.cpu_started > MATCH_CPU_SECONDS:
            return f"{MATCH_CPU_SECONDS:g} s of CPU time"
        return ""

    def run(self, rules: list[tuple[list[str], tuple[Declaration, ...], int, int]]) -> list[str]:
        """Apply the rules in turn; the selectors left when a budget ran out."""
        for number, (selectors, kept, first, held) in enumerate(rules):
            for at, text in enumerate(selectors):
                self.exhausted = self._spent()
                if self.exhausted:
                    return selectors[at:] + [s for rule in rules[number + 1 :] for s in rule[0]]
                hit = self.selected.get(text, _UNSEEN)
                if hit is _UNSEEN:
                    try:
                        hit = self.index.select(text, MAX_MATCH_WORK - self.index.work)
                    except _OverBudget:
                        self.exhausted = f"{MAX_MATCH_WORK} element tests"
                        return selectors[at:] + [s for rule in rules[number + 1 :] for s in rule[0]]
                    self.selected[text] = hit
                self.applied += 1
                if hit is None:
                    continue
                specificity, elements = hit
                source = f"stylesheet rule {_short(text)}"
                entry = (specificity, first + at, kept, source, held)
                for element in elements:
                    self.matched.setdefault(element, []).append(entry)
                self.matches += len(elements)
        return []


_UNSEEN = object()


def _suspects(selectors: list[str], index: _Index) -> set[Any] | None:
    """The elements the selectors may match (those carrying each one's rightmost id, class or
    tag: a superset), or None when a selector requires none of those (`*`, `[data-x]`, `:is()`)."""
    keys = {_required_key(text) for text in selectors}
    if None in keys:
        return None
    found: set[Any] = set()
    for key in keys:
        found.update(index.elements(key))
    return found


def _required_key(selector: str) -> tuple[str, str] | None:
    """An id, class or tag an element must carry to match the selector (its rightmost compound's,
    an id first), read without parsing; None when there is none to read."""
    simple = re.sub(r"\[[^\]]*\]", "", selector) if "[" in selector else selector
    for _ in range(3):
        if "(" not in simple:
            break
        simple = re.sub(r"\([^()]*\)", "", simple)
    if "(" in simple or "|" in simple or not simple.strip():
        return None
    last = re.split(r"\s*[>+~]\s*|\s+", simple.strip())[-1]
    keys: dict[str, str] = {}
    for prefix, word in _SELECTOR_WORD.findall(last):
        if "\\" in word:
            if re.search(r"\\[0-9a-fA-F]", word):
                continue
            word = re.sub(r"\\(.)", r"\1", word)
        if prefix == "#":
            keys.setdefault("id", word)
        elif prefix == ".":
            keys.setdefault("class", word)
        elif prefix == "" and word[0].isalpha():
            keys.setdefault("tag", word.lower())
    for kind in ("id", "class", "tag"):
        if kind in keys:
            return kind, keys[kind]
    return None


class _Index:
    """The page's elements by id, class and tag, built on first use, and selector matching that
    starts from them, in time linear in the page per compound selector: XPath that cssselect
    writes for descendant and sibling combinators costs the square of the page or worse (`div div`
    on 100,000 nested divs: a minute), so combinators are followed here, in sets.

    Every step is charged to `work` (elements tested or reached, times a factor for
    pseudo-classes that look at siblings or descendants) before or as it runs; a selector that
    would go past its allowance stops with _OverBudget. The cost depends on the page and the
    selectors only, never on the machine or on what runs beside it."""

    def __init__(self, doc: Any) -> None:
        from cssselect import HTMLTranslator

        self.doc = doc
        self._ids: dict[str, list[Any]] | None = None
        self._classes: dict[str, list[Any]] | None = None
        self._tags: dict[str, list[Any]] = {}
        self._translator = HTMLTranslator()
        self._size: int | None = None
        self._shape: tuple[int, int, int] | None = None
        self.work = 0
        self._limit = 0
        # the selector being matched: what testing one element costs (see _factor), and whether
        # it counts the element's siblings too
        self._per_element = 1
        self._siblings = False

    def size(self) -> int:
        if self._size is None:
            self._size = int(self.doc.xpath("count(//*)"))
        return self._size

    def shape(self) -> tuple[int, int, int]:
        """(the deepest nesting, the most children of one element, the sum over elements of
        their parent's children: what counting every element's siblings costs)."""
        if self._shape is None:
            from lxml import etree

            depth = deepest = 0
            sizes = [len(element) for element in self.doc.iter(etree.Element)]
            for event, _ in etree.iterwalk(self.doc, events=("start", "end")):
                depth += 1 if event == "start" else -1
                deepest = max(deepest, depth)
            self._shape = (deepest, max(sizes, default=0), sum(size * size for size in sizes))
        return self._shape

    def ids(self) -> dict[str, list[Any]]:
        if self._ids is None:
            self._ids = {}
            for element in self.doc.xpath("//*[@id]"):
                self._ids.setdefault(element.get("id"), []).append(element)
        return self._ids

    def classes(self) -> dict[str, list[Any]]:
        if self._classes is None:
            self._classes = {}
            for element in self.doc.xpath("//*[@class]"):
                for name in set(element.get("class").split()):
                    self._classes.setdefault(name, []).append(element)
        return self._classes

    def tag(self, name: str) -> list[Any]:
        found = self._tags.get(name)
        if found is None:
            found = self._tags[name] = list(self.doc.iter(name))
        return found

    def has_tag(self, name: str) -> bool:
        return bool(self.tag(name))

    def elements(self, key: tuple[str, str]) -> list[Any]:
        """The elements carrying an id, class or tag, in document order."""
        kind, name = key
        if kind == "id":
            return self.ids().get(name, [])
        if kind == "class":
            return self.classes().get(name, [])
        return self.tag(name)

    def _charge(self, amount: int) -> None:
        self.work += amount
        if self.work > self._limit:
            raise _OverBudget

    def select(self, text: str, allowance: int) -> tuple[tuple[int, int, int], list[Any]] | None:
        """(specificity, the matching elements), or None for a selector cssselect cannot read (it
        then matches nothing, as a browser drops a rule it cannot parse). Raises _OverBudget when
        matching would cost more than `allowance`."""
        from cssselect import SelectorError, parse
        from lxml import etree

        if len(text) > 1000:
            return None  # no stylesheet needs it; a hostile one would make parsing slow
        try:
            (selector,) = parse(text)
            if selector.pseudo_element is not None:
                return None
            specificity = selector.specificity()
            self._limit = self.work + allowance
            self._per_element = self._factor(text)
            self._siblings = _SIBLING_PSEUDO.search(text.lower()) is not None
            return specificity, self._match(selector.parsed_tree)
        except (SelectorError, etree.XPathError, ValueError, TypeError, RecursionError):
            return None

    def _factor(self, text: str) -> int:
        """What testing one element costs, in elements, for the selector's pseudo-classes:
        :has() searches descendants, :not() with a combinator climbs ancestors (:nth-child()
        and its kin count siblings: _cost)."""
        lowered = text.lower()
        factor = 1
        if ":has(" in lowered:
            # each descendant step inside searches a subtree: on average the page's depth
            inner = lowered.split(":has(", 1)[1]
            factor *= (1 + self.shape()[0]) ** (1 + min(4, len(_DESCENDANT_STEP.findall(inner))))
        if re.search(r":not\([^)]*[^\s(]\s*[\s>+~]\s*[^\s)]", lowered):
            factor *= 1 + max(self.shape()[:2])
        return factor

    def _cost(self, elements: list[Any] | None, steps: int = 1) -> int:
        """What testing `elements` (None: the whole page) against the selector costs."""
        if elements is None:
            count, siblings = self.size(), (self.shape()[2] if self._siblings else 0)
        else:
            count = len(elements)
            siblings = 0
            if self._siblings:
                siblings = sum(len(parent) for e in elements if (parent := e.getparent()) is not None)
        return (count + siblings) * steps * self._per_element

    def _match(self, tree: Any) -> list[Any]:
        from lxml import etree

        links = _chain(tree)
        combinators = [combinator for combinator, _ in links[1:]]
        if len(links) == 1:
            return self._compound(tree, None)
        key, _ = _compound_key(links[-1][1])
        candidates = self.elements(key) if key else None
        if candidates is not None and len(candidates) <= 50 and sum(c in " ~" for c in combinators) <= 1:
            # Right to left on the few elements that can match: one climb up each one's
            # ancestors or back along its siblings.
            back = "count(ancestor::*)" if " " in combinators else "count(preceding-sibling::*)"
            climbs = sum(int(element.xpath(back)) for element in candidates)
            self._charge(self._cost(candidates, len(links)) + climbs * len(links) * self._per_element)
            test = etree.XPath(f"boolean({_match_condition(self._translator, tree)})")
            return [element for element in candidates if test(element)]
        current = self._compound(links[0][1], None)
        for combinator, compound in links[1:]:
            if not current:
                return []
            current = self._compound(compound, self._reach(current, combinator))
        return current

    def _reach(self, elements: list[Any], combinator: str) -> dict[Any, None]:
        """The elements a combinator leads to from `elements` (mostly in document order, as
        they come): each is reached once, so this costs at most the page (twice, when an
        element comes before its ancestor)."""
        from lxml import etree

        reach: dict[Any, None] = {}
        for element in elements:
            before = len(reach)
            if combinator == " ":
                if element not in reach:  # else inside an earlier one: its descendants are in
                    reach.update(dict.fromkeys(element.iterdescendants(etree.Element)))
            elif combinator == ">":
                reach.update(dict.fromkeys(element.iterchildren(etree.Element)))
            elif combinator == "+":
                reach.update(dict.fromkeys(itertools.islice(element.itersiblings(etree.Element), 1)))
            elif element not in reach:  # "~"
                reach.update(dict.fromkeys(element.itersiblings(etree.Element)))
            self._charge(1 + len(reach) - before)
        return reach

    def _compound(self, compound: Any, within: dict[Any, None] | None) -> list[Any]:
        """The elements matching one compound selector (among `within`): those carrying its id,
        class or tag, or those reached, whichever are fewer, tested; or the page searched."""
        from lxml import etree

        key, parts = _compound_key(compound)
        pool = self.elements(key) if key is not None else None
        if within is not None and (pool is None or len(within) < len(pool)):
            pool, within = list(within), None
            parts = 2  # the key is to be tested too
        if pool is not None:
            self._charge(len(pool))
            if within is not None:
                pool = [element for element in pool if element in within]
            if parts == 1:
                return pool
            condition = _match_condition(self._translator, compound)
            if condition == "true()":
                return pool
            if len(pool) <= 300:
                self._charge(self._cost(pool))
                test = etree.XPath(f"boolean({condition})")
                return [element for element in pool if test(element)]
            within = dict.fromkeys(pool)
        else:
            condition = _match_condition(self._translator, compound)
        self._charge(self._cost(None))
        found = etree.XPath(f"descendant-or-self::*[{condition}]")(self.doc)
        return found if within is None else [element for element in found if element in within]


class _OverBudget(Exception):
    """Matching a selector would cost more than the budget left."""


_SIBLING_PSEUDO = re.compile(r":(?:first|last|only|nth|nth-last)-(?:child|of-type)")
_DESCENDANT_STEP = re.compile(r"[^\s>+~(,]\s+[^\s>+~),]")


def _chain(tree: Any) -> list[tuple[str | None, Any]]:
    """A selector as its compounds, left to right, each with the combinator before it."""
    from cssselect.parser import CombinedSelector

    links: list[tuple[str | None, Any]] = []
    while isinstance(tree, CombinedSelector):
        links.append((tree.combinator, tree.subselector))
        tree = tree.selector
    links.append((None, tree))
    links.reverse()
    return links


def _compound_key(compound: Any) -> tuple[tuple[str, str] | None, int]:
    """The id, class or tag an element must carry to match a compound selector (the most
    selective), and how many simple selectors the compound has."""
    from cssselect.parser import Class, Element, Hash

    found: dict[str, str] = {}
    parts = 0
    node = compound
    while node is not None:
        parts += 1
        if isinstance(node, Hash):
            found.setdefault("id", node.id)
        elif isinstance(node, Class):
            found.setdefault("class", node.class_name)
        elif isinstance(node, Element):
            if node.element and not node.namespace:
                found.setdefault("tag", node.element.lower())
            elif node.element is None:
                parts -= 1  # the implicit universal selector
            break
        node = getattr(node, "selector", None)
    for kind in ("id", "class", "tag"):
        if kind in found:
            return (kind, found[kind]), parts
    return None, parts


def _match_condition(translator: Any, tree: Any) -> str:
    """An XPath condition that holds on an element matching the selector tree: the rightmost
    compound tested on the element, combinators followed backwards (ancestor, parent, preceding
    sibling)."""
    from cssselect.parser import CombinedSelector

    if isinstance(tree, CombinedSelector):
        axis = _REVERSE_AXIS[tree.combinator]
        left = _match_condition(translator, tree.selector)
        right = _match_condition(translator, tree.subselector)
        return f"({right}) and {axis}[{left}]"
    expression = translator.xpath(tree)
    expression.add_name_test()
    return expression.condition or "true()"


_REVERSE_AXIS = {
    " ": "ancestor::*",
    ">": "parent::*",
    "+": "preceding-sibling::*[1]",
    "~": "preceding-sibling::*",
}


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


_INLINE = "inline style"


def cascade(
    entries: list[Any] | None, inline: tuple[Declaration, ...], screen: int | None = None
) -> dict[str, tuple[str, str]]:
    """Property -> (value, where it came from) for one element: rules by specificity and order,
    then the style attribute, then !important the same way. With `screen` (a bit of
    media.SCREENS), only the rules that hold on that screen."""
    style: dict[str, tuple[str, str]] = {}
    important: list[tuple[str, str, str]] = []
    if entries and screen is not None:
        entries = [entry for entry in entries if entry[4] & screen]
    if entries:
        entries.sort(key=lambda entry: (entry[0], entry[1]))
        for _, _, declarations, source, _ in entries:
            for prop, value, is_important in declarations:
                if is_important:
                    important.append((prop, value, source))
                else:
                    style[prop] = (value, source)
    for prop, value, is_important in inline:
        if not is_important:
            style[prop] = (value, _INLINE)
    for prop, value, source in important:
        style[prop] = (value, source)
    for prop, value, is_important in inline:
        if is_important:
            style[prop] = (value, _INLINE)
    return style


def font_px(value: str, parent: float) -> float | None:
    if value in _FONT_KEYWORDS:
        return _FONT_KEYWORDS[value]
    if value in ("inherit", "unset"):
        return parent
    if value in ("initial", "revert"):
        return ROOT_FONT_PX
    if value == "smaller":
        return parent / 1.2
    if value == "larger":
        return parent * 1.2
    return _length_px(value, em=parent, percent_of=parent)


_ACCESSIBILITY_CLASS = re.compile(
    r"(?:^|\s)([\w-]*(?:sr-only|visually-?hidden|screen-?reader|a11y|assistive)[\w-]*)", re.I
)


def hidden_by_css(style: dict[str, tuple[str, str]], element: Any) -> str | None:
    """Why this element and everything in it is not shown (properties a child cannot undo)."""
    got = style.get
    if (display := got("display")) and display[0].split()[0:1] == ["none"]:
        return f"display:none ({display[1]})"
    if (visibility := got("content-visibility")) and visibility[0] == "hidden":
        return f"content-visibility:hidden ({visibility[1]})"
    for prop in ("transform", "scale", "translate"):
        if entry := got(prop):
            if prop == "transform":
                why = _transform_hides(entry[0])
            elif prop == "scale":
                why = "scaled to nothing" if opacity(entry[0].split()[0] if entry[0] else "") == 0 else None
            else:
                px = _length_px(entry[0].split()[0]) if entry[0] else None
                why = "moved off-screen" if px is not None and px <= OFF_SCREEN_PX else None
            if why:
                return f"{why}: {prop}:{entry[0]} ({entry[1]})"
    position = got("position", ("static", ""))[0]
    if position in ("absolute", "fixed", "relative", "sticky"):
        for prop in ("left", "top", "right"):
            if entry := got(prop):
                px = _length_px(entry[0])
                if px is not None and px <= OFF_SCREEN_PX:
                    return f"off-screen: {prop}:{entry[0]} ({entry[1]})"
    if position in ("absolute", "fixed"):
        for prop, opposite, margin, extent in (
            ("top", "bottom", "margin-top", "height"),
            ("left", "right", "margin-left", "width"),
        ):
            if (entry := got(prop)) and got(opposite, ("auto", ""))[0] in ("auto", "initial", "unset"):
                px = _length_px(entry[0])
                if px is None or px > OFF_SCREEN_PLACED_PX:
                    continue
                px += _length_px(got(margin, ("0", ""))[0]) or 0.0
                size = _length_px(got(extent, ("auto", ""))[0])
                if px <= OFF_SCREEN_PLACED_PX and (size is None or px + size <= 0):
                    return f"off-screen: position:{position}; {prop}:{entry[0]} ({entry[1]})"
    for prop in ("margin-left", "margin-top"):
        if entry := got(prop):
            px = _length_px(entry[0])
            if px is not None and px <= OFF_SCREEN_PX:
                return f"off-screen: {prop}:{entry[0]} ({entry[1]})"
    if entry := got("text-indent"):
        px = _length_px(entry[0].split()[0], percent_of=VIEWPORT[0]) if entry[0] else None
        if px is not None and px <= TEXT_INDENT_PX:
            return f"text pushed off-screen: text-indent:{entry[0]} ({entry[1]})"
    accessibility = _ACCESSIBILITY_CLASS.search(element.get("class") or "")
    note = (
        f"; the visually-hidden pattern of screen-reader text (class {accessibility[1]})"
        if accessibility
        else ""
    )
    if position in ("absolute", "fixed") and (entry := got("clip")) and _clip_is_empty(entry[0]):
        return f"clipped to nothing: clip:{entry[0]} ({entry[1]}){note}"
    if (entry := got("clip-path")) and _clip_path_is_empty(entry[0]):
        return f"clipped to nothing: clip-path:{entry[0]} ({entry[1]}){note}"
    for size_prop, overflow_prop, padding_props in (
        ("height", "overflow-y", ("padding-top", "padding-bottom")),
        ("width", "overflow-x", ()),
    ):
        if got(overflow_prop, ("", ""))[0] not in ("hidden", "clip"):
            continue
        # the height, or the max-height that caps it; a min-height above 1px wins over both
        small = next(
            (
                (prop, entry)
                for prop in (size_prop, f"max-{size_prop}")
                if (entry := got(prop)) and (px := _length_px(entry[0])) is not None and px <= 1
            ),
            None,
        )
        if small is None:
            continue
        least = got(f"min-{size_prop}", ("auto", ""))[0]
        if least not in ("auto", "initial", "unset", "none") and not (
            (px := _length_px(least)) is not None and px <= 1
        ):
            continue
        padded = any(
            (_length_px(got(p, ("0", ""))[0]) or 0) > 1 or "%" in got(p, ("", ""))[0] for p in padding_props
        )
        if not padded:
            prop, entry = small
            return f"a {prop} of {entry[0]} with overflow hidden ({entry[1]}){note}"
    return None

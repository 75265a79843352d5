"""What a page's CSS says about whether its text can be seen: inline styles and `<style>`
rules, matched against the page (cssselect), cascaded (specificity, order, !important), and read
for the properties that hide text. The rules of hidden.py's module docstring; this module only
answers "which declarations apply to this element" and "does this style hide it".

A desktop screen is assumed (1280x800, light scheme, scripts on, 1 device pixel per CSS pixel):
`@media` rules hold or not for it, and an unknown media feature does not hold. Stylesheets are
split with regular expressions rather than a CSS tokenizer: this runs on every page read, a page
may carry a megabyte of CSS, and only selectors and declaration blocks are needed (tinycss2
parses colours). Rules that cannot match (a class, id or tag the page lacks, a pseudo-element, a
hover or focus state) and declarations that cannot hide anything on this page are dropped before
any selector is compiled."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

OPACITY_HIDDEN = 0.05
FONT_HIDDEN_PX = 2.0
OFF_SCREEN_PX = -1000.0
TEXT_INDENT_PX = -999.0
COLOUR_TOLERANCE = 10 / 255  # per channel: #fafafa on #ffffff is the same colour to a reader
VIEWPORT = (1280.0, 800.0)
ROOT_FONT_PX = 16.0
# Budgets for hostile stylesheets; a real page (the article benchmark's largest carries 1 MB of
# CSS) needs a fraction of each.
MAX_STYLESHEET_CHARS = 2_000_000
MAX_SELECTORS = 4_000  # distinct selectors matched against the page
MAX_MATCHES = 2_000_000  # (rule, element) pairs recorded
STYLESHEET_SECONDS = 1.0


# --- CSS values -----------------------------------------------------------------------------

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?"
_LENGTH = re.compile(rf"({_NUMBER})([a-z%]*)")
_ABSOLUTE_PX = {
    "px": 1.0,
    "pt": 4 / 3,
    "pc": 16.0,
    "in": 96.0,
    "cm": 96 / 2.54,
    "mm": 96 / 25.4,
    "q": 96 / 101.6,
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
    """A CSS length in px, or None when it cannot be known here (calc(), auto, a percentage
    without a base)."""
    match = _LENGTH.fullmatch(value.strip())
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
    factor = _ABSOLUTE_PX.get(unit)
    return None if factor is None else number * factor


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
        match = _LENGTH.fullmatch(word)
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
    r"(?:display|visibility|opacity|filter|content-visibility|font|position|left|top|right|margin|"
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


def declarations(text: str) -> tuple[Declaration, ...]:
    """The declarations of a style attribute or rule block that this module reads, lower case,
    shorthands expanded into the longhands read."""
    if "/*" in text:
        text = re.sub(r"/\*.*?(?:\*/|$)", "", text, flags=re.S)
    found: list[Declaration] = []
    for part in _split_declarations(text):
        name, colon, value = part.partition(":")
        if not colon:
            continue
        name = name.strip().lower()
        if name not in _PROPERTIES and name not in _SHORTHANDS:
            continue
        value = value.strip().lower()
        important = False
        if "!" in value:
            stripped = _IMPORTANT.sub("", value)
            important = stripped != value
            value = stripped.strip()
        found.extend((prop, val, important) for prop, val in _expand(name, value))
    return tuple(found)


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


def _media_feature(name: str, value: str | None) -> bool:
    width, height = VIEWPORT
    if value is None:
        return name in ("color", "hover", "any-hover", "pointer", "any-pointer", "grid", "scripting")
    px = _length_px(value)
    ratio = opacity(value.replace("dppx", "").replace("x", ""))
    checks: dict[str, Callable[[], bool]] = {
        "min-width": lambda: px is not None and width >= px,
        "max-width": lambda: px is not None and width <= px,
        "min-device-width": lambda: px is not None and width >= px,
        "max-device-width": lambda: px is not None and width <= px,
        "min-height": lambda: px is not None and height >= px,
        "max-height": lambda: px is not None and height <= px,
        "width": lambda: px == width,
        "orientation": lambda: value == "landscape",
        "prefers-color-scheme": lambda: value == "light",
        "prefers-reduced-motion": lambda: value == "no-preference",
        "prefers-contrast": lambda: value == "no-preference",
        "forced-colors": lambda: value == "none",
        "hover": lambda: value == "hover",
        "any-hover": lambda: value == "hover",
        "pointer": lambda: value == "fine",
        "any-pointer": lambda: value == "fine",
        "scripting": lambda: value == "enabled",
        "display-mode": lambda: value == "browser",
        "min-resolution": lambda: ratio is not None and ratio <= 1,
        "-webkit-min-device-pixel-ratio": lambda: ratio is not None and ratio <= 1,
        "min--moz-device-pixel-ratio": lambda: ratio is not None and ratio <= 1,
        "max-resolution": lambda: ratio is not None and ratio >= 1,
        "-webkit-max-device-pixel-ratio": lambda: ratio is not None and ratio >= 1,
    }
    check = checks.get(name)
    return check() if check else False


@lru_cache(maxsize=1024)
def _media_applies(query: str) -> bool:
    """Whether a media query list holds on the assumed screen; an unknown feature does not."""
    query = query.strip().lower()
    if not query:
        return True
    for one in query.split(","):
        words = one.strip()
        negate = words.startswith("not ")
        words = words.removeprefix("not ").removeprefix("only ").strip()
        holds = True
        for part in re.split(r"\s+and\s+|\)\s*and\s*\(", words):
            part = part.strip().strip("()").strip()
            if part in ("all", "screen", ""):
                continue
            name, colon, value = part.partition(":")
            if re.fullmatch(r"[a-z-]+", name.strip()) is None or (
                not colon and part.startswith(("print", "speech"))
            ):
                holds = False
                break
            if not _media_feature(name.strip(), value.strip() if colon else None):
                holds = False
                break
        if holds != negate:
            return True
    return False


def _split_stylesheet(css: str) -> list[tuple[str, str]]:
    """(selector list, declaration block) of every style rule that applies on the assumed
    screen, in order: `@media` evaluated, `@supports`/`@layer` entered, other at-rules (font
    faces, keyframes, pages) and nested rules skipped. Regular expressions, not a tokenizer:
    this runs on every page and a page may carry a megabyte of CSS."""
    rules: list[tuple[str, str]] = []
    # Open blocks: "group" (an at-rule holding rules) or ["rule", selectors, declaration parts,
    # where the current part starts]; blocks being skipped are only counted.
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
            if stack and stack[-1] != "group":  # a rule nested in a rule (CSS nesting): skipped
                rule = stack[-1]
                rule[2].append(css[rule[3] : match.start()].rpartition(";")[0])
                skipping = 1
                continue
            if "/*" in prelude:
                prelude = re.sub(r"/\*.*?(?:\*/|$)", "", prelude, flags=re.S)
            prelude = prelude.rpartition(";")[2].strip()  # after any @import or @charset
            if prelude.startswith("@"):
                name = re.match(r"@[\w-]*", prelude).group().lower()  # "@media(min-width:9px)" too
                if name in _GROUPING_AT_RULES and (name != "@media" or _media_applies(prelude[6:])):
                    stack.append("group")
                else:
                    skipping = 1
                continue
            stack.append(["rule", prelude, [], start])
        elif token == "}":
            if skipping:
                skipping -= 1
                if skipping == 0 and stack and stack[-1] != "group":
                    stack[-1][3] = match.end()  # the parent rule's declarations resume
                start = match.end()
                continue
            if stack:
                block = stack.pop()
                if block != "group":
                    block[2].append(css[block[3] : match.start()])
                    rules.append((block[1], ";".join(block[2])))
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

    matched: dict[Any, list[tuple[tuple[int, int, int], int, tuple[Declaration, ...], str]]]
    external: bool  # a stylesheet we did not read: colours may be set where we cannot see
    notices: list[str] = field(default_factory=list)  # why some of the CSS was not applied


def _hiding_groups(declarations: Iterable[Declaration], text_colours: set, backgrounds: set) -> set[str]:
    """Which properties can hide anything on this page: a property no declaration gives a hiding
    value need not be matched at all (its other values only override)."""
    groups: set[str] = set()
    sizes = overflow = False
    for prop, value, _ in declarations:
        if prop == "display" and value.startswith("none"):
            groups.add("display")
        elif prop == "visibility" and value in ("hidden", "collapse"):
            groups.add("visibility")
        elif prop in ("opacity", "filter"):
            number = opacity(value) if prop == "opacity" else filter_opacity(value)
            if number is not None and number <= OPACITY_HIDDEN:
                groups.add("opacity")
        elif prop == "content-visibility" and value == "hidden":
            groups.add("content-visibility")
        elif prop == "font-size":
            px = font_px(value, ROOT_FONT_PX)
            if px is not None and px < FONT_HIDDEN_PX:
                groups.add("font-size")
        elif prop in ("left", "top", "right", "margin-left", "margin-top", "translate"):
            px = _length_px(value.split()[0]) if value else None
            if px is not None and px <= OFF_SCREEN_PX:
                groups.add("offset")
        elif prop in ("transform", "scale"):
            if (
                _transform_hides(value)
                if prop == "transform"
                else opacity(value.split()[0] if value else "") == 0
            ):
                groups.add("offset")
        elif prop == "text-indent":
            px = _length_px(value.split()[0], percent_of=VIEWPORT[0]) if value else None
            if px is not None and px <= TEXT_INDENT_PX:
                groups.add("offset")
        elif (prop == "clip" and _clip_is_empty(value)) or (
            prop == "clip-path" and _clip_path_is_empty(value)
        ):
            groups.add("clip")
        elif prop in ("width", "height"):
            px = _length_px(value)
            sizes = sizes or (px is not None and px <= 1)
        elif prop in ("overflow-x", "overflow-y"):
            overflow = overflow or value in ("hidden", "clip")
        elif prop == "color":
            parsed = colour(value)
            if isinstance(parsed, tuple):
                text_colours.add(parsed)
        elif prop == "background-color":
            parsed = colour(value)
            if isinstance(parsed, tuple):
                backgrounds.add(parsed)
    if sizes and overflow:
        groups.add("size")
    return groups


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
    "margin-left": "offset",
    "margin-top": "offset",
    "text-indent": "offset",
    "transform": "offset",
    "translate": "offset",
    "scale": "offset",
    "clip": "clip",
    "clip-path": "clip",
    "width": "size",
    "height": "size",
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
}


def _colours_collide(text_colours: set, backgrounds: set) -> bool:
    if any(text[3] <= 0.1 for text in text_colours):
        return True
    if len(text_colours) * len(backgrounds) > 250_000:
        return True
    return any(same_colour(t, b) for t in text_colours for b in backgrounds if b[3] >= 0.9)


def filter_opacity(value: str) -> float | None:
    match = re.search(r"opacity\(([^)]*)\)", value)
    return opacity(match[1]) if match else None


def read_stylesheets(doc: Any, inline_styles: list[str]) -> Stylesheets:
    """Match the `<style>` rules that can hide something against the page's elements
    (`inline_styles`: the page's style attributes, which decide what can hide)."""
    deadline = time.monotonic() + STYLESHEET_SECONDS
    external = any("stylesheet" in (link.get("rel") or "").lower() for link in doc.iter("link"))
    sheets = []
    size = 0
    for style in doc.iter("style"):
        if not style.text or any(True for _ in style.iterancestors("template", "noscript")):
            continue
        if not _media_applies(style.get("media") or ""):
            continue
        sheets.append(style.text)
        size += len(style.text)
    css = "".join(sheets)
    if "@import" in css:
        external = True
    matched: dict[Any, list[Any]] = {}
    notices: list[str] = []
    if len(css) > MAX_STYLESHEET_CHARS:
        notices.append(f"{size} characters of <style>: only the first {MAX_STYLESHEET_CHARS} were read")
        css = css[:MAX_STYLESHEET_CHARS]
    if not css.strip():
        return Stylesheets(matched, external, notices)
    index = _Index(doc)
    rules: list[tuple[list[str], tuple[Declaration, ...]]] = []
    for selectors, block in _split_stylesheet(css):
        if not _DECLARED.search(block):
            continue
        candidates = [s for s in _split_selectors(selectors) if _could_match(s, index)]
        if candidates:
            found = declarations(block)
            if found:
                rules.append((candidates, found))
    text_colours: set = set() if external else {BLACK}
    backgrounds: set = set() if external else {WHITE}
    parsed_inline = [declarations(style) for style in inline_styles]
    groups = _hiding_groups(
        [d for _, decls in rules for d in decls] + [d for decls in parsed_inline for d in decls],
        text_colours,
        backgrounds,
    )
    if _colours_collide(text_colours, backgrounds):
        groups.add("colour")
    if doc.xpath("boolean(//*[@hidden])"):
        groups.add("display")  # a rule may give a `hidden` element its display back
    selected: dict[str, Any] = {}
    matches = 0
    order = 0
    for selectors, rule_declarations in rules:
        kept = tuple(d for d in rule_declarations if any(g in groups for g in _GROUP_OF[d[0]].split()))
        if not kept:
            continue
        for text in selectors:
            order += 1
            if time.monotonic() > deadline or len(selected) >= MAX_SELECTORS or matches >= MAX_MATCHES:
                notices.append(
                    f"stylesheet too large: rules after its first {order - 1} selectors not applied"
                )
                return Stylesheets(matched, external, notices)
            if text not in selected:
                selected[text] = index.select(text)
            hit = selected[text]
            if hit is None:
                continue
            specificity, elements = hit
            source = f"stylesheet rule {_short(text)}"
            for element in elements:
                matched.setdefault(element, []).append((specificity, order, kept, source))
            matches += len(elements)
    return Stylesheets(matched, external, notices)


class _Index:
    """The page's elements by id, class and tag, built on first use, and selector matching that
    starts from them: a rule is tested on the elements that carry its rightmost id, class or tag,
    right to left (an XPath condition on the element), instead of searching the page per rule."""

    def __init__(self, doc: Any) -> None:
        from cssselect import HTMLTranslator

        self.doc = doc
        self._ids: dict[str, list[Any]] | None = None
        self._classes: dict[str, list[Any]] | None = None
        self._tags: dict[str, list[Any]] = {}
        self._translator = HTMLTranslator()

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
        kind, name = key
        if kind == "id":
            return self.ids().get(name, [])
        if kind == "class":
            return self.classes().get(name, [])
        return self.tag(name)

    def select(self, text: str) -> tuple[tuple[int, int, int], list[Any]] | None:
        """(specificity, matching elements), or None for a selector cssselect cannot read (it
        then matches nothing, as a browser drops a rule it cannot parse). The cheapest of: the
        elements carrying the rightmost key when that is the whole selector; the page searched
        from the few elements carrying the leftmost key; each element carrying the rightmost key
        tested; the whole page searched."""
        from cssselect import SelectorError, parse
        from cssselect.parser import CombinedSelector
        from lxml import etree

        if len(text) > 1000:
            return None  # no stylesheet needs it; a hostile one would make parsing slow
        try:
            (selector,) = parse(text)
            if selector.pseudo_element is not None:
                return None
            tree = selector.parsed_tree
            specificity = selector.specificity()
            rightmost = tree.subselector if isinstance(tree, CombinedSelector) else tree
            right_key, parts = _compound_key(rightmost)
            candidates = self.elements(right_key) if right_key else None
            if candidates is not None and (not candidates or (rightmost is tree and parts == 1)):
                return specificity, candidates
            leftmost = tree
            while isinstance(leftmost, CombinedSelector):
                leftmost = leftmost.selector
            left_key, _ = _compound_key(leftmost) if leftmost is not tree else (None, 0)
            anchors = self.elements(left_key) if left_key and left_key[0] != "tag" else None
            if candidates is not None and len(candidates) <= 50:
                test = etree.XPath(f"boolean({_match_condition(self._translator, tree)})")
                return specificity, [element for element in candidates if test(element)]
            if anchors is not None and len(anchors) <= 50:
                search = etree.XPath(self._translator.selector_to_xpath(selector))
                found: dict[Any, None] = {}
                for anchor in anchors:
                    found.update(dict.fromkeys(search(anchor)))
                return specificity, list(found)
            if candidates is not None and len(candidates) <= 300:
                test = etree.XPath(f"boolean({_match_condition(self._translator, tree)})")
                return specificity, [element for element in candidates if test(element)]
            return specificity, etree.XPath(self._translator.selector_to_xpath(selector))(self.doc)
        except (SelectorError, etree.XPathError, ValueError, TypeError, RecursionError):
            return None


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


def cascade(entries: list[Any] | None, inline: tuple[Declaration, ...]) -> dict[str, tuple[str, str]]:
    """Property -> (value, where it came from) for one element: rules by specificity and order,
    then the style attribute, then !important the same way."""
    style: dict[str, tuple[str, str]] = {}
    important: list[tuple[str, str, str]] = []
    if entries:
        entries.sort(key=lambda entry: (entry[0], entry[1]))
        for _, _, declarations, source in entries:
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
        if (entry := got(size_prop)) and got(overflow_prop, ("", ""))[0] in ("hidden", "clip"):
            px = _length_px(entry[0])
            padded = any(
                (_length_px(got(p, ("0", ""))[0]) or 0) > 1 or "%" in got(p, ("", ""))[0]
                for p in padding_props
            )
            if px is not None and px <= 1 and not padded:
                return f"a {size_prop} of {entry[0]} with overflow hidden ({entry[1]}){note}"
    return None

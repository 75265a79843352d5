"""Find and strip the content of a page that a human reader never sees: text a page hides from
people but leaves for a model to read is the usual carrier of prompt injection. Each finding is a
`Threat` with the original's (groundhog-mcp 0.22.0) types; the hidden content leaves the HTML
unless the caller asks to keep it (`include_hidden`), and is reported either way.

What counts as hidden, for a sighted reader of the page at load in a browser (light scheme,
scripts on), on every screen people read on: a phone, a tablet, a laptop and a wide desktop
(media.SCREENS). Content a page shows on one of them only (a teaser for phones, a sidebar for
wide screens) is layout, not hiding: it stays.
- hidden_css: inline styles and `<style>` rules (hidden_css.py: selectors read by cssselect,
  the cascade by specificity, order and !important, `@media` evaluated for each screen, `print`
  never): display:none,
  visibility:hidden/collapse, opacity <= 0.05 (ancestors' multiplied), content-visibility:hidden,
  a font under 2px, off-screen placement (an absolutely or fixed positioned box at top or left
  <= -100px, unless its height or width, or a margin, brings it back; left/top/right,
  margins, translate <= -1000px for any other; text-indent <= -999px), zero-area clip (with
  position absolute/fixed) and clip-path, a width or height (or max-width, max-height) of at
  most 1px with overflow hidden, scale(0), and text whose colour is its background's (channels
  within 10/255) or transparent. Inherited properties (visibility, font size, colour) are
  followed down the tree, so a child that makes itself visible again stays. Custom properties
  are substituted in var(), inherited as in a browser: those of `:root`, `html` and `body`
  everywhere, those other rules and style attributes declare in the element's subtree.
  The "visually hidden" pattern of screen-reader text (`.sr-only`) is hidden from the reader
  too: it is stripped and reported, its reason naming the accessibility class.
- hidden_attribute: the `hidden` attribute (not `hidden="until-found"`, which a reader can
  find), a `<dialog>` without `open` (closed: the browser's stylesheet gives it display:none,
  unless the page's CSS gives it a display), `<input type="hidden">` whose value reads as
  words (tokens and ids are not), `aria-hidden="true"` on an element with text. Screen readers
  skip the last, but it is on screen: it is reported and kept.
- hidden_template: `<template>` and `<noscript>` with text (neither shows in a browser that runs
  scripts), and comments of more than 40 characters that speak to a reader or a model ("you",
  "ignore", "instructions", "assistant"...): pages carry dozens of developer notes, which never
  reach the agent either, since comments always leave the HTML.
- zero_width, bidi, tag: invisible characters inside text (`strip_invisible_characters`, also
  applied to every text node of the HTML); the Unicode tag characters are decoded into the
  excerpt. Characters with a legitimate job are left alone: a joiner inside an emoji sequence or
  a non-Latin script, a lone zero-width character at a word's edge, a single variation selector,
  an embedding or isolate in right-to-left text, an emoji flag's tag sequence, a byte order mark
  at the start of a text. A soft hyphen is typography, not hidden text.
Not threats: `<script>` and `<style>` bodies (never page text), `<meta>` content, `alt` and
`title` attributes (extraction does not put them in the text), hiding on `<html>` or `<body>`
(scripts reveal a whole page that way; nothing is hidden from the reader that the page shows).
Linked stylesheets are read when the caller fetched them (stylesheets.py: the page's own site
only); with one linked and not read, a colour is only compared with a background declared with it
(one style attribute or rule), since the unread sheet may set any colour or background in between.

Identical findings (type, reason and excerpt) are merged and counted in `seen`; at most
MAX_THREATS are listed, then one `report_truncated`. Work is bounded: the walk does not
recurse, and budgets hold on elements walked, selectors, matches and elements tested by
selector matching, counted in work done so that the same page gives the same answer alone or
beside others (hidden_css.py). Running out is a `detection_degraded` threat, and fails closed:
what could not be checked leaves the HTML (unless include_hidden), and `strip_incomplete` says
how much: past the element budget, the rest of the page; when rules that can hide were left
unapplied, the elements they may match (all of the body's when that cannot be narrowed). Rules
that can hide are matched before those that can only show content again, so no number of
harmless rules spends the budget before a hiding one."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .hidden_css import (
    BLACK,
    FONT_HIDDEN_PX,
    OPACITY_HIDDEN,
    ROOT_FONT_PX,
    WHITE,
    Colour,
    Declaration,
    Stylesheets,
    cascade,
    colour,
    declarations,
    filter_opacity,
    font_px,
    hex_colour,
    hidden_by_css,
    opacity,
    read_stylesheets,
    resolve_variables,
    same_colour,
)

HIDDEN_CSS = "hidden_css"
HIDDEN_ATTRIBUTE = "hidden_attribute"
HIDDEN_TEMPLATE = "hidden_template"
ZERO_WIDTH = "zero_width"
BIDI = "bidi"
TAG = "tag"
REPORT_TRUNCATED = "report_truncated"
DETECTION_DEGRADED = "detection_degraded"
STRIP_INCOMPLETE = "strip_incomplete"

MAX_THREATS = 50  # findings listed; notices (truncated, degraded, incomplete) come on top
EXCERPT_CHARS = 200
MIN_COMMENT_CHARS = 40  # shorter comments are markup notes ("end header"), not messages
# The walk's budget for hostile pages, in elements visited (never in time, which pages parsed
# side by side would share); the article benchmark's largest page has under 2,000. Past it,
# the rest of the page is taken out unchecked.
MAX_ELEMENTS = 300_000


@dataclass(frozen=True)
class Threat:
    """One finding, as the original's Threat."""

    type: str
    reason: str
    location: str | None  # "body > div.note:nth-of-type(2)", or "line 12"
    excerpt: str  # at most EXCERPT_CHARS of the hidden text, invisible characters spelled out
    seen: int = 1


# --- invisible characters ----------------------------------------------------------------

_INVISIBLE = re.compile(
    "[\u180e\u200b-\u200d\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069\ufe00-\ufe0f"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
_ZERO_WIDTH = frozenset("\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff")
_JOINERS = frozenset("\u200b\u200c\u200d")  # with a job in emoji sequences and some scripts
_OVERRIDES = frozenset("\u202d\u202e")
_RTL_LETTER = re.compile(
    "[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\U00010800-\U00010fff\U0001e800-\U0001efff]"
)
_EMOJI_FLAG = "\U0001f3f4"
# Spelled out in excerpts: controls, format characters, variation selectors, tags.
_SPELL_OUT = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\ufe00-\ufe0f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


def _is_variation_selector(ch: str) -> bool:
    return "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef"


def _is_tag(ch: str) -> bool:
    return "\U000e0000" <= ch <= "\U000e007f"


def _joins(ch: str) -> bool:
    """A character a joiner may legitimately follow: a letter or mark beyond Latin (Arabic,
    Indic, Thai, CJK...), an emoji or its modifier, a variation selector."""
    if ch < "\u0370":
        return False
    if _is_variation_selector(ch):
        return True
    category = unicodedata.category(ch)
    return category[0] in "LM" or category in ("So", "Sk")


def _code(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def _spell(text: str) -> str:
    return _SPELL_OUT.sub(lambda m: f"[{_code(m.group())}]", text)


def _excerpt(text: str, start: int = 0) -> str:
    """At most EXCERPT_CHARS of text from about `start`, whitespace collapsed and invisible
    characters spelled out; cheap on a huge text (only a window is read)."""
    window = text[max(0, start - 60) : max(0, start - 60) + 4 * EXCERPT_CHARS]
    shown = _spell(" ".join(window.split()))
    if len(shown) > EXCERPT_CHARS:
        shown = shown[: EXCERPT_CHARS - 1] + "…"
    return shown


def _decode_tags(run: str) -> str:
    return "".join(chr(ord(ch) - 0xE0000) for ch in run if "\U000e0020" <= ch <= "\U000e007e")


def _decode_selectors(run: str) -> str:
    """Bytes smuggled in variation selectors (one per byte: U+FE00.. for 0-15, U+E0100.. for
    16-255), as text."""
    data = bytes(
        ord(ch) - 0xFE00 if ch <= "\ufe0f" else ord(ch) - 0xE0100 + 16
        for ch in run
        if _is_variation_selector(ch)
    )
    return data.decode("utf-8", errors="replace")


def _scan_invisible(text: str, *, bom_allowed: bool = False) -> tuple[list[int], list[tuple[str, str, str]]]:
    """Positions of the invisible characters to strip from `text`, and the findings (type,
    reason, excerpt): at most one per type, plus one per smuggling run."""
    if not _INVISIBLE.search(text):
        return [], []
    drop: list[int] = []
    found: dict[str, list[int]] = {ZERO_WIDTH: [], BIDI: []}
    extra: list[tuple[str, str, str]] = []
    rtl: bool | None = None
    n = len(text)
    i = 0
    for match in _INVISIBLE.finditer(text):
        start = match.start()
        if start < i:
            continue  # inside a run handled below
        ch = text[start]
        if _is_tag(ch) or _is_variation_selector(ch):
            end = start
            kind = _is_tag
            if _is_variation_selector(ch):
                kind = _is_variation_selector
            while end < n and kind(text[end]):
                end += 1
            i = end
            run = text[start:end]
            if kind is _is_tag:
                before = text[start - 1] if start else ""
                if before == _EMOJI_FLAG and run[-1] == "\U000e007f" and _decode_tags(run[:-1]).isalnum():
                    continue  # an emoji subdivision flag (England, Scotland, Wales)
                drop.extend(range(start, end))
                extra.append(
                    (TAG, f"{len(run)} Unicode tag characters spelling hidden text", _decode_tags(run))
                )
            elif len(run) > 1:
                drop.extend(range(start, end))
                extra.append(
                    (
                        ZERO_WIDTH,
                        f"{len(run)} variation selectors in a row (bytes smuggled in them)",
                        _decode_selectors(run),
                    )
                )
            continue
        i = start + 1
        if ch in _ZERO_WIDTH:
            if ch == "\ufeff" and start == 0 and bom_allowed:
                continue
            if ch in _JOINERS and start and _joins(text[start - 1]):
                continue
            before = text[start - 1] if start else " "
            after = text[start + 1] if start + 1 < n else " "
            if (
                (before.isspace() or after.isspace())
                and not _INVISIBLE.match(before)
                and not _INVISIBLE.match(after)
            ):
                continue  # a lone one at the edge of a word joins or splits nothing
            found[ZERO_WIDTH].append(start)
        else:  # bidirectional controls
            if ch not in _OVERRIDES:
                if rtl is None:
                    rtl = _RTL_LETTER.search(text) is not None
                if rtl:
                    continue  # embeddings and isolates doing their job in right-to-left text
            found[BIDI].append(start)
        drop.append(start)
    findings: list[tuple[str, str, str]] = []
    for kind, positions in found.items():
        if positions:
            codes = ", ".join(sorted({_code(text[p]) for p in positions}))
            noun = "zero-width" if kind == ZERO_WIDTH else "bidirectional control"
            findings.append(
                (kind, f"{len(positions)} {noun} characters ({codes})", _excerpt(text, positions[0]))
            )
    findings.extend(extra)
    drop.sort()
    return drop, findings


def _without(text: str, positions: list[int]) -> str:
    if not positions:
        return text
    parts = []
    last = 0
    for p in positions:
        parts.append(text[last:p])
        last = p + 1
    parts.append(text[last:])
    return "".join(parts)


def strip_invisible_characters(text: str, *, include_hidden: bool = False) -> tuple[str, list[Threat]]:
    """`text` without its zero-width, bidirectional-control and tag characters (unless
    include_hidden), and the findings, one per line and type, located by line."""
    if not _INVISIBLE.search(text):
        return text, []
    report = _Report()
    lines = text.split("\n")
    for number, line in enumerate(lines):
        positions, findings = _scan_invisible(line, bom_allowed=number == 0)
        for kind, reason, excerpt in findings:
            report.add(number, kind, reason, excerpt, f"line {number + 1}")
        if positions and not include_hidden:
            lines[number] = _without(line, positions)
    return "\n".join(lines), report.threats()


# --- the report -----------------------------------------------------------------------------


class _Report:
    """Findings merged by (type, reason, excerpt), ordered by where they start in the page;
    locations are worked out only for the ones listed."""

    def __init__(self) -> None:
        # key -> [order, location (a string, a callable, or None), seen]
        self._found: dict[tuple[str, str, str], list[Any]] = {}
        self._notices: list[Threat] = []

    def add(self, order: int, kind: str, reason: str, excerpt: str, location: Any) -> None:
        key = (kind, reason, excerpt)
        entry = self._found.get(key)
        if entry is None:
            self._found[key] = [order, location, 1]
        else:
            entry[2] += 1
            if order < entry[0]:
                entry[0], entry[1] = order, location

    def notice(self, kind: str, reason: str, location: str | None = None) -> None:
        self._notices.append(Threat(kind, reason, location, ""))

    def threats(self) -> list[Threat]:
        ordered = sorted(self._found.items(), key=lambda item: item[1][0])
        listed = []
        for (kind, reason, excerpt), (_, location, seen) in ordered[:MAX_THREATS]:
            if callable(location):
                location = location()
            listed.append(Threat(kind, reason, location, excerpt, seen))
        rest = ordered[MAX_THREATS:]
        if rest:
            occurrences = sum(entry[2] for _, entry in rest)
            listed.append(
                Threat(
                    REPORT_TRUNCATED,
                    f"{len(rest)} more findings not listed ({occurrences} occurrences)",
                    None,
                    "",
                )
            )
        return listed + self._notices


# --- the page walk --------------------------------------------------------------------------


class _Inherited:
    """What an element passes to its children."""

    __slots__ = (
        "aria",
        "backdrop",
        "colour",
        "colour_hidden",
        "font_hidden",
        "font_px",
        "hidden",
        "opacity",
        "painted",
        "together",
        "variables",
        "visibility",
    )

    def __init__(self) -> None:
        self.visibility: tuple[int, str, Any] | None = None  # (order, reason, element) when hidden
        self.font_px = ROOT_FONT_PX
        self.colour: Colour | None = BLACK  # None: unknown (set by a stylesheet not read)
        self.backdrop: Colour | None = WHITE  # None: unknown (an image, a translucent layer)
        self.painted = False  # text drawn another way too: a shadow, a fill colour, a clipped background
        # With a stylesheet not read, any element between a colour and a background may get its
        # own background, and any colour may be overridden: then only a colour and a background
        # declared together (one style attribute, one rule) are compared.
        self.together = False
        self.opacity = 1.0
        self.aria = False
        # Each cause of hidden text, from where: (order, reason, element); `hidden` is the
        # first in force, the one text directly in this element is reported under.
        self.font_hidden: tuple[int, str, Any] | None = None
        self.colour_hidden: tuple[int, str, Any] | None = None
        self.hidden: tuple[int, str, Any] | None = None
        self.variables: dict[str, str] = {}  # custom properties, shared until one is declared

    def copy(self) -> _Inherited:
        other = _Inherited.__new__(_Inherited)
        other.visibility, other.font_px, other.colour = self.visibility, self.font_px, self.colour
        other.backdrop, other.painted, other.together = self.backdrop, self.painted, self.together
        other.opacity, other.aria, other.hidden = self.opacity, self.aria, self.hidden
        other.font_hidden, other.colour_hidden = self.font_hidden, self.colour_hidden
        other.variables = self.variables
        return other


_NOT_TEXT = frozenset({"script", "style"})
_NEVER_SHOWN = frozenset({"title", "meta", "link", "base"})  # metadata, not taken out unchecked
_STRUCTURE = frozenset({"html", "body", "head"})
_BGCOLOR_TAGS = frozenset({"body", "table", "tr", "td", "th"})
_WORDS = re.compile(r"[^\W\d_]{2,}")


def _subtree_text(element: Any, limit: int = 4 * EXCERPT_CHARS) -> str:
    """The text inside an element (not its tail), script and style bodies left out, read up to
    about `limit` characters."""
    parts: list[str] = []
    size = 0
    if element.text and element.tag not in _NOT_TEXT:
        parts.append(element.text)
        size += len(element.text)
    for node in element.iterdescendants():
        if size >= limit:
            break
        tag = node.tag
        if isinstance(tag, str) and tag not in _NOT_TEXT and node.text:
            parts.append(node.text)
            size += len(node.text)
        if node.tail:
            parts.append(node.tail)
            size += len(node.tail)
    return "".join(parts)


def _path(element: Any) -> str:
    """A CSS-ish path to an element: from the nearest ancestor with an id, or from body, at most
    six steps."""
    steps: list[str] = []
    node = element
    while node is not None and isinstance(node.tag, str) and node.tag not in ("html",):
        tag = node.tag
        if tag == "body":
            steps.append("body")
            break
        ident = node.get("id")
        if ident and re.fullmatch(r"[\w-]+", ident):
            steps.append(f"{tag}#{ident}")
            break
        step = tag
        classes = (node.get("class") or "").split()
        if classes and re.fullmatch(r"[\w-]+", classes[0]):
            step += "." + classes[0]
        parent = node.getparent()
        if parent is not None:
            before = int(node.xpath("count(preceding-sibling::*[name() = $tag])", tag=tag))
            if before or node.xpath("boolean(following-sibling::*[name() = $tag])", tag=tag):
                step += f":nth-of-type({before + 1})"
        steps.append(step)
        if len(steps) == 6:
            steps.append("…")
            break
        node = parent
    return " > ".join(reversed(steps))


def _line(node: Any) -> str | None:
    return f"line {node.sourceline}" if node.sourceline else None


def _remove(element: Any) -> None:
    """Take an element out, keeping the text that follows it."""
    parent = element.getparent()
    if parent is None:
        return
    tail = element.tail
    if tail:
        previous = element.getprevious()
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(element)


def parse_html(html: str) -> tuple[Any, list[str]]:
    """The document and the parser's complaints that matter (content it dropped). lxml's plain
    HTML parser, not lxml.html's: its element classes cost a Python call per element."""
    from lxml import etree

    parser = etree.HTMLParser(encoding="utf-8", remove_comments=False, remove_pis=True)
    data = html.encode("utf-8", errors="replace")
    try:
        doc = etree.fromstring(data, parser=parser)
    except etree.LxmlError:  # "Document is empty" and friends: nothing to read
        return None, []
    if doc is None:
        return None, []
    problems = [entry.message for entry in parser.error_log if "RESOURCE_LIMIT" in entry.type_name]
    return doc, problems


def strip_hidden(
    html: str, *, include_hidden: bool = False, stylesheets: Mapping[str, str] | None = None
) -> tuple[str, list[Threat]]:
    """The page without the content a reader does not see (unless include_hidden; comments
    always go), and what was found. A page with nothing to strip comes back unchanged.
    `stylesheets`: the linked stylesheets read (stylesheets.py), each `<link>`'s href as
    written -> its CSS."""
    from lxml import etree

    if not html.strip():
        return html, []
    doc, problems = parse_html(html)
    report = _Report()
    if doc is None:
        return "", []  # nothing a reader would see (empty, or comments only)
    for problem in problems[:1]:
        report.notice(DETECTION_DEGRADED, f"the parser gave up part of the page: {problem.strip()}")
    inline_styles = list(dict.fromkeys(doc.xpath("//@style")))
    page = read_stylesheets(doc, inline_styles, stylesheets)
    for notice in page.notices:
        report.notice(DETECTION_DEGRADED, notice)
    changed = _walk(doc, page, report, include_hidden, etree.Comment)
    if not changed:
        return html, report.threats()
    threats = report.threats()  # locations first: removing elements renumbers their siblings
    changed.apply()
    return etree.tostring(doc.getroottree(), method="html", encoding="unicode"), threats


class _Changes:
    """Removals wait until the walk is over, so that every location is the page's own."""

    def __init__(self) -> None:
        self.removals: list[Any] = []
        self.edited = False

    def __bool__(self) -> bool:
        return self.edited or bool(self.removals)

    def apply(self) -> None:
        for element in self.removals:
            _remove(element)


def _walk(doc: Any, page: Stylesheets, report: _Report, include_hidden: bool, comment_tag: Any) -> _Changes:
    changes = _Changes()
    matched = page.matched
    variables = page.uses_variables
    unchecked = page.unchecked if not include_hidden else set()
    unchecked_all = page.unchecked_all and not include_hidden
    inline_cache: dict[str, tuple[Declaration, ...]] = {}
    # Inherited hiding is reported once per element where it starts, with all the text it hid.
    pending: dict[int, list[Any]] = {}
    root_state = _Inherited()
    root_state.variables = page.variables
    if page.external:
        root_state.backdrop = root_state.colour = None
        root_state.together = True
    # One state per kind of screen (page.screens); None where an ancestor is hidden on it. An
    # element is hidden when it is on every kind, by itself or by an ancestor.
    screens = page.screens
    by_screen = len(screens) > 1
    every = sum(screens)  # the bits of all kinds
    stack: list[tuple[Any, tuple[_Inherited | None, ...]]] = [(doc, (root_state,) * len(screens))]
    # Subtrees taken out unchecked (failing closed): past the element budget; those that rules
    # not applied may hide (walked all the same, for what else they hide).
    over_budget: list[Any] = []
    suspected: list[Any] = []
    order = 0
    while stack:
        if order >= MAX_ELEMENTS:
            report.notice(
                DETECTION_DEGRADED,
                f"stopped after {order} elements (element budget); the rest of the page was not checked",
                _line(stack[-1][0]),
            )
            if not include_hidden:
                over_budget = [element for element, _ in reversed(stack)]
            break
        element, states = stack.pop()
        order += 1
        tag = element.tag
        if not isinstance(tag, str):
            if tag is comment_tag:
                _comment(element, order, report)
                changes.removals.append(element)
            continue
        if tag in _NOT_TEXT:
            continue
        if unchecked and element in unchecked and tag not in _STRUCTURE and tag not in _NEVER_SHOWN:
            suspected.append(element)
        style_attr = element.get("style")
        inline = ()
        if style_attr:
            inline = inline_cache.get(style_attr)
            if inline is None:
                inline = inline_cache[style_attr] = declarations(style_attr, custom=variables)
        entries = matched.get(element)
        # The same rules on every kind of screen: one answer per inherited state will do.
        uniform = not by_screen or not entries or all(e[4] & every == every for e in entries)
        answers: dict[tuple[int, int], tuple[Any, _Inherited | None]] = {}
        hidden = None  # the element's own finding on the first kind of screen that hides it
        child_states: list[_Inherited | None] = []
        for screen, state in zip(screens, states, strict=True):
            if state is None:  # an ancestor is hidden on this kind of screen
                child_states.append(None)
                continue
            key = (id(state), every if uniform else screen)
            if key not in answers:
                style = cascade(entries, inline, None if uniform else screen) if (entries or inline) else {}
                answers[key] = _on_screen(element, tag, style, state, order, variables)
            found, child_state = answers[key]
            hidden = hidden or found
            child_states.append(child_state)
        if hidden is not None and not any(child_states):
            kind, reason, text = hidden
            if text is None:
                text = _subtree_text(element)
            if text.strip():
                report.add(order, kind, reason, _excerpt(text), lambda e=element: _path(e))
            if not include_hidden:
                changes.removals.append(element)
            continue
        seen = [state for state in child_states if state is not None]
        if element.get("aria-hidden", "").strip().lower() == "true" and not seen[0].aria:
            copies = {id(state): state.copy() for state in seen}  # one copy per state shared
            for state in copies.values():
                state.aria = True
            child_states = [None if state is None else copies[id(state)] for state in child_states]
            text = _subtree_text(element)
            if text.strip():
                reason = 'aria-hidden="true": screen readers skip it; it is on screen, so it stays'
                report.add(order, HIDDEN_ATTRIBUTE, reason, _excerpt(text), lambda e=element: _path(e))
        children = list(element)
        child_state = tuple(child_states)
        _texts(element, children, child_state, order, report, pending, include_hidden, changes)
        if unchecked_all and tag == "body":
            suspected.extend(child for child in children if isinstance(child.tag, str))
        for child in reversed(children):
            stack.append((child, child_state))
    for origin_order, reason, origin, texts in pending.values():
        report.add(origin_order, HIDDEN_CSS, reason, _excerpt(" ".join(texts)), lambda e=origin: _path(e))
    if suspected:  # the outermost only: the others go with them
        chosen = set(suspected)
        suspected = [e for e in suspected if not any(a in chosen for a in e.iterancestors())]
    for dropped, why in (
        (suspected, "stylesheet rules that may hide them were not applied"),
        (over_budget, "past the element budget"),
    ):
        if dropped:
            changes.removals.extend(dropped)
            reason = f"{_amount(dropped)} taken out unchecked: {why}"
            report.notice(STRIP_INCOMPLETE, reason, _line(dropped[0]))
    return changes


def _on_screen(
    element: Any, tag: str, style: dict[str, tuple[str, str]], state: _Inherited, order: int, variables: bool
) -> tuple[tuple[str, str, str | None] | None, _Inherited | None]:
    """On one kind of screen: the element's own finding when it is hidden there (and no state
    for its children, which are hidden with it), else None and the state its children inherit."""
    inherited_variables = state.variables
    if variables and style:
        style, inherited_variables = resolve_variables(style, state.variables)
    found = _element_hidden(element, tag, style, state)
    if found is not None:
        return found, None
    child_state = _inherit(element, tag, style, state, order)
    if inherited_variables is not state.variables:
        if child_state is state:
            child_state = state.copy()
        child_state.variables = inherited_variables
    return None, child_state


def _amount(elements: list[Any]) -> str:
    """How much the subtrees hold: "12 elements holding 3400 characters of text"."""
    count = chars = 0
    for element in elements:
        for node in element.iter():
            if isinstance(node.tag, str):
                count += 1
                chars += len(node.text or "") if node.tag not in _NOT_TEXT else 0
            if node is not element:
                chars += len(node.tail or "")
    return f"{count} element{'s' if count != 1 else ''} holding {chars} characters of text"


def _comment(node: Any, order: int, report: _Report) -> None:
    """Report a long comment that speaks to a reader or a model. Pages are full of developer
    notes ("Global site tag (gtag.js) - Google Analytics", commented-out markup); they never
    reach the agent (comments always leave the HTML), and reporting them all would bury the
    ones written for it."""
    text = " ".join((node.text or "").split())
    if len(text) <= MIN_COMMENT_CHARS or text.startswith("[if") or text.startswith("<![endif"):
        return
    if not _ADDRESSED.search(re.sub(r"<[^>]*>", " ", text)):
        return
    report.add(order, HIDDEN_TEMPLATE, "HTML comment (never shown)", _excerpt(text), _line(node))


_ADDRESSED = re.compile(
    r"\b(?:you|your|yours|you're|assistant|ai|llms?|language models?|gpt|chatgpt|claude|gemini|"
    r"instructions?|prompts?|ignore|disregard|override|agents?)\b",
    re.IGNORECASE,
)


def _element_hidden(
    element: Any, tag: str, style: dict[str, tuple[str, str]], state: _Inherited
) -> tuple[str, str, str | None] | None:
    """(type, reason, the hidden text or None for the element's own) when the element and all
    it holds are hidden, else None."""
    if tag == "template":
        return HIDDEN_TEMPLATE, "<template> content is not rendered", None
    if tag == "noscript":
        return HIDDEN_TEMPLATE, "<noscript> content is not shown when scripts run", None
    hidden_attr = element.get("hidden")
    if hidden_attr is not None and hidden_attr.strip().lower() != "until-found":
        display = style.get("display")
        if display is None or display[0].split()[0:1] == ["none"]:
            return HIDDEN_ATTRIBUTE, "hidden attribute", None
    if tag == "dialog" and element.get("open") is None:
        # the browser's own stylesheet: dialog:not([open]) { display: none }
        display = style.get("display")
        if display is None or display[0].split()[0:1] == ["none"]:
            return HIDDEN_ATTRIBUTE, "<dialog> without the open attribute (closed: not shown)", None
    if tag == "input" and (element.get("type") or "").strip().lower() == "hidden":
        value = element.get("value") or ""
        return (
            HIDDEN_ATTRIBUTE,
            '<input type="hidden"> with words in its value',
            value if _reads_as_words(value) else "",
        )
    if not style or tag in _STRUCTURE:
        return None
    reason = hidden_by_css(style, element)
    if reason is None and (entry := style.get("opacity") or style.get("filter")):
        own = opacity(entry[0]) if "opacity" in style else filter_opacity(entry[0])
        if own is not None and own * state.opacity <= OPACITY_HIDDEN:
            prop = "opacity" if "opacity" in style else "filter"
            combined = "" if state.opacity == 1 else f", {own * state.opacity:.2f} with its ancestors'"
            reason = f"{prop}:{entry[0]} ({entry[1]}{combined})"
    return (HIDDEN_CSS, reason, None) if reason else None


def _reads_as_words(value: str) -> bool:
    """A hidden input's value worth reporting: words, not a token, an id or a number."""
    return len(_WORDS.findall(value)) >= 3 and " " in value.strip()


def _inherit(
    element: Any, tag: str, style: dict[str, tuple[str, str]], state: _Inherited, order: int
) -> _Inherited:
    """The state children inherit; the parent's own object when nothing changes."""
    got = style.get
    colour_attr = element.get("color") if tag == "font" else None
    bgcolor_attr = element.get("bgcolor") if tag in _BGCOLOR_TAGS else None
    if not style and colour_attr is None and bgcolor_attr is None:
        return state
    new = state.copy()
    if (entry := got("opacity")) and tag not in _STRUCTURE:
        own = opacity(entry[0])
        if own is not None:
            new.opacity = state.opacity * max(0.0, min(1.0, own))
    if (entry := got("visibility")) and tag not in _STRUCTURE:
        if entry[0] in ("hidden", "collapse"):
            if state.visibility is None:
                new.visibility = (order, f"visibility:{entry[0]} ({entry[1]})", element)
        elif entry[0] in ("visible", "initial", "revert"):
            new.visibility = None
    if entry := got("font-size"):
        px = font_px(entry[0], state.font_px)
        if px is not None:
            new.font_px = px
            if px >= FONT_HIDDEN_PX:
                new.font_hidden = None
            elif state.font_hidden is None or state.font_px >= FONT_HIDDEN_PX:
                new.font_hidden = (order, f"font-size:{entry[0]} ({entry[1]})", element)
    _inherit_colour(element, style, colour_attr, bgcolor_attr, state, new, order)
    new.hidden = new.visibility or new.font_hidden or new.colour_hidden
    return new


def _inherit_colour(
    element: Any,
    style: dict[str, tuple[str, str]],
    colour_attr: str | None,
    bgcolor_attr: str | None,
    state: _Inherited,
    new: _Inherited,
    order: int,
) -> None:
    """Text colour, the colour behind it, and whether they make the text invisible."""
    got = style.get
    colour_source = backdrop_source = None
    value = got("color", (colour_attr, "color attribute") if colour_attr else None)
    if value and value[0] not in ("inherit", "unset", "currentcolor"):
        parsed = BLACK if value[0] in ("initial", "revert") else colour(value[0])
        if isinstance(parsed, tuple):
            new.colour, colour_source = parsed, value[1]
    background = got("background-color", (bgcolor_attr, "bgcolor attribute") if bgcolor_attr else None)
    image = got("background-image")
    if image and image[0] not in ("none", "initial", "unset", "revert", "inherit"):
        new.backdrop, backdrop_source = None, image[1]
    elif background:
        parsed = colour(background[0])
        if isinstance(parsed, tuple) and parsed[3] > 0.1:
            # An opaque layer is what the text is seen on; a translucent one over an unknown
            # mix is not compared.
            new.backdrop, backdrop_source = (parsed if parsed[3] >= 0.9 else None), background[1]
    painted_changed = False
    if entry := got("text-shadow"):
        new.painted, painted_changed = entry[0] not in ("none", "initial", "unset", "revert"), True
    if entry := got("-webkit-text-fill-color"):
        fill = colour(entry[0])
        if isinstance(fill, tuple) and fill[3] > 0.1:
            new.painted, painted_changed = True, True
    for prop in ("background-clip", "-webkit-background-clip"):
        if (entry := got(prop)) and entry[0] == "text":
            new.painted, painted_changed = True, True
    if colour_source is None and backdrop_source is None and not painted_changed:
        return  # the parent's verdict stands
    text, backdrop = new.colour, new.backdrop
    sources = " and ".join(dict.fromkeys(s for s in (colour_source, backdrop_source) if s))
    reason = None
    if new.painted or text is None:
        pass
    elif text[3] <= 0.1:
        if colour_source is not None or not state.together:
            reason = f"transparent text: color {hex_colour(text)} ({sources})"
    elif (
        backdrop is not None
        and same_colour(text, backdrop)
        and (not state.together or (colour_source is not None and colour_source == backdrop_source))
    ):
        reason = f"text colour {hex_colour(text)} on background {hex_colour(backdrop)} ({sources})"
    if reason is None:
        new.colour_hidden = None
    elif state.colour_hidden is None or colour_source is not None or backdrop_source is not None:
        new.colour_hidden = (order, reason, element)


def _texts(
    element: Any,
    children: list[Any],
    states: tuple[_Inherited | None, ...],
    order: int,
    report: _Report,
    pending: dict[int, list[Any]],
    include_hidden: bool,
    changes: _Changes,
) -> None:
    """The text directly in an element (its own, and after each child): hidden with it (on every
    kind of screen: `states`, one per kind, None where an ancestor is hidden), or checked for
    invisible characters."""
    shown = [state for state in states if state is not None]
    hidden = None if any(state.hidden is None for state in shown) else shown[0].hidden
    slots: list[tuple[Any, str]] = [(element, "text")] + [(child, "tail") for child in children]
    for node, attr in slots:
        text = getattr(node, attr)
        if not text:
            continue
        if hidden is not None:
            if not text.strip():
                continue
            origin_order, reason, origin = hidden
            entry = pending.get(id(origin))
            if entry is None:
                entry = pending[id(origin)] = [origin_order, reason, origin, []]
            if sum(len(t) for t in entry[3]) < 4 * EXCERPT_CHARS:
                entry[3].append(text)
            if not include_hidden:
                setattr(node, attr, " ")
                changes.edited = True
            continue
        positions, findings = _scan_invisible(text)
        for kind, reason, excerpt in findings:
            report.add(order, kind, reason, excerpt, lambda e=element: _path(e))
        if positions and not include_hidden:
            setattr(node, attr, _without(text, positions))
            changes.edited = True

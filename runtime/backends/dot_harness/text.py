"""dot-harness's text rules: strict UTF-8 decoding, literal matching with Unicode simple case
folding, the lines holding a match, and excerpts around it.

Reading a pinned file whole and splitting text into lines are shared with the other file
backends: `lynxc.runtime.backends.pinned` and `lynxc.runtime.backends.lines`."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

BOM = "\ufeff"


def decode_strict(data: bytes) -> str | None:
    """Strict UTF-8 without NUL; a leading BOM is dropped. None when the bytes are not such text."""
    if b"\x00" in data:
        return None
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError:
        return None
    return text[1:] if text.startswith(BOM) else text


@dataclass(frozen=True)
class LineMatch:
    line_number: int  # 1-based
    line: str  # without its LF or CRLF ending; a lone CR stays
    start: int  # code-point offset of the first match in the line
    end: int


Finder = Callable[[str, int], tuple[int, int] | None]
_ASCII = [chr(code) for code in range(128)]


class LiteralQuery:
    """A literal query: exact, or Unicode simple case folding as `re.IGNORECASE` does it, with no
    normalization. `finder(text)` returns a function finding the next match from a position.

    Case-insensitive search through `re` is slow on large text, so for ASCII text (most source
    code) the query is folded once into ASCII and found with `str.find` in `text.lower()`.
    The folding is derived from `re` itself, char by char, so both paths match the same spans:
    `re` compares one character at a time, and ASCII `lower()` keeps every offset."""

    def __init__(self, query: str, case_sensitive: bool):
        self.query = query
        self.case_sensitive = case_sensitive
        self.pattern = None if case_sensitive else re.compile(re.escape(query), re.IGNORECASE)
        self.ascii_folded = None if case_sensitive else _ascii_fold(query)

    def finder(self, text: str) -> Finder:
        if self.case_sensitive:
            return _find_in(text, self.query)
        if text.isascii() and self.ascii_folded is not None:
            return _find_in(text.lower(), self.ascii_folded) if self.ascii_folded else _never
        pattern = self.pattern
        assert pattern is not None

        def find_folded(haystack: str, pos: int) -> tuple[int, int] | None:
            match = pattern.search(haystack, pos)
            return None if match is None else (match.start(), match.end())

        return find_folded


def _find_in(haystack: str, needle: str) -> Finder:
    def find(_text: str, pos: int) -> tuple[int, int] | None:
        at = haystack.find(needle, pos)
        return None if at < 0 else (at, at + len(needle))

    return find


def _never(_text: str, _pos: int) -> None:
    return None


def _ascii_fold(query: str) -> str | None:
    """The lowercase ASCII string that `query` matches case-insensitively in ASCII text; ''
    when some query character matches no ASCII character (so ASCII text never matches), and
    None when the ASCII matches of a character are not one lowercase class (use `re` then)."""
    folded = []
    for char in query:
        fold = _ascii_class(char)
        if fold is None:
            return None
        if fold == "":
            return ""
        folded.append(fold)
    return "".join(folded)


@functools.cache
def _ascii_class(char: str) -> str | None:
    matches = {a for a in _ASCII if re.fullmatch(re.escape(char), a, re.IGNORECASE)}
    if not matches:
        return ""
    lowered = {a.lower() for a in matches}
    if len(lowered) != 1:
        return None
    (fold,) = lowered
    return fold if matches == {a for a in _ASCII if a.lower() == fold} else None


def matching_lines(text: str, find: Finder) -> Iterator[LineMatch]:
    """Each line holding a match, once, with its first match. Lines end as in
    `lynxc.runtime.backends.lines`: at LF; a CR right before that LF belongs to the ending; any
    other CR is content. Queries hold no CR or LF, so a match never spans lines."""
    pos = 0
    line_number = 1
    counted_to = 0
    while True:
        found = find(text, pos)
        if found is None:
            return
        start, end = found
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        if line_end < 0:
            line_end = len(text)
            content_end = line_end
        else:
            content_end = line_end - 1 if line_end > line_start and text[line_end - 1] == "\r" else line_end
        line_number += text.count("\n", counted_to, line_start)
        counted_to = line_start
        yield LineMatch(line_number, text[line_start:content_end], start - line_start, end - line_start)
        pos = line_end + 1
        if pos > len(text):
            return


def excerpt(line: str, start: int, end: int, max_chars: int) -> tuple[str, int]:
    """At most `max_chars` code points of `line` holding [start, end) whole, centred on it.
    Returns the excerpt and how many characters of the line precede it."""
    if len(line) <= max_chars:
        return line, 0
    room = max_chars - (end - start)
    first = max(0, min(start - room // 2, len(line) - max_chars))
    first = min(first, start)  # the match must start inside the window
    return line[first : first + max_chars], first

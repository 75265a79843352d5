"""Where a place in a SQL statement stands in its source: a `.sql` file, or a string in the spec.

DuckDB reports places in three ways, each handled here: a character offset (the parser, through
`json_serialize_sql`), byte offsets (its tokenizer), and a `LINE n:` quote with a caret under
the place (the binder, in the text of its messages; a long line is quoted in part, between
`...`). All become a character offset into the statement, and `SqlText.span` turns that into the
`file:line:col` an editor opens: exact in a `.sql` file and in a literal block (`sql: |`), found
by searching the spec's text for the quoted words in the other YAML styles, where line breaks
and escapes make the statement differ from what is written.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ...diagnostics import Span

_LINE_QUOTE = re.compile(r"^LINE (\d+): (.*)\n( *)\^", re.MULTILINE)
_QUOTED_NAME = re.compile(r'(?:name|column|function|type|Table with name) "?([A-Za-z_][\w$]*)"?')
_WORD = re.compile(r"[^\s,;()\"']{1,40}")


@dataclass(frozen=True)
class SqlText:
    """A statement and where it is written."""

    text: str
    file: str  # the display path of the .sql file or spec file
    start: Span  # where the statement's source begins (a .sql file: 1:1)
    source_text: str  # the whole file, to find places in YAML styles that are not literal
    kind: str  # "file" (a .sql file), "block" (a YAML literal block) or "inline" (other YAML)
    end: Span | None = None  # where the next node of the spec starts: the search stops there

    def span(self, offset: int | None) -> Span:
        """The place of character `offset` of the statement; the statement's start if unknown."""
        if offset is None or not 0 <= offset <= len(self.text):
            return self.start
        line = self.text.count("\n", 0, offset)
        col = offset - (self.text.rfind("\n", 0, offset) + 1)
        if self.kind == "file":
            return Span(self.file, line + 1, col + 1)
        if self.kind == "block":
            return self._in_block(line, col)
        return self._searched(offset)

    def _in_block(self, line: int, col: int) -> Span:
        """A literal block's content starts on the line after `|`, at the block's indentation."""
        lines = self.source_text.splitlines()
        first = self.start.line  # 0-based index of the line after the indicator
        indent = next(
            (len(text) - len(text.lstrip(" ")) for text in lines[first:] if text.strip()),
            self.start.col,
        )
        return Span(self.file, first + line + 1, indent + col + 1)

    def _searched(self, offset: int) -> Span:
        """The quoted word at `offset`, found at the same occurrence in the spec's text after the
        statement's start: exact whenever the word is written as DuckDB reads it."""
        match = _WORD.match(self.text, offset)
        if match is None:
            return self.start
        word = match.group(0)
        occurrence = self.text.count(word, 0, offset)
        base = self._offset_of(self.start)
        limit = self._offset_of(self.end) if self.end is not None else len(self.source_text)
        found = base - 1
        for _ in range(occurrence + 1):
            found = self.source_text.find(word, found + 1, limit)
            if found < 0:
                return self.start
        line = self.source_text.count("\n", 0, found)
        col = found - (self.source_text.rfind("\n", 0, found) + 1)
        return Span(self.file, line + 1, col + 1)

    def _offset_of(self, span: Span) -> int:
        lines = self.source_text.splitlines(keepends=True)
        return sum(len(text) for text in lines[: span.line - 1]) + span.col - 1


def yaml_kind(source_text: str, start: Span) -> str:
    """ "block" for a literal block scalar (`|`), whose lines are the statement's; else "inline"."""
    lines = source_text.splitlines()
    if not 0 < start.line <= len(lines):
        return "inline"
    line = lines[start.line - 1]
    return "block" if line[start.col - 1 : start.col] == "|" else "inline"


def char_offset(text: str, byte_offset: int) -> int:
    """DuckDB's tokenizer counts bytes of UTF-8; places here are characters."""
    return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))


def error_offset(message: str, text: str) -> int | None:
    """The place a DuckDB error message points at in `text`: its `LINE n:` caret, else the first
    word of `text` that the message quotes as a name; None when it says neither."""
    quote = _LINE_QUOTE.search(message)
    lines = text.split("\n")
    if quote is not None:
        number, shown, caret = int(quote.group(1)), quote.group(2), len(quote.group(3)) - len("LINE : ")
        caret -= len(quote.group(1))
        if 0 < number <= len(lines):
            line_start = sum(len(line) + 1 for line in lines[: number - 1])
            offset_in_line = _caret_in_line(lines[number - 1], shown, caret)
            if offset_in_line is not None:
                return line_start + offset_in_line
    for name in _QUOTED_NAME.findall(message):
        found = re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", text, re.IGNORECASE)
        if found is not None:
            return found.start()
    return None


def _caret_in_line(line: str, shown: str, caret: int) -> int | None:
    """The caret's place in the full line. DuckDB shows a long line in part, between `...`, and
    places the caret by display width: a wide character takes two columns, a tab none."""
    if shown.startswith("..."):
        shown, caret = shown[3:], caret - 3
    if shown.endswith("..."):
        shown = shown[:-3]
    start = line.find(shown) if shown else 0
    if start < 0 or caret < 0:
        return None
    width = 0
    for index, char in enumerate(shown):
        char_width = _display_width(char)
        if width >= caret and char_width:
            return start + index
        width += char_width
    return min(start + len(shown), len(line))


def _display_width(char: str) -> int:
    if unicodedata.category(char) in ("Cc", "Cf", "Mn"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1

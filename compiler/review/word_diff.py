"""Word diff of two values: which words changed, with a little shared context around them, so a
reviewer sees the edit in a 1,300-character description instead of two long strings that look
the same where they are cut.

Strings are diffed as they are; other JSON values as their compact JSON text. Tokens are words,
runs of whitespace and single punctuation marks, as `git diff --word-diff` shows them. The work
is bounded whatever the input: the shared head and tail are stripped in linear time, and only a
middle of at most `MATCHED_TOKENS` tokens a side goes to difflib; a longer middle is shown as
replaced whole (still correct, only coarser), so a hostile 1 MB description costs milliseconds.
"""

from __future__ import annotations

import difflib
import html
import json
import re
from dataclasses import dataclass
from typing import Any, Literal

PieceOp = Literal["equal", "delete", "insert"]
TOKEN = re.compile(r"\s+|\w+|[^\w\s]")
MATCHED_TOKENS = 1_000  # per side; difflib's cost grows with the product of both sides
CONTEXT_WORDS = 6  # shared words kept on each side of a change
RUN_CHARS = 240  # a deleted or inserted run longer than this is cut in its middle
SHOWN_CHANGES = 4  # changed places shown in one region; the rest are counted
ELLIPSIS = "…"
NEWLINE_MARK = "⏎"
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]|~#])")


@dataclass(frozen=True)
class Piece:
    op: PieceOp
    text: str


def value_text(value: Any) -> str:
    """What is diffed of a value: a string itself, anything else its compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))


def word_diff(old: str, new: str) -> list[Piece]:
    """Every token of both strings, as equal, deleted and inserted runs in reading order."""
    a, b = TOKEN.findall(old), TOKEN.findall(new)
    head = _shared_head(a, b)
    tail = _shared_head(a[head:][::-1], b[head:][::-1])
    middle_a, middle_b = a[head : len(a) - tail], b[head : len(b) - tail]
    pieces = [Piece("equal", "".join(a[:head]))]
    if len(middle_a) <= MATCHED_TOKENS and len(middle_b) <= MATCHED_TOKENS:
        matcher = difflib.SequenceMatcher(None, middle_a, middle_b, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                pieces.append(Piece("equal", "".join(middle_a[i1:i2])))
                continue
            pieces.append(Piece("delete", "".join(middle_a[i1:i2])))
            pieces.append(Piece("insert", "".join(middle_b[j1:j2])))
    else:
        pieces += [Piece("delete", "".join(middle_a)), Piece("insert", "".join(middle_b))]
    pieces.append(Piece("equal", "".join(a[len(a) - tail :])))
    return _merged(pieces)


def region(old: Any, new: Any) -> list[Piece]:
    """The changed places of two values with `CONTEXT_WORDS` shared words around each; long
    shared stretches and long changed runs are elided with `…`, places past `SHOWN_CHANGES`
    counted."""
    pieces = word_diff(value_text(old), value_text(new))
    places = _changed_places(pieces)
    if not places:
        return []
    end = places[min(len(places), SHOWN_CHANGES) - 1][1]  # just past the last change shown
    out: list[Piece] = []
    for i, piece in enumerate(pieces[: end + 1]):
        if piece.op == "equal":
            text = _context(piece.text, keep_head=i > 0, keep_tail=i < end)
        else:
            text = cut_middle(piece.text, RUN_CHARS)
        out.append(Piece(piece.op, text))
    hidden = len(places) - SHOWN_CHANGES
    if hidden > 0:
        out.append(Piece("equal", f" {ELLIPSIS} ({hidden} more changed place{'s' if hidden != 1 else ''})"))
    return [piece for piece in out if piece.text]


def as_text(pieces: list[Piece]) -> str:
    """`… shared [-old-]{+new+} shared …` on one line, as `git diff --word-diff=plain`."""
    marks = {"equal": ("", ""), "delete": ("[-", "-]"), "insert": ("{+", "+}")}
    return "".join(f"{marks[p.op][0]}{_one_line(p.text)}{marks[p.op][1]}" for p in pieces)


def as_markdown(pieces: list[Piece]) -> str:
    """One line of GitHub markdown: deleted words struck through, inserted ones underlined;
    the text escaped so a description cannot format or break the comment (or a table cell)."""
    tags = {"equal": ("", ""), "delete": ("<del>", "</del>"), "insert": ("<ins>", "</ins>")}
    return "".join(f"{tags[p.op][0]}{markdown_inline(p.text)}{tags[p.op][1]}" for p in pieces)


def as_json(pieces: list[Piece]) -> list[dict[str, str]]:
    return [{"op": piece.op, "text": piece.text} for piece in pieces]


def markdown_inline(text: str) -> str:
    """Free text made safe inside a markdown line or table cell: HTML and markdown characters
    escaped, line breaks shown as a mark."""
    escaped = html.escape(_one_line(text), quote=False)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", escaped)


def _shared_head(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _merged(pieces: list[Piece]) -> list[Piece]:
    """Adjacent runs of one kind joined, empty ones dropped; a replacement reads delete, insert."""
    out: list[Piece] = []
    for piece in pieces:
        if not piece.text:
            continue
        if out and out[-1].op == piece.op:
            out[-1] = Piece(piece.op, out[-1].text + piece.text)
        else:
            out.append(piece)
    return out


def _changed_places(pieces: list[Piece]) -> list[tuple[int, int]]:
    """(start, end) of each run of changed pieces: a delete and its insert are one place."""
    places: list[tuple[int, int]] = []
    for i, piece in enumerate(pieces):
        if piece.op == "equal":
            continue
        if places and places[-1][1] == i:
            places[-1] = (places[-1][0], i + 1)
        else:
            places.append((i, i + 1))
    return places


def _context(text: str, *, keep_head: bool, keep_tail: bool) -> str:
    """A shared stretch cut to the words next to the changes it touches."""
    tokens = TOKEN.findall(text)
    words = 2 * CONTEXT_WORDS  # a word and the space after it are two tokens
    if keep_head and keep_tail:
        if len(tokens) <= 2 * words:
            return text
        return "".join(tokens[:words]) + f" {ELLIPSIS} " + "".join(tokens[-words:])
    if keep_head:
        return text if len(tokens) <= words else "".join(tokens[:words]) + ELLIPSIS
    if keep_tail:
        return text if len(tokens) <= words else ELLIPSIS + "".join(tokens[-words:])
    return ""


def cut_middle(text: str, limit: int) -> str:
    """Text at most `limit` characters long, its head and tail kept around a `…`."""
    if len(text) <= limit:
        return text
    half = (limit - 1) // 2
    return text[:half] + ELLIPSIS + text[-half:]


def _one_line(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", f" {NEWLINE_MARK} ")

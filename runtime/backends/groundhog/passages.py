"""A page's Markdown as passages: the unit `research` and `read_url(query=...)` rank, budget and cite.

A passage is one block of the Markdown (a paragraph, a list, a table, a fenced code block) with
the last heading above it. Its `start`/`end` are character offsets into the Markdown it was split
from, so `markdown[p.start:p.end] == p.text` always holds and a client can cite or re-read it.

Sizes are in `count_tokens` units (tokens.py): a block over MAX_PASSAGE_TOKENS is split, prose at
sentence ends, lists, tables and code at line ends (a line or sentence still too long at word
boundaries, a word still too long anywhere); a block under MIN_PASSAGE_TOKENS is merged with the
next block under the same heading, so a one-line caption or a list's lead-in ("You will need:")
travels with what it introduces (the last block under a heading joins the one before it).

The block grammar is the part of CommonMark that trafilatura's Markdown (and ordinary hand-written
Markdown) uses: ATX and setext headings, fenced code, pipe tables, list items with their
continuation lines, thematic breaks, paragraphs. It reads line by line with no recursion, so a
hostile page cannot nest its way into a stack overflow.

Also here, because it is the same grammar read the other way: `markdown_to_text`, the Markdown
with its syntax removed (what ranking tokenises and what the extraction benchmark scores).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .tokens import count_tokens

# ~300 tokens is a paragraph or two: long enough to carry an argument, short enough that a
# 20k-token budget holds dozens of sources' best passages.
MAX_PASSAGE_TOKENS = 300
# Under ~24 tokens (about 100 characters) a block is a caption, a lead-in or a stray line.
MIN_PASSAGE_TOKENS = 24


@dataclass(frozen=True)
class Passage:
    id: str
    text: str
    heading: str | None
    start: int  # offsets into the page's Markdown: markdown[start:end] == text
    end: int


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*$")
_BREAK = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_TABLE = re.compile(r" {0,3}\|")
_ITEM = re.compile(r" {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)")
_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])[\"'”’)\]]*\s+")
_SPACE = re.compile(r"\s+")
_NEWLINE = re.compile(r"\n")


def split_passages(markdown: str, *, prefix: str) -> list[Passage]:
    """The passages of `markdown`, in document order, with ids `<prefix>-1`, `<prefix>-2`, ..."""
    spans: list[tuple[int, int, str | None]] = []
    for kind, start, end, heading in _blocks(markdown):
        spans.extend((s, e, heading) for s, e in _split_long(markdown, start, end, kind))
    merged = _merge_tiny(markdown, spans)
    return [
        Passage(id=f"{prefix}-{n}", text=markdown[s:e], heading=heading, start=s, end=e)
        for n, (s, e, heading) in enumerate(merged, 1)
    ]


def _lines(markdown: str) -> list[tuple[int, int]]:
    """(start, end) of every line, end excluding the newline."""
    lines, start = [], 0
    while start < len(markdown):
        end = markdown.find("\n", start)
        if end < 0:
            end = len(markdown)
        lines.append((start, end))
        start = end + 1
    return lines


def _blocks(markdown: str) -> list[tuple[str, int, int, str | None]]:
    """(kind, start, end, heading) of each block, trimmed of surrounding whitespace."""
    blocks: list[tuple[str, int, int, str | None]] = []
    heading: str | None = None
    kind: str | None = None  # the open block: paragraph, list, table, code
    first = last = 0  # the open block's first line start and last line end
    lines_in_block = 0
    fence = ""

    def close() -> None:
        nonlocal kind
        if kind is not None:
            start, end = _trim(markdown, first, last)
            if start < end:
                blocks.append((kind, start, end, heading))
        kind = None

    for start, end in _lines(markdown):
        line = markdown[start:end]
        if kind == "code":
            last = end
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                close()
            continue
        if not line.strip():
            close()
            continue
        if match := _FENCE.match(line):
            close()
            kind, first, last, fence = "code", start, end, match.group(1)
            continue
        if match := _ATX.match(line):
            close()
            heading = _heading_text(line[match.end() :])
            continue
        if kind == "paragraph" and lines_in_block == 1 and _SETEXT.match(line):
            # "Title\n=====": the open one-line paragraph was a heading after all
            heading = _heading_text(markdown[first:last])
            kind = None
            continue
        if _BREAK.match(line):
            close()
            continue
        line_kind = "table" if _TABLE.match(line) else "list" if _ITEM.match(line) else "paragraph"
        # a list swallows its continuation lines (indented or lazy); anything else starts anew
        if kind == line_kind or (kind == "list" and line_kind == "paragraph"):
            last = end
            lines_in_block += 1
            continue
        close()
        kind, first, last, lines_in_block = line_kind, start, end, 1
    close()
    return blocks


def _heading_text(raw: str) -> str | None:
    text = re.sub(r"[ \t]+#+[ \t]*$", "", raw.strip())  # the optional closing #s
    text = "" if set(text) <= {"#"} else text
    return markdown_to_text(text).strip() or None


def _trim(markdown: str, start: int, end: int) -> tuple[int, int]:
    while start < end and markdown[start].isspace():
        start += 1
    while end > start and markdown[end - 1].isspace():
        end -= 1
    return start, end


def _split_long(markdown: str, start: int, end: int, kind: str) -> list[tuple[int, int]]:
    """The block as spans of at most MAX_PASSAGE_TOKENS, cut at the coarsest boundary that works:
    prose at sentence ends, other blocks at line ends then sentence ends; then words; then runs
    of characters (a 5,000-character URL is still cut)."""
    levels = [_SENTENCE_END, _SPACE] if kind == "paragraph" else [_NEWLINE, _SENTENCE_END, _SPACE]
    return _pieces(markdown, start, end, levels)


def _pieces(text: str, start: int, end: int, levels: list[re.Pattern[str]]) -> list[tuple[int, int]]:
    if count_tokens(text[start:end]) <= MAX_PASSAGE_TOKENS:
        return [(start, end)]
    if not levels:
        # one char is at most 4 UTF-8 bytes, one token: a run of MAX_PASSAGE_TOKENS chars fits
        step = MAX_PASSAGE_TOKENS
        return [(i, min(i + step, end)) for i in range(start, end, step)]
    pieces: list[tuple[int, int]] = []
    for s, e in _cuts(text, start, end, levels[0]):
        pieces.extend(_pieces(text, s, e, levels[1:]))
    return _pack(text, pieces)


def _cuts(text: str, start: int, end: int, boundary: re.Pattern[str]) -> list[tuple[int, int]]:
    """text[start:end] cut at each match of `boundary`, as trimmed non-empty (start, end) pairs."""
    pieces, begin = [], start
    for match in boundary.finditer(text, start, end):
        pieces.append((begin, match.start()))
        begin = match.end()
    pieces.append((begin, end))
    trimmed = [_trim(text, s, e) for s, e in pieces]
    return [(s, e) for s, e in trimmed if s < e]


def _pack(text: str, pieces: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Consecutive pieces (each within MAX_PASSAGE_TOKENS) joined greedily into spans that stay
    within it."""
    spans: list[tuple[int, int]] = []
    for s, e in pieces:
        if spans and count_tokens(text[spans[-1][0] : e]) <= MAX_PASSAGE_TOKENS:
            spans[-1] = (spans[-1][0], e)
        else:
            spans.append((s, e))
    return spans


def _merge_tiny(markdown: str, spans: list[tuple[int, int, str | None]]) -> list[tuple[int, int, str | None]]:
    """A span under MIN_PASSAGE_TOKENS joins the next span under the same heading, or, the last
    under its heading, the previous one, when the two together stay within MAX_PASSAGE_TOKENS."""

    def joins(first: tuple[int, int, str | None], second: tuple[int, int, str | None]) -> bool:
        return first[2] == second[2] and count_tokens(markdown[first[0] : second[1]]) <= MAX_PASSAGE_TOKENS

    def tiny(span: tuple[int, int, str | None]) -> bool:
        return count_tokens(markdown[span[0] : span[1]]) < MIN_PASSAGE_TOKENS

    forward: list[tuple[int, int, str | None]] = []
    for span in spans:
        if forward and tiny(forward[-1]) and joins(forward[-1], span):
            forward[-1] = (forward[-1][0], span[1], span[2])
        else:
            forward.append(span)
    merged: list[tuple[int, int, str | None]] = []
    for span in forward:
        if merged and tiny(span) and joins(merged[-1], span):
            merged[-1] = (merged[-1][0], span[1], span[2])
        else:
            merged.append(span)
    return merged


# --- Markdown to plain text ---------------------------------------------------------------

_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")  # a backslash before ASCII punctuation
_PROTECT = 0xE000  # escaped characters ride in the private-use area until the end
_IMAGE = re.compile(r"!\[([^\]\n]*)\]\([^)\n]*\)")
_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\n]*\)")
_AUTOLINK = re.compile(r"<((?:https?|mailto|ftp):[^>\s]*)>")
_HTML_INLINE = re.compile(r"</?(?:sub|sup|u|ins|s|del|mark|kbd|small|b|i|em|strong|code|br)\s*/?>", re.I)
_STRONG = re.compile(r"\*\*|__|~~")
_EMPHASIS = re.compile(r"(?<![\w*])[*_](?=\S)|(?<=\S)[*_](?![\w*])")
_TABLE_RULE = re.compile(r" {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_QUOTE = re.compile(r" {0,3}(?:>[ \t]?)+")


def markdown_to_text(markdown: str) -> str:
    """`markdown` without its syntax, line for line: heading marks, list markers, quote marks,
    fences, table pipes and rules, emphasis and code marks, link and image targets (their text
    stays), backslash escapes. Code inside fences is kept verbatim."""
    out: list[str] = []
    fence = ""
    for line in markdown.split("\n"):
        if fence:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = ""
            else:
                out.append(line)
            continue
        if match := _FENCE.match(line):
            fence = match.group(1)
            continue
        if _TABLE_RULE.match(line) and "-" in line and ("|" in line or line.strip().startswith(":")):
            continue
        if (_SETEXT.match(line) and set(line.strip()) <= {"=", "-"}) or _BREAK.match(line):
            continue
        if match := _QUOTE.match(line):
            line = line[match.end() :]
        if match := _ATX.match(line):
            line = re.sub(r"[ \t]+#+[ \t]*$", "", line[match.end() :])
        elif match := _ITEM.match(line):
            line = line[match.end() :]
        if _TABLE.match(line):
            line = " ".join(cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|")))
        out.append(_inline_to_text(line))
    return "\n".join(out)


def _inline_to_text(line: str) -> str:
    line = _ESCAPE.sub(lambda m: chr(_PROTECT + ord(m.group(1))), line)
    line = _IMAGE.sub(r"\1", line)
    line = _LINK.sub(r"\1", line)
    line = _AUTOLINK.sub(r"\1", line)
    line = _HTML_INLINE.sub("", line)
    line = line.replace("`", "")
    line = _STRONG.sub("", line)
    line = _EMPHASIS.sub("", line)
    return re.sub("[\ue000-\ue07f]", lambda m: chr(ord(m.group(0)) - _PROTECT), line)

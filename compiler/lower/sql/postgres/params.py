"""`$name` parameters of a Postgres statement, rewritten to the `$1..$n` Postgres binds.

Found with Postgres's own scanner (libpg_query through pglast), so a `$` inside a string, a
quoted name, a comment or a dollar-quoted body is not one. Numbered in the order of first
occurrence; the same name twice is the same `$k`. Postgres reports places in the rewritten text,
which `Rewrite.original` maps back to the statement as written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

from ..statements import Occurrence  # character offsets of `$name` in the statement as written


@dataclass
class Rewrite:
    text: str  # the statement with $1..$n
    order: list[str] = field(default_factory=list)  # parameter names, $1 first
    occurrences: list[Occurrence] = field(default_factory=list)
    positional: list[Occurrence] = field(default_factory=list)  # `$1` written as such
    # (start in the rewritten text, end there, start as written, end as written) per replacement
    _moves: list[tuple[int, int, int, int]] = field(default_factory=list)

    def original(self, offset: int) -> int:
        """The offset as written of character `offset` of the rewritten text."""
        delta = 0
        for new_start, new_end, old_start, old_end in self._moves:
            if offset < new_start:
                break
            if offset < new_end:
                return old_start
            delta = old_end - new_end
        return offset + delta

    def number(self, name: str) -> int:
        return self.order.index(name) + 1


def rewrite(text: str) -> Rewrite:
    """`text` with each `$name` replaced by its `$k`. Raises pglast's ParseError when the scanner
    fails (an unterminated string): the caller reports it as a syntax error."""
    from pglast import parser

    tokens = parser.scan(text)
    result = Rewrite(text)
    pieces: list[str] = []
    last = 0
    shift = 0
    for dollar, word in pairwise(tokens):
        if dollar.name == "PARAM":
            continue
        if dollar.name != "ASCII_36" or word.start != dollar.end + 1 or not _is_word(text, word):
            continue
        name = text[word.start : word.end + 1]
        occurrence = Occurrence(name, dollar.start, word.end + 1)
        result.occurrences.append(occurrence)
        if name not in result.order:
            result.order.append(name)
        replacement = f"${result.number(name)}"
        pieces += [text[last : occurrence.start], replacement]
        new_start = occurrence.start + shift
        shift += len(replacement) - (occurrence.end - occurrence.start)
        result._moves.append((new_start, new_start + len(replacement), occurrence.start, occurrence.end))
        last = occurrence.end
    for token in tokens:
        if token.name == "PARAM":
            result.positional.append(
                Occurrence(text[token.start : token.end + 1], token.start, token.end + 1)
            )
    pieces.append(text[last:])
    result.text = "".join(pieces)
    return result


def _is_word(text: str, token: object) -> bool:
    """An identifier or a keyword (`$name`, `$limit`): not a quoted name, a number or a symbol."""
    start, end = token.start, token.end + 1  # type: ignore[attr-defined]
    word = text[start:end]
    return bool(word) and (word[0].isalpha() or word[0] == "_") and all(c.isalnum() or c == "_" for c in word)

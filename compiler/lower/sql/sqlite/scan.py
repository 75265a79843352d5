"""A small scanner of SQLite statement text: parameters and statement ends, skipping what SQLite
does not read as code (string literals, quoted names in "", [] or ``, and comments)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = re.compile(r"[^\W\d]\w*")
_DIGITS = re.compile(r"[0-9]*")
_CLOSERS = {"'": "'", '"': '"', "`": "`", "[": "]"}


@dataclass(frozen=True)
class Parameter:
    mark: str  # "$", ":", "@" (named) or "?" (positional)
    name: str  # without the mark; digits or "" for ?NNN and ?
    start: int
    end: int


@dataclass(frozen=True)
class Scan:
    parameters: tuple[Parameter, ...]
    semicolons: tuple[int, ...]  # offsets of `;` that end a statement
    words: tuple[tuple[str, int], ...]  # bare words of code, with their offsets


def scan(text: str) -> Scan:
    parameters: list[Parameter] = []
    semicolons: list[int] = []
    words: list[tuple[str, int]] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in _CLOSERS:
            end = text.find(_CLOSERS[char], i + 1)
            while end >= 0 and char != "[" and text.startswith(_CLOSERS[char] * 2, end):
                end = text.find(_CLOSERS[char], end + 2)  # a doubled quote stays inside
            i = n if end < 0 else end + 1
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif char in "$:@" and (match := _NAME.match(text, i + 1)) is not None:
            parameters.append(Parameter(char, match.group(0), i, match.end()))
            i = match.end()
        elif char == "?":
            match = _DIGITS.match(text, i + 1)
            assert match is not None
            parameters.append(Parameter("?", match.group(0), i, match.end()))
            i = match.end()
        elif char == ";":
            semicolons.append(i)
            i += 1
        elif (match := _NAME.match(text, i)) is not None:
            words.append((match.group(0), i))
            i = match.end()
        else:
            i += 1
    return Scan(tuple(parameters), tuple(semicolons), tuple(words))


def without_final_semicolon(text: str) -> str:
    """The statement without a `;` that ends it (and the blanks or comments after it)."""
    found = scan(text)
    if found.semicolons and not _code_after(text[found.semicolons[-1] + 1 :]):
        return text[: found.semicolons[-1]].rstrip()
    return text.rstrip()


def _code_after(rest: str) -> bool:
    found = scan(rest)
    return bool(found.words or found.parameters or found.semicolons) or bool(
        re.sub(r"--[^\n]*|/\*.*?\*/|\s", "", rest, flags=re.DOTALL)
    )


def second_statement(text: str) -> int | None:
    """Where a second statement begins: just after the first `;` followed by more code."""
    for offset in scan(text).semicolons:
        rest = text[offset + 1 :]
        if _code_after(rest):
            return offset + 1 + (len(rest) - len(rest.lstrip()))
    return None

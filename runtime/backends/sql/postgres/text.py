"""Postgres's own text forms of arrays, composites, ranges and multiranges, read exactly.

Values reach the runtime as the text Postgres prints (see `session`), so a container arrives as
one string whose elements are themselves texts. These parsers split it the way Postgres's output
functions built it (array_out, record_out, range_out, multirange_out) and hand back the element
texts, None for SQL NULL; the converters of `values` then read each element by its type.

- array: `{1,2,NULL}`, `{{1,2},{3,4}}`, `{}`, `[0:1]={1,2}` (lower bounds other than 1 are
  printed first; they are dropped: the JSON array holds the elements in order). An element is
  double-quoted when it needs it, with backslash escapes; `NULL` unquoted is NULL, `"NULL"` is
  the text. Elements are separated by the element type's delimiter (`;` for box, else `,`).
- composite: `(1,"say ""hi"" now",,"")`: an empty field is NULL, `""` the empty text; quotes
  and backslashes inside quotes are doubled.
- range: `empty`, `[1,10)`, `(,5]` (an empty bound is unbounded), bounds quoted as composites'.
- multirange: `{[1,3),[5,7)}`, `{}`.
Anything else raises ValueError: the server reports it rather than returning a wrong value.
"""

from __future__ import annotations

from typing import Any

Nested = list[Any]  # of str | None | Nested
# A range: (lower, upper, lower inclusive, upper inclusive); a None bound is unbounded.
Bounds = tuple[str | None, str | None, bool, bool]


def parse_array(text: str, delimiter: str = ",") -> Nested:
    """An array's text -> nested lists of element texts (None for NULL)."""
    try:
        return _array(text, delimiter)
    except IndexError:  # the text ended inside a value
        raise ValueError(f"truncated array text: {text!r}") from None


def _array(text: str, delimiter: str) -> Nested:
    start = 0
    if text.startswith("["):  # dimension decoration: '[0:1][1:2]={...}'
        start = text.index("=") + 1
    items, end = _array_at(text, start, delimiter)
    if end != len(text):
        raise ValueError(f"unexpected text after an array: {text[end:]!r}")
    return items


def _array_at(text: str, i: int, delimiter: str) -> tuple[Nested, int]:
    if text[i] != "{":
        raise ValueError(f"expected '{{' at {i} in array text {text!r}")
    i += 1
    items: Nested = []
    if text[i] == "}":
        return items, i + 1
    while True:
        char = text[i]
        item: Any
        if char == "{":
            item, i = _array_at(text, i, delimiter)
        elif char == '"':
            item, i = _quoted(text, i, doubled=False)
        else:
            end = i
            while text[end] != delimiter and text[end] != "}":
                end += 1
            raw = text[i:end]
            item, i = (None if raw == "NULL" else raw), end
        items.append(item)
        if text[i] == "}":
            return items, i + 1
        if text[i] != delimiter:
            raise ValueError(f"expected {delimiter!r} at {i} in array text {text!r}")
        i += 1


def _quoted(text: str, i: int, doubled: bool) -> tuple[str, int]:
    """The quoted text starting at text[i] == '"' -> (its content, index past the closing quote).
    A backslash takes the next character as it is; with `doubled`, `""` is one quote too."""
    out: list[str] = []
    i += 1
    while True:
        char = text[i]
        if char == "\\":
            out.append(text[i + 1])
            i += 2
        elif char == '"':
            if doubled and text.startswith('"', i + 1):
                out.append('"')
                i += 2
            else:
                return "".join(out), i + 1
        else:
            out.append(char)
            i += 1


def _field_at(text: str, i: int, stops: str) -> tuple[str | None, int]:
    """One field of a composite or a range bound: None when empty (NULL, or unbounded)."""
    if text[i] == '"':
        return _quoted(text, i, doubled=True)
    end = i
    while text[end] not in stops:
        end += 1
    return (text[i:end] or None), end


def parse_composite(text: str) -> list[str | None]:
    """A composite value's text -> its field texts in order (None for NULL)."""
    try:
        return _composite(text)
    except IndexError:
        raise ValueError(f"truncated composite text: {text!r}") from None


def _composite(text: str) -> list[str | None]:
    if not (text.startswith("(") and text.endswith(")")):
        raise ValueError(f"unexpected composite text: {text!r}")
    fields: list[str | None] = []
    i = 1
    while True:
        field, i = _field_at(text, i, ",)")
        fields.append(field)
        if text[i] == ")":
            if i != len(text) - 1:
                raise ValueError(f"unexpected text after a composite: {text!r}")
            return fields
        i += 1


def parse_range(text: str) -> Bounds | None:
    """A range's text -> (lower, upper, lower inclusive, upper inclusive); None when empty."""
    if text == "empty":
        return None
    try:
        bounds, end = _range_at(text, 0)
    except IndexError:
        raise ValueError(f"truncated range text: {text!r}") from None
    if end != len(text):
        raise ValueError(f"unexpected text after a range: {text!r}")
    return bounds


def _range_at(text: str, i: int) -> tuple[Bounds, int]:
    opening = text[i]
    if opening not in "[(":
        raise ValueError(f"unexpected range text: {text!r}")
    lower, i = _field_at(text, i + 1, ",")
    if text[i] != ",":
        raise ValueError(f"expected ',' at {i} in range text {text!r}")
    upper, i = _field_at(text, i + 1, ")]")
    closing = text[i]
    return (lower, upper, opening == "[", closing == "]"), i + 1


def parse_multirange(text: str) -> list[Bounds]:
    """A multirange's text -> its ranges' bounds, in order (never empty ranges)."""
    try:
        return _multirange(text)
    except IndexError:
        raise ValueError(f"truncated multirange text: {text!r}") from None


def _multirange(text: str) -> list[Bounds]:
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"unexpected multirange text: {text!r}")
    ranges: list[Bounds] = []
    i = 1
    if text[i] == "}":
        return ranges
    while True:
        bounds, i = _range_at(text, i)
        ranges.append(bounds)
        if text[i] == "}":
            if i != len(text) - 1:
                raise ValueError(f"unexpected text after a multirange: {text!r}")
            return ranges
        if text[i] != ",":
            raise ValueError(f"expected ',' at {i} in multirange text {text!r}")
        i += 1

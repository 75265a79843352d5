"""Where a SQLite error points in a statement. SQLite's messages carry no offset but name the
token (`near "FORM": syntax error`, `no such column: t.nme`, `no such table: main.cites`):
the place is that token's first occurrence as code (outside strings and comments)."""

from __future__ import annotations

import re

from .scan import scan

_NEAR = re.compile(r'near "(.+)": syntax error', re.DOTALL)
_NAMED = re.compile(r"no such (table|column|function): ([\w.$]+)")
_INCOMPLETE = "incomplete input"


def error_offset(message: str, text: str) -> int | None:
    near = _NEAR.search(message)
    if near is not None:
        return _find(text, near.group(1))
    named = _NAMED.search(message)
    if named is not None:
        name = named.group(2)
        found = _find(text, name)
        if found is None and "." in name:
            found = _find(text, name.rsplit(".", 1)[1])
        return found
    if _INCOMPLETE in message:
        return len(text.rstrip())
    return None


def missing_name(message: str) -> tuple[str, str] | None:
    """("table" | "column" | "function", the name) when the message says one is unknown."""
    named = _NAMED.search(message)
    return None if named is None else (named.group(1), named.group(2))


def _find(text: str, token: str) -> int | None:
    """The first place of `token` in the code of `text`: a word as a word, else as written."""
    first = token.split(".")[0]
    for word, offset in scan(text).words:
        if word.lower() == first.lower():
            return offset
    found = text.find(token)
    return None if found < 0 else found

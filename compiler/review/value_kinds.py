"""What a schema node's values are, in a few words a reviewer reads at a glance: 'decimal text',
'number', 'date text or null'. A type change is then one clause ("decimal text → number")
instead of the member-by-member differences it is made of."""

from __future__ import annotations

import json
import re
from typing import Any

from .schema_alternatives import alternatives, combinator

# How a double's NaN and infinities travel in JSON (runtime/backends/sql/types.py): part of a
# number's values, not a kind of their own.
NON_FINITE_TEXT = frozenset({"NaN", "Infinity", "-Infinity"})
_NUMBER_KINDS = {"number", "integer"}
# Digits, an optional sign, and a fixed count of fraction digits: DECIMAL text as lynxc publishes it.
_DECIMAL_PATTERN = re.compile(r"\^(-\?)?\[0-9\]\+(\\\.\[0-9\]\{\d+\})?\$")
_FORMAT_WORDS = {"date-time": "timestamp", "uri": "URL"}


def describe_values(node: Any) -> str | None:
    """'decimal text', 'number or null', ...; None when the node is not simple enough to say so
    (a reference, a nested combinator, any value at all)."""
    kinds: list[str] = []
    for member in alternatives(node) if combinator(node) else [node]:
        kind = _member_kind(member)
        if kind is None:
            return None
        if kind not in kinds:
            kinds.append(kind)
    if "non-finite" in kinds:
        if not _NUMBER_KINDS & set(kinds):
            return None
        kinds.remove("non-finite")
    if "null" in kinds and len(kinds) > 1:
        kinds.remove("null")
        kinds.append("null")  # last: 'number or null'
    return " or ".join(kinds)


def _member_kind(member: Any) -> str | None:
    if not isinstance(member, dict) or "$ref" in member or combinator(member):
        return None
    values = [member["const"]] if "const" in member else member.get("enum")
    if isinstance(values, list):
        if values and set(values) <= NON_FINITE_TEXT:
            return "non-finite"
        shown = (v if isinstance(v, str) else json.dumps(v) for v in values[:4])
        return "one of " + ", ".join(shown) + (", ..." if len(values) > 4 else "")
    kind = member.get("type")
    if kind == "string":
        return _text_kind(member)
    if isinstance(kind, str):
        return kind
    return None


def _text_kind(member: dict[str, Any]) -> str:
    pattern = member.get("pattern")
    if isinstance(pattern, str) and _DECIMAL_PATTERN.fullmatch(pattern):
        return "decimal text" if "\\." in pattern else "integer text"
    if isinstance(member.get("format"), str):
        return f"{_FORMAT_WORDS.get(member['format'], member['format'])} text"
    if member.get("contentEncoding") == "base64":
        return "base64 text"
    return "patterned text" if isinstance(pattern, str) else "text"

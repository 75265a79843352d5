"""Pure judgement of one answer: an example's expectation and what the server answered in, the
list of mismatches out (empty: the example passed). Nothing here talks to a server."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.errors import forbidden_prefix, invalid_arguments_prefix
from lynxc.runtime.wire_values import pointed_value

CONTAINS = "contains"


@dataclass(frozen=True)
class Answer:
    """What a tools/call returned, or the protocol error it raised instead."""

    is_error: bool = False
    structured: Any = None
    text: str = ""
    protocol_error: str | None = None  # a JSON-RPC error (or a dead connection) instead of a result


def error_kind(tool: str, text: str) -> str:
    """Who refused a call, from the host's wording (runtime/host.py): the host against the
    inputSchema, the access check, or the tool itself."""
    if text.startswith(invalid_arguments_prefix(tool)):
        return "invalid_arguments"
    if text.startswith(forbidden_prefix(tool)):
        return "forbidden"
    return "tool_error"


def mismatches(tool: str, expect: dict[str, Any], answer: Answer) -> list[str]:
    """Every way `answer` falls short of `expect`, one readable line each."""
    if answer.protocol_error is not None:
        return [f"protocol error instead of an answer: {answer.protocol_error}"]
    error = expect.get("error")
    if error is not None:
        if not answer.is_error:
            return [f"expected an error, got a result: {_short(answer.structured, answer.text)}"]
        return _error_mismatches(tool, error, answer.text)
    if answer.is_error:
        return [f"expected a result, got an error: {answer.text}"]
    problems: list[str] = []
    if "result" in expect:
        problems += subset_mismatches(expect["result"], answer.structured, "result")
    if "rows" in expect:
        problems += _rows_mismatches(expect["rows"], answer.structured)
    if "text" in expect and expect["text"] not in answer.text:
        problems.append(f"text: expected to contain {expect['text']!r}, got {_clip(answer.text)!r}")
    return problems


def subset_mismatches(expected: Any, got: Any, where: str) -> list[str]:
    """Objects match key by key (the answer may hold more), lists element by element and of the
    same length, {contains: [...]} a list holding matches of those items, scalars by equality
    (a boolean never equals a number)."""
    if isinstance(expected, dict) and set(expected) == {CONTAINS} and isinstance(expected[CONTAINS], list):
        if not isinstance(got, list):
            return [f"{where}: expected a list containing {_json(expected[CONTAINS])}, got {_json(got)}"]
        return [
            f"{where}: no item matches {_json(item)}"
            for item in expected[CONTAINS]
            if not any(not subset_mismatches(item, candidate, where) for candidate in got)
        ]
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return [f"{where}: expected an object, got {_json(got)}"]
        problems = []
        for key, value in expected.items():
            if key not in got:
                problems.append(f"{where}.{key}: missing (expected {_json(value)})")
            else:
                problems += subset_mismatches(value, got[key], f"{where}.{key}")
        return problems
    if isinstance(expected, list):
        if not isinstance(got, list):
            return [f"{where}: expected {_json(expected)}, got {_json(got)}"]
        if len(expected) != len(got):
            return [f"{where}: expected {len(expected)} items {_json(expected)}, got {len(got)} {_json(got)}"]
        return [
            p
            for i, (e, g) in enumerate(zip(expected, got, strict=True))
            for p in subset_mismatches(e, g, f"{where}[{i}]")
        ]
    if isinstance(expected, bool) != isinstance(got, bool) or expected != got:
        return [f"{where}: expected {_json(expected)}, got {_json(got)}"]
    return []


def _error_mismatches(tool: str, error: dict[str, Any], text: str) -> list[str]:
    problems = []
    kind = error_kind(tool, text)
    if error.get("kind") and error["kind"] != kind:
        problems.append(f"error: expected kind {error['kind']}, got {kind}: {text}")
    if error.get("field") and error["field"] not in text:
        problems.append(f"error: expected to name the field {error['field']!r}: {text}")
    if error.get("message") and error["message"] not in text:
        problems.append(f"error: expected to contain {error['message']!r}: {text}")
    return problems


def _rows_mismatches(rows: dict[str, Any], structured: Any) -> list[str]:
    at = rows.get("at", "/rows")
    try:
        items = pointed_value(structured, at)
    except LookupError:
        return [f"rows: nothing at {at} in {_short(structured, '')}"]
    if not isinstance(items, list):
        return [f"rows: {at} is not a list: {_json(items)}"]
    count = len(items)
    if rows.get("count") is not None and count != rows["count"]:
        return [f"rows: expected {rows['count']} items at {at}, got {count}"]
    if rows.get("min") is not None and count < rows["min"]:
        return [f"rows: expected at least {rows['min']} items at {at}, got {count}"]
    if rows.get("max") is not None and count > rows["max"]:
        return [f"rows: expected at most {rows['max']} items at {at}, got {count}"]
    return []


def _json(value: Any) -> str:
    return _clip(json.dumps(value, ensure_ascii=False, default=str))


def _short(structured: Any, text: str) -> str:
    return _json(structured) if structured is not None else _clip(text)


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"

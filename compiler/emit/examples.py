"""How an example's expectation reads in prose: the generated README and `lynxc test`'s report
say it the same way."""

from __future__ import annotations

import json
from typing import Any


def describe_expectation(expect: dict[str, Any]) -> str:
    """`expect` (an example's expectation, the keys given only) as one short sentence."""
    error = expect.get("error")
    if error is not None:
        parts = ["refused" + (f" ({error['kind']})" if error.get("kind") else "")]
        if error.get("field"):
            parts.append(f"naming `{error['field']}`")
        if error.get("message"):
            parts.append(f"with a message containing {_quoted(error['message'])}")
        return " ".join(parts) + "."
    parts = []
    if "result" in expect:
        parts.append(f"the result includes `{_compact(expect['result'])}`")
    if "rows" in expect:
        parts.append(_rows(expect["rows"]))
    if "text" in expect:
        parts.append(f"the text contains {_quoted(expect['text'])}")
    return ("answers; " + "; ".join(parts) if parts else "answers without an error") + "."


def _rows(rows: dict[str, Any]) -> str:
    at = rows.get("at", "/rows")
    if rows.get("count") is not None:
        bound = f"exactly {rows['count']}"
    elif rows.get("min") is not None and rows.get("max") is not None:
        bound = f"{rows['min']} to {rows['max']}"
    elif rows.get("min") is not None:
        bound = f"at least {rows['min']}"
    elif rows.get("max") is not None:
        bound = f"at most {rows['max']}"
    else:
        bound = "any number of"
    return f"{bound} items at `{at}`"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)

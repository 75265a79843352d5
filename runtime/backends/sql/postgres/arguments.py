"""A call's JSON arguments as the text Postgres reads for the build's parameter types.

Every parameter is bound as text of unknown type (OID 0): Postgres then reads the text with
the type it inferred when the build prepared the statement (the same inference, since the
statement is the same), rather than a type this side guessed from a Python value. The text is
always a bound value, never spliced into SQL.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from lynxc.runtime.errors import ToolError

from .catalog import PgParam

JSON_TYPES = frozenset({"json", "jsonb"})


def bound_values(params: Sequence[PgParam], arguments: Mapping[str, Any]) -> list[str | None]:
    """The $1..$n values of one call, in the order of `params`."""
    return [_param_text(param, arguments.get(param.name)) for param in params]


def _param_text(param: PgParam, value: Any) -> str | None:
    if value is None:
        return None
    if param.type in JSON_TYPES:
        return json.dumps(value, ensure_ascii=False)
    text = to_text(value)
    if "\x00" in text:
        raise ToolError(f"{param.name}: Postgres text cannot hold the NUL character (U+0000)")
    return text


def to_text(value: Any) -> str:
    """One JSON value in Postgres's input syntax: numbers and booleans as Postgres spells them,
    arrays as array literals (every element quoted, NULL for null), objects as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return repr(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "{" + ",".join(_element(item) for item in value) + "}"
    return json.dumps(value, ensure_ascii=False)


def _element(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, list):
        return to_text(value)
    text = to_text(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

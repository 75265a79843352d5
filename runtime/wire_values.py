"""Backend results -> JSON values for `structuredContent`, by one rule, and strict JSON text.

A backend may return what its libraries naturally produce (DuckDB gives `Decimal` and
`datetime`, LanceDB numpy values). `to_wire` converts a result by this rule, before the host
validates it against the output schema, so the value validated is the value sent:

    BaseModel                       object by alias; an optional field left at None is omitted
    dict                            object; keys that are str, int or Enum/UUID/date (converted
                                    by this rule to a string); any other key is refused
    list, tuple, numpy array        array
    str, int, bool, None            as is
    float, numpy floating           number (NaN and +-Infinity are refused by `encode_json`)
    Decimal                         number: an int when integral, else the nearest float (what a
                                    JSON client reads a number as anyway); NaN/Infinity refused.
                                    A field's JSON type never depends on its value.
    datetime, date, time            ISO 8601 string (`2024-05-01T12:00:00+00:00`, `2024-05-01`);
                                    a naive datetime has no offset
    timedelta                       ISO 8601 duration string (`P1DT2H`)
    UUID                            string, lower-case with hyphens
    Enum                            its value, by this rule
    numpy scalar                    the Python value (`.item()`), by this rule; numpy datetime64
                                    and timedelta64 are refused (convert them to datetime)
    bytes, bytearray, memoryview    base64 string (RFC 4648, with padding)
    anything else (set, object)     refused

`encode_json` writes a converted value as compact UTF-8 JSON and refuses what JSON cannot
carry: NaN, +-Infinity, a string holding a lone surrogate, an integer too long to print. A
result nested more than MAX_DEPTH levels deep is refused too (the SDK could not serialize it).
A refusal is a `NotJSONError` naming where the value sits (`rows/3/price`); the host answers
it as a tool error, never a protocol error.
"""

from __future__ import annotations

import base64
import datetime
import json
import math
from collections.abc import Callable
from decimal import Decimal
from enum import Enum
from functools import cache
from typing import Any
from uuid import UUID

import pydantic_core
from pydantic import BaseModel

Location = tuple[str | int, ...]

# Leaves that are JSON already: checked by exact type first, the common case.
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})
# pydantic-core, which writes every response, stops at 255 levels of nesting, and the JSON-RPC
# envelope takes a few of them: a deeper result is refused here, as a tool error.
MAX_DEPTH = 200


class NotJSONError(ValueError):
    """A value with no JSON form. `rule` names the problem in the words of pydantic's error
    types where one fits (`finite_number`, `string_unicode`), so argument errors read alike."""

    def __init__(self, rule: str, reason: str, path: Location = ()):
        super().__init__(reason)
        self.rule = rule
        self.reason = reason
        self.path = path

    def inside(self, key: str | int) -> NotJSONError:
        """The same error, one level further from the root."""
        return NotJSONError(self.rule, self.reason, (key, *self.path))

    @property
    def where(self) -> str:
        """The path as output validation writes it: `matches/0/line`, or `(root)`."""
        return "/".join(str(part) for part in self.path) or "(root)"


def to_wire(value: Any) -> Any:
    """`value` converted to JSON values by the rule in the module docstring."""
    return _convert(value, 0)


def encode_json(value: Any) -> bytes:
    """Compact UTF-8 JSON of a JSON value; a NotJSONError names the first part JSON cannot carry."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    except (ValueError, TypeError):  # UnicodeEncodeError is a ValueError
        # Locating the culprit walks the value: done only when encoding has already failed.
        error = _first_unencodable(value, ())
        if error is None:
            raise
        raise error from None


def json_kind(value: Any) -> str:
    """What kind of JSON value `value` is, for a message: `a string`, `an integer`, `a boolean
    (true)`, `null`... (a bool is never a number here, as in JSON)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list | tuple) else "an object"


def pointed_value(document: Any, pointer: str) -> Any:
    """The value at an RFC 6901 JSON pointer ('' or /a/0/b, ~1 for / and ~0 for ~ in a key);
    LookupError when there is none."""
    value = document
    for raw in pointer.split("/")[1:] if pointer else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            raise LookupError(pointer)
    return value


def json_size(value: Any) -> int:
    """UTF-8 bytes of `value` as compact JSON: the measure output caps are enforced in."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def fit_list_to_json_cap(result: dict[str, Any], key: str, flag: str, limit: int) -> None:
    """Drop trailing items of `result[key]` until `result` is at most `limit` bytes of JSON,
    setting `result[flag]` when anything was dropped. Items are measured once each."""
    items = result[key]
    if json_size(result) <= limit:
        return
    result[flag] = True
    result[key] = []
    budget = limit - json_size(result)
    kept = 0
    for item in items:
        cost = json_size(item) + (1 if kept else 0)  # a comma between items
        if cost > budget:
            break
        budget -= cost
        kept += 1
    result[key] = items[:kept]


# Containers -----------------------------------------------------------------------------
# A failure deeper down is re-raised with this level's key prepended; try costs nothing until
# something raises, so the path is built only for a refused value.


def _convert(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind in _JSON_SCALARS:
        return value
    if kind is dict:
        return _dict(value, depth)
    if kind is list:
        return _list(value, depth)
    return _converter_for(kind)(value, depth)


def _dict(value: dict[Any, Any], depth: int) -> dict[str, Any]:
    _check_depth(depth)
    out = {}
    for key, item in value.items():
        name = key if type(key) is str else _key(key)
        try:
            out[name] = _convert(item, depth + 1)
        except NotJSONError as err:
            raise err.inside(name) from None
    return out


def _list(value: list[Any] | tuple[Any, ...], depth: int) -> list[Any]:
    _check_depth(depth)
    out = []
    for index, item in enumerate(value):
        try:
            out.append(_convert(item, depth + 1))
        except NotJSONError as err:
            raise err.inside(index) from None
    return out


def _model(value: BaseModel, depth: int) -> dict[str, Any]:
    """By alias. An optional field left at None is omitted; a required field that is None stays,
    as `null` (the output schema then says whether that is allowed)."""
    _check_depth(depth)
    out = {}
    for name, field in type(value).model_fields.items():
        item = getattr(value, name)
        if item is None and not field.is_required():
            continue
        wire_name = field.alias or name
        try:
            out[wire_name] = _convert(item, depth + 1)
        except NotJSONError as err:
            raise err.inside(wire_name) from None
    if value.model_extra:
        out.update(_dict(value.model_extra, depth))
    return out


def _check_depth(depth: int) -> None:
    if depth >= MAX_DEPTH:
        raise NotJSONError("json_depth", f"nested more than {MAX_DEPTH} levels deep")


def _key(key: Any) -> str:
    if isinstance(key, int) and not isinstance(key, bool | Enum):
        return str(key)
    converted = to_wire(key)
    if type(converted) is not str:
        raise NotJSONError("json_type", f"an object key must be a string, not {type(key).__name__}")
    return converted


# Scalars --------------------------------------------------------------------------------


def _decimal(value: Decimal, depth: int) -> int | float:
    if not value.is_finite():
        raise NotJSONError("finite_number", f"{value} is not a JSON number")
    if value == value.to_integral_value():
        return int(value)
    as_float = float(value)
    if math.isinf(as_float):
        raise NotJSONError("finite_number", f"{value} is beyond the range of a JSON number")
    return as_float


def _bytes(value: bytes | bytearray | memoryview, depth: int) -> str:
    return base64.b64encode(value).decode("ascii")


def _numpy(value: Any, depth: int) -> Any:
    if getattr(getattr(value, "dtype", None), "kind", "") in ("M", "m"):
        raise NotJSONError(
            "json_type", f"numpy {value.dtype} has no JSON form here; convert it to datetime first"
        )
    if hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0:
        return _list(value.tolist(), depth)
    return _convert(value.item(), depth)


def _refuse(value: Any, depth: int) -> Any:
    raise NotJSONError("json_type", f"a {type(value).__name__} has no JSON form")


# Checked in order, so a subclass meets its most specific rule first (an IntEnum is an Enum before
# it is an int; numpy types are matched by module before any of these).
_CONVERTERS: tuple[tuple[type | tuple[type, ...], Callable[[Any, int], Any]], ...] = (
    (BaseModel, _model),
    (Enum, lambda value, depth: _convert(value.value, depth)),
    (dict, _dict),
    (list | tuple, _list),
    (Decimal, _decimal),
    (datetime.datetime | datetime.date | datetime.time, lambda value, depth: value.isoformat()),
    (datetime.timedelta, lambda value, depth: pydantic_core.to_jsonable_python(value)),
    (UUID, lambda value, depth: str(value)),
    (bytes | bytearray | memoryview, _bytes),
    # Subclasses of JSON scalars (a str or float subclass from some library): the plain value.
    (str, lambda value, depth: str.__str__(value)),
    (int, lambda value, depth: int(value)),
    (float, lambda value, depth: float(value)),
)


@cache
def _converter_for(kind: type) -> Callable[[Any, int], Any]:
    """One lookup per type, not per value: results repeat the same few types many times."""
    if kind.__module__.partition(".")[0] == "numpy":  # never imported here: few servers use it
        return _numpy
    for types, convert in _CONVERTERS:
        if issubclass(kind, types):
            return convert
    return _refuse


# Locating what encode_json refused --------------------------------------------------------


def _first_unencodable(value: Any, path: Location) -> NotJSONError | None:
    if isinstance(value, dict):
        for key, item in value.items():
            found = _first_unencodable(key, (*path, key)) if isinstance(key, str) else None
            found = found or _first_unencodable(item, (*path, key))
            if found:
                return found
        return None
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = _first_unencodable(item, (*path, index))
            if found:
                return found
        return None
    return _leaf_problem(value, path)


def _leaf_problem(value: Any, path: Location) -> NotJSONError | None:
    if isinstance(value, float):
        if math.isfinite(value):
            return None
        words = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return NotJSONError("finite_number", f"{words} is not a JSON number", path)
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError as err:
            bad = value[err.start]
            return NotJSONError(
                "string_unicode", f"the text holds a lone surrogate (U+{ord(bad):04X}), not Unicode", path
            )
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            str(value)
        except ValueError as err:
            return NotJSONError("int_too_long", str(err), path)
        return None
    if value is None or isinstance(value, bool):
        return None
    return NotJSONError("json_type", f"a {type(value).__name__} has no JSON form", path)

"""Postgres's text of a value -> its JSON value, by the column's type tree (the table is in the
docstring of `types`). Every converter takes the text Postgres printed (None for NULL) under the
settings of `session`; a text of the wrong form raises ValueError, never a wrong value."""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from typing import Any

from .. import types as duck
from .text import Bounds, parse_array, parse_composite, parse_multirange, parse_range

Converter = Callable[[str | None], Any]

_NON_FINITE = frozenset({"NaN", "Infinity", "-Infinity"})
_INFINITIES = frozenset({"infinity", "-infinity"})
# A numeric with at most this many significant digits is a JSON number without loss.
_NUMBER_DIGITS = duck.MAX_NUMBER_DECIMAL_PRECISION
_NUMERIC_TEXT = re.compile(r"-?(\d+)(?:\.(\d+))?")
# Postgres's ISO text of a date or timestamp: '2024-01-02', '0044-03-15 BC',
# '12345-01-01 00:00:01.5', '0044-03-15 01:02:03+00 BC' (an offset only with time zone).
_TEMPORAL_TEXT = re.compile(
    r"(\d{4,})-(\d\d)-(\d\d)(?: (\d\d:\d\d:\d\d(?:\.\d{1,6})?)([+-]\d\d(?::\d\d){0,2})?)?( BC)?"
)
_TIME_TEXT = re.compile(r"\d\d:\d\d:\d\d(?:\.\d{1,6})?")
_TIME_TZ_TEXT = re.compile(r"(\d\d:\d\d:\d\d(?:\.\d{1,6})?)([+-]\d\d(?::\d\d){0,2})")
# IntervalStyle iso_8601: 'P1Y2M3DT4H5M6.5S', 'P-1Y-2M3DT-4H-5M-6.5S', 'PT0S'.
_INTERVAL_TEXT = re.compile(
    r"P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?)(\d+)(?:\.(\d{1,6}))?S)?)?"
)


def pg_row_converter(columns: list[dict[str, Any]]) -> Callable[[tuple], dict[str, Any]]:
    """A row of Postgres texts (tuple) -> the row object, for columns `{"name", "type", ...}`."""
    names = [column["name"] for column in columns]
    if len(set(names)) != len(names):
        duplicates = sorted({name for name in names if names.count(name) > 1})
        raise ValueError(f"result columns must have distinct names; repeated: {', '.join(duplicates)}")
    pairs = [(column["name"], pg_converter(column["type"])) for column in columns]

    def convert_row(row: tuple) -> dict[str, Any]:
        return {name: convert(value) for (name, convert), value in zip(pairs, row, strict=True)}

    return convert_row


def pg_converter(tree: dict[str, Any]) -> Converter:
    """Build, once per column, the function from a value's text to its JSON value."""
    build = _BUILDERS.get(tree["id"])
    if build is None:
        raise duck.UnsupportedType(tree.get("sql", tree["id"]), engine="Postgres")
    return build(tree)


def _nullable(convert: Callable[[str], Any]) -> Converter:
    return lambda text: None if text is None else convert(text)


def _identity(text: str | None) -> Any:
    return text


def _integer(text: str) -> Any:
    number = int(text)
    return number if -duck.MAX_SAFE_INT <= number <= duck.MAX_SAFE_INT else str(number)


def _float(text: str) -> Any:
    return text if text in _NON_FINITE else float(text)


def _decimal(tree: dict[str, Any]) -> Converter:
    if tree["precision"] > _NUMBER_DIGITS:
        return _identity  # Postgres prints the declared scale's digits: the exact text
    as_number = int if tree["scale"] == 0 else float
    return _nullable(lambda text: text if text == "NaN" else as_number(text))


def _numeric(text: str) -> Any:
    if text in _NON_FINITE:
        return text
    match = _NUMERIC_TEXT.fullmatch(text)
    if match is None:
        raise ValueError(f"unexpected numeric text from Postgres: {text!r}")
    whole, fraction = match.groups()
    if fraction is None:
        return _integer(text)
    digits = (whole + fraction).lstrip("0")
    number = float(text)
    # At most 15 significant digits read back exactly from a double; outside the normal range
    # (Postgres numerics reach 1e-16383 and 1e131072) a double cannot hold them at all.
    if len(digits) <= _NUMBER_DIGITS and (number == 0 or 1e-300 < abs(number) < 1e300):
        return number
    return text


def _boolean(text: str) -> bool:
    if text not in ("t", "f"):
        raise ValueError(f"unexpected boolean text from Postgres: {text!r}")
    return text == "t"


def _blob(text: str) -> str:
    if not text.startswith("\\x"):
        raise ValueError("bytea is not in hex form: the session must set bytea_output=hex")
    return base64.b64encode(bytes.fromhex(text[2:])).decode("ascii")


def _iso_date(year_text: str, month: str, day: str, bc: str | None) -> str:
    year = 1 - int(year_text) if bc else int(year_text)  # astronomical: 1 BC is year 0
    sign = "+" if year > 9999 else "-" if year < 0 else ""  # ISO 8601 signs only expanded years
    return f"{sign}{abs(year):04d}-{month}-{day}"


def _temporal(text: str, with_time: bool) -> tuple[str, str | None, str | None]:
    match = _TEMPORAL_TEXT.fullmatch(text)
    if match is None or (match[4] is not None) != with_time:
        raise ValueError(f"unexpected date/time text from Postgres: {text!r}")
    year, month, day, clock, offset, bc = match.groups()
    return _iso_date(year, month, day, bc), clock, offset


def _date(text: str) -> str:
    return text if text in _INFINITIES else _temporal(text, with_time=False)[0]


def _clock(text: str) -> str:
    """Postgres drops a fraction's trailing zeros; DuckDB's rendering keeps six digits."""
    return duck._padded(text, 6)


def _time(text: str) -> str:
    if _TIME_TEXT.fullmatch(text) is None:
        raise ValueError(f"unexpected time text from Postgres: {text!r}")
    return _clock(text)


def _offset(offset: str) -> str:
    return offset if len(offset) > 3 else offset + ":00"  # '+05' -> '+05:00'


def _time_tz(text: str) -> str:
    match = _TIME_TZ_TEXT.fullmatch(text)
    if match is None:
        raise ValueError(f"unexpected timetz text from Postgres: {text!r}")
    return _clock(match[1]) + _offset(match[2])


def _timestamp(text: str) -> str:
    if text in _INFINITIES:
        return text
    day, clock, offset = _temporal(text, with_time=True)
    if offset is not None:
        raise ValueError(f"unexpected offset in a timestamp from Postgres: {text!r}")
    return f"{day}T{_clock(clock or '')}"


def _timestamp_tz(text: str) -> str:
    if text in _INFINITIES:
        return text
    day, clock, offset = _temporal(text, with_time=True)
    if offset is None:
        raise ValueError(f"no offset in a timestamptz from Postgres: {text!r}")
    zone = "Z" if offset.strip("+-:0") == "" else _offset(offset)
    return f"{day}T{_clock(clock or '')}{zone}"


def _interval(text: str) -> str:
    if text in _INFINITIES:
        return text
    match = _INTERVAL_TEXT.fullmatch(text)
    if match is None or text == "P":
        raise ValueError(f"unexpected interval text from Postgres (IntervalStyle iso_8601?): {text!r}")
    years, months, days, hours, minutes, minus, seconds, fraction = match.groups()
    # Postgres keeps the time as one signed count of microseconds: its parts share a sign.
    micros = (int(hours or 0) * 60 + int(minutes or 0)) * 60_000_000
    second_micros = int(seconds or 0) * 1_000_000 + int((fraction or "").ljust(6, "0"))
    micros += -second_micros if minus else second_micros
    return duck._iso_duration(int(years or 0) * 12 + int(months or 0), int(days or 0), micros)


def _json(text: str) -> Any:
    return duck._json(text)


def _array(tree: dict[str, Any]) -> Converter:
    convert_item = pg_converter(tree["child"])
    delimiter = tree.get("delimiter", ",")

    def walk(items: list[Any]) -> list[Any]:
        return [walk(item) if isinstance(item, list) else convert_item(item) for item in items]

    return _nullable(lambda text: walk(parse_array(text, delimiter)))


def _struct(tree: dict[str, Any]) -> Converter:
    fields = [(name, pg_converter(child)) for name, child in tree["fields"]]

    def convert(text: str) -> dict[str, Any]:
        values = parse_composite(text)
        if len(values) != len(fields):
            raise ValueError(f"{tree.get('sql', 'a composite')} has {len(fields)} fields, got {text!r}")
        return {
            name: convert_field(value) for (name, convert_field), value in zip(fields, values, strict=True)
        }

    return _nullable(convert)


def _range_object(convert_bound: Converter, bounds: Bounds | None) -> dict[str, Any]:
    if bounds is None:
        return {
            "lower": None,
            "upper": None,
            "lower_inclusive": False,
            "upper_inclusive": False,
            "empty": True,
        }
    lower, upper, lower_inclusive, upper_inclusive = bounds
    return {
        "lower": convert_bound(lower),
        "upper": convert_bound(upper),
        "lower_inclusive": lower_inclusive,
        "upper_inclusive": upper_inclusive,
        "empty": False,
    }


def _range(tree: dict[str, Any]) -> Converter:
    convert_bound = pg_converter(tree["child"])
    return _nullable(lambda text: _range_object(convert_bound, parse_range(text)))


def _multirange(tree: dict[str, Any]) -> Converter:
    convert_bound = pg_converter(tree["child"]["child"])
    return _nullable(lambda text: [_range_object(convert_bound, bounds) for bounds in parse_multirange(text)])


def _scalar(convert: Callable[[str], Any]) -> Callable[[dict[str, Any]], Converter]:
    converter = _nullable(convert)
    return lambda tree: converter


_TEXT_IDS = ("varchar", "uuid", "enum", "bit", "inet", "cidr", "macaddr", "macaddr8", "money")
_BUILDERS: dict[str, Callable[[dict[str, Any]], Converter]] = {
    **dict.fromkeys(_TEXT_IDS, lambda tree: _identity),
    **dict.fromkeys(("smallint", "integer", "uinteger"), _scalar(int)),
    **dict.fromkeys(("bigint", "ubigint"), _scalar(_integer)),
    **dict.fromkeys(("float", "double"), _scalar(_float)),
    "decimal": _decimal,
    "numeric": _scalar(_numeric),
    "boolean": _scalar(_boolean),
    "blob": _scalar(_blob),
    "json": _scalar(_json),
    "date": _scalar(_date),
    "time": _scalar(_time),
    "time with time zone": _scalar(_time_tz),
    "timestamp": _scalar(_timestamp),
    "timestamp with time zone": _scalar(_timestamp_tz),
    "interval": _scalar(_interval),
    "pg_array": _array,
    "struct": _struct,
    "range": _range,
    "multirange": _multirange,
}

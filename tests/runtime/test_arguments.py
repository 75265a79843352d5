"""Strict argument validation on model shapes the bundled tools do not have (unions, nested
models, enums, dates): JSON types as the inputSchema reads them, 3.0 taken as an integer only
where an integer is expected."""

from __future__ import annotations

import datetime
from enum import Enum
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict

from lynxc.runtime.arguments import ArgumentsError, validate_arguments


class Mode(Enum):
    FAST = "fast"


class Query(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    limit: int = 1


class Input(BaseModel):
    model_config = ConfigDict(extra="forbid")
    either: int | str = 0
    queries: list[Query] = []
    free: dict[str, Any] = {}
    mode: Mode = Mode.FAST
    since: datetime.date | None = None
    ratio: float = 0.0


def test_integral_floats_become_integers_only_where_integers_are_expected() -> None:
    valid = validate_arguments(
        Input, {"either": 3.0, "queries": [{"text": "a", "limit": 2.0}], "free": {"x": 3.0}, "ratio": 1.0}
    )
    assert valid.either == 3 and type(valid.either) is int
    assert valid.queries[0].limit == 2 and type(valid.queries[0].limit) is int
    assert type(valid.free["x"]) is float  # free-form data is passed on as sent


def test_json_forms_of_enums_and_dates_are_accepted() -> None:
    """Strict *JSON* mode: an enum by its value and a date as ISO text, as a client sends them."""
    valid = validate_arguments(Input, {"mode": "fast", "since": "2024-05-01"})
    assert valid.mode is Mode.FAST and valid.since == datetime.date(2024, 5, 1)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"queries": [{"text": "a", "limit": 2.5}]},
            "queries.0.limit: Input should be a valid integer (rule int_type)",
        ),
        (
            {"queries": [{"text": "a", "limit": True}]},
            "queries.0.limit: Input should be a valid integer (rule int_type)",
        ),
        ({"ratio": "1"}, "ratio: Input should be a valid number (rule float_type)"),
        ({"either": 3.0, "ratio": False}, "ratio: Input should be a valid number (rule float_type)"),
        ({"free": {"x": "caf\udce9"}}, "free.x: Input should be a valid string, unable to parse raw data"),
    ],
)
def test_what_the_schema_rejects_is_rejected(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentsError) as refused:
        validate_arguments(Input, arguments)
    assert str(refused.value).startswith(message)


class Filter(BaseModel):
    model_config = ConfigDict(extra="forbid")
    field: str
    op: Literal["eq", "ne"] = "eq"


class Optionals(BaseModel):
    """As the generator writes optional parameters: None stands for an omitted one."""

    model_config = ConfigDict(extra="forbid")
    pattern: str
    path: str | None = None
    filters: list[Filter] | None = None
    either: int | str | None = None
    cursor: str | None = None


OPTIONALS_SCHEMA = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string"},
        "path": {"type": "string"},
        "filters": {"type": "array", "items": {"$ref": "#/$defs/Filter"}},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "cursor": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["pattern"],
    "additionalProperties": False,
    "$defs": {
        "Filter": {
            "type": "object",
            "properties": {"field": {"type": "string"}, "op": {"enum": ["eq", "ne"], "default": "eq"}},
            "required": ["field"],
        }
    },
}


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"pattern": "x", "path": None}, "path: Input should be a valid string (rule string_type)"),
        ({"pattern": "x", "filters": None}, "filters: Input should be a valid array (rule list_type)"),
        (
            {"pattern": "x", "filters": [{"field": None}]},
            "filters.0.field: Input should be a valid string (rule string_type)",
        ),
        (
            {"pattern": "x", "either": None},
            "either: Input should be a valid integer or a valid string (rule anyOf)",
        ),
        # Named once, in the model's words, when the model refuses the null too.
        ({"pattern": None}, "pattern: Input should be a valid string (rule string_type)"),
        (
            {"pattern": "x", "filters": [{"field": "a", "op": None}]},
            "filters.0.op: Input should be 'eq' or 'ne' (rule literal_error)",
        ),
        (
            {"pattern": 1, "path": None},
            "path: Input should be a valid string (rule string_type); "
            "pattern: Input should be a valid string (rule string_type)",
        ),
    ],
)
def test_nulls_the_schema_refuses_are_refused(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ArgumentsError) as refused:
        validate_arguments(Optionals, arguments, OPTIONALS_SCHEMA)
    assert str(refused.value) == message


def test_nulls_the_schema_admits_pass() -> None:
    valid = validate_arguments(Optionals, {"pattern": "x", "cursor": None}, OPTIONALS_SCHEMA)
    assert valid.cursor is None and valid.path is None

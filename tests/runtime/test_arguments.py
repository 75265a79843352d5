"""Strict argument validation on model shapes the bundled tools do not have (unions, nested
models, enums, dates): JSON types as the inputSchema reads them, 3.0 taken as an integer only
where an integer is expected."""

from __future__ import annotations

import datetime
from enum import Enum
from typing import Any

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

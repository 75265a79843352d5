"""The one conversion rule for results (`to_wire`) and strict JSON text (`encode_json`), on the
edges the end-to-end tests in test_host.py do not reach."""

from __future__ import annotations

from decimal import Decimal
from enum import Enum
from typing import Annotated
from uuid import UUID

import pytest
from pydantic import BaseModel, ConfigDict, Field

from lynxc.runtime.wire_values import MAX_DEPTH, NotJSONError, encode_json, to_wire


class Level(Enum):
    HIGH = "high"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("7"), 7),
        (Decimal("7.00"), 7),
        (Decimal("1E+2"), 100),
        (Decimal("-0.5"), -0.5),
        (Decimal("0.1"), 0.1),
        (Decimal("12345678901234.5678"), 12345678901234.568),  # the nearest double
        (Decimal("123456789012345678901234567890"), 123456789012345678901234567890),  # exact int
    ],
)
def test_a_decimal_is_always_a_json_number(value: Decimal, expected: int | float) -> None:
    converted = to_wire({"d": value})["d"]
    assert converted == expected and type(converted) is type(expected)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (Decimal("NaN"), "NaN is not a JSON number"),
        (Decimal("-Infinity"), "-Infinity is not a JSON number"),
        (Decimal("9" * 400 + ".5"), "is beyond the range of a JSON number"),
    ],
)
def test_a_decimal_with_no_json_number_is_refused(value: Decimal, reason: str) -> None:
    with pytest.raises(NotJSONError) as refused:
        to_wire({"rows": [{"d": value}]})
    assert refused.value.where == "rows/0/d" and reason in refused.value.reason


def test_object_keys_become_strings_or_are_refused() -> None:
    key = UUID(int=1)
    assert to_wire({1: "a", key: "b", Level.HIGH: "c"}) == {"1": "a", str(key): "b", "high": "c"}
    for bad in ({(1, 2): 0}, {True: 0}, {1.5: 0}):
        with pytest.raises(NotJSONError) as refused:
            to_wire({"outer": bad})
        assert refused.value.where == "outer" and "an object key must be a string" in refused.value.reason


def test_models_dump_by_alias_and_omit_optional_nones() -> None:
    class Hit(BaseModel):
        model_config = ConfigDict(extra="allow")
        excerpt_start: Annotated[int, Field(alias="excerptStart")]
        note: str | None = None
        score: Decimal

    hit = Hit.model_validate({"excerptStart": 3, "score": Decimal("0.5"), "raw": b"\x01"})
    assert to_wire([hit]) == [{"excerptStart": 3, "score": 0.5, "raw": "AQ=="}]


def test_encode_json_names_the_first_part_json_cannot_carry() -> None:
    assert encode_json({"a": [1, "é", None, True, 2.5]}) == '{"a":[1,"é",null,true,2.5]}'.encode()
    cases = [
        ({"a": [0.5, {"b": float("inf")}]}, "a/1/b", "Infinity is not a JSON number"),
        ({"caf\udce9": 1}, "caf\udce9", "lone surrogate (U+DCE9)"),
        ([10**5000], "0", "Exceeds the limit"),
    ]
    for value, where, reason in cases:
        with pytest.raises(NotJSONError) as refused:
            encode_json(value)
        assert refused.value.where == where and reason in refused.value.reason


def test_nesting_is_bounded_below_the_sdk_serializer_limit() -> None:
    tree: dict = {}
    for _ in range(MAX_DEPTH - 1):
        tree = {"a": tree}
    assert to_wire(tree) == tree
    with pytest.raises(NotJSONError) as refused:
        to_wire([tree])
    assert refused.value.rule == "json_depth" and refused.value.where == "0" + "/a" * (MAX_DEPTH - 1)

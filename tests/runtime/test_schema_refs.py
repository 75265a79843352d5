from __future__ import annotations

import jsonschema
import pytest

from lynxc.runtime.schema_refs import inline_local_refs

SCHEMA = {
    "type": "object",
    "properties": {
        "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        "tree": {"$ref": "#/$defs/Node"},
    },
    "$defs": {
        "Item": {"type": "object", "required": ["n"], "properties": {"n": {"$ref": "#/$defs/Count"}}},
        "Count": {"type": "integer", "minimum": 0},
        "Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}},
    },
}


def test_non_recursive_refs_are_inlined_and_recursive_ones_kept() -> None:
    inlined = inline_local_refs(SCHEMA)
    assert inlined["properties"]["items"]["items"]["properties"]["n"] == {"type": "integer", "minimum": 0}
    assert inlined["properties"]["tree"]["properties"]["child"] == {"$ref": "#/$defs/Node"}
    assert inlined["$defs"] == SCHEMA["$defs"]


@pytest.mark.parametrize(
    "value",
    [
        {"items": [{"n": 1}], "tree": {"child": {"child": {}}}},
        {"items": [{"n": -1}]},
        {"items": [{}]},
        {"tree": {"child": {"child": 3}}},
        {"items": "no"},
    ],
)
def test_inlined_schema_validates_the_same_values(value: object) -> None:
    original = jsonschema.Draft202012Validator(SCHEMA).is_valid(value)
    assert jsonschema.Draft202012Validator(inline_local_refs(SCHEMA)).is_valid(value) == original

"""The fast output validator must agree with jsonschema: on valid instances generated from
every bundled output schema, and on the same instances broken in the ways results go wrong."""

from __future__ import annotations

import copy
import json
import random
import re
from typing import Any

import jsonschema
import pytest

from lynxc.runtime.output_validation import OutputValidator
from lynxc.runtime.schema_refs import inline_local_refs
from tests.conftest import ROOT

SCHEMAS = [
    (path.parent.name, tool["name"], tool["outputSchema"])
    for path in sorted((ROOT / "generated").glob("*/tools.json"))
    for tool in json.loads(path.read_text())["tools"]
    if "outputSchema" in tool
]


def sample(schema: dict[str, Any], rng: random.Random, depth: int = 0) -> Any:
    if "anyOf" in schema:
        return sample(rng.choice(schema["anyOf"]), rng, depth)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type", "string")
    if kind == "object":
        props = schema.get("properties", {})
        keys = set(schema.get("required", [])) | {k for k in props if rng.random() < 0.5}
        return {k: sample(props[k], rng, depth + 1) for k in sorted(keys) if k in props}
    if kind == "array":
        return [
            sample(schema.get("items", {}), rng, depth + 1)
            for _ in range(rng.randint(0, 3 if depth < 3 else 0))
        ]
    if kind == "integer":
        return rng.randint(schema.get("minimum", 0), schema.get("minimum", 0) + 50)
    if kind == "number":
        return rng.uniform(0, 1)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    # The fast validator checks date and date-time syntax and jsonschema (no format checker) does
    # not: sample well-formed values so the two are compared on structure alone.
    if schema.get("format") in FORMATTED:
        return FORMATTED[schema["format"]]
    candidates = ["", "a", "path/to/file.txt", "ü"]
    if "pattern" in schema:  # a value of the pattern where one is at hand (the others: invalid)
        matching = [text for text in PATTERNED if re.search(schema["pattern"], text)]
        candidates = matching or candidates
    return rng.choice(candidates)


FORMATTED = {"date-time": "2026-12-01T12:00:00+00:00", "date": "2026-12-01"}
# Strings that the bundled output schemas' patterns describe: big integers and decimals as text,
# dates and instants outside ISO 8601's four-digit years (PostgreSQL's), a hash, a code.
PATTERNED = [
    "-9223372036854775808",
    "12.50",
    "+12026-12-01",
    "-4713-11-24T00:00:00Z",
    "+12026-12-01T12:00:00.25+05:30:15",
    "0" * 64,
    "EUR",
    "one line",
]


def mutate(value: Any, rng: random.Random) -> Any:
    """Break one place: a wrong type, a missing or extra key, a negative count."""
    value = copy.deepcopy(value)
    containers = [value]
    node = value
    while isinstance(node, dict | list) and node and rng.random() < 0.7:
        node = rng.choice(list(node.values()) if isinstance(node, dict) else node)
        if isinstance(node, dict | list):
            containers.append(node)
    target = rng.choice(containers)
    if isinstance(target, dict) and target:
        key = rng.choice(sorted(target))
        action = rng.randrange(4)
        if action == 0:
            del target[key]
        elif action == 1:
            target[key] = rng.choice([None, "text", 3, -1, True, [], {}])
        elif action == 2:
            target["unexpected_key"] = 1
        else:
            target[key] = -5
    elif isinstance(target, list):
        target.append(rng.choice([None, "text", 7, {}]))
    return value


@pytest.mark.parametrize(("server", "tool", "schema"), SCHEMAS, ids=[f"{s}-{t}" for s, t, _ in SCHEMAS])
def test_fast_validator_agrees_with_jsonschema(server: str, tool: str, schema: dict[str, Any]) -> None:
    fast = OutputValidator(schema)
    # The fast validator asserts `format` (date, date-time); so does the reference here.
    reference = jsonschema.Draft202012Validator(
        inline_local_refs(schema), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    rng = random.Random(f"{server}/{tool}")
    disagreements, invalid = [], 0
    for _ in range(150):
        valid = sample(inline_local_refs(schema), rng)
        for instance in (valid, mutate(valid, rng)):
            expected = reference.is_valid(instance)
            invalid += not expected
            if fast.is_valid(instance) != expected:
                disagreements.append(instance)
    assert not disagreements, disagreements[:2]
    assert invalid > 20  # the mutations really produce invalid results to compare on


def test_problem_names_the_place() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}
    validator = OutputValidator(schema)
    assert validator.problem({"n": 2}) is None
    assert validator.problem({"n": 0}) == "n: 0 is less than the minimum of 1"
    assert validator.problem({}) == "(root): 'n' is a required property"


def test_problem_names_a_value_out_of_its_format() -> None:
    """fastjsonschema asserts date-time; the message says which value broke it, not a vague
    'rejected by the output schema'."""
    schema = {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}}}
    validator = OutputValidator(schema)
    assert validator.problem({"at": "2026-12-01T12:00:00Z"}) is None
    assert validator.problem({"at": "yesterday"}) == "at: 'yesterday' is not a 'date-time'"

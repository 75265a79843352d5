"""Arguments for `lynxc test --fuzz N`: N argument sets drawn from a tool's published
inputSchema with hypothesis-jsonschema, and near-misses of it (a required field dropped, a wrong
type, a bound passed by one, a value outside an enum, an extra property, a null), each kept only
if the schema does refuse it. Seeded: the same seed gives the same arguments."""

from __future__ import annotations

import copy
import json
import random
import tempfile
from dataclasses import dataclass
from typing import Any

import jsonschema

EXTRA_PROPERTY = "lynxc_fuzz_extra"
# Formats hypothesis-jsonschema cannot generate; their strings are then any string, which the
# server judges as it judges any caller's.
_KNOWN_FORMATS = {
    "date", "date-time", "time", "email", "idn-email", "hostname", "idn-hostname", "ipv4", "ipv6",
    "uri", "uri-reference", "iri", "iri-reference", "uri-template", "json-pointer",
    "relative-json-pointer", "regex", "uuid", "duration",
}  # fmt: skip


@dataclass(frozen=True)
class NearMiss:
    """Arguments the inputSchema refuses, and the field a refusal of them must name."""

    arguments: dict[str, Any]
    field: str
    what: str  # e.g. "maxLength + 1"


def valid_arguments(schema: dict[str, Any], count: int, seed: int) -> list[dict[str, Any]]:
    """Up to `count` distinct argument sets the schema accepts, the same for the same seed."""
    # Hypothesis keeps caches in ./.hypothesis: in a folder of the run instead, not the project.
    from hypothesis.configuration import set_hypothesis_home_dir

    with tempfile.TemporaryDirectory(prefix="lynxc-fuzz-") as home:
        set_hypothesis_home_dir(home)
        return _drawn(schema, count, seed)


def _drawn(schema: dict[str, Any], count: int, seed: int) -> list[dict[str, Any]]:
    import hypothesis
    from hypothesis import HealthCheck, Phase, strategies
    from hypothesis_jsonschema import from_schema

    strategy = from_schema(_generable(schema))
    drawn: list[dict[str, Any]] = []
    seen: set[str] = set()

    @hypothesis.seed(seed)
    @hypothesis.settings(
        max_examples=count,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        derandomize=False,
    )
    @hypothesis.given(strategies.data())
    def draw(data: Any) -> None:
        value = data.draw(strategy)
        key = json.dumps(value, sort_keys=True)
        if key not in seen and len(drawn) < count:
            seen.add(key)
            drawn.append(value)

    draw()
    return drawn


def near_misses(schema: dict[str, Any], base: dict[str, Any], seed: int) -> list[NearMiss]:
    """Arguments one step outside the schema, from `base` (arguments it accepts)."""
    rng = random.Random(seed)
    properties: dict[str, Any] = schema.get("properties", {})
    required = schema.get("required", [])
    misses: list[NearMiss] = []
    for name in required:
        misses.append(NearMiss({k: v for k, v in base.items() if k != name}, name, "required field dropped"))
    for name, prop in properties.items():
        for value, what in _wrong_values(_without_null(prop), rng):
            misses.append(NearMiss({**copy.deepcopy(base), name: value}, name, what))
    if schema.get("additionalProperties") is False:
        misses.append(NearMiss({**base, EXTRA_PROPERTY: 1}, EXTRA_PROPERTY, "extra property"))
    validator = jsonschema.Draft202012Validator(schema)
    return [miss for miss in misses if not validator.is_valid(miss.arguments)]


def _wrong_values(prop: dict[str, Any], rng: random.Random) -> list[tuple[Any, str]]:
    kind = prop.get("type")
    out: list[tuple[Any, str]] = [(None, "null")]
    wrong = {"string": 7, "integer": "7", "number": "7.5", "boolean": "true", "array": "x", "object": ["x"]}
    if isinstance(kind, str) and kind in wrong:
        out.append((wrong[kind], f"wrong type (not {kind})"))
    if "enum" in prop:
        out.append((f"not-in-enum-{rng.randrange(1000)}", "value outside the enum"))
    if isinstance(prop.get("maxLength"), int):
        out.append(("a" * (prop["maxLength"] + 1), "maxLength + 1"))
    if isinstance(prop.get("minLength"), int) and prop["minLength"] > 0:
        out.append(("a" * (prop["minLength"] - 1), "minLength - 1"))
    step = 1 if kind == "integer" else 0.5
    for key, sign in (("maximum", 1), ("minimum", -1)):
        if isinstance(prop.get(key), int | float) and not isinstance(prop.get(key), bool):
            out.append((prop[key] + sign * step, f"{key} {'+' if sign > 0 else '-'} {step}"))
    for key in ("exclusiveMaximum", "exclusiveMinimum"):
        if isinstance(prop.get(key), int | float) and not isinstance(prop.get(key), bool):
            out.append((prop[key], f"{key} itself"))
    if isinstance(prop.get("maxItems"), int) and isinstance(prop.get("items"), dict):
        items = prop["items"]
        sample = items.get("default", items.get("enum", [None])[0] if "enum" in items else _plain(items))
        if sample is not None:
            out.append(([sample] * (prop["maxItems"] + 1), "maxItems + 1"))
    return out


def _plain(schema: dict[str, Any]) -> Any:
    return {"string": "a", "integer": 1, "number": 1.0, "boolean": True}.get(schema.get("type"))  # type: ignore[arg-type]


def _without_null(prop: dict[str, Any]) -> dict[str, Any]:
    branches = prop.get("anyOf")
    if isinstance(branches, list):
        kept = [b for b in branches if b.get("type") != "null"]
        if len(kept) == 1:
            return {**kept[0], **{k: v for k, v in prop.items() if k != "anyOf"}}
    return prop


def _generable(schema: Any) -> Any:
    """The schema without what hypothesis-jsonschema cannot read: unknown formats, `$schema`."""
    if isinstance(schema, dict):
        return {
            key: _generable(value)
            for key, value in schema.items()
            if key != "$schema" and not (key == "format" and value not in _KNOWN_FORMATS)
        }
    if isinstance(schema, list):
        return [_generable(item) for item in schema]
    return schema

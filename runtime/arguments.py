"""Tool arguments -> the generated input model, exactly as strict as the published inputSchema.

The SDK's low-level server does not validate arguments, and pydantic's default (lax) mode
accepts what a client validating against the inputSchema would reject: `true` or `"5"` for an
integer, `1` for a boolean. So arguments are validated in pydantic's strict JSON mode (JSON
types as JSON Schema reads them: a bool is not a number, a string is not a number, a number
with a fraction is not an integer) and by their published names only, not the Python ones.

One difference remains between strict pydantic and JSON Schema: `3.0` is an integer in JSON
Schema (2020-12 counts any number with a zero fraction), so a client validating against the
inputSchema may send it. Where strict validation wanted an integer and got such a float, the
float is taken as that integer and the arguments validated again; only failures pay for it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .null_arguments import refused_nulls
from .wire_values import NotJSONError, encode_json

M = TypeVar("M", bound=BaseModel)

# What a JSON-incompatible argument is called, worded as pydantic words the same rules.
_NOT_JSON_MESSAGES = {
    "finite_number": "Input should be a finite number",
    "string_unicode": "Input should be a valid string, unable to parse raw data as a unicode string",
    "int_too_long": "Input integer is too long",
}


class ArgumentsError(ValueError):
    """Arguments the inputSchema rejects; the message names each field and rule."""

    def __init__(self, problems: list[tuple[str, str]]):
        """`problems`: (field, what is wrong with it, with the rule), in the order found."""
        super().__init__("; ".join(f"{field}: {text}" for field, text in problems))
        self.problems = problems


def published_arguments(params: Any) -> dict[str, Any]:
    """A validated input model's arguments by their published names (the inputSchema's), as JSON
    values: what declared engines (SQL's $names, HTTP's placements) bind by name."""
    if hasattr(params, "model_dump"):
        return params.model_dump(mode="json", by_alias=True)
    return dict(params) if isinstance(params, Mapping) else dict(vars(params))


def validate_arguments(
    model: type[M], arguments: Mapping[str, Any], input_schema: Mapping[str, Any] | None = None
) -> M:
    """The input model for `arguments`, or ArgumentsError naming every problem. With the
    published `input_schema`, a null it refuses is a problem too (`null_arguments`), though the
    model, which takes None for an omitted parameter, would accept it."""
    nulls = refused_nulls(input_schema, arguments) if input_schema is not None else {}
    null_problems = [(_field(loc), text) for loc, text in nulls.items()]
    try:
        valid = _validate_strictly(model, arguments)
    except ArgumentsError as err:
        # A null the model refuses too (a required parameter, an enum) is named once, in the
        # model's words.
        named = {field for field, _ in err.problems}
        raise ArgumentsError([*(p for p in null_problems if p[0] not in named), *err.problems]) from None
    if null_problems:
        raise ArgumentsError(null_problems)
    return valid


def _validate_strictly(model: type[M], arguments: Mapping[str, Any]) -> M:
    try:
        return _validate(model, arguments)
    except ValidationError as err:
        repaired = _integral_floats_as_integers(arguments, err)
        if repaired is None:
            raise ArgumentsError(validation_problems(err)) from None
    try:
        return _validate(model, repaired)
    except ValidationError as err:
        raise ArgumentsError(validation_problems(err)) from None


def validation_problems(err: ValidationError) -> list[tuple[str, str]]:
    """(`maxResults`, `Input should be less than or equal to 100 (rule less_than_equal)`): the
    field and the rule, for each problem."""
    problems = []
    for error in err.errors(include_url=False):
        field = _field(error["loc"])
        if error["type"] == "extra_forbidden":
            problems.append((field, "unknown parameter (rule additionalProperties)"))
        elif error["type"] == "missing":
            problems.append((field, "required parameter is missing (rule required)"))
        else:
            problems.append((field, f"{error['msg']} (rule {error['type']})"))
    return problems


def _validate(model: type[M], arguments: Mapping[str, Any]) -> M:
    try:
        payload = encode_json(arguments)
    except NotJSONError as err:
        # NaN or a lone surrogate can reach here from a lenient JSON parser upstream.
        message = _NOT_JSON_MESSAGES.get(err.rule, err.reason)
        raise ArgumentsError([(_field(err.path), f"{message} (rule {err.rule})")]) from None
    return model.model_validate_json(payload, strict=True, by_alias=True, by_name=False)


def _integral_floats_as_integers(arguments: Mapping[str, Any], err: ValidationError) -> dict[str, Any] | None:
    """A copy of `arguments` with each float like `3.0` that strict validation refused as an
    integer replaced by that integer; None when there is none."""
    repaired = copy.deepcopy(dict(arguments))
    changed = False
    for error in err.errors(include_url=False):
        value = error.get("input")
        if error["type"] != "int_type" or type(value) is not float or not value.is_integer():
            continue
        changed |= _replace_at(repaired, error["loc"], value, int(value))
    return repaired if changed else None


def _replace_at(root: Any, loc: tuple[str | int, ...], old: float, new: int) -> bool:
    """Follow `loc` into `root` and swap `old` for `new` there. A loc also holds the names of
    union members (`int`, `str`) that are not in the data; those steps are skipped."""
    parent, key = None, None
    node = root
    for part in loc:
        if _holds(node, part):
            parent, key, node = node, part, node[part]
    if parent is None or type(node) is not float or node != old:
        return False
    parent[key] = new
    return True


def _holds(node: Any, part: str | int) -> bool:
    if isinstance(node, dict):
        return isinstance(part, str) and part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def _field(loc: tuple[str | int, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(arguments)"

"""Nulls the published inputSchema refuses, found by validating the arguments against it.

A generated input model types a parameter that may be omitted as `T | None = None`, so that an
omitted parameter reaches its backend as None; pydantic then also accepts an explicit `null`,
which the inputSchema a client sees refuses (`{"type": "string"}` does not admit null). Rather
than a second reading of the schema, the call is checked against the very inputSchema
`tools/list` publishes, by a JSON Schema validator: every place where it refuses a null is an
error, worded as pydantic words the same rule for any other value (`Input should be a valid
string (rule string_type)`). Only arguments that hold a null pay for the check.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

# A JSON type -> what pydantic's strict JSON mode says, and its rule, when a value is not of it.
_TYPE_WORDS = {
    "string": ("a valid string", "string_type"),
    "integer": ("a valid integer", "int_type"),
    "number": ("a valid number", "float_type"),
    "boolean": ("a valid boolean", "bool_type"),
    "array": ("a valid array", "list_type"),
    "object": ("an object", "dict_type"),
}

Location = tuple[str | int, ...]


def refused_nulls(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[Location, str]:
    """Where `arguments` hold a null that `schema` (a tool's inputSchema) refuses -> `Input
    should be ... (rule ...)`, in the order found; empty when there is none."""
    if not _holds_null(arguments):
        return {}
    # Imported here: only a call with a null needs it.
    import jsonschema

    validator = jsonschema.Draft202012Validator(dict(schema))
    found: dict[Location, str] = {}
    for error in validator.iter_errors(dict(arguments)):
        for null_error in _null_errors(error):
            # One problem per place: a null can break both a `type` and an `enum`.
            found.setdefault(tuple(null_error.absolute_path), _expected(null_error))
    return found


def _holds_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, Mapping):
        return any(_holds_null(item) for item in value.values())
    if isinstance(value, list):
        return any(_holds_null(item) for item in value)
    return False


def _null_errors(error: Any) -> Iterator[Any]:
    """The errors refusing a null, in `error` or, under anyOf/oneOf over a non-null value (an
    object one of whose members was matched), in the members' own errors."""
    if error.instance is None:
        yield error
    else:
        for member_error in error.context or ():
            yield from _null_errors(member_error)


def _expected(error: Any) -> str:
    """What the refused null should have been, with the rule, in pydantic's words."""
    keyword, value = error.validator, error.validator_value
    if keyword == "type":
        kinds = [value] if isinstance(value, str) else list(value)
        if len(kinds) == 1 and kinds[0] in _TYPE_WORDS:
            words, rule = _TYPE_WORDS[kinds[0]]
            return f"Input should be {words} (rule {rule})"
        return f"Input should be {_either(kinds)} (rule type)"
    if keyword == "enum":
        return f"Input should be {_choices(value)} (rule literal_error)"
    if keyword == "const":
        return f"Input should be {_choices([value])} (rule literal_error)"
    if keyword in ("anyOf", "oneOf"):
        kinds = [
            kind
            for member in error.context or ()
            if member.validator == "type"
            for kind in (
                [member.validator_value]
                if isinstance(member.validator_value, str)
                else member.validator_value
            )
        ]
        if kinds:
            return f"Input should be {_either(kinds)} (rule {keyword})"
    return f"Input should not be null (rule {keyword})"


def _either(kinds: list[str]) -> str:
    words = [
        _TYPE_WORDS[kind][0] if kind in _TYPE_WORDS else f"of type {kind}" for kind in dict.fromkeys(kinds)
    ]
    return " or ".join(words)


def _choices(values: list[Any]) -> str:
    """`'plain' or 'loud'`, as pydantic lists a Literal's values."""
    shown = [repr(value) for value in values]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"

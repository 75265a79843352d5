"""`pattern` keywords, read by the regex engine the runtime uses, in linear time.

A generated server checks arguments with Pydantic models, whose `pattern` constraints run on
pydantic-core's Rust engine: no backtracking, so matching costs time linear in the text, and no
look-around or backreferences (a model holding one fails to build, and its tool never loads).
The compiler uses the same engine to check a default against its pattern: Python's `re` would
backtrack, so `^(a+)+$` against a default of forty a's and a '!' would hang the build.
"""

from __future__ import annotations

import re

from pydantic_core import CoreConfig, SchemaError, SchemaValidator, core_schema

_RUNTIME_ENGINE = CoreConfig(regex_engine="rust-regex")


def pattern_problem(pattern: str) -> tuple[str, str | None] | None:
    """Why `pattern` cannot serve as a `pattern` keyword (a message and a hint), or None. It must
    compile both in Python (output schemas are validated by JSON Schema libraries that use `re`)
    and in the runtime's linear-time engine (input models)."""
    try:
        re.compile(pattern)
    except re.error as err:
        return f"pattern {pattern!r} does not compile: {err}", None
    try:
        _validator(pattern)
    except SchemaError as err:
        return (
            f"pattern {pattern!r} is beyond the runtime's linear-time regex engine: {_reason(err)}",
            "generated servers match patterns without backtracking: no look-around or backreferences",
        )
    return None


def pattern_matches(pattern: str, text: str) -> bool:
    """JSON Schema's `pattern`: a match anywhere in `text`, found in linear time."""
    return _validator(pattern).isinstance_python(text)


def _validator(pattern: str) -> SchemaValidator:
    return SchemaValidator(core_schema.str_schema(pattern=pattern), _RUNTIME_ENGINE)


def _reason(err: SchemaError) -> str:
    # pydantic-core's message quotes the pattern and points at the problem over several lines;
    # its last line says what the problem is.
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    reason = lines[-1] if lines else "rejected"
    return reason.removeprefix("error: ").removeprefix("SchemaError: ")

"""Server settings: declared in the spec, supplied when serving by flag or environment.

A setting without a default is required: a server must not start and then fail its first call
for want of it. Every problem is collected, so an operator fixes them all in one go.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping
from typing import Any

from .redact import redact

ENV_PREFIX = "LYNXC_"
# What `lynxc config` writes for a setting that has no default; recognised when serving, so
# a copied entry that was never filled in is refused rather than taken as a value.
PLACEHOLDER = re.compile(r"^<required: [^<>]*>$")
_PLACEHOLDER_KINDS = {
    "array": "JSON array",
    "object": "JSON object",
    "integer": "integer",
    "number": "number",
    "boolean": "true or false",
}
_PATH_KINDS = {
    "directory-path": "absolute folder path",
    "file-path": "absolute file path",
    "path": "absolute path",
    "path-or-uri": "absolute path or URI",
}


class SettingsError(Exception):
    """Setting values that are not valid for their declared schema: one line per problem."""

    def __init__(self, problems: list[str]):
        problems = [redact(problem) for problem in problems]  # a problem may quote a DSN's value
        super().__init__("\n".join(problems))
        self.problems = problems


def env_name(setting: str) -> str:
    return ENV_PREFIX + "".join(c if c.isalnum() else "_" for c in setting).upper()


def placeholder(node: Mapping[str, Any]) -> str:
    """The stand-in `lynxc config` prints for a required setting: what kind of value goes there."""
    return f"<required: {_kind(node)}>"


def _kind(node: Mapping[str, Any]) -> str:
    branches = [b for b in node.get("anyOf") or () if isinstance(b, Mapping) and b.get("type") != "null"]
    node = branches[0] if branches else node  # a nullable setting is described by its other branch
    kind = node.get("type", "")
    inner = {"array": node.get("items"), "object": node.get("additionalProperties")}.get(kind)
    if isinstance(inner, Mapping) and inner.get("format") in _PATH_KINDS:
        return f"{_PLACEHOLDER_KINDS[kind]} of {_PATH_KINDS[inner['format']]}s"
    return _PLACEHOLDER_KINDS.get(kind, _PATH_KINDS.get(node.get("format", ""), "text"))


def parse_assignments(assignments: list[str]) -> dict[str, str]:
    """`--set NAME=VALUE` flags -> {NAME: VALUE} (raw text; typed in collect_settings)."""
    out = {}
    for item in assignments:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SettingsError([f"--set expects NAME=VALUE, got {item!r}"])
        out[name.strip()] = value
    return out


def collect_settings(
    schema: Mapping[str, Mapping[str, Any]],
    given: Mapping[str, str],
    environ: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """(the settings that are valid, one problem per setting that is not) — so that later
    checks can still look at the valid ones and every problem is reported at once."""
    environ = os.environ if environ is None else environ
    problems = [
        f"unknown setting {name!r} (this server's settings: {', '.join(sorted(schema)) or 'none'})"
        for name in sorted(set(given) - set(schema))
    ]
    values: dict[str, Any] = {}
    for name, node in schema.items():
        raw = given.get(name, environ.get(env_name(name)))
        if raw is None:
            if "default" in node:
                values[name] = node["default"]
            else:
                problems.append(
                    f"setting {name!r} is required (it has no default): "
                    f"pass --set {name}=VALUE or set {env_name(name)}"
                )
            continue
        if PLACEHOLDER.match(raw.strip()):
            problems.append(
                f"setting {name!r} still holds the placeholder {raw.strip()} from `lynxc config`: "
                "replace it with a value"
            )
            continue
        try:
            value = _typed(name, raw, node)
        except ValueError as err:
            problems.append(str(err))
            continue
        import jsonschema  # only when a value is given: serving with defaults stays fast

        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(node).iter_errors(value))
        if error is not None:
            problems.append(f"setting {name!r}: {error.message}")
            continue
        values[name] = value
    return values, problems


def unknown_environment(schema: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> list[str]:
    """Warnings for `LYNXC_*` variables that name no setting of this server: most often a typo
    (LYNXC_ROOT for LYNXC_ROOTS) that would otherwise be ignored without a word."""
    environ = os.environ if environ is None else environ
    known = {env_name(name) for name in schema}
    warnings = []
    for variable in sorted(v for v in environ if v.startswith(ENV_PREFIX) and v not in known):
        close = difflib.get_close_matches(variable, sorted(known), n=1, cutoff=0.75)
        hint = f"did you mean {close[0]}?" if close else f"its settings: {', '.join(sorted(known)) or 'none'}"
        warnings.append(f"{variable} names no setting of this server ({hint}); ignored")
    return warnings


def _typed(name: str, raw: str, node: Mapping[str, Any]) -> Any:
    types = _declared_types(node)
    if "string" in types:
        # Text is taken as written (a URL, a bare word); JSON only when it decodes to another
        # type the setting allows (`null` for a nullable one), or to a string ("minilm" quoted
        # means minilm).
        try:
            decoded = json.loads(raw)
        except json.JSONDecodeError:
            return raw
        return decoded if _json_types(decoded) & set(types) else raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as err:
        kind = " or ".join(types) or "any value"
        raise ValueError(f"setting {name!r} expects JSON ({kind}): {err.msg}") from None


def _declared_types(node: Mapping[str, Any]) -> list[str]:
    """The JSON types a setting's schema allows: its `type` (one or a list), else those of its
    `anyOf` branches (a nullable setting is `anyOf: [{type: string}, {type: null}]`)."""
    declared = node.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [kind for kind in declared if isinstance(kind, str)]
    branches = [b for b in node.get("anyOf") or () if isinstance(b, Mapping)]
    return list(dict.fromkeys(kind for branch in branches for kind in _declared_types(branch)))


def _json_types(value: Any) -> set[str]:
    """The JSON Schema types a decoded JSON value is an instance of."""
    if value is None:
        return {"null"}
    if isinstance(value, bool):
        return {"boolean"}
    if isinstance(value, int):
        return {"integer", "number"}
    if isinstance(value, float):
        return {"number", "integer"} if value.is_integer() else {"number"}
    return {str: {"string"}, list: {"array"}, dict: {"object"}}.get(type(value), set())

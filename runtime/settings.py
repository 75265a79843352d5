"""Server settings: declared in the spec, supplied when serving by flag or environment."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

ENV_PREFIX = "LYNXC_"


class SettingsError(Exception):
    """A setting value that is not valid for its declared schema."""


def env_name(setting: str) -> str:
    return ENV_PREFIX + "".join(c if c.isalnum() else "_" for c in setting).upper()


def parse_assignments(assignments: list[str]) -> dict[str, str]:
    """`--set NAME=VALUE` flags -> {NAME: VALUE} (raw text; typed in resolve_settings)."""
    out = {}
    for item in assignments:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SettingsError(f"--set expects NAME=VALUE, got {item!r}")
        out[name.strip()] = value
    return out


def resolve_settings(
    schema: Mapping[str, Mapping[str, Any]],
    given: Mapping[str, str],
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Flags win over the environment, which wins over the spec's defaults."""
    environ = os.environ if environ is None else environ
    unknown = sorted(set(given) - set(schema))
    if unknown:
        known = ", ".join(sorted(schema)) or "none"
        raise SettingsError(f"unknown setting {unknown[0]!r} (this server's settings: {known})")
    values: dict[str, Any] = {}
    for name, node in schema.items():
        raw = given.get(name, environ.get(env_name(name)))
        if raw is None:
            if "default" in node:
                values[name] = node["default"]
            continue
        value = _typed(name, raw, node)
        import jsonschema  # only when a value is given: serving with defaults stays fast

        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(node).iter_errors(value))
        if error is not None:
            raise SettingsError(f"setting {name!r}: {error.message}")
        values[name] = value
    return values


def _typed(name: str, raw: str, node: Mapping[str, Any]) -> Any:
    if node.get("type") == "string":
        # A bare word, or the same as a JSON string ("minilm"): both mean the text itself.
        if len(raw) >= 2 and raw[0] == raw[-1] == '"':
            try:
                decoded = json.loads(raw)
            except json.JSONDecodeError:
                return raw
            return decoded if isinstance(decoded, str) else raw
        return raw
    try:
        return json.loads(raw)
    except json.JSONDecodeError as err:
        raise SettingsError(f"setting {name!r} expects JSON ({node.get('type', 'any')}): {err.msg}") from None

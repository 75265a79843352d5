"""Identifiers split into their words, so `parseConfigFile` and `parse_config_file` are also
found by "parse config file" in the sparse index."""

from __future__ import annotations

import re

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def split_identifier(word: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", word)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    return [part.lower() for part in re.split(r"[_\s]+", spaced) if part]


def expand_identifiers(text: str) -> str:
    """The text followed by the parts of every compound identifier in it."""
    parts = []
    for word in set(_IDENT.findall(text)):
        pieces = split_identifier(word)
        if len(pieces) > 1:
            parts.extend(pieces)
    return text + ("\n" + " ".join(sorted(parts)) if parts else "")


def has_compound_identifier(text: str) -> bool:
    """Whether the text holds a CamelCase or snake_case name (`BaseLoader`, `parse_header`)."""
    return any(len(split_identifier(word)) > 1 for word in _IDENT.findall(text))

"""Pieces of the tools' answers shared by `read_url` and `research`: provenance, threats, the
token budget of a call and the clamping of counts the original clamps rather than rejects."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

DEFAULT_MAX_TOKENS = 20000


def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def budget(asked: int | None, settings: Mapping[str, Any]) -> int:
    """The token budget of a call: its own when positive, else the server's."""
    return asked if asked is not None and asked >= 1 else int(settings.get("max_tokens", DEFAULT_MAX_TOKENS))


def provenance_of(page: Any) -> dict[str, Any]:
    """The page's provenance, its hash and word count taken over the content returned (what the
    client can check); empty when nothing was read."""
    found = page.extracted.provenance if page is not None and page.extracted else None
    content = page.content if found is not None else ""
    return {
        "content_hash": hashlib.sha256(content.encode()).hexdigest(),
        "word_count": len(content.split()),
        "author": found.author if found else None,
        "published": found.published if found else None,
        "modified": found.modified if found else None,
        "canonical": found.canonical if found else None,
        "language": found.language if found else None,
    }


def threat_dicts(threats: list[Any]) -> list[dict[str, Any]]:
    return [
        {"type": t.type, "reason": t.reason, "location": t.location, "excerpt": t.excerpt, "seen": t.seen}
        for t in threats
    ]

"""What each `incompleteReasons` value of a walk or search means, said in the text a client
shows: "scan incomplete (invalidText, candidateLimit)" alone leaves a reader guessing which
files were missed and what to do about it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

NARROWER = "(pass a narrower path)"  # what to do when a per-call cap stopped the walk

# reason -> what happened, from the counts the result carries (a listing has fewer of them).
_SAID: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "maxDepth": lambda r: (
        f"{_count(r.get('depthLimitedDirectories'), 'folder')} below maxDepth not entered (raise maxDepth)"
    ),
    "entryLimit": lambda r: (
        f"stopped after {r.get('entriesScanned', 0)} folder entries, the most one call lists {NARROWER}"
    ),
    "filenameBytesLimit": lambda r: f"stopped at the most file-name bytes one call lists {NARROWER}",
    "candidateLimit": lambda r: (
        f"stopped after {r.get('filesConsidered', 0)} files, the most one call searches {NARROWER}"
    ),
    "totalBytesLimit": lambda r: (
        f"stopped after reading {r.get('bytesRead', 0)} bytes, the most one call reads {NARROWER}"
    ),
    "fileTooLarge": lambda r: (
        f"{_count(_skipped(r, 'oversized'), 'file')} skipped as larger than one call reads"
    ),
    "invalidText": lambda r: (
        f"{_count(_skipped(r, 'invalidText'), 'file')} skipped as not UTF-8 text (binaries, NUL bytes)"
    ),
    "changedDuringScan": lambda r: (
        f"{_count(_skipped(r, 'changed'), 'entry', 'entries')} changed while being read, skipped"
    ),
    "cancelled": lambda r: "the call was cancelled",
}


def explain_incomplete(result: Mapping[str, Any]) -> str:
    """'12 files skipped as not UTF-8 text (binaries, NUL bytes) [invalidText]; ...', the reason
    codes kept in brackets so a reader can match them with the structured result."""
    return "; ".join(
        f"{_SAID[reason](result)} [{reason}]" if reason in _SAID else reason
        for reason in result.get("incompleteReasons", [])
    )


def _skipped(result: Mapping[str, Any], kind: str) -> int | None:
    skipped = result.get("skippedFiles")
    return skipped.get(kind) if isinstance(skipped, Mapping) else None


def _count(number: int | None, noun: str, plural: str | None = None) -> str:
    if number is None:
        return f"some {plural or noun + 's'}"
    return f"{number} {noun if number == 1 else plural or noun + 's'}"

"""The build cache: a content-addressed store of JSON entries under `<project>/.lynxc-cache/`
(or `LYNXC_CACHE_DIR`), safe to delete at any time.

An entry's name is the sha256 of its kind, its key and the compiler's fingerprint (lynxc's own
source and the versions of the libraries that shape its output, see fingerprint.py), so a new
lynxc never reads an old lynxc's entries. Each entry carries the sha256 of its own payload and
is checked on every read: a truncated, garbled or foreign entry is a miss (and is removed),
never an error and never a different output. Entries are written whole with a rename
(files.py), so concurrent builds may share the folder without locks. A folder that cannot be
written is no error either: the build just does the work again next time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .diagnostics import Diagnostic, Span
from .files import write_text_atomic

T = TypeVar("T")
CACHE_DIR = ".lynxc-cache"
CACHE_DIR_ENV = "LYNXC_CACHE_DIR"
_FORMAT = 1


def cache_dir(project: Path) -> Path:
    """Where the cache of `project` lives: `LYNXC_CACHE_DIR` when set, else `.lynxc-cache/`."""
    configured = os.environ.get(CACHE_DIR_ENV)
    return Path(configured) if configured else project / CACHE_DIR


def digest_json(value: Any) -> str:
    """sha256 of a JSON value, compact. Keys keep their order: the order of a schema's
    properties is part of what the code generator produces, so it is part of the key."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Store:
    """Entries by (kind, key). `hits` and `misses` count lookups by kind, so a caller (or a
    test) can tell what a build reused and what it did again."""

    def __init__(self, root: Path, fingerprint: str) -> None:
        self.root = root
        self.fingerprint = fingerprint
        self.hits: Counter[str] = Counter()
        self.misses: Counter[str] = Counter()

    def get(self, kind: str, key: Any, accept: Callable[[Any], T | None]) -> T | None:
        """What `accept` makes of the payload stored under (kind, key), or None: absent,
        unreadable, not intact, or refused by `accept` (not the shape it wants, or out of date)."""
        name = self._name(kind, key)
        payload = self._read(self._path(kind, name), kind, name)
        value = None if payload is None else accept(payload)
        (self.misses if value is None else self.hits)[kind] += 1
        return value

    def put(self, kind: str, key: Any, payload: Any) -> None:
        name = self._name(kind, key)
        text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
        entry = {
            "format": _FORMAT,
            "kind": kind,
            "name": name,
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "payload": text,
        }
        # A read-only, full or vanished folder loses an optimisation, nothing else.
        with contextlib.suppress(OSError, ValueError):
            write_text_atomic(self._path(kind, name), json.dumps(entry, ensure_ascii=False))

    def _name(self, kind: str, key: Any) -> str:
        return digest_json([_FORMAT, self.fingerprint, kind, key])

    def _path(self, kind: str, name: str) -> Path:
        return self.root / kind / name[:2] / f"{name}.json"

    def _read(self, path: Path, kind: str, name: str) -> Any | None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, ValueError):  # absent, unreadable, not UTF-8
            return None
        try:
            entry = json.loads(text)
            intact = (
                isinstance(entry, dict)
                and entry.get("format") == _FORMAT
                and entry.get("kind") == kind
                and entry.get("name") == name
                and isinstance(entry.get("payload"), str)
                and hashlib.sha256(entry["payload"].encode("utf-8")).hexdigest() == entry.get("sha256")
            )
            payload = json.loads(entry["payload"]) if intact else None
        except (ValueError, TypeError, RecursionError):
            intact, payload = False, None
        if not intact:
            with contextlib.suppress(OSError):  # damaged or foreign: the next put writes a good one
                path.unlink(missing_ok=True)
            return None
        return payload


def diagnostic_payload(item: Diagnostic) -> list[Any]:
    """A diagnostic as a cache payload keeps it (see diagnostic_from_payload)."""
    span = item.span
    return [item.rule_id, item.severity, item.message, [span.file, span.line, span.col], item.hint]


def diagnostic_from_payload(item: Any) -> Diagnostic:
    """The diagnostic `diagnostic_payload` gave; ValueError or TypeError if it is not one."""
    rule_id, severity, message, (file, line, col), hint = item
    if not all(isinstance(v, str) for v in (rule_id, severity, message, file)) or not all(
        isinstance(v, int) for v in (line, col)
    ):
        raise TypeError("not a diagnostic")
    if hint is not None and not isinstance(hint, str):
        raise TypeError("not a hint")
    return Diagnostic(rule_id, severity, message, Span(file, line, col), hint)

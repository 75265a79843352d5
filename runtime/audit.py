"""The audit trail: one JSON line per tool call, and per request refused at authentication.

Each line says when, who (the token's subject or the API key's name), which tool, the outcome,
how long it took and how many bytes of result went back. Never the arguments, the result, a
token or a key: an audit log is read by more people than the data it describes, and must not
become where credentials or personal data leak to.

Lines go to stderr or are appended to a file, one `write` each on a file opened for appending:
a process killed at any instant leaves every earlier line whole, and two servers can share one file.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Literal

from .auth.caller import Caller

Outcome = Literal[
    "ok", "error", "invalid_arguments", "refused", "unauthenticated", "forbidden", "unknown_tool"
]


@dataclass(frozen=True)
class AuditEvent:
    tool: str | None
    outcome: Outcome
    duration_ms: float
    result_bytes: int = 0
    caller: Caller | None = None
    status: int | None = None  # the HTTP status, for a request refused before any tool ran
    reason: str | None = None  # why a request was refused (never a credential)

    def line(self, server: str, now: float) -> str:
        entry: dict[str, object] = {
            "time": datetime.fromtimestamp(now, UTC).isoformat(timespec="milliseconds"),
            "server": server,
            "event": "tools/call" if self.status is None else "http",
            "tool": self.tool,
            "caller": self.caller.subject if self.caller else None,
            "auth": self.caller.method if self.caller else None,
            "outcome": self.outcome,
            "duration_ms": round(self.duration_ms, 3),
            "result_bytes": self.result_bytes,
        }
        if self.status is not None:
            entry["status"] = self.status
        if self.reason is not None:
            entry["reason"] = self.reason
        return json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n"


class AuditLog:
    """Where audit lines go: `-` for stderr, else a file appended to."""

    def __init__(self, server: str, target: str) -> None:
        self.server = server
        self._stream: IO[str] | None = None
        self._fd: int | None = None
        if target == "-":
            self._stream = sys.stderr
        else:
            # O_APPEND: each line lands whole at the end, whoever else appends.
            self._fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._lock = threading.Lock()

    def record(self, event: AuditEvent) -> None:
        data = event.line(self.server, time.time())
        with self._lock:
            if self._fd is not None:
                os.write(self._fd, data.encode())
            elif self._stream is not None:
                self._stream.write(data)
                self._stream.flush()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

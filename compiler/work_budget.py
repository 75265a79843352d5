"""Budgets that guard the build against hostile input count work, not wall time.

A loaded machine stretches wall time (a `release` on two cores shared by eight builds ended in
SQL_TIMEOUT on a check that needs a second of CPU), while the work a hostile input causes is
CPU time whatever the load. So a watchdog counts the CPU time this process uses from the moment
it starts; a wall-clock backstop, wide enough that no slow machine reaches it, still ends what
waits without working (a lock, a read that never returns).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

_POLL_SECONDS = 0.05


@dataclass
class Watch:
    """What a watchdog saw: which limit was reached, if one was ("cpu" or "wall")."""

    cpu_seconds: float
    wall_seconds: float
    reached: str | None = None

    def describe(self) -> str:
        if self.reached == "wall":
            return f"waited over {self.wall_seconds:g} s"
        return f"used over {self.cpu_seconds:g} s of CPU time"


@contextmanager
def cpu_watchdog(cpu_seconds: float, wall_seconds: float, on_expiry: Callable[[], None]) -> Iterator[Watch]:
    """Within the block, call `on_expiry` (on the watchdog's thread) once this process has used
    `cpu_seconds` of CPU time (every thread counts: DuckDB works on its own), or once
    `wall_seconds` have passed, whichever comes first."""
    watch = Watch(cpu_seconds, wall_seconds)
    done = threading.Event()
    cpu_start, wall_start = time.process_time(), time.monotonic()

    def run() -> None:
        while not done.wait(_POLL_SECONDS):
            if time.process_time() - cpu_start > cpu_seconds:
                watch.reached = "cpu"
            elif time.monotonic() - wall_start > wall_seconds:
                watch.reached = "wall"
            else:
                continue
            on_expiry()
            return

    thread = threading.Thread(target=run, name="lynxc-work-budget", daemon=True)
    thread.start()
    try:
        yield watch
    finally:
        done.set()

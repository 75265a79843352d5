"""The build's work budgets count CPU time, with a wall-clock backstop for what only waits."""

from __future__ import annotations

import threading
import time

from lynxc.compiler.work_budget import cpu_watchdog


def test_waiting_is_not_work_and_working_is() -> None:
    expired = threading.Event()
    with cpu_watchdog(0.3, 30.0, expired.set) as watch:
        time.sleep(0.6)  # twice the CPU budget in wall time, but no work
    assert watch.reached is None and not expired.is_set()
    with cpu_watchdog(0.3, 30.0, expired.set) as watch:
        deadline = time.monotonic() + 10
        while not expired.is_set() and time.monotonic() < deadline:
            sum(range(10_000))
    assert watch.reached == "cpu" and watch.describe() == "used over 0.3 s of CPU time"


def test_the_wall_clock_backstop_ends_what_only_waits() -> None:
    expired = threading.Event()
    with cpu_watchdog(30.0, 0.2, expired.set) as watch:
        assert expired.wait(10)
    assert watch.reached == "wall" and watch.describe() == "waited over 0.2 s"

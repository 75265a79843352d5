"""Progress reporting from a worker thread back to the event loop."""

from __future__ import annotations

from collections.abc import Callable

import anyio.from_thread
from lynxc.runtime.context import ToolContext


def thread_progress(ctx: ToolContext) -> Callable[[float, float | None], None]:
    def report(progress: float, total: float | None) -> None:
        if ctx.cancel.cancelled:
            return
        try:
            anyio.from_thread.run(ctx.report_progress, progress, total, None)
        except Exception:  # progress is best-effort: a closed stream must not fail the search
            return

    return report

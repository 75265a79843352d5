"""Progress reporting from a worker thread back to the event loop."""

from __future__ import annotations

from collections.abc import Callable

import anyio.from_thread

from lynxc.runtime.context import ToolContext


def thread_progress(ctx: ToolContext) -> Callable[[float, float | None], None]:
    """A reporter for blocking code in a worker thread. Each report waits on the event loop,
    so none is sent when the client did not ask for progress."""

    def report(progress: float, total: float | None) -> None:
        if not ctx.progress_requested:
            return
        if ctx.cancel.cancelled:
            return
        try:
            anyio.from_thread.run(ctx.report_progress, progress, total, None)
        except Exception:  # progress is best-effort: a closed stream must not fail the search
            return

    return report

"""What a backend receives beside its input: caps, settings, progress, cancellation and the
client's log."""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.to_thread

from .client_logging import NO_CLIENT_LOG, ClientLog
from .errors import ToolCancelled

if TYPE_CHECKING:
    from .auth.caller import Caller
    from .definition import ServerDefinition

T = TypeVar("T")

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]


async def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    return None


class CancelToken:
    """Set when the client cancels; blocking work polls it between steps."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise ToolCancelled("the request was cancelled")


@dataclass(frozen=True)
class ToolContext:
    tool: str
    caps: Mapping[str, int]
    settings: Mapping[str, Any]
    report_progress: ProgressFn = _no_progress
    progress_requested: bool = False  # the client sent a progress token; skip the work otherwise
    cancel: CancelToken = field(default_factory=CancelToken)
    # The server being served: backends that read its generated data files (the records
    # backends read collections.json) reach them through it. None outside a host.
    server: ServerDefinition | None = None
    # Who is calling: verified over HTTP (a token or an API key), the local operator on stdio
    # (as the caller_claims setting describes them), None when the server knows no one.
    caller: Caller | None = None
    # The client's log for this request (client_logging.py): what `log` sends, and to whom.
    client_log: ClientLog = NO_CLIENT_LOG

    async def log(self, level: str, message: str, /, **data: Any) -> None:
        """Tell the client's log (`notifications/message`) at `level` (debug, info, notice,
        warning, error, critical, alert, emergency): `message`, and `data` as JSON fields beside
        it. A no-op when the client did not ask for that level; passwords are redacted."""
        await self.client_log.log(level, message, **data)

    def logs(self, level: str) -> bool:
        """Whether a message at `level` would reach the client (to skip building one)."""
        return self.client_log.wants(level)

    async def run_sync(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run blocking work in a worker thread; on cancellation, tell the work to stop and leave."""
        try:
            return await anyio.to_thread.run_sync(partial(fn, *args, **kwargs), abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            self.cancel.cancel()
            raise

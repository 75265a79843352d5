"""Deadlines for reading an HTTP request: a slowly trickled head or body ends its connection.

uvicorn closes a keep-alive connection that stays idle between requests, but not one that is
sending a request slowly: a client that sends its headers (or its body) a byte at a time holds
the connection, and its share of the server, forever ("slowloris"). Here every connection gets
two deadlines, in the spirit of Go's ReadHeaderTimeout and Apache's mod_reqtimeout:

- the request head must be complete within `header_timeout` seconds of the connection opening,
  or of the previous response ending on a kept-alive connection;
- the body within `body_timeout` seconds of the head (MCP bodies are single JSON-RPC messages,
  at most 4 MiB, so a total deadline is fair where a per-read one would let a trickle through).

Past either, the connection is closed; a client that had started its head is first told
408 Request Timeout. Responses (a long tool call, an SSE stream) are never timed: once the
request is read, the deadlines are off. The h11 protocol is used, whether or not httptools is
installed, because the deadlines follow its connection state.
"""

from __future__ import annotations

import asyncio
import logging

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .defaults import DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT

logger = logging.getLogger("lynxc.runtime.http")

_TIMEOUT_TEXT = b"request not received in time\n"
REQUEST_TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\n"
    b"content-length: %d\r\n\r\n%s" % (len(_TIMEOUT_TEXT), _TIMEOUT_TEXT)
)


LINGER_SECONDS = 2.0


class DeadlineH11Protocol(H11Protocol):
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    _phase: str | None = None  # "head" or "body" while that part of a request is awaited
    _deadline: asyncio.TimerHandle | None = None
    _lingering = False  # the 408 is sent; what the client still sends is read and dropped

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._follow_state()

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return
        super().data_received(data)
        self._follow_state()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow_state()

    def connection_lost(self, exc: Exception | None) -> None:
        self._enter(None)
        super().connection_lost(exc)

    def _follow_state(self) -> None:
        """Arm the deadline of what the client owes now: a head (IDLE), a body (SEND_BODY), or
        nothing (its request is in, the response is being written, or the connection ends)."""
        state = self.conn.their_state
        phase = "head" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None
        self._enter(None if self.transport.is_closing() else phase)

    def _enter(self, phase: str | None) -> None:
        if phase == self._phase:
            return  # a deadline runs from the start of its phase, not from the latest byte
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._phase = phase
        if phase is not None:
            timeout = self.header_timeout if phase == "head" else self.body_timeout
            self._deadline = self.loop.call_later(timeout, self._expire, phase, timeout)

    def _expire(self, phase: str, timeout: float) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        logger.info("closing a connection from %s: request %s took over %s s", self.client, phase, timeout)
        started = bool(self.conn.trailing_data[0])
        if phase == "head" and started and self.transport.can_write_eof():
            # A lingering close: send the 408 and our FIN, keep reading (and dropping) what the
            # client still drips for a moment, then close. Closing at once with its bytes
            # unread would make the kernel answer with a reset, which can discard the 408.
            self.transport.write(REQUEST_TIMEOUT_RESPONSE)
            self.transport.write_eof()
            self._lingering = True
            self.loop.call_later(LINGER_SECONDS, self.transport.close)
            return
        self.transport.close()


def with_deadlines(header_timeout: float, body_timeout: float) -> type[DeadlineH11Protocol]:
    """The protocol class for uvicorn's `http=` option, with these deadlines."""
    return type(
        "DeadlineH11Protocol",
        (DeadlineH11Protocol,),
        {"header_timeout": header_timeout, "body_timeout": body_timeout},
    )

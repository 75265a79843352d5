"""A client that goes away mid-request is normal: its request ends quietly, in one debug line.

A client times out, is killed or closes its connection while its request body is still
arriving or its tool still runs. The SDK and uvicorn report that as a server failure:

- the 2026-era entry lets starlette's `ClientDisconnect` escape from reading the body, and
  uvicorn logs "Exception in ASGI application" with a 40-line traceback;
- the handshake-era transport logs the same exception, or the `anyio.ClosedResourceError` of
  a session or request stream that ended meanwhile, with a traceback ("Error handling POST
  request"), then answers a second time, which uvicorn refuses with another ("Unexpected ASGI
  message 'http.response.start' sent, after response already completed").

`QuietDisconnects`, outermost around the MCP app, notes when the client has gone (`receive`
returned `http.disconnect`), drops what is sent after that or after a complete response (no
one reads it; one request gets one answer), and ends a request that fails once its client has
gone with one debug line. `ClientGoneFilter` drops the SDK's error logs of those exceptions.
"""

from __future__ import annotations

import logging

from starlette.types import ASGIApp, Message, Receive, Send

logger = logging.getLogger("lynxc.runtime.http")


class QuietDisconnects:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        exchange = _Exchange(receive, send)
        try:
            await self.app(scope, exchange.receive, exchange.send)
        except Exception as err:
            if not exchange.client_gone:
                raise
            logger.debug("client %s went away mid-request (%s)", _address(scope), type(err).__name__)


class _Exchange:
    """One request's receive and send, watched."""

    def __init__(self, receive: Receive, send: Send):
        self._receive = receive
        self._send = send
        self.client_gone = False
        self.answered = False

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.disconnect" and not self.answered:
            self.client_gone = True
        return message

    async def send(self, message: Message) -> None:
        if self.client_gone or self.answered:
            return
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            self.answered = True
        await self._send(message)


class ClientGoneFilter(logging.Filter):
    """Drops the SDK's error log, with traceback, of a request whose client went away (a
    hang-up, a body cut off by its deadline) or whose session or request stream was closed
    meanwhile: neither is a server error."""

    def filter(self, record: logging.LogRecord) -> bool:
        import anyio
        from starlette.requests import ClientDisconnect

        gone = (ClientDisconnect, anyio.ClosedResourceError, anyio.BrokenResourceError)
        return not (record.exc_info and isinstance(record.exc_info[1], gone))


def _address(scope: Message) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "(unknown)"

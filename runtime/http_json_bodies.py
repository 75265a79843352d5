"""Streamable HTTP: a POST body that is not one JSON-RPC message is answered 400, as stdio answers.

The SDK parses a body two ways. Its handshake-era (2025) transport uses pydantic's parser,
which refuses invalid UTF-8 and lone surrogate escapes with a parse error but takes NaN and
Infinity as numbers. Its 2026-07-28 entry uses `json.loads`, which also accepts `"\\ud800"`:
the request is then served with a string that is not Unicode text.
Past parsing, the handshake-era transport answers JSON that is not a JSON-RPC message (`[]`,
a request without a method, `params: "x"`) with -32602 and a dump of pydantic's union errors,
and takes a request whose id is an object for a notification (202, no answer ever).
This middleware checks every JSON POST to the MCP endpoint as the stdio transport checks a
line (`jsonrpc_frames.parse_frame`: strict JSON, -32700, then the envelope, -32600), so both
eras and both transports answer alike; a well-formed body is passed on unchanged. Bodies over
the SDK's size limit are passed on unchecked, for the SDK to answer 413 without this
buffering more than it would.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import mcp_types as types

from .jsonrpc_frames import FrameError, parse_frame

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Message, Receive, Send], Awaitable[None]]


# Where the checked message of a JSON POST is left in the ASGI scope for the middlewares behind.
PARSED_MESSAGE = "lynxc.jsonrpc_message"


class StrictJSONBodies:
    def __init__(self, app: ASGIApp, *, path: str, max_body_size: int):
        self.app = app
        self.path = path
        self.max_body_size = max_body_size

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if not self._checks(scope):
            await self.app(scope, receive, send)
            return
        received: list[Message] = []
        size = 0
        while True:
            message = await receive()
            received.append(message)
            if message["type"] != "http.request":  # the client left: let the app see it as usual
                break
            size += len(message.get("body", b""))
            if size > self.max_body_size:
                break
            if not message.get("more_body", False):
                body = b"".join(part.get("body", b"") for part in received)
                try:
                    # kept for what follows (http_auth reads which tool is called), parsed once
                    scope[PARSED_MESSAGE] = parse_frame(body)
                except FrameError as err:
                    await send_error_answer(send, err.answer)
                    return
                received = [{"type": "http.request", "body": body, "more_body": False}]
                break
        await self.app(scope, _replay(received, receive), send)

    def _checks(self, scope: Message) -> bool:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"].rstrip("/") != self.path:
            return False
        content_type = dict(scope["headers"]).get(b"content-type", b"")
        return content_type.split(b";")[0].strip().lower() == b"application/json"


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """`receive` for the app: the messages already read, then the rest from the client."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


async def send_error_answer(send: Send, answer: types.JSONRPCError, status: int = 400) -> None:
    """`answer` as the whole HTTP response, a JSON body with `status`."""
    body = answer.model_dump_json(by_alias=True, exclude_unset=True).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})

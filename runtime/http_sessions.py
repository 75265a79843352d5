"""Sessions per client: one client cannot take every session of a Streamable HTTP server.

The SDK bounds the sessions open at once (`--max-sessions`, 503 past it) but not who holds
them: one client opening sessions in a loop (some 37 KB each) reaches the cap in minutes, and
every other client is then refused until those sessions expire, half an hour later. Here each
client holds at most `--max-sessions-per-client` sessions; a request that would open one more
is answered 429 Too Many Requests, and the other clients do not notice.

A client is its authenticated identity (client id, issuer, subject) when the server
authenticates callers, else its remote address. Behind a reverse proxy, or on a loopback bind,
callers share one address, so they share one bound: raise it there, or authenticate callers.

A session counts from the answer that opens it (a status below 400 carrying `mcp-session-id`,
to a request that had none) until the SDK's session manager no longer holds it: closed by the
client's DELETE, expired or crashed. A request still opening one counts too, so concurrent
openings cannot overshoot. Requests of the 2026-07-28 era open no session and are not bounded.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Hashable

import mcp_types as types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Send

from .http_json_bodies import send_error_answer

logger = logging.getLogger("lynxc.runtime.http")

SESSION_HEADER = b"mcp-session-id"
VERSION_HEADER = b"mcp-protocol-version"


class SessionsPerClient:
    def __init__(self, app: ASGIApp, *, session_manager: StreamableHTTPSessionManager, path: str, limit: int):
        self.app = app
        self.session_manager = session_manager
        self.path = path.rstrip("/")
        self.limit = limit
        self._held: dict[Hashable, set[str]] = {}  # client -> ids of the sessions it opened
        self._opening: Counter[Hashable] = Counter()  # client -> its requests opening one now

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if not self._opens_session(scope):
            await self.app(scope, receive, send)
            return
        client = client_key(scope)
        self._forget_closed_sessions()
        if len(self._held.get(client, ())) + self._opening[client] >= self.limit:
            logger.info("refused a new session to %s: it holds %d, the most per client", client, self.limit)
            await send_error_answer(send, _too_many_sessions(self.limit), status=429)
            return
        opened: list[str] = []

        async def note_opened(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                session = dict(message.get("headers", [])).get(SESSION_HEADER)
                if session:
                    opened.append(session.decode("latin-1"))
            await send(message)

        self._opening[client] += 1
        try:
            await self.app(scope, receive, note_opened)
        finally:
            self._opening[client] -= 1
            if not self._opening[client]:
                del self._opening[client]
            if opened:
                self._held.setdefault(client, set()).update(opened)

    def _opens_session(self, scope: Message) -> bool:
        """A handshake-era request without a session id: the session manager opens a session
        for it (and keeps it if the answer is a success)."""
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.path:
            return False
        headers = dict(scope["headers"])
        version = headers.get(VERSION_HEADER)
        handshake_era = version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS
        return handshake_era and SESSION_HEADER not in headers

    def _forget_closed_sessions(self) -> None:
        # The SDK offers no public view of its open sessions; its session table is the one truth
        # of which ended (a DELETE, an idle expiry, a crash), so it is read rather than mirrored.
        open_now = self.session_manager._server_instances.keys()
        self._held = {client: live for client, held in self._held.items() if (live := held & open_now)}


def client_key(scope: Message) -> Hashable:
    """Who is asking: the authenticated identity when there is one, else the remote address."""
    user = scope.get("user")
    if isinstance(user, AuthenticatedUser):
        identity = authorization_context(user)
        return ("identity", identity["client_id"], identity["issuer"], identity["subject"])
    client = scope.get("client")
    return ("address", client[0] if client else None)


def _too_many_sessions(limit: int) -> types.JSONRPCError:
    message = (
        f"Too many sessions: this client already holds {limit}, the most one client may "
        f"(--max-sessions-per-client). End one (HTTP DELETE with its Mcp-Session-Id) or reuse it."
    )
    return types.JSONRPCError(
        jsonrpc="2.0", id=None, error=types.ErrorData(code=types.INVALID_REQUEST, message=message)
    )

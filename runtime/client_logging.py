"""Logging to the client: what a backend says through `ctx.log` reaches the MCP client that
asked for it, as `notifications/message` on the stream of the request being answered.

Two protocol eras, two ways of asking:

- Handshake versions (2025-xx): the client sets a minimum level for its session with
  `logging/setLevel` (`SessionLevels` keeps it per session). The specification of 2025-11-25
  makes that request optional ("clients MAY send") and leaves what a server sends before it to
  the server. lynxc then sends `info` and above (`DEFAULT_LEVEL`): the spec's own table has
  `info` for "operation progress updates" and `debug` for "detailed debugging information", the
  detail an operator opts in to (an SQL statement, an upstream status). A client that wants
  less sets `warning`; one that wants the statements sets `debug`.
- 2026-07-28: logging is a per-request opt-in, the `io.modelcontextprotocol/logLevel` key of
  the request's `_meta`; absent, the server MUST NOT send any. The SDK's `allowed_log_levels`
  decides, and nothing is sent that the client did not ask for.

Every message is redacted (`redact.py`: no password of a URL or DSN leaves the server), its text
bounded, and a request sends at most `MAX_MESSAGES_PER_REQUEST` of them (the specification asks
servers to rate-limit log messages): a backend in a loop cannot flood its client.

The logging capability is deprecated at 2026-07-28 (SEP-2577), and the SDK warns when a server
registers `logging/setLevel` or sends a log message. lynxc supports handshake clients on
purpose, so those warnings are silenced where lynxc calls the SDK, and nowhere else.
"""

from __future__ import annotations

import logging
import warnings
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from .redact import redact

if TYPE_CHECKING:
    import mcp_types as types

# This module stays light to import (the context every backend imports names it, and `lynxc
# build` imports backends to read their declarations): the SDK loads inside the functions.

logger = logging.getLogger("lynxc.runtime.client_logging")

# Severity ascending (RFC 5424), as the SDK's LoggingLevel declares them.
LEVELS: Final[tuple[str, ...]] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
DEFAULT_LEVEL: Final = "info"  # a handshake session's minimum before it sends logging/setLevel
MAX_MESSAGES_PER_REQUEST: Final = 200
MAX_MESSAGE_CHARS: Final = 4096
MAX_SESSIONS: Final = 4096  # levels remembered at once; the oldest session's is forgotten first
SESSION_HEADER: Final = "mcp-session-id"

SendFn = Callable[[str, Any, str | None], Awaitable[None]]  # (level, data, logger name)


class ClientLog:
    """One request's channel to the client's log: `log` sends what the client asked for and
    drops the rest without a sound."""

    def __init__(self, send: SendFn | None, allowed: frozenset[str], logger_name: str | None = None):
        self._send = send
        self._allowed = allowed if send is not None else frozenset()
        self._logger_name = logger_name
        self._sent = 0

    def wants(self, level: str) -> bool:
        """Whether a message at `level` would be sent (skip building an expensive one if not)."""
        return level in self._allowed and self._sent < MAX_MESSAGES_PER_REQUEST

    async def log(self, level: str, message: str, /, **data: Any) -> None:
        if level not in LEVELS:
            raise ValueError(f"log level {level!r} is not one of {', '.join(LEVELS)}")
        if level not in self._allowed or self._sent > MAX_MESSAGES_PER_REQUEST:
            return
        self._sent += 1
        if self._sent > MAX_MESSAGES_PER_REQUEST:  # once: say that the rest are dropped
            if "warning" not in self._allowed:
                return
            level, payload = (
                "warning",
                f"further log messages of this request dropped (at most {MAX_MESSAGES_PER_REQUEST})",
            )
        else:
            payload = _payload(message, data)
        assert self._send is not None
        try:
            await self._send(level, payload, self._logger_name)
        except Exception as err:  # a client gone away: the tool's answer still matters more
            logger.debug("log message not delivered: %s: %s", type(err).__name__, err)


NO_CLIENT_LOG = ClientLog(None, frozenset())


class SessionLevels:
    """The minimum level each handshake-era session set with `logging/setLevel`.

    A session is its `Mcp-Session-Id` on Streamable HTTP, the one connection of the process on
    stdio. A stateless HTTP request has no session to remember a level for: it gets the default.
    At most `MAX_SESSIONS` levels are kept (the least recently set is forgotten first), so that
    clients opening sessions without end cannot grow the server's memory."""

    def __init__(self, default: str = DEFAULT_LEVEL, limit: int = MAX_SESSIONS):
        self.default = default
        self._limit = limit
        self._levels: OrderedDict[str, str] = OrderedDict()

    def level(self, ctx: Any) -> str:
        key = session_key(ctx)
        return self._levels.get(key, self.default) if key is not None else self.default

    async def set_level(self, ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        import mcp_types as types

        key = session_key(ctx)
        if key is not None:
            self._levels[key] = params.level
            self._levels.move_to_end(key)
            while len(self._levels) > self._limit:
                self._levels.popitem(last=False)
        return types.EmptyResult()

    def client_log(self, ctx: Any, logger_name: str | None = None) -> ClientLog:
        """The log channel of the request `ctx` (a low-level handler's context) answers."""
        from mcp.server.connection import allowed_log_levels
        from mcp.shared.exceptions import MCPDeprecationWarning
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        session = getattr(ctx, "session", None)
        if session is None:
            return NO_CLIENT_LOG
        version = getattr(ctx, "protocol_version", None) or session.protocol_version
        if version in MODERN_PROTOCOL_VERSIONS:
            allowed = allowed_log_levels(version, ctx.meta)
        else:
            allowed = frozenset(LEVELS[LEVELS.index(self.level(ctx)) :])
        if not allowed:
            return NO_CLIENT_LOG
        request_id = getattr(ctx, "request_id", None)

        async def send(level: str, data: Any, name: str | None) -> None:
            # The SDK warns on the call (synchronously); nothing is awaited inside the filter.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                sending = session.send_log_message(level, data, logger=name, related_request_id=request_id)
            await sending

        return ClientLog(send, allowed, logger_name)


def session_key(ctx: Any) -> str | None:
    request = getattr(ctx, "request", None)
    if request is None:
        return "stdio"  # one process, one connection
    headers = getattr(request, "headers", None)
    return headers.get(SESSION_HEADER) if headers is not None else None


@contextmanager
def quiet_logging_deprecation() -> Iterator[None]:
    """Around registering `logging/setLevel` on a low-level `Server`: the SDK's
    MCPDeprecationWarning for it says nothing a lynxc user can act on (lynxc serves handshake
    clients on purpose). Only that warning, only there."""
    from mcp.shared.exceptions import MCPDeprecationWarning

    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="The logging capability is deprecated", category=MCPDeprecationWarning
        )
        yield


def _payload(message: str, data: Mapping[str, Any]) -> Any:
    """The notification's `data`: the message alone, or an object of the message (its key
    `message`, which a data field of that name does not replace) and the data fields."""
    text = _bounded(redact(str(message)))
    if not data:
        return text
    payload: dict[str, Any] = {"message": text}
    for name, value in list(data.items())[:100]:
        if name != "message":
            payload[name] = _clean(value)
    return payload


def _clean(value: Any, depth: int = 0) -> Any:
    """A JSON value with every string redacted and bounded; anything else shown as text."""
    if isinstance(value, str) or depth > 8:
        return _bounded(redact(str(value)))
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(k): _clean(v, depth + 1) for k, v in list(value.items())[:100]}
    if isinstance(value, list | tuple):
        return [_clean(v, depth + 1) for v in list(value)[:100]]
    return _bounded(redact(str(value)))


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + "..."

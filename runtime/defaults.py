"""Serving defaults. They live apart from the host and the transports so that the command
line can show them in `--help` without importing the MCP SDK."""

from dataclasses import dataclass

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_PAGE_SIZE = 100  # tools per tools/list page

# Streamable HTTP. A session with no request in flight (and no open GET stream) for this long
# is closed and forgotten, so abandoned sessions cannot pile up; its client gets 404 and starts
# a new one, as the MCP spec says. The SDK's default too: long enough for a person to pause.
DEFAULT_SESSION_IDLE_TIMEOUT = 30 * 60
# At most this many sessions at once (each holds some 40 KB); past it a new one gets 503 until
# others end or expire. The SDK's default too.
DEFAULT_MAX_SESSIONS = 10_000
# At most this many of them held by one client (its authenticated identity, else its remote
# address), so that one client cannot take them all: past it, its new session gets 429. Clients
# on this machine, or behind one proxy, share an address and so this bound.
DEFAULT_MAX_SESSIONS_PER_CLIENT = 100
# Reading one request: its head within this many seconds (real clients send it in one packet),
# and its body (one JSON-RPC message, at most 4 MiB) within this many after the head.
DEFAULT_HEADER_TIMEOUT = 10
DEFAULT_BODY_TIMEOUT = 30


@dataclass(frozen=True)
class HttpOptions:
    """How `--transport http` serves: idle sessions, session bounds, request deadlines, extra
    Host names."""

    session_idle_timeout: float = DEFAULT_SESSION_IDLE_TIMEOUT
    max_sessions: int = DEFAULT_MAX_SESSIONS
    max_sessions_per_client: int = DEFAULT_MAX_SESSIONS_PER_CLIENT
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    allowed_hosts: tuple[str, ...] = ()  # `--allowed-host`, beyond the bind address's own names

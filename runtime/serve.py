"""Transports: stdio, and Streamable HTTP bound to 127.0.0.1 with DNS-rebinding protection."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import anyio

from .audit import AuditLog
from .defaults import DEFAULT_HOST, DEFAULT_PAGE_SIZE, DEFAULT_PORT, HttpOptions
from .definition import ServerDefinition
from .host import ToolHost
from .redact import RedactingFilter

if TYPE_CHECKING:
    from .auth.config import Authenticator

Transport = Literal["stdio", "http"]


def serve(
    definition: ServerDefinition,
    settings: Mapping[str, Any],
    *,
    transport: Transport = "stdio",
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    page_size: int = DEFAULT_PAGE_SIZE,
    http: HttpOptions | None = None,
    authenticator: Authenticator | None = None,
    audit_log: str | None = None,
) -> None:
    """`authenticator`: who HTTP callers are (a server that declares auth must have one on
    HTTP); `audit_log`: `-` for stderr, a file to append to, or None for no audit lines."""
    # Logs go to stderr: on stdio, stdout carries the protocol.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    for handler in logging.getLogger().handlers:  # a logged error may quote a database URL
        handler.addFilter(RedactingFilter())
    audit = AuditLog(definition.name, audit_log) if audit_log is not None else None
    tool_host = ToolHost(definition, settings, page_size=page_size, audit=audit)
    server = tool_host.server()
    if transport == "stdio":
        anyio.run(_serve_stdio, server)
    else:
        caller_auth = None
        if authenticator is not None:
            from .http_auth import HttpAuth

            caller_auth = HttpAuth(
                authenticator, tool_host.tool_scopes(), audit, definition.title or definition.name
            )
        elif definition.auth is not None:
            raise ValueError(
                f"server {definition.name} authenticates its callers: serving HTTP needs an authenticator"
            )
        _serve_http(server, host, port, http or HttpOptions(), caller_auth)


async def _serve_stdio(server: Any) -> None:
    from .stdio import stdio_transport  # answers malformed lines, which the SDK's reader drops

    async with stdio_transport() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _serve_http(server: Any, host: str, port: int, options: HttpOptions, caller_auth: Any = None) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from .http_disconnects import ClientGoneFilter
    from .http_hosts import allowed_hosts, allowed_origins, exposure_warning, served_names
    from .http_timeouts import with_deadlines

    names = served_names(host, list(options.allowed_hosts))
    # Rebinding protection on for every bind address: the SDK would turn it off off loopback.
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=allowed_hosts(names),
        allowed_origins=allowed_origins(names),
    )
    app = server.streamable_http_app(
        host=host,
        transport_security=security,
        session_idle_timeout=options.session_idle_timeout,
        max_sessions=options.max_sessions,
        max_sessions_per_client=options.max_sessions_per_client,
        caller_auth=caller_auth,
    )
    warning = exposure_warning(host, names, authenticated=caller_auth is not None)
    if warning:
        print(f"lynxc: {warning}", file=sys.stderr, flush=True)
    print(f"lynxc: serving {server.name} on http://{_url_host(host)}:{port}/mcp", file=sys.stderr, flush=True)
    logging.getLogger("mcp.server.streamable_http").addFilter(ClientGoneFilter())
    protocol = with_deadlines(options.header_timeout, options.body_timeout)
    uvicorn.run(app, host=host, port=port, log_level="warning", http=protocol)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host

"""Transports: stdio, and Streamable HTTP bound to 127.0.0.1 with DNS-rebinding protection."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any, Literal

import anyio

from .defaults import DEFAULT_HOST, DEFAULT_PAGE_SIZE, DEFAULT_PORT
from .definition import ServerDefinition
from .host import ToolHost

Transport = Literal["stdio", "http"]
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


def serve(
    definition: ServerDefinition,
    settings: Mapping[str, Any],
    *,
    transport: Transport = "stdio",
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    page_size: int = DEFAULT_PAGE_SIZE,
) -> None:
    # Logs go to stderr: on stdio, stdout carries the protocol.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    server = ToolHost(definition, settings, page_size=page_size).server()
    if transport == "stdio":
        anyio.run(_serve_stdio, server)
    else:
        _serve_http(server, host, port)


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _serve_http(server: Any, host: str, port: int) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    security = None
    if host not in LOOPBACK_HOSTS:
        # Off loopback the SDK turns rebinding protection off; keep it on for the bound address.
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{host}:*"],
            allowed_origins=[f"http://{host}:*"],
        )
    app = server.streamable_http_app(host=host, transport_security=security)
    print(f"lynxc: serving {server.name} on http://{_url_host(host)}:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host

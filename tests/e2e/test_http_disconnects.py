"""A client that goes away mid-request is normal: the generated dot-harness server, run as a real
process over Streamable HTTP, logs at most one line about it and goes on serving a real MCP
client. The leaving client writes raw HTTP on a socket, in both protocol eras: its tools/call
cut off in the middle of the body, or complete but left before the answer."""

from __future__ import annotations

import json
import socket
import time

import httpx
import pytest
from mcp import Client

from tests.conftest import http_process
from tests.e2e.test_http_parse_errors import ACCEPT, MODERN, handshake_session

pytestmark = pytest.mark.anyio

CALL = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "tools/call",
    "params": {"name": "search_project_text", "arguments": {"workspace": "w", "query": "x"}},
}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "leaving", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def leave_mid_request(port: int, era: str, sent: str) -> None:
    """POST a tools/call on a fresh connection and close it: after part of the body
    (`sent="half"`) or after all of it, before the answer (`sent="all"`)."""
    url = f"http://127.0.0.1:{port}/mcp"
    if era == "modern":
        headers = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
        headers["Mcp-Name"] = "search_project_text"
        call = {**CALL, "params": {**CALL["params"], "_meta": MODERN_META}}
    else:
        with httpx.Client(timeout=30) as http:
            headers = handshake_session(http, url)
        call = CALL
    body = json.dumps(call).encode()
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(head.encode() + (body[: len(body) // 2] if sent == "half" else body))
        time.sleep(0.3)  # the server is reading the rest of the body, or running the call


@pytest.mark.parametrize("sent", ["half", "all"])
@pytest.mark.parametrize("era", ["modern", "handshake"])
async def test_a_client_leaving_mid_request_is_one_log_line_at_most(era: str, sent: str) -> None:
    with http_process() as (port, process):
        leave_mid_request(port, era, sent)
        time.sleep(1)  # what the server does after the client left happens now
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            result = await client.call_tool("search_project_text", {"workspace": "nope", "query": "x"})
        assert result.is_error and "unknown workspace 'nope'" in result.content[0].text
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    logged = [line for line in stderr.splitlines() if not line.startswith("lynxc: serving")]
    assert len(logged) <= 1, "\n".join(logged[:50])

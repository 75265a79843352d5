"""Streamable HTTP answers a body that is not JSON (a lone surrogate escape, invalid UTF-8,
NaN) with 400 and a -32700 JSON-RPC error, and JSON that is not one JSON-RPC message (no
method, `params: "x"`, a batch, an object as id) with 400 and the very -32600 answer stdio
gives the same frame, in both protocol eras, through the generated dot-harness server run as
a real process; a real MCP client is served normally afterwards."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from mcp import Client

from tests.conftest import http_server
from tests.runtime.test_stdio import raw_server

pytestmark = pytest.mark.anyio

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
MODERN = "2026-07-28"
BAD_BODIES = {
    "lone-surrogate-escape": rb'"query":"\ud800"',
    "invalid-utf8": b'"query":"caf\xe9"',
    "nan": b'"query":"x","maxResults":NaN',
}


# JSON that is not a JSON-RPC message, as the issue found each answered over HTTP.
NOT_MESSAGES = {
    "no-method": b'{"jsonrpc":"2.0","id":18}',
    "params-not-an-object": b'{"jsonrpc":"2.0","id":18,"method":"tools/call","params":"x"}',
    "empty-batch": b"[]",
    "object-id": b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
    "null-id": b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with http_server() as served:
        yield served


def tools_call(arguments: bytes, meta: dict | None = None) -> bytes:
    params = {"name": "search_project_text", "arguments": "ARGS"}
    if meta:
        params["_meta"] = meta
    text = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}).encode()
    return text.replace(b'"ARGS"', b'{"workspace":"w",' + arguments + b"}")


def assert_parse_error(response: httpx.Response) -> None:
    assert response.status_code == 400
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["code"] == -32700 and body["error"]["message"].startswith("Parse error")


@pytest.mark.parametrize("case", sorted(BAD_BODIES))
def test_modern_era_bad_body_is_a_parse_error(url: str, case: str) -> None:
    headers = {**ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "x"}
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    with httpx.Client(timeout=30) as http:
        assert_parse_error(http.post(url, headers=headers, content=tools_call(BAD_BODIES[case], meta)))


@pytest.mark.parametrize("case", sorted(BAD_BODIES))
def test_handshake_era_bad_body_is_a_parse_error(url: str, case: str) -> None:
    with httpx.Client(timeout=30) as http:
        assert_parse_error(
            http.post(url, headers=handshake_session(http, url), content=tools_call(BAD_BODIES[case]))
        )


async def test_not_a_message_is_answered_as_stdio_answers_it(url: str) -> None:
    """Per frame: stdio's answer, and HTTP's in both eras, are the same -32600 error (HTTP: 400)."""
    async with raw_server() as stdio:
        over_stdio = {}
        for case, frame in NOT_MESSAGES.items():
            await stdio.send(frame)
            over_stdio[case] = await stdio.receive()
    with httpx.Client(timeout=30) as http:
        eras = {
            "handshake": handshake_session(http, url),
            "modern": {**ACCEPT, "MCP-Protocol-Version": MODERN},
        }
        for case, frame in NOT_MESSAGES.items():
            assert over_stdio[case]["error"]["code"] == -32600, case
            for era, headers in eras.items():
                response = http.post(url, headers=headers, content=frame)
                assert (response.status_code, response.json()) == (400, over_stdio[case]), (case, era)


def handshake_session(http: httpx.Client, url: str) -> dict[str, str]:
    """Headers of an initialized 2025-era session."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    opened = http.post(url, headers=ACCEPT, json=initialize)
    session = {
        **ACCEPT,
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-06-18",
    }
    http.post(url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    return session


async def test_a_real_client_is_served_after_bad_bodies(url: str) -> None:
    with httpx.Client(timeout=30) as http:
        for body in BAD_BODIES.values():
            assert_parse_error(
                http.post(url, headers={**ACCEPT, "MCP-Protocol-Version": MODERN}, content=body)
            )
    async with Client(url) as client:
        result = await client.call_tool("search_project_text", {"workspace": "nope", "query": "x"})
    assert result.is_error and "unknown workspace 'nope'" in result.content[0].text

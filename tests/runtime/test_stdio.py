"""The stdio transport answers every line, through generated servers run as real processes: a
line that is not JSON (a lone surrogate escape, invalid UTF-8, NaN, garbage) gets -32700 with id
null, JSON that is not a JSON-RPC message gets -32600, and the next valid request is served as
usual; a backend's stray output and input stay off the wire. Raw frames, because an MCP client
cannot send malformed ones and would not show stray lines."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from tests.conftest import LYNXC, ROOT, lynxc_command

pytestmark = pytest.mark.anyio

# A hang guard, not a time assertion: before the fix the server never answered these frames.
ANSWER_WITHIN = 30


class RawSession:
    def __init__(self, process: Process):
        assert process.stdin and process.stdout
        self.process = process
        self.lines = BufferedByteReceiveStream(process.stdout)

    async def send(self, frame: bytes) -> None:
        assert self.process.stdin
        await self.process.stdin.send(frame + b"\n")

    async def receive(self) -> dict[str, Any]:
        with anyio.fail_after(ANSWER_WITHIN):
            return json.loads(await self.lines.receive_until(b"\n", 1 << 24))

    async def request(
        self, request_id: int, method: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(json.dumps(message).encode())
        return await self.receive()


@asynccontextmanager
async def raw_server(command: list[str] | None = None) -> AsyncIterator[RawSession]:
    command = command or lynxc_command("serve", "dot-harness")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the fixture project's backends live in tests/
    async with await anyio.open_process(command, env=env) as process:
        session = RawSession(process)
        init = await session.request(
            1,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        assert "serverInfo" in init["result"]
        await session.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        try:
            yield session
        finally:
            process.terminate()


def tools_call(request_id: int, arguments: bytes) -> bytes:
    head = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",' % request_id
    return head + b'"params":{"name":"search_project_text","arguments":' + arguments + b"}}"


@pytest.mark.parametrize(
    ("frame", "code", "answer_id"),
    [
        (tools_call(2, rb'{"workspace":"w","query":"\ud800"}'), -32700, None),
        (tools_call(2, rb'{"workspace":"w","query":"\udc00x"}'), -32700, None),
        (tools_call(2, b'{"workspace":"w","query":"caf\xe9"}'), -32700, None),
        (tools_call(2, b'{"workspace":"w","query":"\xed\xa0\x80"}'), -32700, None),
        (tools_call(2, b'{"workspace":"w","query":"x","maxResults":NaN}'), -32700, None),
        (b'{"jsonrpc":"2.0","id":2,"method":"tools/list"', -32700, None),
        (b"\xef\xbb\xbf{}", -32700, None),
        (b"hello", -32700, None),
        (b'{"hello":"world"}', -32600, None),
        (b"[]", -32600, None),
        (b'[{"jsonrpc":"2.0","id":2,"method":"tools/list"}]', -32600, None),
        (b'{"jsonrpc":"2.0","id":2,"method":5}', -32600, 2),  # its id is readable: answered to it
        # MCP ids are strings or integers: the SDK took these for notifications, answering nothing.
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, None),
    ],
    ids=[
        "lone-high-surrogate-escape",
        "lone-low-surrogate-escape",
        "invalid-utf8",
        "utf8-encoded-surrogate",
        "nan",
        "truncated",
        "byte-order-mark",
        "garbage",
        "not-a-message",
        "empty-batch",
        "batch",
        "bad-method",
        "object-id",
        "null-id",
        "boolean-id",
        "fraction-id",
    ],
)
async def test_malformed_frames_are_answered_and_serving_goes_on(frame: bytes, code: int, answer_id) -> None:
    async with raw_server() as session:
        await session.send(frame)
        answer = await session.receive()
        after = await session.request(3, "tools/list")
    assert answer["jsonrpc"] == "2.0" and answer["id"] == answer_id
    assert answer["error"]["code"] == code
    assert answer["error"]["message"].startswith("Parse error: " if code == -32700 else "Invalid Request: ")
    assert after["id"] == 3 and len(after["result"]["tools"]) == 3


async def test_blank_lines_are_skipped() -> None:
    async with raw_server() as session:
        await session.send(b"")
        await session.send(b"   \r")
        answer = await session.request(4, "tools/list")
    assert answer["id"] == 4 and "result" in answer


async def test_a_number_beyond_float_range_is_an_argument_error() -> None:
    """1e999 is valid JSON but no finite number: the host refuses it like any bad argument."""
    async with raw_server() as session:
        await session.send(tools_call(5, b'{"workspace":"w","query":"x","maxResults":1e999}'))
        answer = await session.receive()
    assert answer["id"] == 5 and answer["result"]["isError"] is True
    assert answer["result"]["content"][0]["text"] == (
        "invalid arguments for 'search_project_text': maxResults: Input should be a finite number "
        "(rule finite_number)"
    )


async def test_a_backends_stray_output_and_input_stay_off_the_wire(fixture_project: Path) -> None:
    """fd 1 points at stderr and fd 0 at the null device while serving: a print or a child
    process writing to stdout cannot corrupt a response, nor a read of stdin swallow requests."""
    command = [LYNXC, "--project", str(fixture_project), "serve", "wire"]
    async with raw_server(command) as session:
        answer = await session.request(2, "tools/call", {"name": "noisy", "arguments": {}})
        after = await session.request(3, "tools/list")
    assert answer["id"] == 2 and answer["result"]["structuredContent"] == {"stdinBytes": 0}
    assert after["id"] == 3 and "noisy" in [tool["name"] for tool in after["result"]["tools"]]


def test_an_unserializable_response_still_answers_its_request() -> None:
    """Defence in depth behind the host's own checks: the writer never dies on a message."""
    import mcp_types as types

    from lynxc.runtime.stdio import _encode

    broken = types.JSONRPCResponse(jsonrpc="2.0", id=7, result={"text": "caf\udce9"})
    answer = json.loads(_encode(broken))
    assert answer == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32603, "message": "the response could not be serialized"},
    }
    notification = types.JSONRPCNotification(jsonrpc="2.0", method="x", params={"text": "caf\udce9"})
    assert _encode(notification) is None

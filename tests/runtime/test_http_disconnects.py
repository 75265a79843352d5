"""QuietDisconnects on the two shapes the SDK produces when a client or its session goes away
mid-request (tests/e2e/test_http_disconnects.py serves the real thing): a second answer after a
complete one (the handshake-era transport's 500 after its 202, which uvicorn refuses with a
traceback), and a failure once the client has gone (the 2026-era body read)."""

from __future__ import annotations

import logging

import pytest

from lynxc.runtime.http_disconnects import QuietDisconnects

pytestmark = pytest.mark.anyio

SCOPE = {"type": "http", "method": "POST", "path": "/mcp", "headers": [], "client": ("127.0.0.1", 5)}


def answer(status: int) -> list[dict]:
    return [
        {"type": "http.response.start", "status": status, "headers": []},
        {"type": "http.response.body", "body": b"", "more_body": False},
    ]


async def test_a_second_answer_to_one_request_is_dropped() -> None:
    async def answers_twice(scope, receive, send) -> None:
        for message in answer(202) + answer(500):
            await send(message)

    sent: list[dict] = []

    async def send(message: dict) -> None:
        if sent and message["type"] == "http.response.start":
            raise RuntimeError("Unexpected ASGI message 'http.response.start' sent")  # as uvicorn
        sent.append(message)

    await QuietDisconnects(answers_twice)(SCOPE, _never_called, send)
    assert sent == answer(202)


async def test_a_failure_after_the_client_left_is_one_debug_line(caplog: pytest.LogCaptureFixture) -> None:
    async def reads_then_fails(scope, receive, send) -> None:
        await receive()
        raise ConnectionError("the body never came")

    async def receive() -> dict:
        return {"type": "http.disconnect"}

    with caplog.at_level(logging.DEBUG, logger="lynxc.runtime.http"):
        await QuietDisconnects(reads_then_fails)(SCOPE, receive, _never_called)
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (logging.DEBUG, "client 127.0.0.1:5 went away mid-request (ConnectionError)")
    ]


async def test_a_failure_while_the_client_is_there_is_not_hidden() -> None:
    async def fails(scope, receive, send) -> None:
        raise ValueError("a real bug")

    with pytest.raises(ValueError, match="a real bug"):
        await QuietDisconnects(fails)(SCOPE, _never_called, _never_called)


async def _never_called(*args: object) -> dict:
    raise AssertionError("not expected")

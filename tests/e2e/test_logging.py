"""Logging to the client, through a real MCP client over stdio and HTTP, in both protocol eras,
against the bundled conformance server (its `test_logging_tool` logs once at each of the eight
levels, `test_tool_with_logging` three times at info).

- handshake era: before `logging/setLevel` a session gets info and above; `logging/setLevel`
  sets the session's minimum, and one session's level is not another's;
- 2026-07-28: nothing at all unless the request carries a log level, then that level and above;
- the SDK's deprecation warning for the logging capability never reaches the operator's stderr.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.conftest import LYNXC, ROOT, http_process

pytestmark = pytest.mark.anyio

SERVER = "conformance"
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
MODERN = "2026-07-28"


class Heard:
    """The log messages a client received, in order."""

    def __init__(self) -> None:
        self.messages: list[types.LoggingMessageNotificationParams] = []

    async def __call__(self, params: types.LoggingMessageNotificationParams) -> None:
        self.messages.append(params)

    def levels(self) -> list[str]:
        return [message.level for message in self.messages]

    def take(self) -> list[str]:
        levels = self.levels()
        self.messages.clear()
        return levels


@asynccontextmanager
async def stdio(heard: Heard, **options: Any) -> AsyncIterator[Client]:
    command = [LYNXC, "--project", str(ROOT), "serve", SERVER]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params, logging_callback=heard, **options) as client:
        yield client


async def set_level(client: Client, level: str) -> None:
    with warnings.catch_warnings():  # the client's own deprecation warning: expected here
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.set_logging_level(level)  # type: ignore[arg-type]


async def every_level(client: Client) -> str:
    result = await client.call_tool("test_logging_tool", {})
    assert not result.is_error, result
    return result.content[0].text


async def test_handshake_stdio_sends_info_and_above_until_the_client_sets_a_level() -> None:
    heard = Heard()
    async with stdio(heard, mode="legacy") as client:
        assert client.server_capabilities.logging is not None
        assert await every_level(client) == f"sent at: {', '.join(LEVELS[1:])}"
        assert heard.take() == LEVELS[1:]

        await set_level(client, "warning")
        await every_level(client)
        assert heard.take() == LEVELS[3:]

        await set_level(client, "debug")
        await every_level(client)
        assert heard.take() == LEVELS

        await set_level(client, "emergency")
        await every_level(client)
        assert heard.take() == ["emergency"]


async def test_messages_carry_the_text_the_data_and_the_tool_as_logger() -> None:
    heard = Heard()
    async with stdio(heard, mode="legacy") as client:
        result = await client.call_tool("test_tool_with_logging", {})
        assert result.content[0].text == "Logging test completed: 3 messages at info."
        assert [(m.level, m.data, m.logger) for m in heard.messages] == [
            ("info", "Tool execution started", "test_tool_with_logging"),
            ("info", "Tool processing data", "test_tool_with_logging"),
            ("info", "Tool execution completed", "test_tool_with_logging"),
        ]
        heard.take()
        await set_level(client, "debug")
        await every_level(client)
        assert heard.messages[0].data == {"message": "a message at debug", "level": "debug"}


async def test_modern_stdio_sends_nothing_unless_the_request_asks() -> None:
    heard = Heard()
    async with stdio(heard, mode=MODERN) as client:
        assert await every_level(client) == "sent at: none (the client asked for no log messages)"
        await client.call_tool("test_tool_with_logging", {})
        assert heard.levels() == []
    async with stdio(heard, mode=MODERN, log_level="error") as client:
        await every_level(client)
        assert heard.take() == LEVELS[4:]
        # a request's own _meta level overrides the client's default
        await client.call_tool("test_logging_tool", {}, meta={types.LOG_LEVEL_META_KEY: "alert"})
        assert heard.take() == ["alert", "emergency"]


async def test_http_levels_are_per_session_and_the_deprecation_warning_stays_quiet() -> None:
    with http_process(SERVER) as (port, process):
        url = f"http://127.0.0.1:{port}/mcp"
        quiet, loud = Heard(), Heard()
        async with (
            Client(url, mode="legacy", logging_callback=quiet) as first,
            Client(url, mode="legacy", logging_callback=loud) as second,
        ):
            await set_level(first, "critical")
            await every_level(first)
            await every_level(second)
            assert quiet.take() == LEVELS[5:]
            assert loud.take() == LEVELS[1:]
            await set_level(second, "debug")
            await every_level(second)
            await every_level(first)
            assert loud.take() == LEVELS
            assert quiet.take() == LEVELS[5:]

        modern = Heard()
        async with Client(url, mode=MODERN, logging_callback=modern) as client:
            await every_level(client)
            assert modern.take() == []
        async with Client(url, mode=MODERN, logging_callback=modern, log_level="notice") as client:
            await every_level(client)
            assert modern.take() == LEVELS[2:]
            # logging/setLevel is gone at 2026-07-28: the level rides each request instead
            with pytest.raises(Exception, match=r"[Mm]ethod not found"):
                await set_level(client, "debug")
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    assert "deprecated" not in stderr.lower(), stderr

"""What the built-in backends tell the client's log, through a real MCP client on stdio (a
handshake client that set its level): the SQL backend its statement, rows and duration at debug;
the records backend the search mode that ran (or fell back) at info; the HTTP backend each
upstream status at debug and each retry at warning, never a credential."""

from __future__ import annotations

import os
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.conftest import LYNXC, ROOT, settings_args
from tests.e2e.test_http_tools import settings as shop_settings
from tests.e2e.test_http_tools import shop  # noqa: F401  (the fixture: a petshop API and its server)
from tests.fixtures.foxnose_store import copy_of_store
from tests.fixtures.http_api import BEARER_TOKEN, TestAPI

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def logged_client(
    server: str, level: str, settings: dict[str, Any] | None = None, project: Path = ROOT
) -> AsyncIterator[tuple[Client, list[types.LoggingMessageNotificationParams]]]:
    heard: list[types.LoggingMessageNotificationParams] = []

    async def hear(params: types.LoggingMessageNotificationParams) -> None:
        heard.append(params)

    command = [LYNXC, "--project", str(project), "serve", server, *settings_args(settings or {})]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params, mode="legacy", logging_callback=hear) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.set_logging_level(level)  # type: ignore[arg-type]
        yield client, heard


async def test_sql_statements_are_logged_at_debug_only() -> None:
    async with logged_client("countries-sqlite", "debug") as (client, heard):
        result = await client.call_tool("country_profile", {"code": "fra"})
        assert not result.is_error
        [message] = heard
        assert message.level == "debug" and message.logger == "country_profile"
        assert message.data["message"] == "SQL statement of 'country_profile' ran"
        assert "FROM countries" in message.data["statement"]
        assert message.data["engine"] == "sqlite" and message.data["rows"] == 1
        assert isinstance(message.data["duration_ms"], float)
    async with logged_client("countries-sqlite", "info") as (client, heard):
        await client.call_tool("country_profile", {"code": "fra"})
        assert heard == []


async def test_records_search_says_which_mode_ran(tmp_path_factory: pytest.TempPathFactory) -> None:
    # a copy of the run's store (countries among its resources), this test's own: its server writes
    settings = copy_of_store(tmp_path_factory, "logged-countries")
    async with logged_client("foxnose-knowledge", "info", settings) as (client, heard):
        for asked in ("text", "semantic", "hybrid"):
            heard.clear()
            result = await client.call_tool(
                "search_records", {"resource_id": "countries", "query": "Germany", "search_type": asked}
            )
            assert not result.is_error, result.content[0].text
            applied = result.structured_content["execution_info"]["applied_search_type"]
            [message] = [m for m in heard if m.logger == "search_records"]
            assert message.level == "info"
            assert (message.data["asked"], message.data["applied"]) == (asked, applied)
            expected = "ran" if applied == asked else f"fell back from {asked} to {applied}"
            assert expected in message.data["message"]


async def test_http_statuses_at_debug_and_retries_at_warning(shop: tuple[Path, TestAPI]) -> None:  # noqa: F811
    project, api = shop
    api.reset()
    async with logged_client("petshop", "debug", shop_settings(api), project) as (client, heard):
        busy = await client.call_tool("busy_endpoint", {"key": "logging", "retry_after": 1})
        assert not busy.is_error
        shown = [(m.level, m.data["message"]) for m in heard]
        assert shown == [
            ("debug", "GET /flaky/logging answered 503"),
            ("warning", "GET /flaky/logging answered 503: retry 1 of 2 in 1 s"),
            ("debug", "GET /flaky/logging answered 200"),
        ]
        heard.clear()
        missing = await client.call_tool("get_pet", {"pet_id": 99})
        assert missing.is_error
        assert [(m.level, m.data["status"]) for m in heard] == [("debug", 404)]
        assert all(BEARER_TOKEN not in str(m.data) for m in heard)

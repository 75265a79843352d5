"""The bundled conformance server (specs/conformance: the fixtures of the MCP conformance suite's
server scenarios) through a real MCP client, over stdio and HTTP: each tool answers what its
scenario expects. The suite itself runs outside pytest (tests/interop/run.sh, which needs npm).
And, once for every bundled server: `initialize` advertises logging, and `logging/setLevel`
answers, as every lynxc server can log to its client."""

from __future__ import annotations

import base64
import json
import os
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from tests.conftest import LYNXC, ROOT, http_server, settings_args, stdio_client

pytestmark = pytest.mark.anyio

SERVER = "conformance"
BUNDLED = sorted(path.parent.name for path in (ROOT / "generated").glob("*/tools.json"))
# Settings a server cannot start without; nothing here connects to them (no tool is called).
REQUIRED = {"pagila": {"database_url": "postgresql://lynxc@127.0.0.1:9/unused"}}


@asynccontextmanager
async def over_http() -> AsyncIterator[Client]:
    with http_server(SERVER) as url:
        async with Client(url, mode="legacy") as client:
            yield client


TRANSPORTS: dict[str, Callable[[], AbstractAsyncContextManager[Client]]] = {
    "stdio": lambda: stdio_client(SERVER),
    "http": over_http,
}


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
async def test_each_fixture_tool_answers_what_its_scenario_expects(transport: str) -> None:
    async with TRANSPORTS[transport]() as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {
            "test_simple_text",
            "test_error_handling",
            "test_tool_with_progress",
            "test_tool_with_logging",
            "test_logging_tool",
        }

        simple = await client.call_tool("test_simple_text", {})
        assert not simple.is_error
        assert [(c.type, c.text) for c in simple.content] == [
            ("text", "This is a simple text response for testing.")
        ]

        error = await client.call_tool("test_error_handling", {})
        assert error.is_error
        assert error.content[0].text == "This tool intentionally returns an error for testing"

        progress: list[tuple[float, float | None]] = []

        async def heard(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, total))

        done = await client.call_tool("test_tool_with_progress", {}, progress_callback=heard)
        assert done.content[0].text == "Progress test completed: 3 steps of 100."
        assert progress == [(0, 100), (50, 100), (100, 100)]


@pytest.mark.parametrize("server", BUNDLED)
async def test_every_bundled_server_offers_logging(server: str) -> None:
    command = [LYNXC, "--project", str(ROOT), "serve", server, *settings_args(REQUIRED.get(server, {}))]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params, mode="legacy") as client:  # logging/setLevel: the handshake era's
        assert client.server_capabilities.logging is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            assert await client.set_logging_level("warning") == types.EmptyResult()


@pytest.mark.parametrize("transport", sorted(TRANSPORTS))
async def test_each_fixture_prompt_and_resource_answers_what_its_scenario_expects(transport: str) -> None:
    """The prompts-*, resources-*, completion-complete and sep-2164 scenarios' fixtures, checked
    here too because the suite itself (tests/interop/run.sh) needs npm and runs outside pytest."""
    async with TRANSPORTS[transport]() as client:
        prompts = {p.name for p in (await client.list_prompts()).prompts}
        assert prompts == {
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
        }
        simple = await client.get_prompt("test_simple_prompt")
        assert [(m.role, m.content.text) for m in simple.messages] == [
            ("user", "This is a simple prompt for testing.")
        ]
        with_args = await client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        assert with_args.messages[0].content.text == "Prompt with arguments: arg1='hello', arg2='world'"
        embedded = await client.get_prompt(
            "test_prompt_with_embedded_resource", {"resourceUri": "test://example-resource"}
        )
        blocks = [m.content for m in embedded.messages]
        assert any(b.type == "resource" and b.resource.uri == "test://example-resource" for b in blocks)
        image = await client.get_prompt("test_prompt_with_image")
        pictures = [m.content for m in image.messages if m.content.type == "image"]
        assert pictures and pictures[0].mime_type == "image/png"
        assert base64.b64decode(pictures[0].data).startswith(b"\x89PNG")

        ref = types.PromptReference(name="test_prompt_with_arguments")
        completion = (await client.complete(ref, {"name": "arg1", "value": "par"})).completion
        assert completion.values == ["paris", "park", "party"]

        listed = {r.uri: r.mime_type for r in (await client.list_resources()).resources}
        assert listed["test://static-text"] == "text/plain" and listed["test://static-binary"] == "image/png"
        text = (await client.read_resource("test://static-text")).contents[0]
        assert text.text == "This is the content of the static text resource."
        binary = (await client.read_resource("test://static-binary")).contents[0]
        assert base64.b64decode(binary.blob).startswith(b"\x89PNG")
        templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
        assert templates == ["test://template/{id}/data"]
        data = json.loads((await client.read_resource("test://template/123/data")).contents[0].text)
        assert data == {"id": "123", "templateTest": True, "data": "Data for ID: 123"}
        if transport == "http":  # a handshake-era client (mode="legacy"); 2026-07-28 listens instead
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await client.subscribe_resource("test://watched-resource")
                await client.unsubscribe_resource("test://watched-resource")
        with pytest.raises(MCPError) as raised:
            await client.read_resource("test://nonexistent-resource-for-conformance-testing")
        assert raised.value.error.code == types.INVALID_PARAMS
        assert raised.value.error.data == {"uri": "test://nonexistent-resource-for-conformance-testing"}

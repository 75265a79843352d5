"""A prompt's `resource:` message (issue 31): the rendered URI is read through the reader the
host injects and embedded whole; a URI the reader does not serve is -32602 naming it. Served
in-process by the real host and SDK server, the reader standing in for runtime/resources.py."""

from __future__ import annotations

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from lynxc.runtime.prompts import PromptHost, ResourceNotFound

pytestmark = pytest.mark.anyio

LISTED = {
    "prompts": [
        {
            "name": "explain",
            "description": "Explain one record.",
            "arguments": [{"name": "key", "description": "Its key.", "required": True}],
        }
    ]
}
RENDERING = {
    "prompts": {
        "explain": {
            "arguments": {"key": {"required": True}},
            "messages": [
                {"role": "user", "text": "Explain record {{ key }}:"},
                {"role": "user", "resource": "rec://{{ key | urlencode }}"},
            ],
        }
    }
}


async def reader(uri: str) -> list[types.TextResourceContents]:
    if uri != "rec://8":
        raise ResourceNotFound(uri)
    return [types.TextResourceContents(uri=uri, mime_type="application/json", text='{"key": 8}')]


def server() -> Server:
    host = PromptHost(LISTED, RENDERING, reader)
    return Server("embedded", on_list_prompts=host.list_prompts, on_get_prompt=host.get_prompt)


async def test_a_resource_message_embeds_what_the_reader_returns() -> None:
    async with Client(server()) as client:
        answer = await client.get_prompt("explain", {"key": "8"})
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("explain", {"key": "9/../x"})
    text, embedded = answer.messages
    assert text.content.text == "Explain record 8:"
    assert embedded.content.type == "resource"
    assert embedded.content.resource.text == '{"key": 8}'
    assert missing.value.code == -32602
    assert "rec://9/../x" in missing.value.message

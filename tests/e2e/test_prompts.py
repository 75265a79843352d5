"""Prompts and completions through a real MCP client (issue 31), over stdio and HTTP, against a
generated server built from tests/fixtures/prompts_project: prompts/list, prompts/get with and
without optional arguments, -32602 errors naming what is wrong, completions from values and a
function, and the sandbox: an argument's value is text, never a template."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.conftest import LYNXC, ROOT, free_port

pytestmark = pytest.mark.anyio
FIXTURE = ROOT / "tests" / "fixtures" / "prompts_project"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("prompts") / "project"
    shutil.copytree(FIXTURE, project)
    built = subprocess.run(
        [LYNXC, "--project", str(project), "build"], env=ENV, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stdout + built.stderr
    return project


@asynccontextmanager
async def connected(
    project: Path, transport: str, *extra: str, mode: str = "auto", **options: Any
) -> AsyncIterator[Client]:
    args = ["--project", str(project), "serve", "prompts-demo", *extra]
    if transport == "stdio":
        server = StdioServerParameters(command=LYNXC, args=args, env=ENV)
        async with Client(server, mode=mode, **options) as client:
            yield client
        return
    import socket
    import time

    port = free_port()
    process = subprocess.Popen(
        [LYNXC, *args, "--transport", "http", "--port", str(port)], env=ENV, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=mode, **options) as client:
            yield client
    finally:
        process.terminate()
        process.wait(timeout=10)


TRANSPORTS = pytest.mark.parametrize("transport", ["stdio", "http"])


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # the modern era, and the initialize handshake
@TRANSPORTS
async def test_list_get_and_complete(project: Path, transport: str, mode: str) -> None:
    async with connected(project, transport, mode=mode) as client:
        era = client.protocol_version
        listed = await client.list_prompts()
        greeting = await client.get_prompt("greet", {"name": "Ada", "tone": "warm"})
        plain = await client.get_prompt("greet", {"name": "Ada"})
        painted = await client.get_prompt("paint", {"colour": "red"})
        tones = await client.complete(types.PromptReference(name="greet"), {"name": "tone", "value": "w"})
        colours = await client.complete(
            types.PromptReference(name="paint"), {"name": "colour", "value": "re"}, {"shade": "dark "}
        )
    assert (era == "2026-07-28") == (mode == "auto")
    assert [p.name for p in listed.prompts] == ["greet", "paint"]
    assert listed.prompts[0].model_dump(exclude_none=True) == {
        "name": "greet",
        "title": "Greet someone",
        "description": "Write a greeting to one person, in the tone asked for.",
        "arguments": [
            {"name": "name", "description": "Who to greet, e.g. Ada.", "required": True},
            {"name": "tone", "description": "How to sound: warm, formal or wry.", "required": False},
        ],
    }
    assert [(m.role, m.content.text) for m in greeting.messages] == [
        ("user", "Greet Ada in a warm tone.\nKeep it to one sentence.\n"),
        ("assistant", "Hello Ada!"),
    ]
    assert plain.messages[0].content.text == "Greet Ada.\nKeep it to one sentence.\n"
    text, image = painted.messages
    assert text.content.text == "Suggest a scheme around  red."
    assert image.content.type == "image" and image.content.mime_type == "image/png"
    assert base64.b64decode(image.content.data).startswith(b"\x89PNG")
    assert (tones.completion.values, tones.completion.total) == (["warm", "Wry"], 2)
    assert colours.completion.values == ["dark red", "dark rebeccapurple"]


async def test_prompts_list_paginates_with_a_cursor(project: Path) -> None:
    async with connected(project, "stdio", "--page-size", "1") as client:
        first = await client.list_prompts()
        second = await client.list_prompts(cursor=first.next_cursor)
        with pytest.raises(MCPError) as bad:
            await client.list_prompts(cursor="bogus")
    assert [p.name for p in first.prompts] == ["greet"]
    assert [p.name for p in second.prompts] == ["paint"] and second.next_cursor is None
    assert bad.value.code == -32602


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@TRANSPORTS
async def test_capabilities_follow_the_declarations(project: Path, transport: str, mode: str) -> None:
    async with connected(project, transport, mode=mode) as client:
        capabilities = client.server_capabilities
    assert capabilities is not None
    assert capabilities.prompts is not None and capabilities.completions is not None


@TRANSPORTS
async def test_a_failing_source_answers_nothing_and_tells_the_client_log(
    project: Path, transport: str
) -> None:
    logged: list[types.LoggingMessageNotificationParams] = []

    async def keep(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async with connected(project, transport, mode="legacy", logging_callback=keep) as client:
        answer = await client.complete(types.PromptReference(name="paint"), {"name": "finish", "value": "m"})
        await client.list_prompts()  # the log notification precedes the answer; this settles it
    assert (answer.completion.values, answer.completion.has_more) == ([], False)
    assert [m.level for m in logged] == ["error"]
    assert "the completion source is down" in str(logged[0].data)


@pytest.mark.parametrize(
    ("name", "arguments", "named"),
    [
        ("nope", {}, "nope"),
        ("greet", {}, "'name'"),
        ("greet", {"name": "Ada", "mood": "x"}, "'mood'"),
        ("greet", {"name": "x" * 70_000}, "'name'"),
    ],
)
@TRANSPORTS
async def test_bad_requests_are_invalid_params_naming_the_culprit(
    project: Path, transport: str, name: str, arguments: dict[str, str], named: str
) -> None:
    async with connected(project, transport) as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt(name, arguments)
    assert raised.value.code == -32602
    assert named in raised.value.message


@TRANSPORTS
async def test_an_argument_value_is_never_evaluated_as_a_template(project: Path, transport: str) -> None:
    hostile = "{{ ''.__class__.__mro__ }}{% for x in range(99999999) %}x{% endfor %}"
    async with connected(project, transport) as client:
        answer = await client.get_prompt("greet", {"name": hostile})
    assert answer.messages[0].content.text.startswith(f"Greet {hostile}.")


async def test_a_template_reaching_for_python_is_refused_at_build(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project)
    spec = project / "specs" / "prompts-demo.yaml"
    spec.write_text(spec.read_text().replace("Hello {{ name }}!", "{{ name.__class__.__mro__ }}"))
    built = subprocess.run(
        [LYNXC, "--project", str(project), "build"], env=ENV, capture_output=True, text=True
    )
    assert built.returncode != 0
    assert "PROMPT_TEMPLATE_UNSAFE" in built.stdout + built.stderr
    assert "specs/prompts-demo.yaml:36:" in built.stdout + built.stderr

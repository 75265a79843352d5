"""A user's Python backend sees who is calling (issue 27): `ctx.caller`, and its parameters bound
to the caller's claims, over stdio (the caller_claims setting) and over HTTP (an API key), with
a real MCP client against a server built from a spec in a fresh project."""

from __future__ import annotations

import textwrap
from pathlib import Path

import httpx
import pytest

from lynxc.compiler.cli import main as lynxc
from lynxc.runtime.auth.api_keys import add_key
from lynxc.runtime.definition import load_definition
from tests.conftest import stdio_client
from tests.e2e.test_auth_http import call_message, open_session, post, result_of
from tests.fixtures.mcp_http import serving_generated

pytestmark = pytest.mark.anyio

SPEC = """\
lynxc: 1
server:
  name: whoami
  version: 0.1.0
  auth:
    scopes: [profile:read]
    api_keys: {file: {setting: keys_file}}
tools:
  - name: whoami
    title: Say who is calling
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false}
    auth: {scopes: [profile:read]}
    description:
      purpose: Greet the verified caller and say which team their identity names.
      behaviour: Read-only; the team comes from the caller's identity, never from the arguments.
      returns: greeting, team, subject (who the caller is), method (how they were verified) and scopes.
    parameters:
      greeting:
        {type: string, default: hello, maxLength: 20, description: "The word to greet with, e.g. `hi`."}
      team: {type: string, from_claim: team, description: "The caller's team, from their identity."}
    output:
      type: object
      additionalProperties: false
      required: [greeting, team, subject, method, scopes]
      properties:
        greeting: {type: string}
        team: {type: string}
        subject: {type: string, nullable: true}
        method: {type: string, nullable: true}
        scopes: {type: array, items: {type: string}}
    backend: whoami_backend:whoami
"""

BACKEND = """\
from lynxc.runtime.backend import backend


@backend(params={"greeting", "team"})
async def whoami(params, ctx):
    caller = ctx.caller
    return {
        "greeting": params.greeting,
        "team": params.team,
        "subject": caller.subject if caller else None,
        "method": caller.method if caller else None,
        "scopes": sorted(caller.scopes) if caller else [],
    }
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("whoami")
    (root / "specs").mkdir()
    (root / "specs" / "whoami.yaml").write_text(SPEC)
    (root / "whoami_backend.py").write_text(textwrap.dedent(BACKEND))
    with pytest.raises(SystemExit) as done:
        lynxc(["--project", str(root), "build"])
    assert done.value.code == 0
    return root


async def test_stdio_caller_comes_from_the_caller_claims_setting(project: Path) -> None:
    claims = {"sub": "ops-bot", "team": "ops"}
    async with stdio_client("whoami", {"caller_claims": claims}, project=project) as client:
        tool = (await client.list_tools()).tools[0]
        assert "team" not in tool.input_schema["properties"]
        result = await client.call_tool("whoami", {"greeting": "hi"})
        assert not result.is_error, result.content
        assert result.structured_content == {
            "greeting": "hi",
            "team": "ops",
            "subject": "ops-bot",
            "method": "local",
            "scopes": [],  # scopes are not checked on stdio: the client started the server
        }
        refused = await client.call_tool("whoami", {"team": "admins"})
        assert (
            refused.is_error
            and "'team': comes from the caller's verified identity" in refused.content[0].text
        )


def test_http_caller_is_the_api_key(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(project))  # the backend imports from the project root
    keys = tmp_path / "keys.json"
    key = add_key(keys, "ci-bot", ["profile:read"], {"team": "platform"})
    no_scope = add_key(keys, "intern", [], {"team": "platform"})
    definition = load_definition(project / "generated" / "whoami")
    with serving_generated("whoami", lambda base: {"keys_file": str(keys)}, definition=definition) as served:
        session = open_session(served, key)
        result = result_of(post(served, call_message("whoami", {}), key, session))
        assert not result["isError"], result
        assert result["structuredContent"] == {
            "greeting": "hello",
            "team": "platform",
            "subject": "ci-bot",
            "method": "api_key",
            "scopes": ["profile:read"],
        }
        other = open_session(served, no_scope)
        assert post(served, call_message("whoami", {}), no_scope, other).status_code == 403
        # An API-key-only server names no issuer: its 401 carries no resource metadata.
        answer = httpx.post(served.url, json=call_message("whoami", {}))
        assert answer.status_code == 401 and "resource_metadata" not in answer.headers["www-authenticate"]
        assert served.calls["whoami"] == 1

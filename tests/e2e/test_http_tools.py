"""HTTP tools end to end (issue 28): a spec declaring requests to a real REST API (the test API,
tests/fixtures/http_api.py), built with `lynxc build` in a project of its own, served by `lynxc
serve` and called through a real MCP client. The engine's own tests cover each behaviour in
depth (tests/runtime/backends/http/); these prove the whole path: spec -> http.json -> server ->
request -> answer checked against the output schema -> the client."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from lynxc.compiler.cli import main as lynxc
from tests.conftest import stdio_client
from tests.fixtures.http_api import (
    API_KEY,
    BASIC_PASSWORD,
    BASIC_USER,
    BEARER_TOKEN,
    CLIENT_ID,
    CLIENT_SECRET,
    SECRETS,
    TestAPI,
    running_http_api,
)

pytestmark = pytest.mark.anyio

SPEC = """\
lynxc: 1
server:
  name: petshop
  version: 1.0.0
  instructions: Pets of the test API, read and written through its REST endpoints.
  http:
    base_url: {setting: api_url}
    auth:
      bearer: {token: {setting: api_token}}
    headers: {User-Agent: lynxc-e2e}
tools:
  - name: get_pet
    title: Read one pet
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true}
    description:
      purpose: Read one pet of the shop by its id.
      returns: id, name and tag; an error naming the status for an unknown id.
    parameters:
      pet_id: {type: integer, required: true, minimum: 1, description: "The pet's id, e.g. `7`."}
    backend: {http: {method: GET, path: "/pets/{pet_id}", result: /data}}
    output:
      type: object
      additionalProperties: false
      required: [id, name, tag]
      properties: {id: {type: integer}, name: {type: string}, tag: {type: string}}
  - name: send_note
    title: Send a note about a pet
    annotations: {readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: true}
    description:
      purpose: Send a note to the shop about one section, with tags and a trace id.
      returns: what the shop received, as it saw it.
    parameters:
      section: {type: string, required: true, maxLength: 100, description: "The section, e.g. `dogs`."}
      tags: {type: array, items: {type: string}, maxItems: 5, description: Tags of the note.}
      page_size: {type: integer, minimum: 1, maximum: 50, description: A page size.}
      trace: {type: string, maxLength: 64, description: A trace id for the shop's logs.}
      note: {type: string, required: true, maxLength: 500, description: The note's text.}
    backend:
      http:
        method: POST
        path: "/echo/{section}"
        query: {tag: tags, "page[size]": page_size}
        headers: {X-Trace-Id: trace}
        body: {note: note}
        wrap: received
    output:
      type: object
      required: [received]
      properties: {received: {type: object}}
  - name: read_notice
    title: Read the shop's notice
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true}
    description:
      purpose: Read the shop's plain-text notice.
      returns: the text and its media type.
    backend: {http: {method: GET, path: /text, response: text}}
  - name: pet_count
    title: Count the pets (a broken promise)
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true}
    description:
      purpose: Read the shop's count of pets, which the test API answers with the wrong type.
      returns: id as an integer, as promised.
    backend: {http: {method: GET, path: /broken-promise}}
    output: {type: object, required: [id], properties: {id: {type: integer}}}
  - name: busy_endpoint
    title: Call an endpoint that is busy at first
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true}
    description:
      purpose: Call an endpoint that answers 503 with Retry-After before it answers.
      returns: how many times it was hit.
    parameters:
      key: {type: string, required: true, maxLength: 20, description: "A key, e.g. `a`."}
      retry_after: {type: integer, minimum: 0, maximum: 5, description: Seconds it asks to wait.}
    backend: {http: {method: GET, path: "/flaky/{key}", query: {retry_after: retry_after}}}
    output: {type: object, required: [hits], properties: {hits: {type: integer}}}
  - name: check_credential
    title: Check the shop's credential
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true}
    description:
      purpose: Ask the shop whether the server's bearer token is accepted.
      returns: ok and the kind of credential; an error saying the status when refused.
    backend: {http: {method: GET, path: /auth/bearer}}
    output: {type: object, properties: {ok: {type: boolean}, kind: {type: string}}}
  - name: failing_endpoint
    title: Call an endpoint that fails
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true}
    description:
      purpose: Call an endpoint that answers with the given error status.
      returns: always an error naming the status.
    parameters:
      code: {type: integer, required: true, minimum: 400, maximum: 599, description: "A status, e.g. `500`."}
    backend: {http: {method: GET, path: "/status/{code}"}}
    output: {type: object}
  - name: huge_answer
    title: Read a huge answer
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true}
    description:
      purpose: Read an answer of the given size, over this tool's cap of {caps.max_response_bytes} bytes.
      returns: an error past the cap.
    parameters:
      bytes: {type: integer, required: true, minimum: 1, maximum: 10000000, description: "e.g. `5000`."}
    backend: {http: {method: GET, path: /huge, query: {bytes: bytes}}}
    output: {type: object}
    caps:
      max_response_bytes: {value: 4096, unit: bytes, description: Bytes of the answer read at most.}
  - name: not_json
    title: Read an answer that is not JSON
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true}
    description:
      purpose: Read an endpoint that claims JSON and sends HTML.
      returns: an error quoting the start of what came.
    backend: {http: {method: GET, path: /not-json}}
    output: {type: object}
  - name: redirected_away
    title: Follow a redirect to another host
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true}
    description:
      purpose: Call an endpoint that redirects to another host, which the server refuses to follow.
      returns: an error naming where it pointed.
    backend: {http: {method: GET, path: /redirect/away}}
    output: {type: object}
  - name: slow_endpoint
    title: Call a slow endpoint
    annotations: {readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true}
    description:
      purpose: Call an endpoint that takes the given time to answer.
      returns: the seconds it slept.
    parameters:
      seconds: {type: number, required: true, minimum: 0, maximum: 30, description: "Seconds, e.g. `1`."}
    backend: {http: {method: GET, path: /slow, query: {seconds: seconds}}}
    output: {type: object, properties: {slept: {type: number}}}
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, TestAPI]]:
    project = tmp_path_factory.mktemp("petshop")
    (project / "specs").mkdir()
    (project / "specs" / "petshop.yaml").write_text(SPEC)
    with pytest.raises(SystemExit) as done:
        lynxc(["--project", str(project), "build"])
    assert done.value.code == 0
    with running_http_api() as api:
        yield project, api


def settings(api: TestAPI, token: str = BEARER_TOKEN) -> dict[str, Any]:
    return {"api_url": api.url, "api_token": token}


async def test_the_built_server_calls_the_api(shop: tuple[Path, TestAPI]) -> None:
    project, api = shop
    api.reset()
    async with stdio_client("petshop", settings(api), project=project) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed["send_note"].input_schema["properties"]) == {
            "section",
            "tags",
            "page_size",
            "trace",
            "note",
        }
        pet = await client.call_tool("get_pet", {"pet_id": 7})
        assert not pet.is_error and pet.structured_content == {"id": 7, "name": "Rex", "tag": "dog"}
        missing = await client.call_tool("get_pet", {"pet_id": 99})
        assert missing.is_error and "answered 404" in missing.content[0].text
        sent = await client.call_tool(
            "send_note",
            {"section": "dogs/../../admin", "tags": ["a", "b"], "page_size": 5, "trace": "t-1", "note": "hi"},
        )
        assert not sent.is_error, sent.content
        received = sent.structured_content["received"]
        assert received["method"] == "POST"
        assert received["path"] == "/echo/dogs%2F..%2F..%2Fadmin"  # one segment: never another path
        assert received["query"] == [["tag", "a"], ["tag", "b"], ["page[size]", "5"]]
        headers = {k.lower(): v for k, v in received["headers"].items()}
        assert headers["x-trace-id"] == "t-1" and headers["authorization"] == f"Bearer {BEARER_TOKEN}"
        assert headers["user-agent"] == "lynxc-e2e" and json.loads(received["body"]) == {"note": "hi"}
        injected = await client.call_tool(
            "send_note", {"section": "x", "trace": "a\r\nX-Evil: 1", "note": "n"}
        )
        assert injected.is_error and "trace" in injected.content[0].text
        notice = await client.call_tool("read_notice", {})
        assert notice.structured_content == {
            "text": "plain words, é",
            "content_type": "text/plain; charset=utf-8",
        }
        broken = await client.call_tool("pet_count", {})
        assert (
            broken.is_error and "id" in broken.content[0].text and "invalid result" in broken.content[0].text
        )
        busy = await client.call_tool("busy_endpoint", {"key": "e2e", "retry_after": 1})
        assert not busy.is_error and busy.structured_content == {"hits": 2}


async def test_a_wrong_token_is_an_error_that_never_shows_a_secret(shop: tuple[Path, TestAPI]) -> None:
    project, api = shop
    async with stdio_client("petshop", settings(api, token="wrong-s3cret"), project=project) as client:
        # The API refuses it and quotes the header it got: the error names the status, not the token.
        result = await client.call_tool("check_credential", {})
        text = result.content[0].text
        assert result.is_error and "answered 401" in text
        assert all(secret not in text for secret in (*SECRETS, "wrong-s3cret"))
    async with stdio_client("petshop", settings(api), project=project) as client:
        accepted = await client.call_tool("check_credential", {})
        assert accepted.structured_content == {"ok": True, "kind": "bearer"}


async def test_cancelling_the_mcp_request_stops_the_http_request(shop: tuple[Path, TestAPI]) -> None:
    project, api = shop
    api.reset()
    async with stdio_client("petshop", settings(api), project=project) as client:
        started = time.monotonic()
        with anyio.move_on_after(0.5) as scope:
            await client.call_tool("slow_endpoint", {"seconds": 20})
        assert scope.cancelled_caught
        deadline = time.monotonic() + 10
        while api.disconnects != ["/slow"] and time.monotonic() < deadline:
            await anyio.sleep(0.05)
        assert api.disconnects == ["/slow"] and time.monotonic() - started < 10
        # the server goes on serving
        assert not (await client.call_tool("get_pet", {"pet_id": 8})).is_error


async def test_failures_are_tool_errors_and_the_server_goes_on(shop: tuple[Path, TestAPI]) -> None:
    project, api = shop
    api.reset()
    async with stdio_client(
        "petshop", {**settings(api), "http_timeout_seconds": 1}, project=project
    ) as client:
        failed = await client.call_tool("failing_endpoint", {"code": 500})
        assert failed.is_error and "answered 500" in failed.content[0].text
        assert all(secret not in failed.content[0].text for secret in SECRETS)  # the body quotes the token
        huge = await client.call_tool("huge_answer", {"bytes": 100_000})
        assert huge.is_error and "4096" in huge.content[0].text
        small = await client.call_tool("huge_answer", {"bytes": 100})
        assert not small.is_error
        html = await client.call_tool("not_json", {})
        assert html.is_error and "JSON" in html.content[0].text
        away = await client.call_tool("redirected_away", {})
        assert away.is_error and api.other_url.split("//")[1] in away.content[0].text
        assert api.other.requests == []  # nothing, and no credential, reached the other host
        slow = await client.call_tool("slow_endpoint", {"seconds": 5})
        assert slow.is_error and "did not answer within 1 s" in slow.content[0].text
        assert not (await client.call_tool("get_pet", {"pet_id": 7})).is_error


AUTH_KINDS = {
    "bearer": ("bearer: {token: {setting: secret_a}}", {"secret_a": BEARER_TOKEN}),
    "api-key-header": (
        "api_key: {in: header, name: X-API-Key, value: {setting: secret_a}}",
        {"secret_a": API_KEY},
    ),
    "api-key-query": (
        "api_key: {in: query, name: api_key, value: {setting: secret_a}}",
        {"secret_a": API_KEY},
    ),
    "basic": (
        "basic: {username: {setting: secret_a}, password: {setting: secret_b}}",
        {"secret_a": BASIC_USER, "secret_b": BASIC_PASSWORD},
    ),
    "oauth": (
        "oauth2_client_credentials: {token_url: {setting: token_url}, client_id: {setting: secret_a}, "
        "client_secret: {setting: secret_b}, scopes: [pets]}",
        {"secret_a": CLIENT_ID, "secret_b": CLIENT_SECRET},
    ),
}


@pytest.mark.parametrize("kind", AUTH_KINDS)
async def test_each_kind_of_credential(kind: str, shop: tuple[Path, TestAPI], tmp_path: Path) -> None:
    """One server per kind, built and served, its credential accepted by the API; with a wrong
    secret, an error that names the status and shows no secret."""
    _, api = shop
    auth, secrets = AUTH_KINDS[kind]
    spec = f"""\
lynxc: 1
server:
  name: creds
  version: 1.0.0
  http:
    base_url: {{setting: api_url}}
    auth:
      {auth}
tools:
  - name: check
    description: {{purpose: Ask the API whether the server's credential is accepted.}}
    annotations: {{readOnlyHint: true}}
    backend: {{http: {{method: GET, path: /auth/{kind}}}}}
    output: {{type: object, properties: {{ok: {{type: boolean}}, kind: {{type: string}}}}}}
"""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "creds.yaml").write_text(spec)
    with pytest.raises(SystemExit) as done:
        lynxc(["--project", str(tmp_path), "build"])
    assert done.value.code == 0
    base = {"api_url": api.url} | ({"token_url": f"{api.url}/oauth/token"} if kind == "oauth" else {})
    async with stdio_client("creds", {**base, **secrets}, project=tmp_path) as client:
        accepted = await client.call_tool("check", {})
        assert accepted.structured_content == {"ok": True, "kind": kind}, accepted.content
    wrong = {name: value + "-wrong" for name, value in secrets.items()}
    async with stdio_client("creds", {**base, **wrong}, project=tmp_path) as client:
        refused = await client.call_tool("check", {})
        text = refused.content[0].text
        assert refused.is_error and "401" in text
        assert all(secret not in text for secret in (*SECRETS, *wrong.values()))

"""call_http against a real API on real sockets (tests/fixtures/http_api.py): each parameter
location, each credential kind, errors, deadlines, caps, redirects, retries and cancellation.
Every error message is checked for the secrets the call held: none may show."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from lynxc.runtime.backends.http.pool import close_pools, pool_for
from lynxc.runtime.errors import ToolError
from lynxc.runtime.output_validation import OutputValidator
from tests.fixtures.http_api import (
    API_KEY,
    BASIC_PASSWORD,
    BASIC_USER,
    BEARER_TOKEN,
    CLIENT_ID,
    CLIENT_SECRET,
    SECRETS,
    TestAPI,
)

from .engine import call, definition, http_tool

pytestmark = pytest.mark.anyio


@pytest.fixture
async def pools() -> AsyncIterator[None]:
    yield
    await close_pools()


def settings(api: TestAPI, **more: Any) -> dict[str, Any]:
    return {"api_url": api.url, "http_timeout_seconds": 10, "http_max_retries": 2, **more}


async def failure(*args: Any, **kwargs: Any) -> str:
    """The message of a call that fails, checked to hold none of the test API's secrets."""
    with pytest.raises(ToolError) as caught:
        await call(*args, **kwargs)
    message = str(caught.value)
    for secret in (*SECRETS, *TRAVELLING):
        assert secret not in message, message
    return message


def encoded(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


# The forms secrets travel in: an API echoing a refused Authorization header shows these.
TRAVELLING = (encoded(BASIC_USER, BASIC_PASSWORD), encoded(CLIENT_ID, CLIENT_SECRET))


AUTHS = {
    "bearer": ({"kind": "bearer", "token": {"setting": "token"}}, {"token": BEARER_TOKEN}),
    "api-key-header": (
        {"kind": "api_key", "in": "header", "name": "X-API-Key", "value": {"setting": "key"}},
        {"key": API_KEY},
    ),
    "api-key-query": (
        {"kind": "api_key", "in": "query", "name": "api_key", "value": {"setting": "key"}},
        {"key": API_KEY},
    ),
    "basic": (
        {"kind": "basic", "username": {"setting": "user"}, "password": {"setting": "password"}},
        {"user": BASIC_USER, "password": BASIC_PASSWORD},
    ),
}


def oauth(api: TestAPI) -> dict[str, Any]:
    return {
        "kind": "oauth2_client_credentials",
        "token_url": {"setting": "token_url"},
        "client_id": {"setting": "client_id"},
        "client_secret": {"setting": "client_secret"},
        "scopes": ["pets:read"],
    }


def oauth_settings(api: TestAPI, **more: Any) -> dict[str, Any]:
    credentials = {
        "token_url": f"{api.url}/oauth/token",
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
    }
    return settings(api, **{**credentials, **more})


# --- parameters -----------------------------------------------------------------------------------


async def test_each_parameter_location_reaches_the_api(api: TestAPI, tmp_path: Path, pools: None) -> None:
    tool = http_tool(
        "/echo/{item}",
        "POST",
        query={"tag": "tags", "page[size]": "size", "missing": "absent"},
        headers={"X-Trace-Id": "trace", "X-Note": "note"},
        body={"fields": {"name": "name", "count": "count", "gone": "absent"}},
    )
    server = definition(tmp_path, {"echo": tool})
    arguments = {
        "item": "a/b ?#",
        "tags": ["x", "y z"],
        "size": 10,
        "absent": None,
        "trace": "t-1",
        "note": "café",
        "name": "Rex",
        "count": 2,
    }
    seen = await call(server, "echo", arguments, settings(api))
    assert seen["method"] == "POST"
    assert seen["path"] == "/echo/a%2Fb%20%3F%23"
    assert seen["query"] == [["tag", "x"], ["tag", "y z"], ["page[size]", "10"]]
    assert seen["headers"]["x-trace-id"] == "t-1"
    assert seen["headers"]["x-note"].encode("latin-1").decode() == "café"  # sent as UTF-8
    assert seen["headers"]["user-agent"] == "lynxc-test/1.0"
    assert seen["headers"]["content-type"] == "application/json"
    assert json.loads(seen["body"]) == {"name": "Rex", "count": 2}


async def test_a_whole_body_parameter_and_a_get_without_one(
    api: TestAPI, tmp_path: Path, pools: None
) -> None:
    tools = {
        "put": http_tool("/echo/put", "PUT", body={"param": "payload"}),
        "get": http_tool("/echo/get"),
    }
    server = definition(tmp_path, tools)
    seen = await call(server, "put", {"payload": [1, {"a": None}]}, settings(api))
    assert (seen["method"], json.loads(seen["body"])) == ("PUT", [1, {"a": None}])
    seen = await call(server, "get", {}, settings(api))
    assert seen["body"] == "" and "content-type" not in seen["headers"]
    assert seen["headers"]["accept"] == "application/json"


async def test_path_traversal_stays_in_its_segment_or_is_refused(
    api: TestAPI, tmp_path: Path, pools: None
) -> None:
    server = definition(tmp_path, {"echo": http_tool("/echo/{item}/end")})
    for value, path in [
        ("../x", "/echo/..%2Fx/end"),
        ("%2e%2e", "/echo/%252e%252e/end"),
        ("...", "/echo/.../end"),
    ]:
        assert (await call(server, "echo", {"item": value}, settings(api)))["path"] == path
    for value in ("..", ".", ""):
        assert "cannot be a path segment" in await failure(server, "echo", {"item": value}, settings(api))


async def test_header_injection_is_refused_before_anything_is_sent(
    api: TestAPI, tmp_path: Path, pools: None
) -> None:
    server = definition(tmp_path, {"echo": http_tool("/echo/x", headers={"X-Trace-Id": "trace"})})
    message = await failure(server, "echo", {"trace": "a\r\nX-Admin: yes"}, settings(api))
    assert message.startswith("trace: a header value cannot hold a line break")


# --- results --------------------------------------------------------------------------------------


async def test_result_pointer_and_wrap(api: TestAPI, tmp_path: Path, pools: None) -> None:
    tools = {
        "pet": http_tool("/pets/{petId}", result="/data"),
        "name": http_tool("/pets/{petId}", result="/data/name", wrap="name"),
        "nowhere": http_tool("/pets/{petId}", result="/data/owner"),
        "whole": http_tool("/pets/{petId}"),
    }
    server = definition(tmp_path, tools)
    assert await call(server, "pet", {"petId": 7}, settings(api)) == {"id": 7, "name": "Rex", "tag": "dog"}
    assert await call(server, "name", {"petId": 8}, settings(api)) == {"name": "Tom"}
    assert (await call(server, "whole", {"petId": 7}, settings(api)))["meta"] == {"served": "pets"}
    message = await failure(server, "nowhere", {"petId": 7}, settings(api))
    assert message == "GET /pets/7 answered JSON without the value at /data/owner (the tool's result pointer)"


async def test_a_broken_promise_is_left_to_the_hosts_output_check(
    api: TestAPI, tmp_path: Path, pools: None
) -> None:
    """The engine returns what the API answered; the host's validator (the one it runs on every
    result) names the path that breaks the output schema."""
    server = definition(tmp_path, {"broken": http_tool("/broken-promise")})
    result = await call(server, "broken", {}, settings(api))
    schema = {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
    problem = OutputValidator(schema).problem(result)
    assert problem is not None and problem.startswith("id")


async def test_text_and_non_json_answers(api: TestAPI, tmp_path: Path, pools: None) -> None:
    tools = {"text": http_tool("/text", response="text"), "html": http_tool("/not-json")}
    server = definition(tmp_path, tools)
    assert await call(server, "text", {}, settings(api)) == {
        "text": "plain words, é",
        "content_type": "text/plain; charset=utf-8",
    }
    message = await failure(server, "html", {}, settings(api))
    assert (
        message
        == "GET /not-json answered a body that is not JSON (application/json): <html><p>Oops</p></html>"
    )


async def test_4xx_and_5xx_are_errors_with_a_bounded_excerpt(
    api: TestAPI, tmp_path: Path, pools: None
) -> None:
    auth, secrets = AUTHS["bearer"]
    tools = {"pet": http_tool("/pets/{petId}"), "status": http_tool("/status/{code}")}
    server = definition(tmp_path, tools, auth)
    message = await failure(server, "pet", {"petId": 99}, settings(api, **secrets))
    assert message == 'GET /pets/99 answered 404 Not Found: {"error":"no such pet"}'
    message = await failure(server, "status", {"code": 500}, settings(api, **secrets))
    head = "GET /status/500 answered 500 Internal Server Error: "
    assert message.startswith(head + "status 500: the server broke; it saw Bearer ***")
    assert len(message) == len(head) + 300 and message.endswith("x…")  # a 300-character excerpt


# --- credentials ----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(AUTHS))
async def test_each_static_credential_kind(api: TestAPI, tmp_path: Path, pools: None, kind: str) -> None:
    auth, secrets = AUTHS[kind]
    server = definition(tmp_path, {"check": http_tool(f"/auth/{kind}")}, auth)
    assert await call(server, "check", {}, settings(api, **secrets)) == {"ok": True, "kind": kind}
    # A wrong secret: the API quotes it back in its 401 body, and the message masks it.
    wrong = {name: value + "-wrong" for name, value in secrets.items()}
    message = await failure(server, "check", {}, settings(api, **wrong))
    assert message.startswith(f"GET /auth/{kind} answered 401 Unauthorized: refused credential")
    for value in wrong.values():
        assert value not in message or value == BASIC_USER + "-wrong"
    if kind == "basic":
        assert encoded(wrong["user"], wrong["password"]) not in message
        assert message.endswith("refused credential 'Basic ***'")
    # A secret that is not set names its setting.
    name = next(iter(secrets))
    message = await failure(server, "check", {}, settings(api, **{**secrets, name: None}))
    assert message.endswith(f"set the setting {name!r}")


async def test_oauth2_token_is_cached_and_fetched_again_once_on_401(
    api: TestAPI, tmp_path: Path, pools: None
) -> None:
    server = definition(tmp_path, {"check": http_tool("/auth/oauth")}, oauth(api))
    for _ in range(3):
        assert await call(server, "check", {}, oauth_settings(api)) == {"ok": True, "kind": "oauth"}
    assert api.issued == ["access-0"] or len(api.issued) == 1
    api.revoke_tokens()  # the API now refuses the cached token: one new token, the call retried once
    assert await call(server, "check", {}, oauth_settings(api)) == {"ok": True, "kind": "oauth"}
    assert len(api.issued) == 2
    assert pool_for(server).tokens.fetches == 2


async def test_concurrent_calls_share_one_token_fetch(api: TestAPI, tmp_path: Path, pools: None) -> None:
    server = definition(tmp_path, {"check": http_tool("/auth/oauth")}, oauth(api))
    answers: list[Any] = []

    async def one() -> None:
        answers.append(await call(server, "check", {}, oauth_settings(api)))

    async with anyio.create_task_group() as group:
        for _ in range(5):
            group.start_soon(one)
    assert answers == [{"ok": True, "kind": "oauth"}] * 5 and len(api.issued) == 1


async def test_oauth2_token_expiry_and_endpoint_failures(api: TestAPI, tmp_path: Path, pools: None) -> None:
    api.token_lifetime = 30  # within the 30 s margin: expired as soon as it arrives
    server = definition(tmp_path, {"check": http_tool("/auth/oauth")}, oauth(api))
    for _ in range(2):
        await call(server, "check", {}, oauth_settings(api))
    assert len(api.issued) == 2
    # A refused client secret: a tool error quoting the endpoint's answer, the secret masked.
    other = definition(tmp_path / "other", {"check": http_tool("/auth/oauth")}, oauth(api))
    message = await failure(other, "check", {}, oauth_settings(api, client_secret=CLIENT_SECRET + "x"))
    assert message.startswith(
        "GET /auth/oauth: the OAuth 2 token endpoint (127.0.0.1) answered 401 Unauthorized:"
    )
    assert message.endswith('{"error":"invalid_client","got":"Basic ***"}')
    assert encoded(CLIENT_ID, CLIENT_SECRET + "x") not in message
    message = await failure(other, "check", {}, oauth_settings(api, client_secret=None))
    assert message == "GET /auth/oauth needs an OAuth 2 client secret: set the setting 'client_secret'"


async def test_a_revoked_token_refused_again_is_the_401(api: TestAPI, tmp_path: Path, pools: None) -> None:
    server = definition(tmp_path, {"check": http_tool("/auth/bearer")}, oauth(api))  # never accepts a token
    message = await failure(server, "check", {}, oauth_settings(api))
    assert message.startswith("GET /auth/bearer answered 401 Unauthorized: refused credential 'Bearer ***'")
    assert len(api.issued) == 2  # fetched, refused, fetched once more, refused: the answer stands


# --- limits ---------------------------------------------------------------------------------------


async def test_a_slow_api_meets_the_deadline(api: TestAPI, tmp_path: Path, pools: None) -> None:
    server = definition(tmp_path, {"slow": http_tool("/slow", query={"seconds": "seconds"})})
    started = time.monotonic()
    message = await failure(server, "slow", {"seconds": 5}, settings(api, http_timeout_seconds=0.5))
    assert time.monotonic() - started < 2
    assert message == (
        "GET /slow did not answer within 0.5 s (setting 'http_timeout_seconds', retries included)"
    )
    await wait_for(lambda: api.disconnects == ["/slow"])


async def test_a_huge_answer_meets_the_cap(api: TestAPI, tmp_path: Path, pools: None) -> None:
    server = definition(tmp_path, {"huge": http_tool("/huge", query={"bytes": "size"})})
    caps = {"max_response_bytes": 100_000}
    message = await failure(server, "huge", {"size": 2_000_000}, settings(api), caps)
    assert (
        message == "GET /huge: the response is larger than 100000 bytes (the tool's max_response_bytes cap)"
    )
    assert await call(server, "huge", {"size": 1000}, settings(api), caps) == {"filler": "x" * 1000}


# --- redirects ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["bearer", "api-key-query", "api-key-header"])
async def test_a_redirect_to_another_host_is_refused_and_sends_nothing_there(
    api: TestAPI, tmp_path: Path, pools: None, kind: str
) -> None:
    auth, secrets = AUTHS[kind]
    server = definition(tmp_path, {"away": http_tool("/redirect/away")}, auth)
    message = await failure(server, "away", {}, settings(api, **secrets))
    port = api.other_url.rsplit(":", 1)[1]
    assert message == (
        f"GET /redirect/away redirected to another host (127.0.0.1:{port}), which is not followed: "
        "credentials never leave the API's origin"
    )
    assert api.other.requests == []


async def test_same_origin_redirects_keep_credentials_and_are_bounded(
    api: TestAPI, tmp_path: Path, pools: None
) -> None:
    auth, secrets = AUTHS["api-key-query"]
    tools = {
        "same": http_tool("/redirect/same"),
        "loop": http_tool("/redirect/loop"),
        "see_other": http_tool("/redirect/see-other", "POST", body={"param": "payload"}),
    }
    server = definition(tmp_path, tools, auth)
    seen = await call(server, "same", {}, settings(api, **secrets))
    assert (seen["path"], seen["query"]) == ("/echo/landed", [["api_key", API_KEY]])
    message = await failure(server, "loop", {}, settings(api, **secrets))
    assert message == "GET /redirect/loop redirected more than 3 times"
    seen = await call(server, "see_other", {"payload": {"a": 1}}, settings(api, **secrets))
    assert (seen["method"], seen["path"], seen["body"]) == ("GET", "/echo/after", "")


# --- retries --------------------------------------------------------------------------------------


async def test_a_503_with_retry_after_is_retried_within_the_deadline(
    api: TestAPI, tmp_path: Path, pools: None
) -> None:
    tool = http_tool("/flaky/{key}", query={"retry_after": "after", "times": "times", "status": "status"})
    server = definition(tmp_path, {"flaky": tool})
    started = time.monotonic()
    assert await call(server, "flaky", {"key": "a", "after": "1"}, settings(api)) == {"hits": 2}
    assert 1 <= time.monotonic() - started < 3
    # Retry-After beyond the deadline: not waited for; the 503 is the answer, at once.
    started = time.monotonic()
    message = await failure(
        server, "flaky", {"key": "b", "after": "60"}, settings(api, http_timeout_seconds=5)
    )
    assert message == "GET /flaky/b answered 503 Service Unavailable: busy (1)"
    assert time.monotonic() - started < 1 and api.hits["b"] == 1
    # No Retry-After: backoff 0.5 s then 1 s; two retries by default, then the last answer stands.
    started = time.monotonic()
    message = await failure(server, "flaky", {"key": "c", "times": 5, "status": 429}, settings(api))
    assert message == "GET /flaky/c answered 429 Too Many Requests: busy (3)"
    assert 1.5 <= time.monotonic() - started < 3 and api.hits["c"] == 3
    # An HTTP-date Retry-After in the past: retried at once.
    past = "Wed, 21 Oct 2015 07:28:00 GMT"
    assert await call(server, "flaky", {"key": "d", "after": past}, settings(api)) == {"hits": 2}
    # A status that says nothing about later is not retried.
    message = await failure(server, "flaky", {"key": "e", "status": 500}, settings(api))
    assert message.startswith("GET /flaky/e answered 500") and api.hits["e"] == 1


async def test_post_is_never_retried_and_retries_can_be_off(
    api: TestAPI, tmp_path: Path, pools: None
) -> None:
    tools = {
        "post": http_tool("/flaky/{key}", "POST", query={"retry_after": "after"}),
        "get": http_tool("/flaky/{key}", query={"retry_after": "after"}),
    }
    server = definition(tmp_path, tools)
    message = await failure(server, "post", {"key": "p", "after": "0"}, settings(api))
    assert message == "POST /flaky/p answered 503 Service Unavailable: busy (1)" and api.hits["p"] == 1
    message = await failure(server, "get", {"key": "g", "after": "0"}, settings(api, http_max_retries=0))
    assert message.startswith("GET /flaky/g answered 503") and api.hits["g"] == 1


# --- cancellation and set-up ----------------------------------------------------------------------


async def test_cancelling_the_call_stops_the_request(api: TestAPI, tmp_path: Path, pools: None) -> None:
    server = definition(tmp_path, {"slow": http_tool("/slow", query={"seconds": "seconds"})})
    started = time.monotonic()
    with anyio.move_on_after(0.3) as scope:
        await call(server, "slow", {"seconds": 10}, settings(api))
    assert scope.cancelled_caught and time.monotonic() - started < 1
    await wait_for(lambda: api.disconnects == ["/slow"])


async def test_settings_problems_are_tool_errors(api: TestAPI, tmp_path: Path, pools: None) -> None:
    server = definition(tmp_path, {"pet": http_tool("/pets/{petId}")})
    message = await failure(server, "pet", {"petId": 7}, {})
    assert message == "the API's base URL is not set: set the setting 'api_url'"
    message = await failure(server, "pet", {"petId": 7}, {"api_url": "ftp://x"})
    assert message == "setting 'api_url' is not an absolute http:// or https:// URL"
    message = await failure(server, "other", {}, settings(api))
    assert message == "'other' is not an HTTP tool of this server's http.json (run `lynxc build`)"
    unreachable = definition(
        tmp_path / "u", {"pet": http_tool("/pets/{petId}")}, base_url={"value": "http://127.0.0.1:9"}
    )
    message = await failure(unreachable, "pet", {"petId": 7}, {})
    assert message.startswith("GET /pets/7 could not be sent to 127.0.0.1:9: ConnectError")
    auth, secrets = AUTHS["api-key-query"]  # the URL holds the key: the message names the host only
    keyed = definition(
        tmp_path / "k", {"pet": http_tool("/pets/{petId}")}, auth, base_url={"value": "http://127.0.0.1:9"}
    )
    message = await failure(keyed, "pet", {"petId": 7}, secrets)
    assert message.startswith("GET /pets/7 could not be sent to 127.0.0.1:9: ConnectError")


async def test_one_pool_per_server_definition(api: TestAPI, tmp_path: Path, pools: None) -> None:
    first = definition(tmp_path / "a", {"pet": http_tool("/pets/{petId}")})
    second = definition(tmp_path / "b", {"pet": http_tool("/pets/{petId}")})
    await call(first, "pet", {"petId": 7}, settings(api))
    assert pool_for(first) is pool_for(first)
    assert pool_for(first).client is not pool_for(second).client


async def wait_for(condition: Any, seconds: float = 3.0) -> None:
    with anyio.fail_after(seconds):
        while not condition():
            await anyio.sleep(0.02)

"""Caller authentication over HTTP, end to end (issue 27): the bundled support-desk server (SQL
over SQLite, OAuth and API keys, per-tool scopes, parameters bound to the caller's email) served
over Streamable HTTP in front of a real authorization server (Authlib, tests/fixtures/auth_server.py).

The attack table sends each hostile request to the real server and checks the answer (status,
RFC 6750 challenge) and that the tool's backend never ran: the server runs in this process so
the backend's runs can be counted (tests/fixtures/mcp_http.py). The SDK's own OAuth clients do
discovery, the authorization code grant with PKCE and client credentials, then call tools.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import secrets
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import jwt as pyjwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

from lynxc.runtime.auth.api_keys import add_key, revoke_key
from lynxc.runtime.definition import load_definition
from tests.conftest import ROOT, http_process, lynxc_command
from tests.fixtures.auth_server import REDIRECT_URI, TestAuthorizationServer, running_auth_server
from tests.fixtures.mcp_http import ServedHttp, serving_generated
from tests.runtime.auth.common import Clock
from tests.runtime.auth.test_auth_server import MemoryStorage

pytestmark = pytest.mark.anyio

DESK_DB = ROOT / "specs" / "support-desk" / "data" / "desk.sqlite"
PROTOCOL = "2025-06-18"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


# -- the server under test ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def issuer() -> Iterator[TestAuthorizationServer]:
    with running_auth_server() as server:
        yield server


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("keys") / "keys.json"
    made = {
        "staff": add_key(path, "staff", ["orders:read", "orders:admin"], {"email": "staff@example.com"}),
        "bob-key": add_key(path, "bob-key", ["orders:read"], {"email": "bob@example.com"}),
        "revoked": add_key(path, "revoked", ["orders:read"], {"email": "chen@example.com"}),
        "no-email": add_key(path, "no-email", ["orders:read"], {}),
        "number-email": add_key(path, "number-email", ["orders:read"], {"email": 42}),
    }
    revoke_key(path, "revoked")
    return path, made


def desk_settings(issuer: TestAuthorizationServer, keys_file: Path):  # type: ignore[no-untyped-def]
    return lambda base: {
        "oauth_issuer": issuer.issuer,
        "oauth_resource": f"{base}/mcp",
        "api_keys_file": str(keys_file),
    }


@pytest.fixture(scope="module")
def desk(
    issuer: TestAuthorizationServer,
    keys: tuple[Path, dict[str, str]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ServedHttp]:
    audit = tmp_path_factory.mktemp("audit") / "audit.jsonl"
    with serving_generated("support-desk", desk_settings(issuer, keys[0]), audit_file=audit) as served:
        yield served


def token(issuer: TestAuthorizationServer, desk: ServedHttp, **overrides: Any) -> str:
    """A valid access token for the desk (alice, orders:read) with `overrides` applied."""
    return issuer.sign(issuer.claims(desk.url, **{"scope": "orders:read", **overrides}))


# -- raw HTTP, to see statuses and headers -----------------------------------------------------


def post(
    desk: ServedHttp,
    message: dict[str, Any],
    credential: str | None = None,
    session: str | None = None,
    params: dict[str, str] | None = None,
) -> httpx.Response:
    headers = dict(ACCEPT)
    if credential is not None:
        headers["authorization"] = f"Bearer {credential}"
    if session is not None:
        headers |= {"mcp-session-id": session, "mcp-protocol-version": PROTOCOL}
    return httpx.post(desk.url, json=message, headers=headers, params=params, timeout=30)


def open_session(desk: ServedHttp, credential: str) -> str:
    answer = post(
        desk,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        credential,
    )
    assert answer.status_code == 200, answer.text
    session = answer.headers["mcp-session-id"]
    assert (
        post(desk, {"jsonrpc": "2.0", "method": "notifications/initialized"}, credential, session).status_code
        == 202
    )
    return session


def call_message(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def result_of(answer: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC result of a tools/call answered as JSON or as a one-event SSE stream."""
    assert answer.status_code == 200, answer.text
    if answer.headers["content-type"].startswith("application/json"):
        return answer.json()["result"]
    data = [line[5:].strip() for line in answer.text.splitlines() if line.startswith("data:")]
    return json.loads(data[-1])["result"]


def challenge(answer: httpx.Response) -> dict[str, str]:
    """The parameters of a `WWW-Authenticate: Bearer k="v", ...` header."""
    scheme, _, rest = answer.headers["www-authenticate"].partition(" ")
    assert scheme == "Bearer"
    found = {}
    for part in rest.split('", '):
        key, _, value = part.partition("=")
        found[key.strip()] = value.strip().strip('"')
    return found


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def rsa_public_pem(issuer: TestAuthorizationServer) -> tuple[str, bytes]:
    jwk = next(key for key in issuer.keyring.public_jwks()["keys"] if key["kty"] == "RSA")
    public = pyjwt.algorithms.RSAAlgorithm.from_jwk(json.dumps(jwk))
    return jwk["kid"], public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def hs256_with_public_key(issuer: TestAuthorizationServer, desk: ServedHttp) -> str:
    """Algorithm confusion: HS256 keyed with the issuer's public RSA key, which anyone can read."""
    kid, pem = rsa_public_pem(issuer)
    header = b64(json.dumps({"alg": "HS256", "kid": kid, "typ": "at+jwt"}).encode())
    payload = b64(json.dumps(issuer.claims(desk.url, scope="orders:read orders:admin")).encode())
    signing_input = f"{header}.{payload}"
    signature = hmac.new(pem, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(signature)}"


def unsigned(issuer: TestAuthorizationServer, desk: ServedHttp) -> str:
    header = b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    return f"{header}.{b64(json.dumps(issuer.claims(desk.url, scope='orders:admin')).encode())}."


def foreign_key_token(issuer: TestAuthorizationServer, desk: ServedHttp, kid: str) -> str:
    """Well-formed and signed, by a key the issuer never published."""
    return pyjwt.encode(
        issuer.claims(desk.url, scope="orders:read"), foreign_key(), algorithm="RS256", headers={"kid": kid}
    )


@functools.cache
def foreign_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def tampered(issuer: TestAuthorizationServer, desk: ServedHttp) -> str:
    header, _, signature = token(issuer, desk).split(".")
    raised = b64(json.dumps(issuer.claims(desk.url, scope="orders:read orders:admin")).encode())
    return f"{header}.{raised}.{signature}"


# Each attack: (name, how to make the credential, expected status, expected `error` or None).
ATTACKS = [
    ("no token", lambda i, d, k: None, 401, None),
    ("expired", lambda i, d, k: token(i, d, exp=int(time.time()) - 3600), 401, "invalid_token"),
    ("nbf in the future", lambda i, d, k: token(i, d, nbf=int(time.time()) + 3600), 401, "invalid_token"),
    (
        "wrong issuer",
        lambda i, d, k: token(i, d, iss="http://127.0.0.1:1/realms/other"),
        401,
        "invalid_token",
    ),
    (
        "token for another resource",
        lambda i, d, k: token(i, d, aud="http://127.0.0.1:1/mcp"),
        401,
        "invalid_token",
    ),
    ("alg none", lambda i, d, k: unsigned(i, d), 401, "invalid_token"),
    ("HS256 signed with the public key", lambda i, d, k: hs256_with_public_key(i, d), 401, "invalid_token"),
    ("unknown kid", lambda i, d, k: foreign_key_token(i, d, "not-published"), 401, "invalid_token"),
    (
        "known kid, foreign key",
        lambda i, d, k: foreign_key_token(i, d, i.keyring.signer_kid),
        401,
        "invalid_token",
    ),
    ("tampered payload", lambda i, d, k: tampered(i, d), 401, "invalid_token"),
    ("9 KB token", lambda i, d, k: token(i, d, padding="x" * 9000), 401, "invalid_token"),
    ("revoked API key", lambda i, d, k: k["revoked"], 401, "invalid_token"),
    ("unknown API key", lambda i, d, k: "lynxc_" + secrets.token_urlsafe(32), 401, "invalid_token"),
    ("garbage", lambda i, d, k: "not a token at all", 401, "invalid_token"),
]


@pytest.mark.parametrize(("name", "make", "status", "error"), ATTACKS, ids=[a[0] for a in ATTACKS])
def test_attack_is_refused_before_anything_runs(
    issuer: TestAuthorizationServer,
    desk: ServedHttp,
    keys: tuple[Path, dict[str, str]],
    name: str,
    make: Any,
    status: int,
    error: str | None,
) -> None:
    session = open_session(desk, token(issuer, desk, scope="orders:read orders:admin"))
    before = sum(desk.calls.values())
    answer = post(
        desk,
        call_message("customer_orders", {"email": "bob@example.com"}),
        make(issuer, desk, keys[1]),
        session,
    )
    assert answer.status_code == status, (name, answer.status_code, answer.text)
    found = challenge(answer)
    assert found["resource_metadata"] == f"{desk.base}/.well-known/oauth-protected-resource/mcp"
    assert found.get("error") == error, found
    assert "bob@example.com" not in answer.text and "rows" not in answer.text
    assert sum(desk.calls.values()) == before, f"{name}: the backend ran"


def test_a_100_kb_token_is_refused_before_anything_runs(
    issuer: TestAuthorizationServer, desk: ServedHttp
) -> None:
    before = sum(desk.calls.values())
    try:
        answer = post(desk, call_message("my_orders", {}), "a" * 100_000)
        # uvicorn refuses a head that large itself; if it ever lets one through, lynxc must.
        assert answer.status_code in (400, 401, 431), answer.status_code
    except httpx.HTTPError:
        pass  # the connection closed on the oversized head: refused as well
    assert sum(desk.calls.values()) == before


def test_a_token_in_the_query_string_is_refused(issuer: TestAuthorizationServer, desk: ServedHttp) -> None:
    valid = token(issuer, desk)
    before = sum(desk.calls.values())
    for params in ({"access_token": valid}, {"x": "lynxc_" + secrets.token_urlsafe(32)}):
        answer = post(desk, call_message("my_orders", {}), None, params=params)
        assert answer.status_code == 400, answer.text
        assert (
            answer.json()["error"] == "invalid_request"
            and "query string" in answer.json()["error_description"]
        )
    # Even beside a valid header: the credential in the URL has leaked into logs already.
    answer = post(desk, call_message("my_orders", {}), valid, params={"access_token": valid})
    assert answer.status_code == 400
    assert sum(desk.calls.values()) == before


def test_a_missing_scope_is_403_naming_the_scope(issuer: TestAuthorizationServer, desk: ServedHttp) -> None:
    credential = token(issuer, desk)  # orders:read only
    session = open_session(desk, credential)
    before = sum(desk.calls.values())
    answer = post(desk, call_message("customer_orders", {"email": "bob@example.com"}), credential, session)
    assert answer.status_code == 403
    found = challenge(answer)
    assert found["error"] == "insufficient_scope" and found["scope"] == "orders:admin"
    assert answer.json()["error"] == "insufficient_scope"
    assert sum(desk.calls.values()) == before
    # The same caller may call what its scopes allow.
    assert not result_of(post(desk, call_message("my_orders", {}), credential, session))["isError"]


def test_an_api_key_without_the_scope_is_403_too(desk: ServedHttp, keys: tuple[Path, dict[str, str]]) -> None:
    credential = keys[1]["bob-key"]
    session = open_session(desk, credential)
    answer = post(desk, call_message("customer_orders", {"email": "alice@example.com"}), credential, session)
    assert answer.status_code == 403 and challenge(answer)["scope"] == "orders:admin"


def test_an_identity_bound_parameter_sent_by_the_caller_is_refused(
    issuer: TestAuthorizationServer, desk: ServedHttp
) -> None:
    credential = token(issuer, desk)
    session = open_session(desk, credential)
    before = sum(desk.calls.values())
    for value in ("bob@example.com", "alice@example.com"):
        result = result_of(
            post(desk, call_message("my_orders", {"customer_email": value}), credential, session)
        )
        assert result["isError"]
        assert (
            "'customer_email': comes from the caller's verified identity and cannot be sent"
            in result["content"][0]["text"]
        )
    assert sum(desk.calls.values()) == before


@pytest.mark.parametrize(
    ("key", "problem"),
    [("no-email", "the caller has no 'email' claim"), ("number-email", "claim is an integer")],
)
def test_a_missing_or_mistyped_claim_refuses_the_call(
    desk: ServedHttp, keys: tuple[Path, dict[str, str]], key: str, problem: str
) -> None:
    credential = keys[1][key]
    session = open_session(desk, credential)
    before = sum(desk.calls.values())
    result = result_of(post(desk, call_message("my_orders", {}), credential, session))
    assert result["isError"] and problem in result["content"][0]["text"]
    assert sum(desk.calls.values()) == before


def test_another_callers_session_is_not_found(issuer: TestAuthorizationServer, desk: ServedHttp) -> None:
    alice = token(issuer, desk)
    session = open_session(desk, alice)
    bob = token(issuer, desk, sub="bob", email="bob@example.com")
    before = sum(desk.calls.values())
    assert post(desk, call_message("my_orders", {}), bob, session).status_code == 404
    assert sum(desk.calls.values()) == before
    assert not result_of(post(desk, call_message("my_orders", {}), alice, session))["isError"]


def test_unauthenticated_initialize_gets_the_metadata_to_discover_the_issuer(
    issuer: TestAuthorizationServer, desk: ServedHttp
) -> None:
    answer = httpx.post(desk.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=ACCEPT)
    assert answer.status_code == 401
    metadata_url = challenge(answer)["resource_metadata"]
    document = httpx.get(metadata_url).json()
    assert document["resource"] == desk.url
    assert document["authorization_servers"] == [issuer.issuer]  # exactly, no added slash
    assert document["scopes_supported"] == ["orders:read", "orders:admin"]
    assert document["bearer_methods_supported"] == ["header"]
    assert httpx.get(f"{desk.base}/.well-known/oauth-protected-resource").json() == document


# -- two callers, their own rows ---------------------------------------------------------------


def own_orders(email: str) -> list[int]:
    with sqlite3.connect(f"file:{DESK_DB}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.email = ? "
            "ORDER BY o.placed DESC, o.id DESC",
            (email,),
        ).fetchall()
    return [row[0] for row in rows]


def bearer_client(url: str, credential: str) -> Client:
    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {credential}"}, timeout=30)
    return Client(streamable_http_client(url, http_client=http))


async def test_two_callers_each_see_only_their_own_orders(
    issuer: TestAuthorizationServer, desk: ServedHttp, keys: tuple[Path, dict[str, str]]
) -> None:
    alice_ids, bob_ids = own_orders("alice@example.com"), own_orders("bob@example.com")
    assert alice_ids and bob_ids and not set(alice_ids) & set(bob_ids)
    seen = {}
    for who, credential in (("alice", token(issuer, desk)), ("bob", keys[1]["bob-key"])):
        async with bearer_client(desk.url, credential) as client:
            listed = await client.call_tool("my_orders", {})
            assert not listed.is_error, listed.content
            seen[who] = [row["id"] for row in listed.structured_content["rows"]]
            # Someone else's order reads exactly like one that does not exist.
            other = (bob_ids if who == "alice" else alice_ids)[0]
            foreign = await client.call_tool("order_details", {"order_id": other})
            missing = await client.call_tool("order_details", {"order_id": 999_999})
            assert foreign.is_error and missing.is_error
            assert foreign.content[0].text.replace(str(other), "N") == missing.content[0].text.replace(
                "999999", "N"
            )
            mine = await client.call_tool("order_details", {"order_id": seen[who][0]})
            assert not mine.is_error and mine.structured_content["id"] == seen[who][0]
    assert seen == {"alice": alice_ids, "bob": bob_ids}


async def test_tools_list_is_the_same_for_every_caller_and_says_the_scopes(
    issuer: TestAuthorizationServer, desk: ServedHttp, keys: tuple[Path, dict[str, str]]
) -> None:
    """Not hidden: a client sees the whole contract, and which scope to ask for (step-up)."""
    listings = []
    for credential in (token(issuer, desk), keys[1]["staff"]):
        async with bearer_client(desk.url, credential) as client:
            listings.append(
                (await client.list_tools()).model_dump(mode="json", by_alias=True, exclude_none=True)
            )
    assert listings[0] == listings[1]
    by_name = {tool["name"]: tool for tool in listings[0]["tools"]}
    assert by_name["customer_orders"]["_meta"]["lynxc/auth"] == {"scopes": ["orders:admin"]}
    assert "customer_email" not in by_name["my_orders"]["inputSchema"]["properties"]


# -- the SDK's own OAuth clients, end to end --------------------------------------------------


async def test_sdk_client_authorization_code_with_pkce_then_calls(
    issuer: TestAuthorizationServer, desk: ServedHttp
) -> None:
    """Discovery from the 401 (RFC 9728 then RFC 8414), the authorization code grant with PKCE
    for bob (the test issuer consents for him), the token for this resource, then calls."""
    storage = MemoryStorage()
    storage.client = OAuthClientInformationFull(
        client_id="app",
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code"],
        response_types=["code"],
    )
    redirected: dict[str, str] = {}

    async def redirect_handler(url: str) -> None:
        async with httpx.AsyncClient() as http:
            answer = await http.get(f"{url}&user=bob")  # the test issuer consents for bob
        assert answer.status_code == 302, answer.text
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        redirected.update(code=query["code"][0], state=query["state"][0])

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=redirected["code"], state=redirected["state"])

    provider = OAuthClientProvider(
        server_url=desk.url,
        client_metadata=OAuthClientMetadata(redirect_uris=[REDIRECT_URI], scope="orders:read"),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        Client(streamable_http_client(desk.url, http_client=http)) as client,
    ):
        listed = await client.call_tool("my_orders", {})
        assert not listed.is_error, listed.content
        assert [row["id"] for row in listed.structured_content["rows"]] == own_orders("bob@example.com")
    assert storage.tokens is not None
    claims = pyjwt.decode(storage.tokens.access_token, options={"verify_signature": False})
    assert claims["aud"] == desk.url and claims["sub"] == "bob"  # RFC 8707: for this resource only


async def test_sdk_client_credentials_machine_caller(
    issuer: TestAuthorizationServer, desk: ServedHttp
) -> None:
    """A machine client (no user, so no email claim) with orders:admin: the staff tool works,
    the per-customer tool refuses it for want of the claim."""
    provider = ClientCredentialsOAuthProvider(
        server_url=desk.url,
        storage=MemoryStorage(),
        client_id="machine",
        client_secret="machine-secret",
        scope="orders:read orders:admin",
        issuer=issuer.issuer,
    )
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        Client(streamable_http_client(desk.url, http_client=http)) as client,
    ):
        staff = await client.call_tool("customer_orders", {"email": "bob@example.com"})
        assert not staff.is_error, staff.content
        assert [row["id"] for row in staff.structured_content["rows"]] == own_orders("bob@example.com")
        mine = await client.call_tool("my_orders", {})
        assert mine.is_error and "no 'email' claim" in mine.content[0].text


# -- the issuer's keys: rotation, and a flood of unknown key ids ------------------------------


def test_key_rotation_and_a_kid_flood(keys: tuple[Path, dict[str, str]]) -> None:
    """On its own issuer and server: the rate limit on key fetches is per verifier. The
    verifier's clock is moved by hand past its refetch interval (30 s) instead of waiting."""
    with (
        running_auth_server() as fresh,
        serving_generated("support-desk", desk_settings(fresh, keys[0])) as served,
    ):
        assert served.authenticator is not None and served.authenticator.jwt is not None
        clock = Clock()
        served.authenticator.jwt._clock = clock
        first = token(fresh, served)
        session = open_session(served, first)
        assert fresh.jwks_fetches == 1
        # The issuer rotates: a token signed by the new key names a kid the server has not
        # seen, and (past the interval since the last fetch) it reads the keys again.
        fresh.keyring.rotate()
        rotated = token(fresh, served)
        clock.now += 31
        assert not result_of(post(served, call_message("my_orders", {}), rotated, session))["isError"]
        assert fresh.jwks_fetches == 2
        # A flood of made-up kids: refused, and the keys are not fetched once per token.
        before = sum(served.calls.values())
        for index in range(20):
            forged = foreign_key_token(fresh, served, f"forged-{index}")
            assert post(served, call_message("my_orders", {}), forged, session).status_code == 401
        assert fresh.jwks_fetches == 2  # within the interval of the last fetch: none
        clock.now += 31
        for index in range(20):
            forged = foreign_key_token(fresh, served, f"later-{index}")
            assert post(served, call_message("my_orders", {}), forged, session).status_code == 401
        assert fresh.jwks_fetches == 3  # one per interval, however many tokens
        assert sum(served.calls.values()) == before
        # The old key still verifies until the issuer withdraws it.
        assert not result_of(post(served, call_message("my_orders", {}), first, session))["isError"]


# -- the audit trail ---------------------------------------------------------------------------


def test_audit_lines_say_who_did_what_and_never_the_secrets(
    issuer: TestAuthorizationServer, desk: ServedHttp, keys: tuple[Path, dict[str, str]]
) -> None:
    alice = token(issuer, desk)
    session = open_session(desk, alice)
    result_of(post(desk, call_message("my_orders", {"status": "delivered"}), alice, session))
    assert (
        post(desk, call_message("customer_orders", {"email": "bob@example.com"}), alice, session).status_code
        == 403
    )
    staff = keys[1]["staff"]
    staff_session = open_session(desk, staff)
    result_of(
        post(desk, call_message("customer_orders", {"email": "dara@example.com"}), staff, staff_session)
    )
    assert post(desk, call_message("my_orders", {}), None).status_code == 401
    assert desk.audit_file is not None
    text = desk.audit_file.read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    for line in lines:
        assert set(line) >= {
            "time",
            "server",
            "event",
            "tool",
            "caller",
            "outcome",
            "duration_ms",
            "result_bytes",
        }
    calls = [line for line in lines if line["event"] == "tools/call"]
    assert any(
        line["tool"] == "my_orders"
        and line["caller"] == "alice"
        and line["auth"] == "oauth"
        and line["outcome"] == "ok"
        and line["result_bytes"] > 0
        for line in calls
    )
    assert any(
        line["tool"] == "customer_orders"
        and line["caller"] == "staff"
        and line["auth"] == "api_key"
        and line["outcome"] == "ok"
        for line in calls
    )
    refused = [line for line in lines if line["event"] == "http"]
    assert any(
        line["status"] == 403 and line["tool"] == "customer_orders" and line["caller"] == "alice"
        for line in refused
    )
    assert any(line["status"] == 401 and line["caller"] is None for line in refused)
    # Never arguments, tokens or keys.
    for secret in (alice, staff, "dara@example.com", "delivered", alice.split(".")[1]):
        assert secret not in text


# -- `lynxc serve` itself ----------------------------------------------------------------------


def test_lynxc_serve_authenticates_and_audits_on_stderr(
    issuer: TestAuthorizationServer, keys: tuple[Path, dict[str, str]]
) -> None:
    """The command line wires the same: an API key is accepted, no credential is 401, and the
    audit lines go to stderr by default for a server that authenticates its callers."""
    settings = {
        "oauth_issuer": issuer.issuer,
        "oauth_resource": "http://127.0.0.1/mcp",
        "api_keys_file": str(keys[0]),
    }
    with http_process("support-desk", settings) as (port, process):
        url = f"http://127.0.0.1:{port}/mcp"
        message = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert httpx.post(url, json=message, headers=ACCEPT).status_code == 401
        served = SimpleNamespace(url=url)  # what post() and open_session() read
        session = open_session(served, keys[1]["staff"])  # type: ignore[arg-type]
        answer = post(
            served, call_message("customer_orders", {"email": "bob@example.com"}), keys[1]["staff"], session
        )  # type: ignore[arg-type]
        assert not result_of(answer)["isError"]
    assert process.stderr is not None
    lines = [json.loads(line) for line in process.stderr.read().splitlines() if line.startswith("{")]
    assert any(
        line["tool"] == "customer_orders" and line["caller"] == "staff" and line["outcome"] == "ok"
        for line in lines
    )
    assert any(line["event"] == "http" and line["status"] == 401 for line in lines)


def test_lynxc_serve_refuses_to_start_without_the_issuer(keys: tuple[Path, dict[str, str]]) -> None:
    import subprocess

    command = lynxc_command("serve", "support-desk", "--transport", "http", "--port", "1")
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 2
    assert "'oauth_issuer', which is not set" in done.stderr and "Traceback" not in done.stderr


# -- opaque tokens, through the issuer's introspection endpoint --------------------------------


def opaque_token(issuer: TestAuthorizationServer, resource: str, scope: str) -> str:
    answer = httpx.post(
        f"{issuer.issuer}/token",
        data={"grant_type": "client_credentials", "scope": scope, "resource": resource},
        auth=("opaque-machine", "opaque-secret"),
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["access_token"]


def test_opaque_tokens_are_checked_at_the_issuer(
    issuer: TestAuthorizationServer, keys: tuple[Path, dict[str, str]]
) -> None:
    """The same server declaring `introspection` (a variant of its generated definition, with
    the two settings the compiler would imply): an opaque token is asked about at the issuer,
    one for another resource or revoked is refused, and the answer is cached briefly."""
    definition = load_definition(ROOT / "generated" / "support-desk")
    assert definition.auth is not None
    optional = {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    variant = replace(
        definition,
        auth={
            **definition.auth,
            "oauth": {
                **definition.auth["oauth"],
                "introspection": {"client_id_setting": "rs_id", "client_secret_setting": "rs_secret"},
            },
        },
        settings_schema={**definition.settings_schema, "rs_id": optional, "rs_secret": optional},
    )

    def settings(base: str) -> dict[str, Any]:
        return {**desk_settings(issuer, keys[0])(base), "rs_id": "resource-server", "rs_secret": "rs-secret"}

    with serving_generated("support-desk", settings, definition=variant) as served:
        staff = opaque_token(issuer, served.url, "orders:read orders:admin")
        assert staff.count(".") != 2  # opaque, not a JWT
        session = open_session(served, staff)
        asked = issuer.introspections
        listed = result_of(
            post(served, call_message("customer_orders", {"email": "bob@example.com"}), staff, session)
        )
        assert not listed["isError"]
        assert issuer.introspections == asked  # cached since the session opened
        elsewhere = opaque_token(issuer, "http://127.0.0.1:1/mcp", "orders:read")
        answer = post(
            served, call_message("customer_orders", {"email": "bob@example.com"}), elsewhere, session
        )
        assert answer.status_code == 401 and challenge(answer)["error"] == "invalid_token"
        revoked = opaque_token(issuer, served.url, "orders:read orders:admin")
        assert (
            httpx.post(
                f"{issuer.issuer}/revoke", data={"token": revoked}, auth=("opaque-machine", "opaque-secret")
            ).status_code
            == 200
        )
        before = sum(served.calls.values())
        assert (
            post(
                served, call_message("customer_orders", {"email": "bob@example.com"}), revoked, session
            ).status_code
            == 401
        )
        assert sum(served.calls.values()) == before

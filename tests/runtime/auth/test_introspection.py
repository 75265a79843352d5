"""Opaque tokens through RFC 7662 introspection at the real test authorization server."""

from __future__ import annotations

import httpx
import pytest

from lynxc.runtime.auth.introspection import IntrospectionSettings, IntrospectionVerifier
from lynxc.runtime.auth.refusals import AuthRefused
from tests.fixtures.auth_server import TestAuthorizationServer
from tests.runtime.auth.common import RESOURCE, Clock

pytestmark = pytest.mark.anyio


def verifier(
    server: TestAuthorizationServer, clock: Clock | None = None, secret: str = "rs-secret"
) -> IntrospectionVerifier:
    settings = IntrospectionSettings(
        issuer=server.issuer, resource=RESOURCE, client_id="resource-server", client_secret=secret
    )
    return IntrospectionVerifier(settings, clock=clock or Clock())


def opaque(
    server: TestAuthorizationServer, resource: str | None = RESOURCE, scope: str = "tools:read"
) -> str:
    data = {"grant_type": "client_credentials", "scope": scope}
    if resource is not None:
        data["resource"] = resource
    answer = httpx.post(f"{server.issuer}/token", data=data, auth=("opaque-machine", "opaque-secret"))
    assert answer.status_code == 200, answer.text
    token = answer.json()["access_token"]
    assert token.count(".") == 0  # opaque, not a JWT
    return token


def revoke(server: TestAuthorizationServer, token: str) -> None:
    answer = httpx.post(
        f"{server.issuer}/revoke", data={"token": token}, auth=("opaque-machine", "opaque-secret")
    )
    assert answer.status_code == 200, answer.text


async def refusal(check: IntrospectionVerifier, token: str) -> AuthRefused:
    with pytest.raises(AuthRefused) as refused:
        await check.authenticate(token)
    assert token == "" or token not in refused.value.reason
    return refused.value


async def test_an_active_token_verifies_and_is_cached(auth_server: TestAuthorizationServer) -> None:
    check = verifier(auth_server)
    token = opaque(auth_server, scope="tools:read tools:write")
    before = auth_server.introspections
    caller = await check.authenticate(token)
    assert caller.method == "oauth" and caller.subject == "opaque-machine"
    assert caller.scopes == {"tools:read", "tools:write"} and caller.claims["aud"] == RESOURCE
    access = await check.verify_token(token)
    assert access is not None and access.resource == RESOURCE
    assert auth_server.introspections == before + 1  # the second check came from the cache


async def test_an_expired_token_is_refused(auth_server: TestAuthorizationServer) -> None:
    token = opaque(auth_server)
    auth_server.expire(token)
    assert "not active" in (await refusal(verifier(auth_server), token)).reason


async def test_a_revoked_token_is_refused(auth_server: TestAuthorizationServer) -> None:
    token = opaque(auth_server)
    revoke(auth_server, token)
    refused = await refusal(verifier(auth_server), token)
    assert "not active" in refused.reason and refused.status == 401
    assert await verifier(auth_server).verify_token(token) is None


async def test_a_revocation_takes_effect_when_the_cache_entry_ends(
    auth_server: TestAuthorizationServer,
) -> None:
    clock = Clock()
    check = verifier(auth_server, clock)
    token = opaque(auth_server)
    await check.authenticate(token)
    revoke(auth_server, token)
    await check.authenticate(token)  # still cached: the documented price of the cache
    clock.now += 31
    assert "not active" in (await refusal(check, token)).reason


async def test_an_unknown_token_is_refused(auth_server: TestAuthorizationServer) -> None:
    assert "not active" in (await refusal(verifier(auth_server), "made-up-token")).reason


async def test_a_token_for_another_resource_is_refused(auth_server: TestAuthorizationServer) -> None:
    token = opaque(auth_server, resource="http://127.0.0.1:8001/other")
    assert "another resource" in (await refusal(verifier(auth_server), token)).reason
    token = opaque(auth_server, resource=None)  # the issuer's default audience: the client
    assert "another resource" in (await refusal(verifier(auth_server), token)).reason


@pytest.mark.parametrize(
    ("token", "reason"),
    [("", "no token"), ("x" * 9000, "longer than"), ("has spaces", "characters"), ("é", "characters")],
)
async def test_malformed_tokens_are_refused_without_asking(
    auth_server: TestAuthorizationServer, token: str, reason: str
) -> None:
    before = auth_server.introspections
    assert reason in (await refusal(verifier(auth_server), token)).reason
    assert auth_server.introspections == before


async def test_wrong_resource_server_credentials_are_the_servers_problem(
    auth_server: TestAuthorizationServer,
) -> None:
    refused = await refusal(verifier(auth_server, secret="wrong"), opaque(auth_server))
    assert refused.status == 503 and "answered HTTP 401" in refused.reason


async def test_an_answer_from_another_issuer_is_refused(auth_server: TestAuthorizationServer) -> None:
    """The endpoint named directly, for an issuer it does not speak for: its `iss` gives it away."""
    settings = IntrospectionSettings(
        issuer="https://auth.example.com",
        resource=RESOURCE,
        client_id="resource-server",
        client_secret="rs-secret",
        endpoint=f"{auth_server.issuer}/introspect",
    )
    refused = await refusal(IntrospectionVerifier(settings), opaque(auth_server))
    assert "another issuer" in refused.reason


def test_an_endpoint_over_plain_http_elsewhere_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="introspection endpoint must be an https:// URL"):
        IntrospectionSettings(
            issuer="https://auth.example.com",
            resource=RESOURCE,
            client_id="rs",
            client_secret="s",
            endpoint="http://auth.example.com/introspect",
        )

"""The test authorization server does what a real one does (authorization code with PKCE for a
user, client credentials), and the MCP SDK's own OAuth client finds it through a protected
resource's metadata, gets a token, and the resource accepts it through `JwtVerifier`."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import httpx2
import pytest
from mcp.client.auth import TokenStorage
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from lynxc.runtime.auth.tokens import JwtSettings, JwtVerifier
from tests.fixtures.auth_server import REDIRECT_URI, SCOPES, TestAuthorizationServer, bound_socket, serving
from tests.runtime.auth.common import RESOURCE

pytestmark = pytest.mark.anyio


def authorization_code(
    server: TestAuthorizationServer, user: str, challenge: str | None, resource: str = RESOURCE
) -> httpx.Response:
    params = {
        "response_type": "code",
        "client_id": "app",
        "redirect_uri": REDIRECT_URI,
        "scope": "tools:read tools:write",
        "state": "s1",
        "resource": resource,
        "user": user,
    }
    if challenge is not None:
        params |= {"code_challenge": challenge, "code_challenge_method": "S256"}
    return httpx.get(f"{server.issuer}/authorize", params=params)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def exchange(server: TestAuthorizationServer, code: str, verifier: str | None) -> httpx.Response:
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT_URI,
        "client_id": "app",
    }
    if verifier is not None:
        data["code_verifier"] = verifier
    return httpx.post(f"{server.issuer}/token", data={**data, "resource": RESOURCE})


async def test_authorization_code_with_pkce_gives_a_users_token(auth_server: TestAuthorizationServer) -> None:
    verifier, challenge = pkce()
    answer = authorization_code(auth_server, "bob", challenge)
    assert answer.status_code == 302
    query = parse_qs(urlsplit(answer.headers["location"]).query)
    assert query["state"] == ["s1"]
    token = exchange(auth_server, query["code"][0], verifier)
    assert token.status_code == 200, token.text
    check = JwtVerifier(JwtSettings(issuer=auth_server.issuer, resource=RESOURCE))
    caller = await check.authenticate(token.json()["access_token"])
    assert caller.subject == "bob" and caller.client_id == "app"
    assert caller.scopes == {"tools:read", "tools:write"} and caller.claims["email"] == "bob@example.com"


def test_a_wrong_code_verifier_is_refused(auth_server: TestAuthorizationServer) -> None:
    _, challenge = pkce()
    answer = authorization_code(auth_server, "alice", challenge)
    code = parse_qs(urlsplit(answer.headers["location"]).query)["code"][0]
    refused = exchange(auth_server, code, secrets.token_urlsafe(48))
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"


def test_a_public_client_must_use_pkce(auth_server: TestAuthorizationServer) -> None:
    answer = authorization_code(auth_server, "alice", None)
    code = parse_qs(urlsplit(answer.headers["location"]).query)["code"][0]
    refused = exchange(auth_server, code, None)
    assert refused.status_code == 400 and "code_verifier" in refused.json()["error_description"]


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.fixture
def protected_resource(auth_server: TestAuthorizationServer) -> Iterator[str]:
    """A plain HTTP resource (no MCP server yet) guarded by the SDK's bearer middleware and
    `JwtVerifier`, publishing RFC 9728 metadata that names the test authorization server."""
    sock = bound_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    verifier = JwtVerifier(JwtSettings(issuer=auth_server.issuer, resource=url))

    async def whoami(request: Request) -> JSONResponse:
        return JSONResponse({"subject": request.user.access_token.subject, "scopes": request.user.scopes})

    app = Starlette(
        routes=[
            *create_protected_resource_routes(AnyHttpUrl(url), [AnyHttpUrl(auth_server.issuer)], SCOPES),
            Route(
                "/mcp",
                RequireAuthMiddleware(
                    whoami_app(whoami), ["tools:read"], build_resource_metadata_url(AnyHttpUrl(url))
                ),
            ),
        ],
        middleware=[
            Middleware(
                AuthenticationMiddleware,
                backend=BearerAuthBackend(verifier, resource_server_url=AnyHttpUrl(url)),
            )
        ],
    )
    with serving(app, sock):
        yield url


def whoami_app(handler):  # type: ignore[no-untyped-def]
    """The handler as a bare ASGI app, what RequireAuthMiddleware wraps."""

    async def app(scope, receive, send):  # type: ignore[no-untyped-def]
        response = await handler(Request(scope, receive))
        await response(scope, receive, send)

    return app


async def test_the_sdk_client_discovers_the_issuer_and_its_token_is_accepted(
    auth_server: TestAuthorizationServer, protected_resource: str
) -> None:
    assert httpx.get(protected_resource).status_code == 401
    provider = ClientCredentialsOAuthProvider(
        server_url=protected_resource,
        storage=MemoryStorage(),
        client_id="machine",
        client_secret="machine-secret",
        scope="tools:read",
        issuer=auth_server.issuer,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=10) as client:
        answer = await client.get(protected_resource)
    assert answer.status_code == 200, answer.text
    # The SDK asks for the scopes of the 401's WWW-Authenticate `scope`, else for every scope in
    # the resource metadata's `scopes_supported` (its own `scope=` is only the last resort): the
    # SDK's RequireAuthMiddleware sends no `scope`, so this client got them all. The host should
    # name the scopes a 401 needs, so clients ask for no more than that.
    assert answer.json() == {"subject": "machine", "scopes": sorted(SCOPES)}

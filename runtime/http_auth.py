"""Streamable HTTP with caller authentication: the MCP authorization specification's resource
server side (OAuth 2.1 bearer tokens, RFC 6750 answers, RFC 9728 metadata), plus API keys.

Two middlewares, around the body check (`http_json_bodies`):
- `CallerAuthentication`, in front: every request to the MCP endpoint carries a credential in
  its Authorization header, or is answered 401 with `WWW-Authenticate: Bearer
  resource_metadata="..."` (where a client discovers the issuer) before its body is even read.
  A credential in the query string is refused (400): URLs end up in proxy and server logs.
  The verified caller goes into the ASGI scope as the SDK's `AuthenticatedUser`, so the SDK
  binds each session to the identity that opened it (another caller presenting its id gets 404)
  and `http_sessions` bounds sessions per identity.
- `ToolScopes`, behind the body check: a `tools/call` for a tool whose scopes the caller lacks
  is answered 403 `error="insufficient_scope", scope="..."` (the scopes to ask the issuer for)
  and never reaches the server. The host checks again (runtime/host.py), so a tool is never
  run for a caller without its scopes even where this is not in front.

The SDK has a bearer middleware too; it answers every refusal alike ("Authentication required",
no `error`, no `scope`) and checks `exp` with no clock leeway, so lynxc writes its own answers.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

import mcp_types as types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.authentication import AuthCredentials
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .audit import AuditEvent, AuditLog, Outcome
from .auth.api_keys import KEY_PREFIX
from .auth.caller import Caller
from .auth.config import PROTECTED_RESOURCE_WELL_KNOWN, Authenticator
from .auth.refusals import AuthRefused
from .http_json_bodies import PARSED_MESSAGE, ASGIApp, Message, Receive, Send

_CREDENTIAL_PARAMETERS = {"access_token", "api_key", "apikey", "key", "token"}
_OUTCOMES: dict[int, Outcome] = {400: "refused", 401: "unauthenticated", 403: "forbidden", 503: "refused"}


class CallerUser(AuthenticatedUser):
    """The SDK's authenticated user, carrying lynxc's verified `Caller` for the host."""

    def __init__(self, caller: Caller, token: str, resource: str | None) -> None:
        super().__init__(caller.access_token(token, resource))
        self.caller = caller


class CallerAuthentication:
    def __init__(
        self,
        app: ASGIApp,
        *,
        path: str,
        authenticator: Authenticator,
        audit: AuditLog | None,
    ) -> None:
        self.app = app
        self.path = path.rstrip("/")
        self.authenticator = authenticator
        self.audit = audit
        values = authenticator.values
        self.metadata_url = values.metadata_url()
        self.resource = values.oauth.resource if values.oauth is not None else None

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        try:
            token = _presented_token(scope)
            caller = await self.authenticator.authenticate(token) if token is not None else None
        except AuthRefused as refusal:
            await self._refuse(scope, send, refusal.status, refusal.error, refusal.reason, started)
            return
        if caller is None:
            await self._refuse(scope, send, 401, None, "no credential (Authorization: Bearer ...)", started)
            return
        scope["user"] = CallerUser(caller, token or "", self.resource)
        scope["auth"] = AuthCredentials(sorted(caller.scopes))
        await self.app(scope, receive, send)

    async def _refuse(
        self, scope: Message, send: Send, status: int, error: str | None, reason: str, started: float
    ) -> None:
        challenge = {"error": error, "error_description": reason} if error else {}
        await send_refusal(scope, send, status, self.metadata_url, challenge, reason)
        if self.audit is not None:
            duration = (time.perf_counter() - started) * 1000
            self.audit.record(
                AuditEvent(None, _OUTCOMES.get(status, "refused"), duration, status=status, reason=reason)
            )


class ToolScopes:
    def __init__(
        self,
        app: ASGIApp,
        *,
        path: str,
        needed: Mapping[str, frozenset[str]],
        metadata_url: str | None,
        audit: AuditLog | None,
    ) -> None:
        self.app = app
        self.path = path.rstrip("/")
        self.needed = {name: scopes for name, scopes in needed.items() if scopes}
        self.metadata_url = metadata_url
        self.audit = audit

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        user = scope.get("user")
        if (
            not self.needed
            or not isinstance(user, CallerUser)
            or scope["type"] != "http"
            or scope["method"] != "POST"
            or scope["path"].rstrip("/") != self.path
        ):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        # The body check (http_json_bodies) left the message it parsed; a body over the size
        # limit it did not read, and the SDK refuses it (413) without running anything.
        tool = _called_tool(scope.get(PARSED_MESSAGE))
        missing = user.caller.missing_scopes(self.needed.get(tool, frozenset())) if tool else []
        if not missing:
            await self.app(scope, receive, send)
            return
        needed = " ".join(sorted(self.needed[tool]))
        reason = f"tool {tool!r} needs the scope {' '.join(missing)}"
        challenge = {"error": "insufficient_scope", "scope": needed, "error_description": reason}
        await send_refusal(scope, send, 403, self.metadata_url, challenge, reason)
        if self.audit is not None:
            duration = (time.perf_counter() - started) * 1000
            self.audit.record(
                AuditEvent(tool, "forbidden", duration, caller=user.caller, status=403, reason=reason)
            )


def _presented_token(scope: Message) -> str | None:
    """The bearer credential of a request, None when it presents none; AuthRefused for a
    credential sent where it must not be (the query string) or in a malformed header."""
    for name, value in parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True):
        if name.lower() in _CREDENTIAL_PARAMETERS or value.startswith(KEY_PREFIX):
            raise AuthRefused(
                "credentials in the query string are refused (they end up in logs): send "
                "Authorization: Bearer ...",
                "invalid_request",
            )
    headers = [value for name, value in scope["headers"] if name == b"authorization"]
    if not headers:
        return None
    if len(headers) > 1:
        raise AuthRefused("more than one Authorization header", "invalid_request")
    scheme, _, token = headers[0].decode("latin-1").strip().partition(" ")
    if scheme.lower() != "bearer":
        return None  # another scheme (Basic): no credential this server understands
    token = token.strip()
    if not token:
        raise AuthRefused("the Bearer credential is empty", "invalid_request")
    return token


def _called_tool(message: Any) -> str | None:
    """The tool a tools/call request names (MCP has no batches: the body check refuses them)."""
    if not isinstance(message, types.JSONRPCRequest) or message.method != "tools/call":
        return None
    name = (message.params or {}).get("name")
    return name if isinstance(name, str) else None


async def send_refusal(
    scope: Message,
    send: Send,
    status: int,
    metadata_url: str | None,
    challenge: Mapping[str, str],
    reason: str,
) -> None:
    """An RFC 6750 §3 answer: the status, a `WWW-Authenticate: Bearer` challenge naming the
    resource metadata (so a client can find the issuer), and the reason as JSON."""
    parameters = dict(challenge)
    if metadata_url is not None:
        parameters["resource_metadata"] = metadata_url
    header = "Bearer " + ", ".join(f'{key}="{_quoted(value)}"' for key, value in parameters.items())
    body: dict[str, Any] = {
        "error": challenge.get("error", "invalid_token" if status == 401 else "invalid_request")
    }
    body["error_description"] = reason
    headers = {"WWW-Authenticate": header.rstrip()} if status in (401, 403) else {}
    if status == 503:
        headers["Retry-After"] = "5"
    response = JSONResponse(body, status_code=status, headers=headers)
    await response(scope, _no_body, send)


async def _no_body() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


def _quoted(value: str) -> str:
    # RFC 7235 quoted-string: no raw quote, backslash or control character.
    return "".join(c for c in value.replace("\\", "").replace('"', "'") if c.isprintable())


def metadata_endpoint(document: Mapping[str, Any]):
    """The RFC 9728 document as a Starlette endpoint (public: no credential needed to read it)."""

    async def endpoint(request: Request) -> Response:
        if request.method == "OPTIONS":
            return Response(status_code=204, headers=_CORS)
        return JSONResponse(dict(document), headers={**_CORS, "Cache-Control": "public, max-age=3600"})

    return endpoint


# Browser-based MCP clients read the metadata cross-origin; it is public by design.
_CORS = {"Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, OPTIONS"}


class HttpAuth:
    """What a server's HTTP app needs to authenticate callers: the authenticator, the scopes
    each tool needs, where audit lines go, and the server's name for its metadata."""

    def __init__(
        self,
        authenticator: Authenticator,
        needed: Mapping[str, frozenset[str]],
        audit: AuditLog | None,
        name: str,
    ) -> None:
        self.authenticator = authenticator
        self.needed = needed
        self.audit = audit
        self.name = name

    def install(self, app: Any, path: str) -> None:
        """Put the metadata routes and the middlewares in place around the body check: call it
        after the innermost middlewares are added and before the body check is."""
        from starlette.routing import Route

        values = self.authenticator.values
        document = values.resource_metadata(self.name)
        metadata_url = values.metadata_url()
        if document is not None and metadata_url is not None:
            resource_path = metadata_url.split("://", 1)[1].partition("/")[2]
            paths = {"/" + resource_path, PROTECTED_RESOURCE_WELL_KNOWN}
            for route_path in sorted(paths):
                app.router.routes.append(
                    Route(route_path, metadata_endpoint(document), methods=["GET", "OPTIONS"])
                )
        app.add_middleware(
            ToolScopes, path=path, needed=self.needed, metadata_url=metadata_url, audit=self.audit
        )

    def install_outer(self, app: Any, path: str) -> None:
        """The authentication itself: outside the body check, so an unauthenticated caller's
        body is never read."""
        app.add_middleware(
            CallerAuthentication, path=path, authenticator=self.authenticator, audit=self.audit
        )

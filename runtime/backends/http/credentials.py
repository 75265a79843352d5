"""A call's credentials, from the server's secret settings: bearer, API key, basic, OAuth 2.

The static kinds become a header or a query pair; OAuth 2 client credentials fetch an access
token from the token endpoint (client_secret_basic), cached per server until `expires_in` minus
a margin, and forgotten when the API answers 401 with it (the caller fetches once more). A
setting that is not set is a tool error naming it; no secret value is ever in a message.
"""

from __future__ import annotations

import base64
import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

import anyio
import httpx

from lynxc.runtime.errors import ToolError

from .catalog import Auth
from .redaction import excerpt
from .request import check_base_url
from .transport import read_capped

EXPIRY_MARGIN_SECONDS = 30.0
TOKEN_RESPONSE_CAP = 65_536


@dataclass(frozen=True)
class Credentials:
    headers: tuple[tuple[str, str], ...] = ()
    query: tuple[tuple[str, str], ...] = ()


def secret_values(auth: Auth | None, settings: Mapping[str, Any]) -> list[str]:
    """The values of the call's secret settings, and the forms they travel in (base64 of a basic
    pair, a URL-encoded key), to mask wherever an answer is quoted: an API that echoes the
    Authorization header it refused would otherwise show the password in base64."""
    if auth is None:
        return []
    values = {name: str(settings[name]) for name in auth.secret_settings() if settings.get(name)}
    secrets = list(values.values()) + [quote(value, safe="") for value in values.values()]
    if auth.kind == "basic" and auth.username in values and auth.password in values:
        secrets.append(basic_pair(values[auth.username], values[auth.password]))
    if auth.kind == "oauth2_client_credentials" and auth.client_id in values and auth.client_secret in values:
        secrets.append(client_pair(values[auth.client_id], values[auth.client_secret]))
    return secrets


def basic_pair(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def client_pair(client_id: str, client_secret: str) -> str:
    """client_secret_basic (RFC 6749 2.3.1): each part form-encoded before base64."""
    return basic_pair(quote(client_id, safe=""), quote(client_secret, safe=""))


def setting_value(settings: Mapping[str, Any], name: str, what: str, shown: str) -> str:
    value = settings.get(name)
    if value is None or value == "":
        raise ToolError(f"{shown} needs {what}: set the setting {name!r}")
    return str(value)


def static_credentials(auth: Auth, settings: Mapping[str, Any], shown: str) -> Credentials:
    """Bearer, API key and basic credentials (OAuth 2 goes through TokenCache)."""
    if auth.kind == "bearer":
        token = setting_value(settings, auth.token or "", "a bearer token", shown)
        return Credentials(headers=(("Authorization", f"Bearer {token}"),))
    if auth.kind == "api_key":
        key = setting_value(settings, auth.value or "", "an API key", shown)
        pair = ((auth.name or "", key),)
        return Credentials(query=pair) if auth.location == "query" else Credentials(headers=pair)
    if auth.kind == "basic":
        user = setting_value(settings, auth.username or "", "a user name", shown)
        password = setting_value(settings, auth.password or "", "a password", shown)
        return Credentials(headers=(("Authorization", f"Basic {basic_pair(user, password)}"),))
    raise ToolError(f"{shown}: credential kind {auth.kind!r} is not one this runtime sends")


def bearer(token: str) -> Credentials:
    return Credentials(headers=(("Authorization", f"Bearer {token}"),))


class TokenCache:
    """One server's OAuth 2 access tokens, by (token URL, client id, scopes)."""

    def __init__(self) -> None:
        self._tokens: dict[tuple[str, str, tuple[str, ...]], tuple[str, float]] = {}
        self._lock = anyio.Lock()  # one fetch at a time: concurrent calls share its token
        self.fetches = 0

    async def token(
        self, client: httpx.AsyncClient, auth: Auth, settings: Mapping[str, Any], shown: str, cap: int
    ) -> str:
        key, client_id, client_secret = self._key(auth, settings, shown)
        async with self._lock:
            cached = self._tokens.get(key)
            if cached is not None and time.monotonic() < cached[1]:
                return cached[0]
            token, lifetime = await self._fetch(client, key[0], client_id, client_secret, auth, shown, cap)
            self._tokens[key] = (token, time.monotonic() + lifetime - EXPIRY_MARGIN_SECONDS)
            return token

    def forget(self, auth: Auth, settings: Mapping[str, Any], token: str, shown: str) -> None:
        """Drop `token` (the API refused it) unless another call already replaced it."""
        key = self._key(auth, settings, shown)[0]
        cached = self._tokens.get(key)
        if cached is not None and cached[0] == token:
            del self._tokens[key]

    def _key(
        self, auth: Auth, settings: Mapping[str, Any], shown: str
    ) -> tuple[tuple[str, str, tuple[str, ...]], str, str]:
        source = auth.token_url
        assert source is not None  # the catalog sets it for this kind
        if source.setting is not None:
            url = setting_value(settings, source.setting, "an OAuth 2 token URL", shown)
            check_base_url(url, f"setting {source.setting!r}")
        else:
            url = source.value or ""
        client_id = setting_value(settings, auth.client_id or "", "an OAuth 2 client id", shown)
        client_secret = setting_value(settings, auth.client_secret or "", "an OAuth 2 client secret", shown)
        return (url, client_id, auth.scopes), client_id, client_secret

    async def _fetch(
        self,
        client: httpx.AsyncClient,
        url: str,
        client_id: str,
        client_secret: str,
        auth: Auth,
        shown: str,
        cap: int,
    ) -> tuple[str, float]:
        self.fetches += 1
        pair = client_pair(client_id, client_secret)
        form = {"grant_type": "client_credentials"}
        if auth.scopes:
            form["scope"] = " ".join(auth.scopes)
        request = client.build_request(
            "POST",
            url,
            content=urlencode(form).encode(),
            headers={
                "Authorization": f"Basic {pair}",
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
        )
        where = f"{shown}: the OAuth 2 token endpoint ({request.url.host})"
        try:
            response = await client.send(request, stream=True, follow_redirects=False)
        except httpx.HTTPError as err:
            raise ToolError(f"{where} could not be reached: {type(err).__name__}") from None
        body = await read_capped(response, min(cap, TOKEN_RESPONSE_CAP), shown, "token endpoint's answer")
        secrets = [client_id, client_secret, pair, quote(client_secret, safe="")]
        if not response.is_success:
            raise ToolError(
                f"{where} answered {response.status_code} {response.reason_phrase}: {excerpt(body, secrets)}"
            )
        try:
            answer = json.loads(body)
            token = answer["access_token"]
            lifetime = answer.get("expires_in", math.inf)
        except (ValueError, KeyError, TypeError, AttributeError):
            raise ToolError(f"{where} answered without an access_token: {excerpt(body, secrets)}") from None
        if not isinstance(token, str) or not token:
            raise ToolError(f"{where} answered an access_token that is not a string")
        if isinstance(lifetime, str) and lifetime.isdigit():
            lifetime = int(lifetime)  # some endpoints send it quoted
        if isinstance(lifetime, bool) or not isinstance(lifetime, int | float):
            lifetime = math.inf  # no usable expiry: kept until the API refuses it (401)
        return token, float(lifetime)

"""Opaque access tokens, verified by asking the issuer (RFC 7662 token introspection).

The resource server authenticates itself to the introspection endpoint (HTTP Basic with its own
client credentials). The answer is trusted only when `active` is exactly true, and is checked
again here: `iss` (when given) is the configured issuer, `aud` contains this server's resource
(no token passthrough, as for JWTs), `exp`/`nbf` hold with the leeway.

Answers are cached for a short time under a hash of the token, so a busy caller costs one
introspection per `cache_seconds` and the cache never holds a usable token. The price is that a
token revoked at the issuer still works here for up to `cache_seconds`: keep it short.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from .caller import Caller, frozen_claims
from .discovery import (
    DEFAULT_HTTP_TIMEOUT,
    DEFAULT_MAX_DOCUMENT_BYTES,
    discover_metadata,
)
from .issuer_verifier import IssuerVerifier
from .refusals import AuthRefused
from .tokens import DEFAULT_LEEWAY, DEFAULT_MAX_TOKEN_BYTES, token_scopes
from .urls import is_trusted_transport, require_trusted_transport

DEFAULT_CACHE_SECONDS = 30.0
DEFAULT_CACHE_ENTRIES = 10_000

# RFC 6750 §2.1's b64token: what a bearer token may be made of.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@dataclass(frozen=True)
class IntrospectionSettings:
    issuer: str
    resource: str  # this server's canonical resource URI; the answer's `aud` must contain it
    client_id: str  # this resource server's own credentials at the introspection endpoint
    client_secret: str
    endpoint: str | None = None  # None: the issuer metadata's `introspection_endpoint`
    cache_seconds: float = DEFAULT_CACHE_SECONDS
    cache_entries: int = DEFAULT_CACHE_ENTRIES
    leeway: float = DEFAULT_LEEWAY
    max_token_bytes: int = DEFAULT_MAX_TOKEN_BYTES
    http_timeout: float = DEFAULT_HTTP_TIMEOUT
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES

    def __post_init__(self) -> None:
        # The token and this server's own secret travel to the endpoint: never in the clear.
        require_trusted_transport(self.issuer, "the issuer")
        if self.endpoint is not None:
            require_trusted_transport(self.endpoint, "the introspection endpoint")


class IntrospectionVerifier(IssuerVerifier):
    """Verifies opaque tokens at the issuer; the same two entry points as `JwtVerifier`."""

    settings: IntrospectionSettings

    def __init__(
        self,
        settings: IntrospectionSettings,
        client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(settings, client, clock)
        self._endpoint = settings.endpoint
        self._cache: OrderedDict[bytes, tuple[float, Caller | AuthRefused]] = OrderedDict()

    async def authenticate(self, token: str) -> Caller:
        if not token:
            raise AuthRefused("no token")
        if len(token) > self.settings.max_token_bytes:
            raise AuthRefused(f"token longer than {self.settings.max_token_bytes} bytes")
        if not _B64TOKEN.fullmatch(token):
            raise AuthRefused("token has characters a bearer token cannot have")
        key = hashlib.sha256(token.encode()).digest()
        now = self._clock()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            return _answer(cached[1])
        try:
            outcome: Caller | AuthRefused = self._caller(await self._introspect(token))
        except AuthRefused as refused:
            if refused.error == "temporarily_unavailable":
                raise  # the issuer's trouble, not the token's: ask again next time
            outcome = refused
        until = now + self.settings.cache_seconds
        if isinstance(outcome, Caller) and outcome.expires_at is not None:
            until = min(until, now + outcome.expires_at - time.time())
        self._remember(key, until, outcome)
        return _answer(outcome)

    def _remember(self, key: bytes, until: float, outcome: Caller | AuthRefused) -> None:
        self._cache[key] = (until, outcome)
        self._cache.move_to_end(key)
        while len(self._cache) > self.settings.cache_entries:
            self._cache.popitem(last=False)

    async def _introspect(self, token: str) -> dict[str, Any]:
        if self._endpoint is None:
            metadata = await discover_metadata(self._fetcher, self.settings.issuer)
            endpoint = metadata.get("introspection_endpoint")
            if not isinstance(endpoint, str) or not is_trusted_transport(endpoint):
                raise AuthRefused(
                    f"issuer {self.settings.issuer} publishes no https introspection_endpoint",
                    "temporarily_unavailable",
                )
            self._endpoint = endpoint
        return await self._fetcher.post_form(
            self._endpoint,
            {"token": token, "token_type_hint": "access_token"},
            httpx.BasicAuth(self.settings.client_id, self.settings.client_secret),
        )

    def _caller(self, answer: dict[str, Any]) -> Caller:
        if answer.get("active") is not True:
            raise AuthRefused("token is not active (expired, revoked or unknown to the issuer)")
        issuer = answer.get("iss")
        if issuer is not None and issuer != self.settings.issuer:
            raise AuthRefused("token is from another issuer (iss)")
        audience = answer.get("aud")
        audiences = [audience] if isinstance(audience, str) else audience
        if not isinstance(audiences, list) or self.settings.resource not in audiences:
            raise AuthRefused("token is for another resource (aud)")
        now = time.time()
        exp, nbf = answer.get("exp"), answer.get("nbf")
        if exp is not None and (not _is_number(exp) or exp <= now - self.settings.leeway):
            raise AuthRefused("token expired")
        if nbf is not None and (not _is_number(nbf) or nbf > now + self.settings.leeway):
            raise AuthRefused("token not valid yet (nbf or iat in the future)")
        client_id = answer.get("client_id")
        if client_id is not None and not isinstance(client_id, str):
            raise AuthRefused("token client_id is not a string")
        subject = answer.get("sub", answer.get("username", client_id))
        if not isinstance(subject, str) or not subject:
            raise AuthRefused("token names no subject (sub)")
        return Caller(
            method="oauth",
            subject=subject,
            scopes=token_scopes(answer),
            claims=frozen_claims(answer),
            client_id=client_id,
            issuer=self.settings.issuer,
            expires_at=int(exp) if exp is not None else None,
        )


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _answer(outcome: Caller | AuthRefused) -> Caller:
    if isinstance(outcome, AuthRefused):
        raise AuthRefused(outcome.reason, outcome.error)
    return outcome

"""What the verifiers that ask an authorization server share (JWTs checked against its keys,
opaque tokens through its introspection endpoint): one HTTP client to the issuer, closed with
the verifier, and the MCP SDK's `TokenVerifier` protocol answered from `authenticate`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
from mcp.server.auth.provider import AccessToken

from .caller import Caller
from .discovery import Fetcher, new_client
from .refusals import AuthRefused


class IssuerVerifier:
    """A base: subclasses implement `authenticate`; `settings` has `resource`, `http_timeout`
    and `max_document_bytes`."""

    def __init__(
        self, settings: Any, client: httpx.AsyncClient | None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings
        self._client = client or new_client(settings.http_timeout)
        self._fetcher = Fetcher(self._client, settings.max_document_bytes)
        self._clock = clock

    async def aclose(self) -> None:
        await self._client.aclose()

    async def authenticate(self, token: str) -> Caller:
        raise NotImplementedError

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's protocol: the access token, or None for any refusal."""
        try:
            caller = await self.authenticate(token)
        except AuthRefused:
            return None
        return caller.access_token(token, self.settings.resource)

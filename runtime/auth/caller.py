"""The verified caller, as the host hands it to a tool on `ctx`."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the MCP SDK loads only where a token is handed to it
    from mcp.server.auth.provider import AccessToken

AuthMethod = Literal["oauth", "api_key", "local"]


def frozen_claims(claims: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only deep copy: a tool that mutates what it was given cannot change what the next
    call of the same request (or the audit line) sees as the caller's identity."""
    return MappingProxyType(copy.deepcopy(dict(claims)))


@dataclass(frozen=True)
class Caller:
    """Who is calling, once verified.

    `subject` is the token's `sub` for OAuth and the key's name for API keys: what an audit line
    names. `claims` are the verified claims (a token's payload or introspection answer, a key's
    configured claims), which identity-bound parameters read from.
    """

    method: AuthMethod
    subject: str
    scopes: frozenset[str]
    claims: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    client_id: str | None = None
    issuer: str | None = None
    expires_at: int | None = None

    def has_scopes(self, needed: frozenset[str] | set[str] | list[str] | tuple[str, ...]) -> bool:
        return set(needed) <= self.scopes

    def missing_scopes(self, needed: frozenset[str] | set[str] | list[str] | tuple[str, ...]) -> list[str]:
        return sorted(set(needed) - self.scopes)

    def access_token(self, token: str, resource: str | None) -> AccessToken:
        """The MCP SDK's view of the same caller (its `TokenVerifier` protocol returns one)."""
        from mcp.server.auth.provider import AccessToken

        return AccessToken(
            token=token,
            client_id=self.client_id or self.subject,
            scopes=sorted(self.scopes),
            expires_at=self.expires_at,
            resource=resource,
            subject=self.subject,
            claims=dict(self.claims),
        )

"""From what a generated server declares (`ServerDefinition.auth`) and its settings, the one
`Authenticator` its HTTP transport asks about every request.

The declaration says which methods a server accepts and where each value comes from (written in
the spec, or a setting); the values are resolved here, when a server starts on HTTP, so a
missing issuer or an unreadable keys file stops the start with a message that names the setting,
instead of refusing every caller later.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .api_keys import KEY_PREFIX, ApiKeyVerifier, KeysFileError
from .caller import Caller
from .introspection import IntrospectionSettings, IntrospectionVerifier
from .refusals import AuthRefused
from .tokens import JwtSettings, JwtVerifier

PROTECTED_RESOURCE_WELL_KNOWN = "/.well-known/oauth-protected-resource"


@dataclass(frozen=True)
class OAuthValues:
    issuer: str
    resource: str
    introspection: tuple[str, str] | None  # client id and secret


@dataclass(frozen=True)
class AuthValues:
    """The declaration with every setting resolved: what an `Authenticator` is made from."""

    scopes_supported: tuple[str, ...]
    oauth: OAuthValues | None
    keys_file: Path | None

    def metadata_url(self) -> str | None:
        """Where this server's Protected Resource Metadata is (RFC 9728 §3.1): the well-known
        path inserted before the resource's own path. None without OAuth."""
        if self.oauth is None:
            return None
        parts = urlsplit(self.oauth.resource)
        path = parts.path.rstrip("/")
        return f"{parts.scheme}://{parts.netloc}{PROTECTED_RESOURCE_WELL_KNOWN}{path}"

    def resource_metadata(self, name: str) -> dict[str, Any] | None:
        """The RFC 9728 document, with the issuer exactly as configured (a client compares it
        with the issuer's own metadata character for character)."""
        if self.oauth is None:
            return None
        return {
            "resource": self.oauth.resource,
            "authorization_servers": [self.oauth.issuer],
            "scopes_supported": list(self.scopes_supported),
            "bearer_methods_supported": ["header"],
            "resource_name": name,
        }


def resolve_auth(
    declared: Mapping[str, Any], settings: Mapping[str, Any], base: str
) -> tuple[AuthValues, list[str]]:
    """(values, problems): each problem names the setting to give."""
    problems: list[str] = []

    def value(source: Mapping[str, str], what: str) -> str:
        if "setting" not in source:
            return source["value"]
        found = settings.get(source["setting"])
        if not isinstance(found, str) or not found:
            problems.append(
                f"{what} comes from the setting {source['setting']!r}, which is not set: give it with "
                f"--set {source['setting']}=... or LYNXC_{source['setting'].upper()}"
            )
            return ""
        return found

    oauth = None
    if (declared_oauth := declared.get("oauth")) is not None:
        issuer = value(declared_oauth["issuer"], "server.auth.oauth.issuer")
        resource = value(declared_oauth["resource"], "server.auth.oauth.resource")
        introspection = None
        if (client := declared_oauth.get("introspection")) is not None:
            introspection = (
                value({"setting": client["client_id_setting"]}, "the introspection client id"),
                value({"setting": client["client_secret_setting"]}, "the introspection client secret"),
            )
        oauth = OAuthValues(issuer, resource, introspection)
    keys_file = None
    if (declared_keys := declared.get("api_keys")) is not None:
        raw = value({"setting": declared_keys["file_setting"]}, "server.auth.api_keys.file")
        if raw:
            keys_file = Path(os.path.join(base, os.path.expanduser(raw)))
    return AuthValues(tuple(declared.get("scopes_supported", ())), oauth, keys_file), problems


class Authenticator:
    """Who a presented credential stands for: an API key (they start `lynxc_`), a JWT access
    token checked locally, or else an opaque token asked about at the issuer."""

    def __init__(self, values: AuthValues) -> None:
        self.values = values
        self.jwt: JwtVerifier | None = None
        self.introspection: IntrospectionVerifier | None = None
        self.keys: ApiKeyVerifier | None = None
        if values.oauth is not None:
            oauth = values.oauth
            self.jwt = JwtVerifier(JwtSettings(issuer=oauth.issuer, resource=oauth.resource))
            if oauth.introspection is not None:
                self.introspection = IntrospectionVerifier(
                    IntrospectionSettings(
                        issuer=oauth.issuer,
                        resource=oauth.resource,
                        client_id=oauth.introspection[0],
                        client_secret=oauth.introspection[1],
                    )
                )
        if values.keys_file is not None:
            self.keys = ApiKeyVerifier(values.keys_file)

    async def authenticate(self, token: str) -> Caller:
        if token.startswith(KEY_PREFIX):
            if self.keys is None:
                raise AuthRefused("this server does not accept API keys")
            return self.keys.authenticate(token)
        if self.jwt is None:
            raise AuthRefused(f"not an API key of this server (they start with {KEY_PREFIX})")
        if self.introspection is not None and token.count(".") != 2:
            return await self.introspection.authenticate(token)  # opaque: only the issuer knows it
        return await self.jwt.authenticate(token)

    async def aclose(self) -> None:
        for verifier in (self.jwt, self.introspection):
            if verifier is not None:
                await verifier.aclose()


def authenticator_for(
    declared: Mapping[str, Any], settings: Mapping[str, Any], base: str
) -> tuple[Authenticator | None, list[str]]:
    """The authenticator of a server starting on HTTP, or the problems that stop its start."""
    values, problems = resolve_auth(declared, settings, base)
    if problems:
        return None, problems
    if values.oauth is not None:
        parts = urlsplit(values.oauth.resource)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.fragment:
            problems.append(
                f"server.auth.oauth.resource {values.oauth.resource!r} is not an absolute http(s) URI "
                "without a fragment (e.g. https://mcp.example.com/mcp)"
            )
    try:
        authenticator = Authenticator(values) if not problems else None
    except (ValueError, KeysFileError) as error:  # an issuer over plain HTTP elsewhere; a bad keys file
        return None, [*problems, str(error)]
    return authenticator, problems

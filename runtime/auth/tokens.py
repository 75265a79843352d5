"""JWT access tokens, verified as an OAuth 2.1 resource server must (RFC 9068, RFC 8707, RFC 8725).

The issuer's keys are found through its metadata, cached, and fetched again when a token names a
key id the cache lacks (the issuer rotated its keys), at most once per `refetch_interval`: a
flood of tokens with made-up key ids costs the issuer one request per interval, not one each.

Only asymmetric algorithms are accepted, and only the ones the key's own type allows: the
algorithm comes from the token's header, which the caller wrote, so `none`, HS256 "signed" with
the public key (algorithm confusion) and an ES256 header on an RSA key are all refused before
any signature is checked. Keys a token's header offers itself (`jwk`, `jku`, `x5u`) are never
used: only the issuer's published set counts. Signatures and claims are checked by PyJWT;
nothing here is crypto.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import jwt

from .caller import Caller, frozen_claims
from .discovery import (
    DEFAULT_HTTP_TIMEOUT,
    DEFAULT_MAX_DOCUMENT_BYTES,
    discover_metadata,
)
from .issuer_verifier import IssuerVerifier
from .refusals import AuthRefused
from .urls import is_trusted_transport, require_trusted_transport

DEFAULT_LEEWAY = 60.0
DEFAULT_REFETCH_INTERVAL = 30.0
# Keys are read again this often even when every token's kid is known, so a key the issuer
# withdrew (compromised, say) stops verifying within this time.
DEFAULT_KEYS_MAX_AGE = 600.0
# Real access tokens are 1-2 KB; 8 KB is the usual cap on a whole request header line.
DEFAULT_MAX_TOKEN_BYTES = 8 * 1024

# Which signature algorithms each key type (and EC curve) can verify; anything else is refused.
_RSA = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"})
_ALGORITHMS_BY_KEY: dict[tuple[str, str | None], frozenset[str]] = {
    ("RSA", None): _RSA,
    ("EC", "P-256"): frozenset({"ES256"}),
    ("EC", "P-384"): frozenset({"ES384"}),
    ("EC", "P-521"): frozenset({"ES512"}),
    ("OKP", "Ed25519"): frozenset({"EdDSA"}),
    ("OKP", "Ed448"): frozenset({"EdDSA"}),
}
ASYMMETRIC_ALGORITHMS = frozenset().union(*_ALGORITHMS_BY_KEY.values())

# A JWS in compact form: three base64url parts. (Five parts would be an encrypted JWE.)
# The signature part may be empty, as in an `alg: none` token, which is then refused by name.
_COMPACT_JWS = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")

# PyJWT's refusals, as the one-line reasons the host logs and sends back.
_REASONS: list[tuple[type[Exception], str]] = [
    (jwt.ExpiredSignatureError, "token expired"),
    (jwt.ImmatureSignatureError, "token not valid yet (nbf or iat in the future)"),
    (jwt.InvalidAudienceError, "token is for another resource (aud)"),
    (jwt.InvalidIssuerError, "token is from another issuer (iss)"),
    (jwt.InvalidSignatureError, "token signature does not verify"),
    (jwt.exceptions.InvalidSubjectError, "token subject (sub) is not a string"),
    (jwt.exceptions.InvalidJTIError, "token id (jti) is not a string"),
    (jwt.InvalidAlgorithmError, "token algorithm not allowed"),
    (jwt.InvalidKeyError, "token key cannot verify this algorithm"),
    (jwt.DecodeError, "token is not a well-formed JWT"),
]


@dataclass(frozen=True)
class JwtSettings:
    """What a resource server trusts: one issuer, for tokens meant for its own `resource`."""

    issuer: str
    resource: str  # this server's canonical resource URI; a token's `aud` must contain it
    leeway: float = DEFAULT_LEEWAY
    refetch_interval: float = DEFAULT_REFETCH_INTERVAL
    keys_max_age: float = DEFAULT_KEYS_MAX_AGE
    max_token_bytes: int = DEFAULT_MAX_TOKEN_BYTES
    http_timeout: float = DEFAULT_HTTP_TIMEOUT
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
    algorithms: frozenset[str] = ASYMMETRIC_ALGORITHMS

    def __post_init__(self) -> None:
        require_trusted_transport(self.issuer, "the issuer")
        unsafe = self.algorithms - ASYMMETRIC_ALGORITHMS
        if unsafe:
            raise ValueError(f"only asymmetric JWT algorithms can be allowed, not {sorted(unsafe)}")


@dataclass(frozen=True)
class _Key:
    key: Any  # a `cryptography` public key
    algorithms: frozenset[str]


class JwtVerifier(IssuerVerifier):
    """Verifies JWT access tokens; `verify_token` is the MCP SDK's `TokenVerifier` protocol,
    `authenticate` the same check that says why a token was refused."""

    settings: JwtSettings

    def __init__(
        self,
        settings: JwtSettings,
        client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(settings, client, clock)
        self._jwks_uri: str | None = None
        self._keys: dict[str | None, _Key] = {}
        self._fetched_at: float | None = None  # the last fetch that succeeded
        self._tried_at: float | None = None  # the last fetch tried, which the rate limit counts
        self._fetching = asyncio.Lock()

    async def authenticate(self, token: str) -> Caller:
        """The verified caller a token stands for, or AuthRefused saying why not."""
        header = self._read_header(token)
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in self.settings.algorithms:
            raise AuthRefused(f"token algorithm {str(algorithm)[:20]!r} not allowed")
        if "crit" in header:
            # RFC 7515 §4.1.11: extensions a verifier does not understand make the token invalid.
            raise AuthRefused("token header has critical extensions this server cannot honour")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise AuthRefused("token key id (kid) is not a string")
        key = await self._key_for(kid)
        if algorithm not in key.algorithms:
            raise AuthRefused(f"token algorithm {algorithm} is not one its key allows")
        claims = self._decode(token, key.key, algorithm)
        return self._caller(claims)

    def _read_header(self, token: str) -> dict[str, Any]:
        if not token:
            raise AuthRefused("no token")
        if len(token) > self.settings.max_token_bytes:
            raise AuthRefused(f"token longer than {self.settings.max_token_bytes} bytes")
        if not _COMPACT_JWS.fullmatch(token):
            raise AuthRefused("token is not a signed JWT (three base64url parts)")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.DecodeError:
            raise AuthRefused("token header is not valid JSON") from None
        except jwt.PyJWTError:
            # PyJWT's own header checks, `crit` among them: an extension it does not understand.
            raise AuthRefused("token header has critical extensions this server cannot honour") from None
        except (ValueError, TypeError, RecursionError):
            raise AuthRefused("token header is not valid JSON") from None
        return header

    def _decode(self, token: str, key: Any, algorithm: str) -> dict[str, Any]:
        try:
            return jwt.decode(
                token,
                key=key,
                algorithms=[algorithm],
                audience=self.settings.resource,
                issuer=self.settings.issuer,
                leeway=self.settings.leeway,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.MissingRequiredClaimError as error:
            raise AuthRefused(f"token lacks the {error.claim!r} claim") from None
        except jwt.PyJWTError as error:
            reason = next(
                (text for kind, text in _REASONS if isinstance(error, kind)),
                f"token refused ({type(error).__name__})",
            )
            raise AuthRefused(reason) from None
        except (ValueError, TypeError, RecursionError):
            raise AuthRefused("token is not a well-formed JWT") from None

    def _caller(self, claims: dict[str, Any]) -> Caller:
        client_id = claims.get("client_id", claims.get("azp"))
        if client_id is not None and not isinstance(client_id, str):
            raise AuthRefused("token client_id is not a string")
        subject = claims.get("sub", client_id)
        if not isinstance(subject, str) or not subject:
            raise AuthRefused("token names no subject (sub)")
        exp = claims["exp"]
        return Caller(
            method="oauth",
            subject=subject,
            scopes=token_scopes(claims),
            claims=frozen_claims(claims),
            client_id=client_id,
            issuer=self.settings.issuer,
            expires_at=int(exp) if isinstance(exp, int | float) else None,
        )

    async def _key_for(self, kid: str | None) -> _Key:
        key = self._pick(kid)
        if key is not None and not self._stale():
            return key
        async with self._fetching:
            # Another request may have fetched while this one waited for the lock.
            key = self._pick(kid)
            if key is not None and not self._stale():
                return key
            now = self._clock()
            if self._tried_at is None or now - self._tried_at >= self.settings.refetch_interval:
                self._tried_at = now
                try:
                    self._keys = await self._fetch_keys()
                    self._fetched_at = now
                except AuthRefused:
                    # An issuer that cannot be reached does not end the keys already held:
                    # the next try waits for the interval like any other.
                    if key is None:
                        raise
        if self._fetched_at is None:
            raise AuthRefused("the issuer's keys could not be read yet", "temporarily_unavailable")
        key = self._pick(kid)
        if key is None:
            raise AuthRefused("token signed by a key the issuer does not publish (unknown kid)")
        return key

    def _stale(self) -> bool:
        return self._fetched_at is None or self._clock() - self._fetched_at >= self.settings.keys_max_age

    def _pick(self, kid: str | None) -> _Key | None:
        if kid is not None:
            return self._keys.get(kid)
        # A token without a key id is only usable when there is one key it could mean.
        return next(iter(self._keys.values())) if len(self._keys) == 1 else None

    async def _fetch_keys(self) -> dict[str | None, _Key]:
        if self._jwks_uri is None:
            metadata = await discover_metadata(self._fetcher, self.settings.issuer)
            jwks_uri = metadata.get("jwks_uri")
            if not isinstance(jwks_uri, str) or not is_trusted_transport(jwks_uri):
                raise AuthRefused(
                    f"issuer {self.settings.issuer} publishes no https jwks_uri", "temporarily_unavailable"
                )
            self._jwks_uri = jwks_uri
        return parse_jwks(await self._fetcher.get_json(self._jwks_uri))


def parse_jwks(document: dict[str, Any]) -> dict[str | None, _Key]:
    """The signing keys of a JWKS by key id. Keys this server cannot use (symmetric, encryption
    keys, unknown types, malformed) are left out rather than failing the set: an issuer may
    publish keys for other purposes beside its signing keys."""
    keys: dict[str | None, _Key] = {}
    entries = document.get("keys")
    if not isinstance(entries, list):
        raise AuthRefused("the issuer's JWKS has no key list", "temporarily_unavailable")
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
            continue
        kty, crv = entry.get("kty"), entry.get("crv")
        allowed = _ALGORITHMS_BY_KEY.get((kty, None if kty == "RSA" else crv))
        if allowed is None:
            continue
        if "alg" in entry:
            allowed = allowed & {entry["alg"]}
        kid = entry.get("kid")
        if not allowed or (kid is not None and not isinstance(kid, str)):
            continue
        try:
            public = jwt.PyJWK(entry, algorithm=sorted(allowed)[0]).key
        except (jwt.PyJWTError, ValueError, TypeError, KeyError):
            continue
        if hasattr(public, "private_numbers") or hasattr(public, "private_bytes_raw"):
            continue  # a private key published by mistake is not a key to trust
        keys[kid] = _Key(public, allowed)
    return keys


def token_scopes(claims: dict[str, Any]) -> frozenset[str]:
    """A token's scopes: RFC 9068's space-separated `scope`, or the `scp` list some issuers use."""
    scope = claims.get("scope")
    if scope is not None:
        if not isinstance(scope, str):
            raise AuthRefused("token scope claim is not a string")
        return frozenset(scope.split())
    scp = claims.get("scp")
    if scp is None:
        return frozenset()
    if isinstance(scp, str):
        return frozenset(scp.split())
    if isinstance(scp, list) and all(isinstance(item, str) for item in scp):
        return frozenset(scp)
    raise AuthRefused("token scp claim is not a list of strings")

"""JWT access tokens against a real authorization server: the ones it issues verify, and every
attack in issue 27's table is refused with its own reason (and never with a traceback)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import secrets
import socket
import time

import httpx
import pytest
from joserfc import jwt as jose_jwt
from joserfc.jwk import RSAKey

from lynxc.runtime.auth.refusals import AuthRefused
from lynxc.runtime.auth.tokens import JwtSettings, JwtVerifier, parse_jwks
from tests.fixtures.auth_server import TestAuthorizationServer
from tests.runtime.auth.common import RESOURCE, Clock

pytestmark = pytest.mark.anyio


def verifier(server: TestAuthorizationServer, clock: Clock | None = None, **settings: object) -> JwtVerifier:
    return JwtVerifier(
        JwtSettings(issuer=server.issuer, resource=RESOURCE, **settings),  # type: ignore[arg-type]
        clock=clock or Clock(),
    )


def issued(server: TestAuthorizationServer, resource: str = RESOURCE, scope: str = "tools:read") -> str:
    """An access token from the server's token endpoint (client credentials grant)."""
    answer = httpx.post(
        f"{server.issuer}/token",
        data={"grant_type": "client_credentials", "scope": scope, "resource": resource},
        auth=("machine", "machine-secret"),
    )
    assert answer.status_code == 200, answer.text
    return answer.json()["access_token"]


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64json(value: object) -> str:
    return b64(json.dumps(value).encode())


async def refusal(verifier: JwtVerifier, token: str) -> AuthRefused:
    with pytest.raises(AuthRefused) as refused:
        await verifier.authenticate(token)
    assert await verifier.verify_token(token) is None
    assert token == "" or token[-20:] not in refused.value.reason  # never echoes the token
    return refused.value


async def test_a_token_from_the_issuer_verifies_with_its_scopes_and_claims(
    auth_server: TestAuthorizationServer,
) -> None:
    token = issued(auth_server, scope="tools:read admin")
    caller = await verifier(auth_server).authenticate(token)
    assert caller.method == "oauth"
    assert caller.subject == "machine" and caller.client_id == "machine"
    assert caller.scopes == {"tools:read", "admin"}
    assert caller.issuer == auth_server.issuer
    assert caller.claims["aud"] == RESOURCE
    assert caller.expires_at is not None and caller.expires_at > time.time()
    with pytest.raises(TypeError):
        caller.claims["sub"] = "someone else"  # type: ignore[index]


async def test_the_sdk_protocol_gives_an_access_token_for_this_resource(
    auth_server: TestAuthorizationServer,
) -> None:
    token = issued(auth_server)
    access = await verifier(auth_server).verify_token(token)
    assert access is not None
    assert access.resource == RESOURCE and access.scopes == ["tools:read"] and access.subject == "machine"


async def test_ec_keys_verify_too(auth_server: TestAuthorizationServer) -> None:
    ec_kid = next(kid for kid in auth_server.keyring.kids if kid.startswith("ec-"))
    token = auth_server.sign(auth_server.claims(RESOURCE), kid=ec_kid)
    assert (await verifier(auth_server).authenticate(token)).subject == "alice"


async def test_scp_lists_are_scopes(auth_server: TestAuthorizationServer) -> None:
    token = auth_server.sign(auth_server.claims(RESOURCE, scope=None, scp=["a", "b"]))
    assert (await verifier(auth_server).authenticate(token)).scopes == {"a", "b"}


async def test_a_token_within_the_leeway_still_verifies(auth_server: TestAuthorizationServer) -> None:
    token = auth_server.sign(auth_server.claims(RESOURCE, exp=int(time.time()) - 20))
    await verifier(auth_server).authenticate(token)


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        ({"exp": -3600}, "token expired"),
        ({"nbf": 3600}, "not valid yet"),
        ({"iat": 3600}, "not valid yet"),
        ({"exp": None}, "lacks the 'exp' claim"),
        ({"aud": None}, "lacks the 'aud' claim"),
        ({"iss": "http://127.0.0.1:1/evil"}, "another issuer"),
        ({"aud": "http://127.0.0.1:8001/other"}, "another resource"),
        ({"aud": ["http://127.0.0.1:8001/other", "x"]}, "another resource"),
        ({"sub": None, "client_id": None}, "no subject"),
        ({"sub": 42}, "subject (sub) is not a string"),
        ({"jti": 42}, "token id (jti) is not a string"),
        ({"scope": ["tools:read"]}, "scope claim is not a string"),
        ({"scope": None, "scp": [1]}, "scp claim is not a list"),
    ],
)
async def test_a_validly_signed_token_with_bad_claims_is_refused(
    auth_server: TestAuthorizationServer, overrides: dict[str, object], reason: str
) -> None:
    now = int(time.time())
    shifted = {
        key: now + value if key in ("exp", "nbf", "iat") and isinstance(value, int) else value
        for key, value in overrides.items()
    }
    refused = await refusal(verifier(auth_server), auth_server.sign(auth_server.claims(RESOURCE, **shifted)))
    assert reason in refused.reason and refused.status == 401 and refused.error == "invalid_token"


async def test_a_token_the_issuer_made_for_another_resource_is_refused(
    auth_server: TestAuthorizationServer,
) -> None:
    """No token passthrough (RFC 8707): a token the same issuer gave for another server."""
    token = issued(auth_server, resource="http://127.0.0.1:8001/other")
    assert "another resource" in (await refusal(verifier(auth_server), token)).reason


async def test_no_token(auth_server: TestAuthorizationServer) -> None:
    assert (await refusal(verifier(auth_server), "")).reason == "no token"


async def test_alg_none_is_refused(auth_server: TestAuthorizationServer) -> None:
    kid = auth_server.keyring.signer_kid
    body = b64json(auth_server.claims(RESOURCE))
    for signature in ("", "c2ln"):
        token = f"{b64json({'alg': 'none', 'kid': kid})}.{body}.{signature}"
        assert "algorithm 'none' not allowed" in (await refusal(verifier(auth_server), token)).reason


async def test_hs256_signed_with_the_public_key_is_refused(auth_server: TestAuthorizationServer) -> None:
    """Algorithm confusion: the public key (which anyone can fetch) used as an HMAC secret."""
    kid = auth_server.keyring.signer_kid
    key, _ = auth_server.keyring.get(kid)
    public_pem = key.as_pem(private=False)
    signing_input = (
        f"{b64json({'alg': 'HS256', 'kid': kid, 'typ': 'JWT'})}.{b64json(auth_server.claims(RESOURCE))}"
    )
    signature = b64(hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest())
    refused = await refusal(verifier(auth_server), f"{signing_input}.{signature}")
    assert "algorithm 'HS256' not allowed" in refused.reason


def test_symmetric_algorithms_cannot_even_be_configured() -> None:
    with pytest.raises(ValueError, match="only asymmetric"):
        JwtSettings(issuer="http://127.0.0.1:1", resource=RESOURCE, algorithms=frozenset({"RS256", "HS256"}))


async def test_an_algorithm_the_key_type_cannot_use_is_refused(auth_server: TestAuthorizationServer) -> None:
    """An ES256 token whose header names the RSA key: refused before any signature check."""
    rsa_kid = next(kid for kid in auth_server.keyring.kids if kid.startswith("rsa-"))
    ec_kid = next(kid for kid in auth_server.keyring.kids if kid.startswith("ec-"))
    token = auth_server.sign(auth_server.claims(RESOURCE), kid=ec_kid)
    _, body, signature = token.split(".")
    forged = f"{b64json({'alg': 'ES256', 'kid': rsa_kid})}.{body}.{signature}"
    assert "is not one its key allows" in (await refusal(verifier(auth_server), forged)).reason


async def test_a_tampered_payload_is_refused(auth_server: TestAuthorizationServer) -> None:
    header, _, signature = issued(auth_server).split(".")
    claims = auth_server.claims(RESOURCE, scope="tools:read admin")
    refused = await refusal(verifier(auth_server), f"{header}.{b64json(claims)}.{signature}")
    assert refused.reason == "token signature does not verify"


async def test_a_100_kb_token_is_refused_before_parsing(auth_server: TestAuthorizationServer) -> None:
    token = "a" * 50_000 + "." + "b" * 50_000 + "." + "c" * 2_000
    started = time.perf_counter()
    assert "longer than 8192 bytes" in (await refusal(verifier(auth_server), token)).reason
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        ("not a token", "not a signed JWT"),
        ("a.b.c.d.e", "not a signed JWT"),  # a JWE
        ("e30.e30", "not a signed JWT"),
        ("bm90IGpzb24.e30.c2ln", "header is not valid JSON"),
        (f"{b64json([1])}.e30.c2ln", "header is not valid JSON"),
    ],
)
async def test_malformed_tokens_are_refused(
    auth_server: TestAuthorizationServer, token: str, reason: str
) -> None:
    assert reason in (await refusal(verifier(auth_server), token)).reason


async def test_a_deeply_nested_payload_is_refused_without_a_traceback(
    auth_server: TestAuthorizationServer,
) -> None:
    kid = auth_server.keyring.signer_kid
    token = f"{b64json({'alg': 'RS256', 'kid': kid})}.{b64(b'[' * 5000)}.c2ln"
    refused = await refusal(verifier(auth_server), token)
    assert "well-formed" in refused.reason or "signature" in refused.reason


async def test_critical_header_extensions_are_refused(auth_server: TestAuthorizationServer) -> None:
    # (joserfc will not sign a header with an extension it does not know either, so it is forged.)
    _, body, signature = issued(auth_server).split(".")
    header = {"alg": "RS256", "kid": auth_server.keyring.signer_kid, "crit": ["x-ext"], "x-ext": 1}
    token = f"{b64json(header)}.{body}.{signature}"
    assert "critical extensions" in (await refusal(verifier(auth_server), token)).reason


async def test_a_flood_of_unknown_kids_costs_one_jwks_fetch_per_interval(
    fresh_auth_server: TestAuthorizationServer,
) -> None:
    server = fresh_auth_server
    clock = Clock()
    check = verifier(server, clock)
    await check.authenticate(issued(server))
    assert server.jwks_fetches == 1
    rogue = RSAKey.generate_key(2048, private=True)

    async def flood() -> None:
        for _ in range(50):
            claims = server.claims(RESOURCE)
            token = jose_jwt.encode({"alg": "RS256", "kid": secrets.token_hex(8)}, claims, rogue)
            assert "unknown kid" in (await refusal(check, token)).reason

    await flood()
    assert server.jwks_fetches == 1  # the first unknown kid came within 30 s of the last fetch
    clock.now += 31
    await flood()
    assert server.jwks_fetches == 2  # one more, then the interval holds again
    await check.authenticate(issued(server))  # known keys still verify without a fetch
    assert server.jwks_fetches == 2


async def test_key_rotation_at_the_issuer(fresh_auth_server: TestAuthorizationServer) -> None:
    server = fresh_auth_server
    clock = Clock()
    check = verifier(server, clock)
    old_kid = server.keyring.signer_kid
    old_token = issued(server)
    await check.authenticate(old_token)

    new_kid = server.keyring.rotate("RSA")
    new_token = issued(server)
    assert json.loads(base64.urlsafe_b64decode(new_token.split(".")[0] + "==")).get("kid") == new_kid
    clock.now += 31  # past the refetch interval: the unknown kid is looked up
    await check.authenticate(new_token)
    assert server.jwks_fetches == 2
    await check.authenticate(old_token)  # both keys are published during the overlap

    server.keyring.retire(old_kid)
    clock.now += 600  # the held keys are past their age: read again, without the old one
    assert "unknown kid" in (await refusal(check, old_token)).reason
    await check.authenticate(new_token)
    assert server.jwks_fetches == 3


async def test_openid_discovery_is_the_fallback(fresh_auth_server: TestAuthorizationServer) -> None:
    fresh_auth_server.serve_rfc8414 = False
    await verifier(fresh_auth_server).authenticate(issued(fresh_auth_server))


async def test_metadata_naming_another_issuer_is_not_trusted(
    fresh_auth_server: TestAuthorizationServer,
) -> None:
    fresh_auth_server.metadata_issuer = "http://127.0.0.1:1/someone-else"
    refused = await refusal(verifier(fresh_auth_server), issued(fresh_auth_server))
    assert "names issuer" in refused.reason and refused.status == 503


async def test_an_oversized_key_set_is_not_read_whole(auth_server: TestAuthorizationServer) -> None:
    refused = await refusal(verifier(auth_server, max_document_bytes=200), issued(auth_server))
    assert "sent more than 200 bytes" in refused.reason and refused.status == 503


async def test_an_unreachable_issuer_is_unavailable_not_unauthorized(
    auth_server: TestAuthorizationServer,
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    check = JwtVerifier(JwtSettings(issuer=f"http://127.0.0.1:{port}", resource=RESOURCE))
    refused = await refusal(check, issued(auth_server))
    assert refused.status == 503 and "could not be read" in refused.reason


async def test_an_issuer_that_never_answers_costs_one_timeout(auth_server: TestAuthorizationServer) -> None:
    """A server that accepts the connection and then says nothing: bounded by the deadline."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        issuer = f"http://127.0.0.1:{silent.getsockname()[1]}"
        check = JwtVerifier(JwtSettings(issuer=issuer, resource=RESOURCE, http_timeout=0.5))
        started = time.perf_counter()
        refused = await refusal(check, issued(auth_server))  # two calls: one fetch, then the rate limit
        assert time.perf_counter() - started < 3
    assert refused.status == 503


async def test_concurrent_first_requests_share_one_key_fetch(
    fresh_auth_server: TestAuthorizationServer,
) -> None:
    server = fresh_auth_server
    check = verifier(server)
    tokens = [issued(server) for _ in range(20)]
    callers = await asyncio.gather(*(check.authenticate(token) for token in tokens))
    assert {caller.subject for caller in callers} == {"machine"}
    assert server.jwks_fetches == 1


@pytest.mark.parametrize(
    "issuer", ["http://auth.example.com", "ftp://127.0.0.1/x", "https://", "auth.example.com"]
)
def test_an_issuer_over_plain_http_elsewhere_is_a_configuration_error(issuer: str) -> None:
    with pytest.raises(ValueError, match="must be an https:// URL"):
        JwtSettings(issuer=issuer, resource=RESOURCE)


def test_loopback_and_https_issuers_are_accepted() -> None:
    for issuer in ("https://auth.example.com", "http://localhost:8080/realms/x", "http://[::1]:1"):
        JwtSettings(issuer=issuer, resource=RESOURCE)


def rsa_jwk(**extra: object) -> dict[str, object]:
    return {**RSAKey.generate_key(2048, private=False).as_dict(private=False), **extra}


def test_only_usable_signing_keys_are_taken_from_a_key_set() -> None:
    private = RSAKey.generate_key(2048, private=True).as_dict(private=True)
    document = {
        "keys": [
            rsa_jwk(kid="good"),
            rsa_jwk(kid="pinned", alg="PS256"),
            rsa_jwk(kid="encryption", use="enc"),
            {"kty": "oct", "kid": "symmetric", "k": b64(b"secret" * 6)},
            {**private, "kid": "leaked-private"},
            {"kty": "RSA", "kid": "broken", "n": "!!", "e": "AQAB"},
            {"kty": "EC", "crv": "P-256", "kid": "no-points"},
            rsa_jwk(kid=7),
            rsa_jwk(kid="wrong-alg", alg="ES256"),
            "not a key",
        ]
    }
    keys = parse_jwks(document)
    assert set(keys) == {"good", "pinned"}
    assert keys["pinned"].algorithms == {"PS256"} and "RS256" in keys["good"].algorithms
    with pytest.raises(AuthRefused, match="no key list"):
        parse_jwks({"keys": "x"})


async def test_a_token_cannot_use_another_algorithm_than_its_key_is_pinned_to(
    fresh_auth_server: TestAuthorizationServer,
) -> None:
    """The issuer's JWKS says its RSA keys are for RS256; a PS256 token naming one is refused
    (PS256 signed by the same private key: only the algorithm differs)."""
    server = fresh_auth_server
    key, _ = server.keyring.get(server.keyring.signer_kid)
    token = jose_jwt.encode(
        {"alg": "PS256", "kid": key.kid}, server.claims(RESOURCE), key, algorithms=["PS256"]
    )
    assert "is not one its key allows" in (await refusal(verifier(server), token)).reason

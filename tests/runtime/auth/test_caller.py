"""The verified caller: what a tool may read of it, and what it may not change."""

from __future__ import annotations

import dataclasses

import pytest

from lynxc.runtime.auth.caller import Caller, frozen_claims
from lynxc.runtime.auth.refusals import AuthRefused


def caller() -> Caller:
    claims = {"email": "a@example.com", "groups": ["x"]}
    return Caller("oauth", "alice", frozenset({"tools:read"}), frozen_claims(claims), "app", "https://i", 99)


def test_scopes_needed_and_missing() -> None:
    assert caller().has_scopes(["tools:read"]) and not caller().has_scopes({"tools:read", "admin"})
    assert caller().missing_scopes(("admin", "tools:read", "b")) == ["admin", "b"]


def test_a_caller_and_its_claims_cannot_be_changed() -> None:
    original = {"groups": ["x"]}
    frozen = Caller("api_key", "k", frozenset(), frozen_claims(original))
    original["groups"].append("admin")  # the source changing later does not reach the caller
    assert frozen.claims["groups"] == ["x"]
    with pytest.raises(TypeError):
        frozen.claims["groups"] = ["admin"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        frozen.subject = "root"  # type: ignore[misc]


def test_the_sdk_view_of_a_caller() -> None:
    access = caller().access_token("t", "http://127.0.0.1:8000/mcp")
    assert (access.client_id, access.subject, access.scopes, access.expires_at) == (
        "app",
        "alice",
        ["tools:read"],
        99,
    )
    assert access.resource == "http://127.0.0.1:8000/mcp" and access.claims == {**caller().claims}


@pytest.mark.parametrize(
    ("error", "status"),
    [
        ("invalid_token", 401),
        ("insufficient_scope", 403),
        ("invalid_request", 400),
        ("temporarily_unavailable", 503),
    ],
)
def test_each_refusal_has_its_status(error: str, status: int) -> None:
    refused = AuthRefused("why", error)  # type: ignore[arg-type]
    assert refused.status == status and refused.reason == str(refused) == "why"

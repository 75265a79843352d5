"""Identity-bound parameters: arguments a caller may not send, filled from who the caller is.

A tool's tools/list entry names them under `_meta["lynxc/auth"]["claims"]` (`{param: {claim,
type}}`), and they are absent from its published inputSchema. A call that sends one anyway is
refused, naming the parameter, before anything runs: quietly overwriting it would hide a client
that tries to act as someone else. The value is the caller's claim, checked to be of the
parameter's JSON type (a bool is not a number, and a float with a fraction is not an integer);
a missing claim or one of another type refuses the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .auth.caller import Caller
from .wire_values import json_kind

AUTH_META_KEY = "lynxc/auth"  # where tools.json (and tools/list) say who may call what
# The setting that gives a stdio server its caller's claims: stdio has no caller authentication
# (the client started the process), so identity-bound parameters read their values from it.
CALLER_CLAIMS_SETTING = "caller_claims"

_JSON_TYPE_CHECKS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
}


@dataclass(frozen=True)
class ClaimParam:
    name: str
    claim: str
    type: str


@dataclass(frozen=True)
class ToolAccess:
    """What a tool's `_meta` says of who may call it."""

    scopes: frozenset[str] = frozenset()
    claims: tuple[ClaimParam, ...] = ()


class BindingRefused(ValueError):
    """The call cannot run with this caller: the message says which parameter and claim."""


def tool_access(tool: Mapping[str, Any]) -> ToolAccess:
    meta = (tool.get("_meta") or {}).get(AUTH_META_KEY) or {}
    claims = tuple(
        ClaimParam(name, entry["claim"], entry["type"]) for name, entry in (meta.get("claims") or {}).items()
    )
    return ToolAccess(frozenset(meta.get("scopes") or ()), claims)


def bind_claims(
    arguments: Mapping[str, Any], claims: tuple[ClaimParam, ...], caller: Caller | None
) -> dict[str, Any]:
    """`arguments` with each bound parameter set from `caller`'s claims, or BindingRefused."""
    sent = [param.name for param in claims if param.name in arguments]
    if sent:
        names = ", ".join(f"{name!r}" for name in sent)
        raise BindingRefused(
            f"{names}: comes from the caller's verified identity and cannot be sent (rule from_claim)"
        )
    bound = dict(arguments)
    for param in claims:
        if caller is None:
            raise BindingRefused(
                f"{param.name!r} comes from the caller's {param.claim!r} claim, and this call has no "
                f"verified caller: serve over HTTP with authentication, or on stdio give the claims with "
                f"--set {CALLER_CLAIMS_SETTING}='{{\"{param.claim}\": ...}}'"
            )
        if param.claim not in caller.claims:
            raise BindingRefused(f"the caller has no {param.claim!r} claim, which {param.name!r} needs")
        value = caller.claims[param.claim]
        if not _JSON_TYPE_CHECKS[param.type](value):
            kind = json_kind(value)
            raise BindingRefused(
                f"the caller's {param.claim!r} claim is {kind}, and {param.name!r} needs a {param.type}"
            )
        bound[param.name] = value
    return bound


def local_caller(settings: Mapping[str, Any]) -> Caller | None:
    """Who calls over stdio: the operator who started the server, with the claims the
    `caller_claims` setting gives (None when it gives none). Scopes do not apply on stdio."""
    from .auth.caller import frozen_claims

    claims = settings.get(CALLER_CLAIMS_SETTING)
    if not isinstance(claims, Mapping):
        return None
    subject = claims.get("sub")
    return Caller(
        method="local",
        subject=subject if isinstance(subject, str) else "local",
        scopes=frozenset(),
        claims=frozen_claims(claims),
    )

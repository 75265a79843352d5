"""Lower and check who may call a server's tools (issue 27): `server.auth`, each tool's
`auth.scopes`, and parameters bound to a claim of the verified caller (`from_claim`).

What the runtime needs at serving time (issuer, resource, the keys file) is named here and
checked as far as a build can: a value written in the spec is checked now, one taken from a
setting when the server starts on HTTP (runtime/auth/config.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from lynxc.runtime.auth.urls import is_trusted_transport
from lynxc.runtime.caller_arguments import CALLER_CLAIMS_SETTING

from ..diagnostics import Diagnostic
from ..ir import AuthIR, ClaimParamIR, ValueSourceIR
from ..rules import diagnostic
from ..spec.load import SpecSource, ToolSource
from ..spec.models import SchemaNode, SettingRef
from ..suggest import did_you_mean

CLAIM_TYPES = ("string", "integer", "number", "boolean")
# RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5B\x5D-\x7E]+")

CALLER_CLAIMS_NODE = SchemaNode(
    type="object",
    nullable=True,
    default=None,
    description="Over stdio only: the claims of the local caller that identity-bound parameters "
    'read, e.g. {"sub": "ann", "email": "ann@example.com"}. Over HTTP they come from the verified '
    "token or API key, never from here.",
)


def _optional_string(description: str) -> SchemaNode:
    # Optional as a setting: only serving over HTTP needs it, and the runtime says so then.
    return SchemaNode(type="string", nullable=True, default=None, description=description)


def lower_server_auth(source: SpecSource) -> tuple[AuthIR | None, dict[str, SchemaNode], list[Diagnostic]]:
    """(the server's auth, the settings it implies, diagnostics)."""
    server = source.server.server
    auth = server.auth
    if auth is None:
        return None, {}, []
    doc = source.server_doc
    diagnostics: list[Diagnostic] = []
    implied: dict[str, SchemaNode] = {}
    if "http" not in server.transports:
        diagnostics.append(
            diagnostic(
                "AUTH_STDIO_ONLY",
                "server.auth authenticates HTTP callers, but the server is served only on stdio",
                doc.span(("server", "auth"), key=True),
                "add http to server.transports, or drop server.auth (identity-bound parameters "
                f"on stdio read the {CALLER_CLAIMS_SETTING} setting)",
            )
        )
    if auth.oauth is None and auth.api_keys is None:
        diagnostics.append(
            diagnostic(
                "AUTH_METHOD_MISSING",
                "server.auth declares no way to authenticate callers",
                doc.span(("server", "auth"), key=True),
                "add oauth: {issuer: ..., resource: ...} or api_keys: {file: {setting: NAME}}",
            )
        )
    seen: set[str] = set()
    for index, scope in enumerate(auth.scopes):
        problem = scope_problem(scope) or ("it is declared twice" if scope in seen else None)
        if problem:
            diagnostics.append(
                diagnostic(
                    "AUTH_SCOPE_INVALID",
                    f"scope {scope!r}: {problem}",
                    doc.span(("server", "auth", "scopes", index)),
                )
            )
        seen.add(scope)

    def source_of(value: str | SettingRef, path: tuple[str | int, ...], what: str) -> ValueSourceIR:
        if isinstance(value, SettingRef):
            implied[value.setting] = _optional_string(f"{what} (server.auth.{'.'.join(map(str, path))}).")
            return ValueSourceIR(setting=value.setting)
        problem = url_problem(value, issuer=path[-1] == "issuer")
        if problem:
            diagnostics.append(
                diagnostic(
                    "AUTH_URL_INVALID",
                    f"oauth {path[-1]} {value!r}: {problem}",
                    doc.span(("server", "auth", *path)),
                    f"e.g. {_EXAMPLES[path[-1]]}, or {{setting: NAME}} to give it when serving",
                )
            )
        return ValueSourceIR(value=value)

    issuer = resource = introspection = None
    if auth.oauth is not None:
        issuer = source_of(auth.oauth.issuer, ("oauth", "issuer"), "The authorization server's issuer URL")
        resource = source_of(
            auth.oauth.resource, ("oauth", "resource"), "This server's canonical resource URI"
        )
        if auth.oauth.introspection is not None:
            client = auth.oauth.introspection
            implied[client.client_id.setting] = _optional_string(
                "This server's client id at the issuer's introspection endpoint."
            )
            implied[client.client_secret.setting] = _optional_string(
                "This server's client secret at the issuer's introspection endpoint."
            )
            introspection = (client.client_id.setting, client.client_secret.setting)
    keys_setting = None
    if auth.api_keys is not None:
        keys_setting = auth.api_keys.file.setting
        implied[keys_setting] = _optional_string(
            "The API keys file (`lynxc keys add NAME --file PATH`): hashes, names, scopes and claims."
        )
    ir = AuthIR(tuple(auth.scopes), issuer, resource, introspection, keys_setting)
    return ir, implied, diagnostics


_EXAMPLES = {"issuer": "https://auth.example.com/realms/shop", "resource": "https://mcp.example.com/mcp"}


def scope_problem(scope: str) -> str | None:
    if not SCOPE_TOKEN.fullmatch(scope):
        return "a scope is printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3)"
    return None


def url_problem(url: str, *, issuer: bool) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an absolute http(s) URL"
    if parts.fragment or "#" in url:
        return "a URL with a fragment cannot name a resource or an issuer"
    if issuer and not is_trusted_transport(url):
        return "an issuer is reached over https (or http on this machine only): its keys decide every token"
    return None


def lower_tool_auth(
    source: ToolSource,
    auth: AuthIR | None,
    transports: tuple[str, ...],
    annotations: Mapping[str, bool],
    input_schema: Mapping[str, Any],
) -> tuple[tuple[str, ...], tuple[ClaimParamIR, ...], list[Diagnostic]]:
    """(the tool's scopes, its identity-bound parameters, diagnostics)."""
    tool, doc, base = source.tool, source.doc, source.base
    diagnostics: list[Diagnostic] = []
    scopes: list[str] = []
    declared = tool.auth.scopes if tool.auth is not None else []
    if declared and auth is None:
        diagnostics.append(
            diagnostic(
                "AUTH_NOT_DECLARED",
                f"tool '{tool.name}' requires scopes, but the server authenticates no caller",
                doc.span((*base, "auth"), key=True),
                "declare server.auth with these scopes",
            )
        )
    for index, scope in enumerate(declared):
        span = doc.span((*base, "auth", "scopes", index))
        if (problem := scope_problem(scope)) is not None:
            diagnostics.append(diagnostic("AUTH_SCOPE_INVALID", f"scope {scope!r}: {problem}", span))
        elif auth is not None and scope not in auth.scopes:
            diagnostics.append(
                diagnostic(
                    "AUTH_SCOPE_UNKNOWN",
                    f"scope {scope!r} is not one of server.auth.scopes",
                    span,
                    did_you_mean(scope, auth.scopes) or f"declared: {', '.join(auth.scopes) or 'none'}",
                )
            )
        elif scope not in scopes:
            scopes.append(scope)
    if auth is not None and annotations.get("destructiveHint") and not declared:
        diagnostics.append(
            diagnostic(
                "AUTH_DESTRUCTIVE_UNSCOPED",
                f"tool '{tool.name}' is destructive, and any authenticated caller may run it",
                doc.span((*base, "name")),
                "require a scope: auth: {scopes: [...]}",
            )
        )

    claims: list[ClaimParamIR] = []
    properties = input_schema.get("properties", {})
    for name, parameter in tool.parameters.items():
        if parameter.from_claim is None:
            continue
        path = (*base, "parameters", name)
        problem = _claim_problem(parameter, properties.get(name, {}))
        if problem is not None:
            diagnostics.append(
                diagnostic("PARAM_CLAIM_INVALID", f"parameter '{name}' {problem}", doc.span(path))
            )
            continue
        if auth is None and "http" in transports:
            diagnostics.append(
                diagnostic(
                    "AUTH_NOT_DECLARED",
                    f"parameter '{name}' is bound to the caller's '{parameter.from_claim}' claim, but "
                    "the server authenticates no caller over HTTP",
                    doc.span((*path, "from_claim")),
                    f"declare server.auth, or serve only on stdio (transports: [stdio]) where the "
                    f"{CALLER_CLAIMS_SETTING} setting gives the claims",
                )
            )
            continue
        claims.append(ClaimParamIR(name, parameter.from_claim, str(parameter.type)))
    return tuple(scopes), tuple(claims), diagnostics


def _claim_problem(parameter: Any, schema: Mapping[str, Any]) -> str | None:
    if not parameter.from_claim.strip():
        return "has an empty from_claim: name the claim, e.g. from_claim: email"
    if parameter.type not in CLAIM_TYPES or parameter.nullable or "anyOf" in schema:
        return f"is bound to a claim, so it must be a {', '.join(CLAIM_TYPES[:-1])} or boolean (not nullable)"
    if "default" in parameter.model_fields_set:
        return (
            "is bound to a claim and has a default: a caller without the claim would get the default identity"
        )
    return None


def bound_resources_without_auth(source: SpecSource, bound: list[tuple[str, Any]]) -> list[Diagnostic]:
    """Records bound to a claim need an identity for every HTTP caller, as parameters do."""
    server = source.server.server
    if server.auth is not None or "http" not in server.transports:
        return []
    return [
        diagnostic(
            "AUTH_NOT_DECLARED",
            f"collection '{name}' binds fields to the caller's claims, but the server authenticates no "
            "caller over HTTP",
            span,
            f"declare server.auth, or serve only on stdio (transports: [stdio]) where the "
            f"{CALLER_CLAIMS_SETTING} setting gives the claims",
        )
        for name, span in bound
    ]

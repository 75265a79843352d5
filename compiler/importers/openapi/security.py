"""Security schemes to the server's `http.auth` and its secret settings. A server attaches one
credential, so one scheme is chosen: the one most imported operations accept; an operation that
accepts none that lynxc can send, or only others, is skipped with the reason."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .document import Document
from .operations import Operation


@dataclass(frozen=True)
class Auth:
    scheme: str  # the scheme's name in the document
    spec: dict[str, Any]  # what goes under server.http.auth
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)


def schemes(document: Document) -> dict[str, Any]:
    if document.root.get("swagger") is not None:
        found = document.root.get("securityDefinitions")
    else:
        found = (document.root.get("components") or {}).get("securitySchemes")
    if not isinstance(found, dict):
        return {}
    return {str(name): document.follow(document.at(*_where(document), name)).value for name in found}


def _where(document: Document) -> tuple[str, ...]:
    return (
        ("securityDefinitions",)
        if document.root.get("swagger") is not None
        else ("components", "securitySchemes")
    )


def _secret(description: str) -> dict[str, Any]:
    return {"type": "string", "nullable": True, "default": None, "description": description}


def map_scheme(name: str, scheme: Any, prefix: str, scopes: list[str]) -> Auth | str:
    """The auth of one scheme, or why lynxc cannot send it."""
    if not isinstance(scheme, dict):
        return "it is not an object"
    kind = scheme.get("type")
    where = f"the API's security scheme '{name}'"
    if kind == "basic" or (kind == "http" and str(scheme.get("scheme", "")).lower() == "basic"):
        user, password = f"{prefix}_username", f"{prefix}_password"
        return Auth(
            name,
            {"basic": {"username": {"setting": user}, "password": {"setting": password}}},
            {
                user: _secret(f"The user name for HTTP basic authentication ({where})."),
                password: _secret(f"The password for HTTP basic authentication ({where}); never logged."),
            },
        )
    if kind == "http" and str(scheme.get("scheme", "")).lower() == "bearer":
        token = f"{prefix}_token"
        return Auth(
            name,
            {"bearer": {"token": {"setting": token}}},
            {
                token: _secret(
                    f"The bearer token sent as `Authorization: Bearer ...` ({where}); never logged."
                )
            },
        )
    if kind == "http":
        return f"HTTP '{scheme.get('scheme')}' authentication is not one lynxc sends"
    if kind == "apiKey":
        place = scheme.get("in")
        if place not in ("header", "query") or not isinstance(scheme.get("name"), str):
            return f"an API key in '{place}' is not one lynxc sends (header or query only)"
        key = f"{prefix}_api_key"
        return Auth(
            name,
            {"api_key": {"in": place, "name": scheme["name"], "value": {"setting": key}}},
            {key: _secret(f"The API key sent in the {place} '{scheme['name']}' ({where}); never logged.")},
        )
    if kind == "oauth2":
        return _oauth2(name, scheme, prefix, scopes, where)
    return f"'{kind}' security is not one lynxc sends"


def _oauth2(name: str, scheme: dict[str, Any], prefix: str, scopes: list[str], where: str) -> Auth | str:
    flows = scheme.get("flows") if isinstance(scheme.get("flows"), dict) else None
    if flows is None:  # 2.0: one flow, `application` being client credentials
        flow = scheme if scheme.get("flow") == "application" else None
        names = [str(scheme.get("flow"))]
    else:
        flow = flows.get("clientCredentials")
        names = sorted(map(str, flows))
    if not isinstance(flow, dict) or not isinstance(flow.get("tokenUrl"), str):
        return (
            f"OAuth 2 flow {', '.join(names)} needs a person's consent; lynxc sends client credentials only"
        )
    client_id, secret = f"{prefix}_client_id", f"{prefix}_client_secret"
    settings = {
        client_id: _secret(f"The OAuth 2 client id ({where}, client credentials)."),
        secret: _secret(f"The OAuth 2 client secret ({where}); never logged."),
    }
    token_url: Any = flow["tokenUrl"]
    if not token_url.startswith(("https://", "http://")):
        settings[f"{prefix}_token_url"] = {
            "type": "string",
            "description": f"The OAuth 2 token endpoint ({where} gives it relative: {token_url}).",
        }
        token_url = {"setting": f"{prefix}_token_url"}
    spec = {"token_url": token_url, "client_id": {"setting": client_id}, "client_secret": {"setting": secret}}
    if scopes:
        spec["scopes"] = scopes
    return Auth(name, {"oauth2_client_credentials": spec}, settings)


def choose_auth(document: Document, operations: list[Operation], prefix: str) -> Auth | None:
    """Pick the server's one scheme, and add a problem to each operation that cannot use it."""
    found = schemes(document)
    scopes: dict[str, set[str]] = {}
    for op in operations:
        for requirement in _requirements(op):
            for scheme_name, wanted in requirement.items():
                scopes.setdefault(scheme_name, set()).update(
                    str(s) for s in wanted or [] if isinstance(s, str)
                )
    mapped = {n: map_scheme(n, found[n], prefix, sorted(scopes.get(n, ()))) for n in sorted(found)}
    votes: Counter[str] = Counter()
    order: list[str] = []
    for op in operations:
        for requirement in _requirements(op):
            if len(requirement) == 1:
                (scheme_name,) = requirement
                if isinstance(mapped.get(scheme_name), Auth):
                    votes[scheme_name] += 1
                    if scheme_name not in order:
                        order.append(scheme_name)
    chosen = max(order, key=lambda n: (votes[n], -order.index(n))) if order else None
    for op in operations:
        requirements = _requirements(op)
        if not requirements or any(not r for r in requirements):
            continue  # anonymous access allowed
        if chosen is not None and any(list(r) == [chosen] for r in requirements):
            continue
        op.problems.append(_why_not(requirements, mapped, found, chosen))
    result = mapped.get(chosen) if chosen else None
    return result if isinstance(result, Auth) else None


def _requirements(op: Operation) -> list[dict[str, Any]]:
    return [r for r in op.security or [] if isinstance(r, dict)]


def _why_not(
    requirements: list[dict[str, Any]],
    mapped: dict[str, Auth | str],
    found: dict[str, Any],
    chosen: str | None,
) -> str:
    reasons = []
    for requirement in requirements:
        names = sorted(requirement)
        if len(names) > 1:
            reasons.append(f"{' and '.join(names)} together (lynxc sends one credential)")
        elif names[0] not in found:
            reasons.append(f"'{names[0]}', a scheme the document does not define")
        elif isinstance(mapped[names[0]], str):
            reasons.append(f"'{names[0]}': {mapped[names[0]]}")
        else:
            reasons.append(
                f"'{names[0]}', while the server authenticates with '{chosen}' (one scheme per server)"
            )
    return "its security needs " + "; or ".join(reasons)

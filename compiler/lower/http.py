"""Lower and check a server's HTTP tools (issue 28): `server.http` (the API's base URL, its
credentials, fixed headers) and each tool's `backend: {http: ...}` (one request: where each
parameter goes, what comes back).

Every check here is about the request a call will make, so that no call can build a request the
spec did not mean: each parameter is placed exactly once, path placeholders are required scalars
(the runtime encodes each as one segment), query values are scalars or lists of scalars, headers
scalars, a body only where the method has one, and a JSON answer is promised by an output schema
that the runtime's answer is checked against.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

from ..diagnostics import Diagnostic
from ..ir import (
    HTTP_RETRIES_SETTING,
    HTTP_TIMEOUT_SETTING,
    HttpToolIR,
    ToolIR,
    ValueSourceIR,
    canonical_json,
)
from ..rules import diagnostic
from ..spec.load import SpecSource, ToolSource
from ..spec.models import Cap, HttpApi, HttpBackend, SchemaNode, SettingRef
from ..suggest import did_you_mean
from .schema import JSON_SCHEMA_DIALECT

HTTP_BACKEND = "http.call"
HTTP_CAPS = {
    "max_response_bytes": Cap(
        value=1_048_576,
        max=67_108_864,
        unit="bytes",
        description="Bytes of the API's answer read at most; a longer answer is an error, never cut.",
    ),
    "max_output_json_bytes": Cap(
        value=1_048_576, unit="bytes", description="Bytes of JSON one result may take."
    ),
}
HTTP_SETTINGS = {
    HTTP_TIMEOUT_SETTING: SchemaNode(
        type="number",
        exclusiveMinimum=0,
        maximum=600,
        default=30,
        description="Seconds one call to the API may take in all, retries included.",
    ),
    HTTP_RETRIES_SETTING: SchemaNode(
        type="integer",
        minimum=0,
        maximum=5,
        default=2,
        description="Times an idempotent request is tried again on 429, 502, 503 or 504.",
    ),
}
METHODS_WITH_BODY = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SCALAR_TYPES = ("string", "integer", "number", "boolean")
# RFC 7230 token: what a header name may be made of.
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
TEXT_OUTPUT = {
    "$schema": JSON_SCHEMA_DIALECT,
    "type": "object",
    "additionalProperties": False,
    "required": ["text", "content_type"],
    "properties": {
        "text": {"type": "string", "description": "The answer's text."},
        "content_type": {"type": "string", "description": "Its media type, as the API gave it."},
    },
}


def is_http_tool(source: ToolSource) -> bool:
    return isinstance(source.tool.backend, HttpBackend)


def with_http_caps(source: ToolSource) -> ToolSource:
    """An HTTP tool's own caps, plus the HTTP caps it leaves out."""
    if not is_http_tool(source):
        return source
    caps = {**HTTP_CAPS, **source.tool.caps}
    return ToolSource(source.doc, source.tool.model_copy(update={"caps": caps}), source.base)


def _optional_secret(description: str) -> SchemaNode:
    # Optional as a setting, so a server starts (and lists its tools) without it; a call that
    # needs it is refused naming the setting.
    return SchemaNode(type="string", nullable=True, default=None, description=description)


def lower_http_api(
    source: SpecSource, http_tools: list[ToolSource]
) -> tuple[ValueSourceIR | None, str, tuple[tuple[str, str], ...], dict[str, SchemaNode], list[Diagnostic]]:
    """(base URL, auth as canonical JSON, fixed headers, implied settings, diagnostics)."""
    server = source.server.server
    doc = source.server_doc
    api = server.http
    diagnostics: list[Diagnostic] = []
    if api is None:
        if http_tools:
            first = http_tools[0]
            diagnostics.append(
                diagnostic(
                    "HTTP_API_MISSING",
                    f"tool '{first.tool.name}' calls an HTTP API, but the server declares none",
                    first.doc.span((*first.base, "backend"), key=True),
                    "declare server.http: {base_url: {setting: api_url}}",
                )
            )
        return None, "null", (), {}, diagnostics
    implied: dict[str, SchemaNode] = dict(HTTP_SETTINGS)
    if isinstance(api.base_url, SettingRef):
        implied[api.base_url.setting] = SchemaNode(
            type="string", description="The HTTP API's base URL, e.g. https://api.example.com/v1."
        )
        base_url = ValueSourceIR(setting=api.base_url.setting)
    else:
        problem = _url_problem(api.base_url)
        if problem:
            diagnostics.append(
                diagnostic(
                    "HTTP_URL_INVALID",
                    f"base_url {api.base_url!r}: {problem}",
                    doc.span(("server", "http", "base_url")),
                )
            )
        base_url = ValueSourceIR(value=api.base_url)
    auth, auth_settings, auth_diagnostics = _lower_auth(source, api)
    implied.update(auth_settings)
    diagnostics.extend(auth_diagnostics)
    for name, value in api.headers.items():
        problem = _header_problem(name) or (
            "a header value holds no line break or NUL" if any(c in value for c in "\r\n\0") else None
        )
        if problem:
            diagnostics.append(
                diagnostic(
                    "HTTP_HEADER_INVALID",
                    f"header {name!r}: {problem}",
                    doc.span(("server", "http", "headers", name)),
                )
            )
    return base_url, canonical_json(auth), tuple(api.headers.items()), implied, diagnostics


def _lower_auth(source: SpecSource, api: HttpApi) -> tuple[Any, dict[str, SchemaNode], list[Diagnostic]]:
    doc = source.server_doc
    auth = api.auth
    if auth is None:
        return None, {}, []
    given = [key for key in ("bearer", "api_key", "basic", "oauth2_client_credentials") if getattr(auth, key)]
    if len(given) != 1:
        return (
            None,
            {},
            [
                diagnostic(
                    "HTTP_AUTH_INVALID",
                    "server.http.auth declares one way to authenticate to the API, "
                    + ("not none" if not given else f"not {len(given)}: {', '.join(given)}"),
                    doc.span(("server", "http", "auth"), key=True),
                    "one of bearer, api_key, basic, oauth2_client_credentials",
                )
            ],
        )
    settings: dict[str, SchemaNode] = {}

    def secret(ref: SettingRef, what: str) -> dict[str, str]:
        settings[ref.setting] = _optional_secret(f"{what} for the HTTP API (a secret: never shown).")
        return {"setting": ref.setting}

    kind = given[0]
    diagnostics: list[Diagnostic] = []
    if auth.bearer is not None:
        return {"kind": "bearer", "token": secret(auth.bearer.token, "The bearer token")}, settings, []
    if auth.api_key is not None:
        key = auth.api_key
        if (problem := _header_problem(key.name)) is not None or not key.name:
            diagnostics.append(
                diagnostic(
                    "HTTP_AUTH_INVALID",
                    f"api_key name {key.name!r}: {problem or 'empty'}",
                    doc.span(("server", "http", "auth", "api_key", "name")),
                )
            )
        entry = {
            "kind": "api_key",
            "in": key.in_,
            "name": key.name,
            "value": secret(key.value, "The API key"),
        }
        return entry, settings, diagnostics
    if auth.basic is not None:
        entry = {
            "kind": "basic",
            "username": secret(auth.basic.username, "The user name"),
            "password": secret(auth.basic.password, "The password"),
        }
        return entry, settings, []
    client = auth.oauth2_client_credentials
    assert client is not None and kind == "oauth2_client_credentials"
    if isinstance(client.token_url, SettingRef):
        settings[client.token_url.setting] = SchemaNode(
            type="string",
            nullable=True,
            default=None,
            description="The OAuth 2 token endpoint of the HTTP API.",
        )
        token_url: dict[str, str] = {"setting": client.token_url.setting}
    else:
        if (problem := _url_problem(client.token_url)) is not None:
            diagnostics.append(
                diagnostic(
                    "HTTP_URL_INVALID",
                    f"token_url {client.token_url!r}: {problem}",
                    doc.span(("server", "http", "auth", "oauth2_client_credentials", "token_url")),
                )
            )
        token_url = {"value": client.token_url}
    entry = {
        "kind": "oauth2_client_credentials",
        "token_url": token_url,
        "client_id": secret(client.client_id, "The OAuth 2 client id"),
        "client_secret": secret(client.client_secret, "The OAuth 2 client secret"),
        "scopes": list(client.scopes),
    }
    return entry, settings, diagnostics


def _url_problem(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "not an absolute http(s) URL"
    if parts.query or parts.fragment:
        return "a base URL has no query or fragment (give query values as parameters)"
    if parts.username or parts.password:
        return "credentials never go in a URL: declare server.http.auth"
    return None


def _header_problem(name: str) -> str | None:
    return None if HEADER_NAME.match(name) else "not a header name (RFC 7230 token characters)"


def check_http_tool(source: ToolSource, tool: ToolIR) -> tuple[HttpToolIR, ToolIR, list[Diagnostic]]:
    """The tool's request, and the tool with its implied output schema (text answers)."""
    assert isinstance(source.tool.backend, HttpBackend)
    op = source.tool.backend.http
    doc, base = source.doc, (*source.base, "backend", "http")
    diagnostics: list[Diagnostic] = []
    schema = tool.input_schema
    properties: Mapping[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))

    def report(rule: str, message: str, *path: str | int, hint: str | None = None, key: bool = False) -> None:
        diagnostics.append(diagnostic(rule, message, doc.span((*base, *path), key=key), hint))

    placed: dict[str, str] = {}  # parameter -> where

    def place(param: str, where: str, path: tuple[str | int, ...]) -> bool:
        if param not in properties:
            report(
                "HTTP_PARAM_UNKNOWN",
                f"{where} names '{param}', which is not a parameter of tool '{tool.name}'",
                *path,
                hint=did_you_mean(param, properties) or f"parameters: {', '.join(properties) or 'none'}",
            )
            return False
        if param in placed:
            report(
                "HTTP_PARAM_PLACED_TWICE",
                f"parameter '{param}' goes to {placed[param]} and to {where}",
                *path,
            )
            return False
        placed[param] = where
        return True

    # path
    path_params: list[tuple[str, str]] = []
    if not op.path.startswith("/") or "?" in op.path or "#" in op.path or "//" in op.path:
        report(
            "HTTP_PATH_INVALID",
            f"path {op.path!r} must start with / and hold no query, fragment or //",
            "path",
        )
    for placeholder in PLACEHOLDER.findall(op.path):
        if place(placeholder, "the path", ("path",)):
            kind = _scalar_kind(properties[placeholder])
            if placeholder not in required or kind is None:
                report(
                    "HTTP_PATH_PARAM_INVALID",
                    f"path parameter '{placeholder}' must be required and a "
                    f"string, integer, number or boolean",
                    "path",
                )
            path_params.append((placeholder, placeholder))
    if PLACEHOLDER.sub("", op.path).count("{") or PLACEHOLDER.sub("", op.path).count("}"):
        report("HTTP_PATH_INVALID", f"path {op.path!r} has an unbalanced brace", "path")
    # query and headers
    for wire, param in op.query.items():
        if place(param, f"query '{wire}'", ("query", wire)) and not (
            _scalar_kind(properties[param]) or _scalar_array(properties[param])
        ):
            report(
                "HTTP_LOCATION_TYPE",
                f"query '{wire}' takes a scalar or a list of scalars, not '{param}'",
                "query",
                wire,
            )
    for wire, param in op.headers.items():
        if (problem := _header_problem(wire)) is not None:
            report("HTTP_HEADER_INVALID", f"header {wire!r}: {problem}", "headers", wire, key=True)
        if place(param, f"header '{wire}'", ("headers", wire)) and not _scalar_kind(properties[param]):
            report("HTTP_LOCATION_TYPE", f"header '{wire}' takes a scalar, not '{param}'", "headers", wire)
    # body
    body_fields: tuple[tuple[str, str], ...] | None = None
    body_param: str | None = None
    if op.body is not None and op.method not in METHODS_WITH_BODY:
        report("HTTP_BODY_NOT_ALLOWED", f"a {op.method} request has no body", "body", key=True)
    elif isinstance(op.body, dict):
        for wire, param in op.body.items():
            place(param, f"body field '{wire}'", ("body", wire))
        body_fields = tuple(op.body.items())
    elif isinstance(op.body, str) and place(op.body, "the body", ("body",)):
        body_param = op.body
    for name in properties:
        if name not in placed:
            report(
                "HTTP_PARAM_UNPLACED",
                f"parameter '{name}' goes nowhere in the request",
                key=True,
                hint="name it in path, query, headers or body",
            )
    # the answer
    output = tool.output_schema
    if op.response == "text":
        if op.result is not None or op.wrap is not None:
            report(
                "HTTP_RESULT_INVALID", "result and wrap choose part of a JSON answer, not of text", "response"
            )
        if output is None:
            tool = replace(tool, output_schema_json=canonical_json(TEXT_OUTPUT))
    else:
        if op.result is not None and not _is_pointer(op.result):
            report(
                "HTTP_RESULT_INVALID",
                f"result {op.result!r} is not a JSON pointer (RFC 6901: '' or /a/0/b, ~0 and ~1 escaped)",
                "result",
            )
        if output is None:
            report(
                "HTTP_OUTPUT_REQUIRED",
                f"tool '{tool.name}' answers JSON: declare its output schema, "
                f"the promise the answer is checked against",
                key=True,
                hint="output: {type: object, properties: {...}} (with wrap: "
                "NAME for an answer that is not an object)",
            )
        elif op.wrap is None and output.get("type") != "object":
            report(
                "HTTP_RESULT_INVALID",
                "a result that is not an object must be wrapped: structuredContent is a JSON object",
                "response" if "response" in source.tool.backend.http.model_fields_set else "method",
                hint="wrap: items, and output: {type: object, properties: {items: ...}}",
            )
    http_ir = HttpToolIR(
        tool=tool.name,
        method=op.method,
        path=op.path,
        path_params=tuple(path_params),
        query=tuple(op.query.items()),
        headers=tuple(op.headers.items()),
        body_fields=body_fields,
        body_param=body_param,
        response=op.response,
        result=op.result,
        wrap=op.wrap,
    )
    return http_ir, tool, diagnostics


def _scalar_kind(schema: Mapping[str, Any]) -> str | None:
    kinds = {schema.get("type")} | {member.get("type") for member in schema.get("anyOf", [])}
    kinds.discard("null")
    kinds.discard(None)
    if "enum" in schema and not kinds:
        return "enum"
    return next(iter(kinds)) if len(kinds) == 1 and kinds <= set(SCALAR_TYPES) else None


def _scalar_array(schema: Mapping[str, Any]) -> bool:
    members = [schema, *schema.get("anyOf", [])]
    arrays = [m for m in members if m.get("type") == "array"]
    return len(arrays) == 1 and _scalar_kind(arrays[0].get("items", {})) is not None


def _is_pointer(pointer: str) -> bool:
    return pointer == "" or (pointer.startswith("/") and not re.search(r"~[^01]|~$", pointer))

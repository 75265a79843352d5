"""The HTTP tools a server declares, as the compiler wrote them to `generated/<server>/http.json`.

The file's shape (format 1; the contract in the issue 28 design):

    {"_generated": "...", "format": 1,
     "server": {"base_url": {"setting": "pets_url"} | {"value": "https://..."},
                "auth": null | {"kind": "bearer", "token": {"setting": N}} | ...,
                "headers": {"User-Agent": "my-agent/1.0"},
                "settings": {"timeout": "http_timeout_seconds", "retries": "http_max_retries"}},
     "tools": {"get_pet": {"method": "GET", "path": "/pets/{petId}", "path_params": {"petId": "petId"},
                           "query": {...}, "headers": {...}, "body": null | {"fields": {...}} | {"param": P},
                           "response": "json" | "text", "result": "/data" | null, "wrap": "items" | null,
                           "idempotent": true}}}

The file is the compiler's output, checked against its sha256 before it is read, so a shape
error is a bug or a hand edit; it still gets a message naming the key and the rule. Nothing here
imports httpx.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

FORMAT = 1
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")
RESPONSES = ("json", "text")
AUTH_KINDS = ("bearer", "api_key", "basic", "oauth2_client_credentials")
# The implied settings of a server with HTTP tools, spelled once (defaults when http.json omits them).
TIMEOUT_SETTING = "http_timeout_seconds"
RETRIES_SETTING = "http_max_retries"
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


class CatalogError(ValueError):
    """http.json does not have the shape this runtime reads; the message names the key."""


@dataclass(frozen=True)
class Source:
    """Where a value comes from: a setting (`setting` names it) or a literal `value`."""

    setting: str | None = None
    value: str | None = None


@dataclass(frozen=True)
class Auth:
    """One credential kind; only the fields of its kind are set. Secrets are always settings."""

    kind: Literal["bearer", "api_key", "basic", "oauth2_client_credentials"]
    token: str | None = None  # bearer: the token's setting
    location: Literal["header", "query"] | None = None  # api_key: where it goes
    name: str | None = None  # api_key: the header or query parameter
    value: str | None = None  # api_key: the key's setting
    username: str | None = None  # basic: settings
    password: str | None = None
    token_url: Source | None = None  # oauth2_client_credentials
    client_id: str | None = None  # settings
    client_secret: str | None = None
    scopes: tuple[str, ...] = ()

    def secret_settings(self) -> tuple[str, ...]:
        """The settings holding secrets (their values never reach a message)."""
        names = (self.token, self.value, self.password, self.client_secret, self.client_id, self.username)
        return tuple(name for name in names if name)


@dataclass(frozen=True)
class Body:
    """A JSON object built from parameters (`fields`: wire name -> parameter), or one parameter
    sent as the whole body (`param`)."""

    fields: Mapping[str, str] | None = None
    param: str | None = None


@dataclass(frozen=True)
class HttpTool:
    name: str
    method: str
    path: str  # the template, `/pets/{petId}`
    path_params: Mapping[str, str]  # placeholder -> parameter
    query: Mapping[str, str]  # wire name -> parameter
    headers: Mapping[str, str]  # wire name -> parameter
    body: Body | None
    response: Literal["json", "text"]
    result: str | None  # an RFC 6901 pointer into the JSON response
    wrap: str | None  # put the chosen value under this key
    idempotent: bool


@dataclass(frozen=True)
class HttpServer:
    base_url: Source
    auth: Auth | None
    headers: Mapping[str, str]
    timeout_setting: str
    retries_setting: str


@dataclass(frozen=True)
class HttpCatalog:
    server: HttpServer
    tools: Mapping[str, HttpTool]


def parse_catalog(text: str) -> HttpCatalog:
    """http.json text -> HttpCatalog, or CatalogError naming the first key out of shape."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        raise CatalogError(f"http.json is not JSON: {err}") from None
    root = _Node(document, "http.json")
    root.object()
    if document.get("format") != FORMAT:
        raise CatalogError(f"http.json: format {document.get('format')!r} (this runtime reads {FORMAT})")
    server = _server(root.key("server").object())
    tools_node = root.key("tools").object()
    tools = {name: _tool(name, tools_node.key(name)) for name in tools_node.value}
    return HttpCatalog(server=server, tools=tools)


def _server(node: _Node) -> HttpServer:
    auth_node = node.key("auth", None)
    settings = node.key("settings", {}).object()
    return HttpServer(
        base_url=_source(node.key("base_url")),
        auth=None if auth_node.value is None else _auth(auth_node.object()),
        headers=node.key("headers", {}).strings(),
        timeout_setting=settings.key("timeout", TIMEOUT_SETTING).text(),
        retries_setting=settings.key("retries", RETRIES_SETTING).text(),
    )


def _source(node: _Node) -> Source:
    node.object()
    if set(node.value) == {"setting"}:
        return Source(setting=node.key("setting").text())
    if set(node.value) == {"value"}:
        return Source(value=node.key("value").text())
    raise CatalogError(f'{node.where}: expected {{"setting": NAME}} or {{"value": TEXT}}')


def _setting(node: _Node) -> str:
    """A secret: only ever `{"setting": NAME}`."""
    node.object()
    if set(node.value) != {"setting"}:
        raise CatalogError(f'{node.where}: a secret is {{"setting": NAME}}, never a literal value')
    return node.key("setting").text()


def _auth(node: _Node) -> Auth:
    kind = node.key("kind").text()
    if kind == "bearer":
        return Auth(kind="bearer", token=_setting(node.key("token")))
    if kind == "api_key":
        location = node.key("in").text()
        if location not in ("header", "query"):
            raise CatalogError(f"{node.where}.in: {location!r} is not header or query")
        return Auth(
            kind="api_key",
            location=location,  # type: ignore[arg-type]  # checked above
            name=node.key("name").text(),
            value=_setting(node.key("value")),
        )
    if kind == "basic":
        return Auth(
            kind="basic", username=_setting(node.key("username")), password=_setting(node.key("password"))
        )
    if kind == "oauth2_client_credentials":
        return Auth(
            kind="oauth2_client_credentials",
            token_url=_source(node.key("token_url")),
            client_id=_setting(node.key("client_id")),
            client_secret=_setting(node.key("client_secret")),
            scopes=tuple(item.text() for item in node.key("scopes", []).array()),
        )
    raise CatalogError(f"{node.where}.kind: {kind!r} is not one of {', '.join(AUTH_KINDS)}")


def _tool(name: str, node: _Node) -> HttpTool:
    node.object()
    method = node.key("method").text()
    if method not in METHODS:
        raise CatalogError(f"{node.where}.method: {method!r} is not one of {', '.join(METHODS)}")
    path_node = node.key("path")
    path = path_node.text()
    if not path.startswith("/"):
        raise CatalogError(f"{path_node.where}: {path!r} does not start with /")
    path_params = node.key("path_params", {}).strings()
    placeholders = PLACEHOLDER.findall(path)
    if sorted(placeholders) != sorted(path_params):
        raise CatalogError(
            f"{node.where}.path_params: names {sorted(path_params)} but the path has {sorted(placeholders)}"
        )
    body_node = node.key("body", None)
    body = None if body_node.value is None else _body(body_node)
    if body is not None and method not in BODY_METHODS:
        raise CatalogError(f"{body_node.where}: a {method} request carries no body")
    response = node.key("response", "json").text()
    if response not in RESPONSES:
        raise CatalogError(f"{node.where}.response: {response!r} is not json or text")
    result = node.key("result", None).optional_text()
    if result is not None and not result.startswith("/"):
        raise CatalogError(f"{node.where}.result: {result!r} is not a JSON pointer (it starts with /)")
    return HttpTool(
        name=name,
        method=method,
        path=path,
        path_params=path_params,
        query=node.key("query", {}).strings(),
        headers=node.key("headers", {}).strings(),
        body=body,
        response=response,  # type: ignore[arg-type]  # checked above
        result=result,
        wrap=node.key("wrap", None).optional_text(),
        idempotent=node.key("idempotent").boolean(),
    )


def _body(node: _Node) -> Body:
    node.object()
    if set(node.value) == {"fields"}:
        return Body(fields=node.key("fields").strings())
    if set(node.value) == {"param"}:
        return Body(param=node.key("param").text())
    raise CatalogError(f'{node.where}: expected {{"fields": {{WIRE: PARAM}}}} or {{"param": PARAM}}')


_MISSING = object()


class _Node:
    """A JSON value and where it sits (`http.json: tools.get_pet.method`), for messages."""

    def __init__(self, value: Any, where: str):
        self.value, self.where = value, where

    def key(self, name: str, default: Any = _MISSING) -> _Node:
        where = f"{self.where}.{name}" if self.where != "http.json" else f"http.json: {name}"
        if name not in self.value:
            if default is _MISSING:
                raise CatalogError(f"{where}: required key is missing")
            return _Node(default, where)
        return _Node(self.value[name], where)

    def object(self) -> _Node:
        return self._expect(dict, "an object")

    def array(self) -> list[_Node]:
        self._expect(list, "an array")
        return [_Node(item, f"{self.where}[{i}]") for i, item in enumerate(self.value)]

    def text(self) -> str:
        self._expect(str, "a string")
        if not self.value:
            raise CatalogError(f"{self.where}: must not be empty")
        return self.value

    def optional_text(self) -> str | None:
        return None if self.value is None else self.text()

    def strings(self) -> dict[str, str]:
        """An object of non-empty strings (a name mapping, or fixed header values)."""
        self.object()
        return {name: self.key(name).text() for name in self.value}

    def boolean(self) -> bool:
        return self._expect(bool, "true or false").value

    def _expect(self, kind: type, what: str) -> _Node:
        if not isinstance(self.value, kind):
            raise CatalogError(f"{self.where}: expected {what}, got {json.dumps(self.value)[:80]}")
        return self

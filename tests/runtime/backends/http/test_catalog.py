"""http.json read back strictly: every shape the design names, and a clear message naming the key
for each one out of shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lynxc.runtime.backends.http.catalog import Auth, Body, CatalogError, Source, parse_catalog


def document(**changes: Any) -> dict[str, Any]:
    tool = {
        "method": "GET",
        "path": "/pets/{petId}",
        "path_params": {"petId": "petId"},
        "query": {"fields": "fields"},
        "headers": {"X-Trace-Id": "trace_id"},
        "body": None,
        "response": "json",
        "result": "/data",
        "wrap": None,
        "idempotent": True,
    }
    tool.update(changes.pop("tool", {}))
    doc = {
        "_generated": "do not edit",
        "format": 1,
        "server": {
            "base_url": {"setting": "pets_url"},
            "auth": None,
            "headers": {"User-Agent": "my-agent/1.0"},
            "settings": {"timeout": "http_timeout_seconds", "retries": "http_max_retries"},
        },
        "tools": {"get_pet": tool},
    }
    doc["server"].update(changes.pop("server", {}))
    doc.update(changes)
    return doc


def parse(doc: dict[str, Any]):
    return parse_catalog(json.dumps(doc))


def refused(doc: dict[str, Any]) -> str:
    with pytest.raises(CatalogError) as caught:
        parse(doc)
    return str(caught.value)


def test_the_design_example_reads_back() -> None:
    catalog = parse(document())
    assert catalog.server.base_url == Source(setting="pets_url")
    assert catalog.server.headers == {"User-Agent": "my-agent/1.0"}
    assert (catalog.server.timeout_setting, catalog.server.retries_setting) == (
        "http_timeout_seconds",
        "http_max_retries",
    )
    tool = catalog.tools["get_pet"]
    assert (tool.method, tool.path, tool.result, tool.wrap, tool.idempotent) == (
        "GET",
        "/pets/{petId}",
        "/data",
        None,
        True,
    )
    assert tool.path_params == {"petId": "petId"} and tool.query == {"fields": "fields"}


def test_each_auth_kind_reads_back() -> None:
    kinds = {
        "bearer": ({"kind": "bearer", "token": {"setting": "t"}}, Auth(kind="bearer", token="t")),
        "api_key": (
            {"kind": "api_key", "in": "query", "name": "api_key", "value": {"setting": "k"}},
            Auth(kind="api_key", location="query", name="api_key", value="k"),
        ),
        "basic": (
            {"kind": "basic", "username": {"setting": "u"}, "password": {"setting": "p"}},
            Auth(kind="basic", username="u", password="p"),
        ),
        "oauth2": (
            {
                "kind": "oauth2_client_credentials",
                "token_url": {"value": "https://auth.example.com/token"},
                "client_id": {"setting": "id"},
                "client_secret": {"setting": "secret"},
                "scopes": ["pets:read"],
            },
            Auth(
                kind="oauth2_client_credentials",
                token_url=Source(value="https://auth.example.com/token"),
                client_id="id",
                client_secret="secret",
                scopes=("pets:read",),
            ),
        ),
    }
    for written, expected in kinds.values():
        assert parse(document(server={"auth": written})).server.auth == expected


def test_both_body_shapes_read_back() -> None:
    fields = document(tool={"method": "POST", "body": {"fields": {"name": "name"}}, "idempotent": False})
    assert parse(fields).tools["get_pet"].body == Body(fields={"name": "name"})
    whole = document(tool={"method": "PUT", "body": {"param": "payload"}})
    assert parse(whole).tools["get_pet"].body == Body(param="payload")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"format": 2}, "http.json: format 2 (this runtime reads 1)"),
        ({"tool": {"method": "TRACE"}}, "http.json: tools.get_pet.method: 'TRACE' is not one of"),
        ({"tool": {"path": "pets"}}, "tools.get_pet.path: 'pets' does not start with /"),
        ({"tool": {"path_params": {}}}, "tools.get_pet.path_params: names [] but the path has ['petId']"),
        ({"tool": {"body": {"fields": {"a": "a"}}}}, "tools.get_pet.body: a GET request carries no body"),
        ({"tool": {"response": "xml"}}, "tools.get_pet.response: 'xml' is not json or text"),
        ({"tool": {"result": "data"}}, "tools.get_pet.result: 'data' is not a JSON pointer"),
        ({"tool": {"idempotent": "yes"}}, 'tools.get_pet.idempotent: expected true or false, got "yes"'),
        ({"tool": {"query": {"a": 1}}}, "tools.get_pet.query.a: expected a string, got 1"),
        ({"server": {"base_url": "https://x"}}, "server.base_url: expected an object"),
        (
            {"server": {"base_url": {"url": "x"}}},
            'server.base_url: expected {"setting": NAME} or {"value": TEXT}',
        ),
        ({"server": {"auth": {"kind": "digest"}}}, "server.auth.kind: 'digest' is not one of bearer"),
        (
            {"server": {"auth": {"kind": "bearer", "token": {"value": "literal-secret"}}}},
            'server.auth.token: a secret is {"setting": NAME}, never a literal value',
        ),
        (
            {"server": {"auth": {"kind": "api_key", "in": "cookie", "name": "k", "value": {"setting": "k"}}}},
            "server.auth.in: 'cookie' is not header or query",
        ),
    ],
)
def test_a_key_out_of_shape_is_named(changes: dict[str, Any], message: str) -> None:
    assert message in refused(document(**changes))


def test_missing_keys_and_bad_json_are_named() -> None:
    doc = document()
    del doc["tools"]["get_pet"]["idempotent"]
    assert refused(doc) == "http.json: tools.get_pet.idempotent: required key is missing"
    assert refused({**document(), "server": None}).startswith("http.json: server: expected an object")
    with pytest.raises(CatalogError, match=r"^http\.json is not JSON"):
        parse_catalog("{")
    assert "literal-secret" not in refused(
        document(server={"auth": {"kind": "bearer", "token": {"value": "literal-secret"}}})
    )

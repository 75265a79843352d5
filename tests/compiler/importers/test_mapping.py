"""Each mapping rule on a small document written for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from lynxc.compiler.importers.openapi.names import parameter_name, snake, tool_base_name, unique_names
from lynxc.compiler.lower.schema import PARAM_NAME
from lynxc.compiler.wire import TOOL_NAME

from .helpers import get, imported, openapi

OBJ = {"type": "object", "properties": {"id": {"type": "integer"}}}


def only_tool(tmp_path: Path, document: dict) -> dict:
    result = imported(tmp_path, document)
    assert len(result.tools) == 1, result.skipped
    return next(iter(result.tools.values()))


def test_names_from_operation_id_or_method_and_path() -> None:
    assert tool_base_name("listAPIs", "GET", "/x") == "list_apis"
    assert tool_base_name("post-requestSubjectErasure", "POST", "/x") == "post_request_subject_erasure"
    assert tool_base_name(None, "GET", "/pets/{petId}/toys") == "get_pets_pet_id_toys"
    assert tool_base_name("123go", "GET", "/x") == "get_123_go"
    assert len(tool_base_name("a" * 300, "GET", "/x")) <= 64
    assert snake("HTTPServer2Config") == "http_server2_config"


def test_name_collisions_get_numbered_and_stay_within_the_rules() -> None:
    names = unique_names(["get_pet", "get_pet", "getpet", "get_pet"])
    assert names == ["get_pet", "get_pet_2", "getpet_3", "get_pet_4"]
    assert all(TOOL_NAME.match(n) for n in names)
    assert unique_names(["a" * 64, "a" * 64])[1] == "a" * 62 + "_2"


def test_parameter_names_keep_valid_wire_names() -> None:
    assert parameter_name("petId") == "petId" and parameter_name("X-Request-ID") == "X-Request-ID"
    assert parameter_name("page[size]") == "page_size"
    assert parameter_name("2fa") == "p_2_fa" and PARAM_NAME.match(parameter_name("2fa"))


def test_colliding_operation_ids_in_a_document(tmp_path: Path) -> None:
    paths = {
        "/a": {"get": {"operationId": "getThing", **get(OBJ)}},
        "/b": {"get": {"operationId": "get_thing", **get(OBJ)}},
    }
    result = imported(tmp_path, openapi(paths))
    assert sorted(result.tools) == ["get_thing", "get_thing_2"]
    assert result.tools["get_thing"]["backend"]["http"]["path"] == "/a"


def test_nullable_30_and_null_types_31(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "nullable": True}}}
    assert only_tool(tmp_path, openapi({"/x": {"get": get(schema)}}))["output"]["properties"]["a"] == {
        "type": "string",
        "nullable": True,
    }
    doc31 = openapi(
        {
            "/x": {
                "get": get(
                    {
                        "type": "object",
                        "properties": {
                            "a": {"type": ["integer", "null"]},
                            "b": {"type": ["string", "integer"]},
                        },
                    }
                )
            }
        }
    )
    doc31["openapi"] = "3.1.0"
    properties = only_tool(tmp_path, doc31)["output"]["properties"]
    assert properties["a"] == {"type": "integer", "nullable": True}
    assert properties["b"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}


def test_all_of_merges_objects_and_one_of_becomes_any_of(tmp_path: Path) -> None:
    components = {
        "schemas": {
            "Base": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            "Cat": {"type": "object", "properties": {"meows": {"type": "boolean"}}},
            "Dog": {"type": "object", "properties": {"barks": {"type": "boolean"}}},
        }
    }
    schema = {
        "allOf": [
            {"$ref": "#/components/schemas/Base"},
            {"type": "object", "properties": {"name": {"type": "string"}}},
        ],
    }
    out = only_tool(tmp_path, openapi({"/x": {"get": get(schema)}}, components=components))["output"]
    assert out == {
        "type": "object",
        "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
        "required": ["id"],
    }
    pets = {
        "oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}],
        "discriminator": {"propertyName": "x"},
    }
    tool = only_tool(tmp_path, openapi({"/x": {"get": get(pets)}}, components=components))
    assert tool["backend"]["http"]["wrap"] == "value"  # an anyOf is not known to be an object
    assert [b["properties"] for b in tool["output"]["properties"]["value"]["anyOf"]] == [
        {"meows": {"type": "boolean"}},
        {"barks": {"type": "boolean"}},
    ]


def test_all_of_of_non_objects_is_skipped(tmp_path: Path) -> None:
    schema = {"allOf": [{"type": "string", "minLength": 1}, {"type": "integer"}]}
    result = imported(tmp_path, openapi({"/x": {"get": get(schema)}, "/y": {"get": get(OBJ)}}))
    assert list(result.tools) == ["get_y"]
    assert (
        result.skipped[0].reason
        == "schema /paths/~1x/get/responses/200/content/application~1json/schema has an allOf of "
        "schemas that are not all objects"
    )


def test_read_only_leaves_inputs_and_write_only_leaves_outputs(tmp_path: Path) -> None:
    pet = {
        "type": "object",
        "required": ["id", "name", "secret"],
        "properties": {
            "id": {"type": "integer", "readOnly": True},
            "name": {"type": "string"},
            "secret": {"type": "string", "writeOnly": True},
        },
    }
    body = {"required": True, "content": {"application/json": {"schema": pet}}}
    tool = only_tool(tmp_path, openapi({"/pets": {"post": {"requestBody": body, **get(pet, "201")}}}))
    assert sorted(tool["parameters"]) == ["name", "secret"]
    assert tool["output"]["properties"].keys() == {"id", "name"} and tool["output"]["required"] == [
        "id",
        "name",
    ]


def test_object_body_flattened_unless_names_clash(tmp_path: Path) -> None:
    pet = {
        "type": "object",
        "required": ["name"],
        "properties": {"name": {"type": "string"}, "tag": {"type": "string"}},
    }
    body = {"required": True, "content": {"application/json": {"schema": pet}}}
    flat = only_tool(
        tmp_path,
        openapi({"/pets/{name}x": {"post": {"parameters": [], "requestBody": body, **get(OBJ)}}})
        if False
        else openapi({"/pets": {"post": {"requestBody": body, **get(OBJ)}}}),
    )
    assert flat["backend"]["http"]["body"] == {"name": "name", "tag": "tag"}
    assert flat["parameters"]["name"] == {"required": True, "type": "string"}
    clash = [{"name": "name", "in": "query", "schema": {"type": "string"}}]
    whole = only_tool(
        tmp_path, openapi({"/pets": {"post": {"parameters": clash, "requestBody": body, **get(OBJ)}}})
    )
    assert whole["backend"]["http"]["body"] == "body"
    assert (
        whole["parameters"]["body"]["requiredProperties"] == ["name"]
        and whole["parameters"]["body"]["required"] is True
    )
    array = {"content": {"application/json": {"schema": {"type": "array", "items": {"type": "string"}}}}}
    listed = only_tool(tmp_path, openapi({"/tags": {"put": {"requestBody": array, **get(OBJ)}}}))
    assert listed["backend"]["http"]["body"] == "body" and listed["parameters"]["body"]["type"] == "array"


def test_parameters_in_each_location(tmp_path: Path) -> None:
    params = [
        {"name": "petId", "in": "path", "required": True, "schema": {"type": "integer"}},
        {"name": "page[size]", "in": "query", "schema": {"type": "integer", "default": 10}},
        {"name": "tags", "in": "query", "schema": {"type": "array", "items": {"type": "string"}}},
        {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
        {"name": "Accept", "in": "header", "schema": {"type": "string"}},
    ]
    tool = only_tool(tmp_path, openapi({"/pets/{petId}": {"get": {"parameters": params, **get(OBJ)}}}))
    assert tool["backend"]["http"] == {
        "method": "GET",
        "path": "/pets/{petId}",
        "query": {"page[size]": "page_size", "tags": "tags"},
        "headers": {"X-Trace": "X-Trace"},
    }
    assert tool["parameters"]["page_size"] == {"type": "integer", "default": 10}
    assert tool["annotations"] == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": True,
    }


@pytest.mark.parametrize(
    ("operation", "reason"),
    [
        (
            {"parameters": [{"name": "s", "in": "cookie", "schema": {"type": "string"}}]},
            "it has a cookie parameter 's', and HTTP tools send no cookies",
        ),
        (
            {"parameters": [{"name": "q", "in": "query", "style": "deepObject", "schema": OBJ}]},
            "its query parameter 'q' is of type object, not a scalar or an array of scalars",
        ),
        (
            {
                "parameters": [
                    {
                        "name": "q",
                        "in": "query",
                        "explode": False,
                        "schema": {"type": "array", "items": {"type": "string"}},
                    }
                ]
            },
            "its query parameter 'q' is sent as style form, explode false; "
            "HTTP tools repeat the name (k=v&k=w)",
        ),
        ({"callbacks": {"cb": {}}}, "it declares callbacks (the API calls back a URL of the caller's)"),
        (
            {"requestBody": {"content": {"multipart/form-data": {"schema": OBJ}}}},
            "its request body is a form (multipart/form-data), and HTTP tools send JSON",
        ),
        (
            {"requestBody": {"content": {"application/xml": {"schema": OBJ}}}},
            "its request body is XML only (application/xml)",
        ),
        (
            {"responses": {"200": {"description": "x", "content": {"application/xml": {"schema": OBJ}}}}},
            "its 200 response is XML only (application/xml)",
        ),
    ],
)
def test_unmappable_operations_are_skipped_whole(tmp_path: Path, operation: dict, reason: str) -> None:
    result = imported(
        tmp_path, openapi({"/x": {"post": {**get(OBJ), **operation}}, "/ok": {"get": get(OBJ)}})
    )
    assert list(result.tools) == ["get_ok"]
    assert [(s.operation, s.reason) for s in result.skipped] == [("POST /x", reason)]


def test_recursive_schema_refers_through_defs_in_outputs_and_is_skipped_in_inputs(tmp_path: Path) -> None:
    node = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
        },
    }
    tree = {"$ref": "#/components/schemas/Node"}
    paths = {
        "/tree": {"get": get(tree)},
        "/forest": {"get": get({"type": "array", "items": tree})},
        "/plant": {"post": {"requestBody": {"content": {"application/json": {"schema": tree}}}, **get(OBJ)}},
    }
    result = imported(tmp_path, openapi(paths, components={"schemas": {"Node": node}}))
    defs = {
        "Node": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
        }
    }
    assert result.tools["get_tree"]["output"] == {**defs["Node"], "$defs": defs}
    forest = result.tools["get_forest"]
    assert forest["output"] == {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
        "required": ["items"],
        "$defs": defs,
    }
    assert [(s.operation, s.reason) for s in result.skipped] == [
        ("POST /plant", "schema /components/schemas/Node is recursive (it contains itself)")
    ]


def test_responses_without_json(tmp_path: Path) -> None:
    text = {"responses": {"200": {"description": "the metrics", "content": {"text/plain": {}}}}}
    empty = {"responses": {"204": {"description": "deleted"}}}
    bare = {"responses": {"200": {"description": "x", "content": {"application/json": {}}}}}
    result = imported(tmp_path, openapi({"/m": {"get": text}, "/d": {"delete": empty}, "/b": {"get": bare}}))
    assert (
        result.tools["get_m"]["backend"]["http"]["response"] == "text"
        and "output" not in result.tools["get_m"]
    )
    assert result.tools["delete_d"]["backend"]["http"]["response"] == "text"
    assert result.tools["delete_d"]["annotations"]["destructiveHint"] is True
    assert result.tools["get_b"]["output"]["type"] == "object"
    assert "get_b: the 200 response has no schema: the output is a permissive object" in result.notes


def test_formats_exclusive_bounds_and_examples(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "secret": {"type": "string", "format": "password"},
            "n": {
                "type": "integer",
                "format": "int64",
                "minimum": 0,
                "exclusiveMinimum": True,
                "example": "x",
            },
            "m": {"type": "number", "example": 2.5, "minLength": 3},
        },
    }
    properties = only_tool(tmp_path, openapi({"/x": {"get": get(schema)}}))["output"]["properties"]
    assert properties == {
        "when": {"type": "string", "format": "date-time"},
        "secret": {"type": "string"},
        "n": {"type": "integer", "exclusiveMinimum": 0},
        "m": {"type": "number", "examples": [2.5]},
    }


def test_swagger_2_conversion(tmp_path: Path) -> None:
    document = {
        "swagger": "2.0",
        "info": {"title": "S", "version": "2"},
        "host": "api.example.com",
        "basePath": "/v2/",
        "schemes": ["http", "https"],
        "securityDefinitions": {"key": {"type": "apiKey", "in": "query", "name": "api_key"}},
        "security": [{"key": []}],
        "definitions": {
            "Pet": {"type": "object", "properties": {"name": {"type": "string", "x-nullable": True}}}
        },
        "parameters": {"Limit": {"name": "limit", "in": "query", "type": "integer", "maximum": 50}},
        "paths": {
            "/pets": {
                "get": {
                    "operationId": "listPets",
                    "parameters": [
                        {"$ref": "#/parameters/Limit"},
                        {
                            "name": "ids",
                            "in": "query",
                            "type": "array",
                            "items": {"type": "string"},
                            "collectionFormat": "multi",
                        },
                    ],
                    "responses": {
                        "200": {
                            "description": "pets",
                            "schema": {"type": "array", "items": {"$ref": "#/definitions/Pet"}},
                        }
                    },
                },
                "post": {
                    "operationId": "addPet",
                    "parameters": [
                        {
                            "name": "pet",
                            "in": "body",
                            "required": True,
                            "schema": {"$ref": "#/definitions/Pet"},
                        }
                    ],
                    "responses": {"201": {"description": "made", "schema": {"$ref": "#/definitions/Pet"}}},
                },
                "put": {
                    "operationId": "csvPets",
                    "parameters": [
                        {"name": "ids", "in": "query", "type": "array", "items": {"type": "string"}}
                    ],
                    "responses": {"200": {"description": "x"}},
                },
            }
        },
    }
    result = imported(tmp_path, document, name="pets")
    assert result.server["version"] == "2.0.0"
    assert result.server["settings"]["pets_url"]["default"] == "https://api.example.com/v2"
    assert result.server["http"]["auth"] == {
        "api_key": {"in": "query", "name": "api_key", "value": {"setting": "pets_api_key"}}
    }
    listing = result.tools["list_pets"]
    assert listing["parameters"] == {
        "limit": {"type": "integer", "maximum": 50},
        "ids": {"type": "array", "items": {"type": "string"}},
    }
    assert listing["backend"]["http"]["wrap"] == "items"
    assert listing["output"]["properties"]["items"]["items"]["properties"]["name"] == {
        "type": "string",
        "nullable": True,
    }
    assert result.tools["add_pet"]["backend"]["http"]["body"] == {"name": "name"}
    assert [s.reason for s in result.skipped] == [
        "its query parameter 'ids' is sent as style form, explode false; HTTP tools repeat the name (k=v&k=w)"
    ]


@pytest.mark.parametrize(
    ("scheme", "auth", "settings"),
    [
        ({"type": "http", "scheme": "bearer"}, {"bearer": {"token": {"setting": "t_token"}}}, ["t_token"]),
        (
            {"type": "http", "scheme": "Basic"},
            {"basic": {"username": {"setting": "t_username"}, "password": {"setting": "t_password"}}},
            ["t_username", "t_password"],
        ),
        (
            {"type": "apiKey", "in": "header", "name": "X-Key"},
            {"api_key": {"in": "header", "name": "X-Key", "value": {"setting": "t_api_key"}}},
            ["t_api_key"],
        ),
        (
            {
                "type": "oauth2",
                "flows": {
                    "clientCredentials": {
                        "tokenUrl": "https://auth.example.com/token",
                        "scopes": {"read": "r"},
                    }
                },
            },
            {
                "oauth2_client_credentials": {
                    "token_url": "https://auth.example.com/token",
                    "client_id": {"setting": "t_client_id"},
                    "client_secret": {"setting": "t_client_secret"},
                    "scopes": ["read"],
                }
            },
            ["t_client_id", "t_client_secret"],
        ),
    ],
)
def test_security_schemes_become_secret_settings(
    tmp_path: Path, scheme: dict, auth: dict, settings: list[str]
) -> None:
    document = openapi(
        {"/x": {"get": {**get(OBJ), "security": [{"s": ["read"]}]}}},
        components={"securitySchemes": {"s": scheme}},
    )
    result = imported(tmp_path, document)
    assert result.server["http"]["auth"] == auth
    assert list(result.server["settings"]) == ["t_url", *settings]
    for name in settings:
        assert (
            result.server["settings"][name]["nullable"] is True
            and result.server["settings"][name]["default"] is None
        )


def test_unsupported_security_skips_the_operation(tmp_path: Path) -> None:
    schemes = {
        "cookie": {"type": "apiKey", "in": "cookie", "name": "sid"},
        "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://x"},
    }
    paths = {
        "/a": {"get": {**get(OBJ), "security": [{"cookie": []}]}},
        "/b": {"get": {**get(OBJ), "security": [{"oidc": []}, {}]}},
    }
    result = imported(tmp_path, openapi(paths, components={"securitySchemes": schemes}))
    assert list(result.tools) == ["get_b"]  # `{}`: anonymous access is allowed
    assert (
        result.skipped[0].reason
        == "its security needs 'cookie': an API key in 'cookie' is not one lynxc sends (header or query only)"
    )
    assert "auth" not in result.server["http"]


def test_descriptions_are_safe_for_a_spec(tmp_path: Path) -> None:
    operation = {
        "summary": "Fetch the `widget` named {name}",
        "description": "Looks it up. <b>Cached</b> for 5 minutes.",
        **get(OBJ),
    }
    tool = only_tool(
        tmp_path,
        openapi(
            {
                "/w/{name}": {
                    "get": {
                        **operation,
                        "parameters": [
                            {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
                        ],
                    }
                }
            }
        ),
    )
    assert tool["description"]["purpose"] == "Fetch the 'widget' named {{name}}."
    assert tool["description"]["usage"] == "Looks it up. Cached for 5 minutes."
    assert tool["title"] == "Fetch the `widget` named {name}"


def test_selection_by_tag_and_operation(tmp_path: Path) -> None:
    paths = {
        "/a": {"get": {"operationId": "getA", "tags": ["x"], **get(OBJ)}},
        "/b": {"get": {"operationId": "getB", "tags": ["y"], **get(OBJ)}},
    }
    assert list(imported(tmp_path, openapi(paths), tags=("y",)).tools) == ["get_b"]
    assert list(imported(tmp_path, openapi(paths), operations=("getA",)).tools) == ["get_a"]
    assert list(imported(tmp_path, openapi(paths), operations=("get_b",)).tools) == ["get_b"]


def test_deep_schema_is_skipped(tmp_path: Path) -> None:
    deep: dict = {"type": "string"}
    for _ in range(60):
        deep = {"type": "array", "items": deep}
    result = imported(tmp_path, openapi({"/x": {"get": get(deep)}, "/ok": {"get": get(OBJ)}}))
    assert list(result.tools) == ["get_ok"] and "nests deeper than 48 levels" in result.skipped[0].reason


def test_shared_values_are_written_out_not_as_yaml_aliases(tmp_path: Path) -> None:
    from lynxc.compiler.importers.openapi import render_files

    shared = {"$ref": "#/components/schemas/Opts"}
    opts = {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x"}}
    pair = {"type": "object", "properties": {"one": shared, "two": shared}}
    body = {"content": {"application/json": {"schema": pair}}}
    document = openapi(
        {"/x": {"post": {"requestBody": body, **get(OBJ)}}}, components={"schemas": {"Opts": opts}}
    )
    text = render_files(imported(tmp_path, document))["post_x.yaml"]
    assert "&" not in text and "*id" not in text and text.count("a: x") == 2

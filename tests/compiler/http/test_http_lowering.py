"""HTTP tools at build time (issue 28): server.http and backend: {http: ...} lowered into the
IR and http.json, and each way a declaration can be wrong reported at its line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from lynxc.compiler.emit.server import HTTP_FILE
from lynxc.compiler.ir import http_document
from lynxc.compiler.lower.server import compile_spec
from lynxc.compiler.wire import tools_list

HEAD = """\
lynxc: 1
server:
  name: pets
  version: 1.0.0
  http:
    base_url: {setting: pets_url}
    auth:
      bearer: {token: {setting: pets_token}}
    headers: {User-Agent: lynxc-test}
tools:
"""

GET_PET = """\
  - name: get_pet
    description: {purpose: Read one pet by its id.}
    annotations: {readOnlyHint: true}
    parameters:
      petId: {type: integer, required: true, description: The pet's id.}
      fields: {type: array, items: {type: string}, description: Fields to include.}
      trace_id: {type: string, description: A trace id.}
    backend:
      http:
        method: GET
        path: /pets/{petId}
        query: {fields: fields}
        headers: {X-Trace-Id: trace_id}
        result: /data
    output: {type: object, properties: {id: {type: integer}, name: {type: string}}}
"""


def build(tmp_path: Path, tools: str, head: str = HEAD):  # type: ignore[no-untyped-def]
    spec = tmp_path / "pets.yaml"
    spec.write_text(head + textwrap.dedent(tools))
    return compile_spec(spec, check_backends=False)


def messages(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [f"{d.rule_id} {d.span.line}: {d.message}" for d in result.diagnostics]


def test_a_get_tool_lowers_into_http_json(tmp_path: Path) -> None:
    result = build(tmp_path, GET_PET)
    assert result.value is not None, messages(result)
    server = result.value
    document = http_document(server)
    assert document == {
        "format": 1,
        "server": {
            "base_url": {"setting": "pets_url"},
            "auth": {"kind": "bearer", "token": {"setting": "pets_token"}},
            "headers": {"User-Agent": "lynxc-test"},
            "settings": {"timeout": "http_timeout_seconds", "retries": "http_max_retries"},
        },
        "tools": {
            "get_pet": {
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
        },
    }
    settings = {s.name: s.schema for s in server.settings}
    assert settings["pets_url"]["type"] == "string" and "default" not in settings["pets_url"]
    assert settings["pets_token"]["default"] is None  # a secret: optional, refused at call time
    assert settings["http_timeout_seconds"]["default"] == 30
    tool = server.tools[0]
    assert tool.backend == "http.call" and tool.cap_values["max_response_bytes"] == 1_048_576
    assert "pets_token" not in json.dumps(tools_list(server))


def test_body_fields_a_whole_body_and_text_answers(tmp_path: Path) -> None:
    result = build(
        tmp_path,
        """\
          - name: add_pet
            description: {purpose: Add a pet.}
            parameters:
              name: {type: string, required: true, description: Its name.}
              tag: {type: string, description: A tag.}
            backend: {http: {method: POST, path: /pets, body: {name: name, tag: tag}, wrap: pet}}
            output: {type: object, properties: {pet: {type: object}}}
          - name: replace_pet
            description: {purpose: Replace a pet.}
            parameters:
              pet_id: {type: string, required: true, description: Its id.}
              payload: {type: object, required: true, description: The whole pet.}
            backend: {http: {method: PUT, path: "/pets/{pet_id}", body: payload, response: text}}
        """,
    )
    assert result.value is not None, messages(result)
    tools = http_document(result.value)["tools"]
    assert tools["add_pet"]["body"] == {"fields": {"name": "name", "tag": "tag"}}
    assert tools["add_pet"]["idempotent"] is False and tools["add_pet"]["wrap"] == "pet"
    assert tools["replace_pet"]["body"] == {"param": "payload"} and tools["replace_pet"]["idempotent"]
    replace_pet = next(t for t in result.value.tools if t.name == "replace_pet")
    assert replace_pet.output_schema["required"] == ["text", "content_type"]  # implied for text


OUTPUT_LINE = "    output: {type: object, properties: {id: {type: integer}, name: {type: string}}}\n"
# (what to change in GET_PET, into what, the rules the build then reports)
WRONG_REQUESTS = {
    "placeholder-typo": ("/pets/{petId}", "/pets/{petID}", ["HTTP_PARAM_UNKNOWN", "HTTP_PARAM_UNPLACED"]),
    "placed-twice": (
        "query: {fields: fields}",
        "query: {fields: fields, id: petId}",
        ["HTTP_PARAM_PLACED_TWICE"],
    ),
    "header-twice": (
        "headers: {X-Trace-Id: trace_id}",
        "headers: {X-Trace-Id: fields}",
        ["HTTP_PARAM_PLACED_TWICE", "HTTP_PARAM_UNPLACED"],
    ),
    "path-optional": (
        "petId: {type: integer, required: true",
        "petId: {type: integer",
        ["HTTP_PATH_PARAM_INVALID"],
    ),
    "path-query": ("path: /pets/{petId}", "path: pets/{petId}?x=1", ["HTTP_PATH_INVALID"]),
    "header-name": (
        "headers: {X-Trace-Id: trace_id}",
        "headers: {'X Trace': trace_id}",
        ["HTTP_HEADER_INVALID"],
    ),
    "pointer": ("result: /data", "result: data", ["HTTP_RESULT_INVALID"]),
    "get-body": ("result: /data", "body: {x: trace_id}", ["HTTP_BODY_NOT_ALLOWED"]),
    "no-output": (OUTPUT_LINE, "", ["HTTP_OUTPUT_REQUIRED"]),
    "header-object": (
        "      trace_id: {type: string",
        "      trace_id: {type: object",
        ["HTTP_LOCATION_TYPE"],
    ),
}


@pytest.mark.parametrize("case", WRONG_REQUESTS)
def test_wrong_requests_are_reported(tmp_path: Path, case: str) -> None:
    old, new, expected = WRONG_REQUESTS[case]
    assert old in GET_PET
    result = build(tmp_path, GET_PET.replace(old, new))
    assert result.value is None
    assert sorted({d.rule_id for d in result.diagnostics}) == sorted(expected), messages(result)


def test_a_non_object_answer_must_be_wrapped(tmp_path: Path) -> None:
    listing = GET_PET.replace(
        "output: {type: object, properties: {id: {type: integer}, name: {type: string}}}",
        "output: {type: array, items: {type: object}}",
    )
    result = build(tmp_path, listing)
    assert [d.rule_id for d in result.diagnostics] == ["HTTP_RESULT_INVALID"], messages(result)


@pytest.mark.parametrize(
    ("api", "rule"),
    [
        ("    base_url: ftp://example.com\n", "HTTP_URL_INVALID"),
        ("    base_url: https://user:pw@example.com/v1\n", "HTTP_URL_INVALID"),
        ("    base_url: https://example.com\n    auth: {}\n", "HTTP_AUTH_INVALID"),
        (
            "    base_url: https://example.com\n    auth:\n      bearer: {token: {setting: a}}\n"
            "      basic: {username: {setting: u}, password: {setting: p}}\n",
            "HTTP_AUTH_INVALID",
        ),
        ("    base_url: https://example.com\n    headers: {'a b': x}\n", "HTTP_HEADER_INVALID"),
    ],
    ids=["scheme", "credentials-in-url", "no-auth-kind", "two-auth-kinds", "fixed-header"],
)
def test_wrong_apis_are_reported(tmp_path: Path, api: str, rule: str) -> None:
    head = "lynxc: 1\nserver:\n  name: pets\n  version: 1.0.0\n  http:\n" + api + "tools:\n"
    result = build(tmp_path, GET_PET, head)
    assert result.value is None and [d.rule_id for d in result.diagnostics] == [rule], messages(result)


def test_a_literal_secret_is_refused_by_the_spec_format(tmp_path: Path) -> None:
    head = HEAD.replace("bearer: {token: {setting: pets_token}}", "bearer: {token: hunter2}")
    result = build(tmp_path, GET_PET, head)
    assert result.value is None
    assert any("token" in d.message for d in result.diagnostics), messages(result)


def test_http_tools_need_an_api(tmp_path: Path) -> None:
    head = "lynxc: 1\nserver:\n  name: pets\n  version: 1.0.0\ntools:\n"
    result = build(tmp_path, GET_PET, head)
    assert [d.rule_id for d in result.diagnostics] == ["HTTP_API_MISSING"], messages(result)


def test_the_generated_folder_holds_http_json(tmp_path: Path) -> None:
    from lynxc.compiler.emit.server import emit_server
    from lynxc.compiler.lint.linter import lint_server
    from lynxc.compiler.wire import wire_from_ir

    result = build(tmp_path, GET_PET)
    assert result.value is not None
    files = emit_server(result.value, score=lint_server(wire_from_ir(result.value, "pets.yaml")).score)
    document = json.loads(files[f"generated/pets/{HTTP_FILE}"])
    assert document["tools"]["get_pet"]["path"] == "/pets/{petId}"
    assert "http='http.json'" in files["generated/pets/server.py"]
    readme = files["generated/pets/README.md"]
    assert (
        "**HTTP request:** `GET /pets/{petId}`, result at `/data` (json, retried on 429/502/503/504)"
        in readme
    )
    assert "| `fields` | query `fields` |" in readme and "| `trace_id` | header `X-Trace-Id` |" in readme

"""One operation to one tool: parameters from path, query and header parameters and the JSON
body, the output from the success response, annotations from the method, description sections
from summary and description. An operation that cannot be mapped whole raises `Unmappable`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .document import Document
from .errors import Unmappable
from .names import parameter_name
from .operations import Operation, Param
from .schemas import SCALARS, SchemaMapper
from .texts import as_sentence, clean_text, first_sentence

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
# OpenAPI says these header parameters are ignored: the media types and the credential are the
# tool's own business (the server's auth), never a caller's argument.
_IGNORED_HEADERS = frozenset(("accept", "content-type", "authorization"))
BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")
_HINTS = {
    "GET": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    "HEAD": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    "OPTIONS": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    "DELETE": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True},
    "PUT": {"readOnlyHint": False, "idempotentHint": True},
    "POST": {"readOnlyHint": False, "idempotentHint": False},
    "PATCH": {"readOnlyHint": False, "idempotentHint": False},
}


@dataclass
class ToolDraft:
    spec: dict[str, Any]  # the tool mapping, `name` first once it is known
    notes: list[str] = field(default_factory=list)


def build_tool(document: Document, op: Operation) -> ToolDraft:
    notes: list[str] = []
    parameters: dict[str, dict[str, Any]] = {}
    http: dict[str, Any] = {"method": op.method}
    placed: dict[str, dict[str, str]] = {"query": {}, "headers": {}}
    path_names: dict[str, str] = {}
    for param in sorted(
        op.params,
        key=lambda p: (
            ("path", "query", "header", "cookie").index(p.location)
            if p.location in ("path", "query", "header", "cookie")
            else 9
        ),
    ):
        if param.location == "cookie":
            raise Unmappable(f"it has a cookie parameter '{param.name}', and HTTP tools send no cookies")
        if param.location == "header" and param.name.lower() in _IGNORED_HEADERS:
            continue
        if param.location not in ("path", "query", "header"):
            raise Unmappable(
                f"parameter '{param.name}' is in '{param.location}', not a location OpenAPI defines"
            )
        name = _free_name(parameter_name(param.name), param.location, parameters)
        parameters[name] = _parameter(document, param)
        if param.location == "path":
            path_names[param.name] = name
        else:
            placed["query" if param.location == "query" else "headers"][param.name] = name
    http["path"] = _path(op.path, path_names)
    for key in ("query", "headers"):
        if placed[key]:
            http[key] = placed[key]
    if op.body is not None:
        if op.method not in BODY_METHODS:
            raise Unmappable(f"it sends a request body with {op.method}")
        http["body"] = _body(document, op, parameters)
    output = _response(document, op, http, notes)
    spec: dict[str, Any] = {}
    title = _title(op)
    if title:
        spec["title"] = title
    spec["description"] = _description(op, http)
    spec["annotations"] = {**_HINTS.get(op.method, {}), "openWorldHint": True}
    if parameters:
        spec["parameters"] = parameters
    spec["backend"] = {"http": http}
    if output is not None:
        spec["output"] = output
    return ToolDraft(spec, notes)


def _free_name(name: str, location: str, taken: dict[str, Any]) -> str:
    if name not in taken:
        return name
    candidate, number = f"{name}_{location}", 1
    while candidate in taken:
        number += 1
        candidate = f"{name}_{location}_{number}"
    return candidate


def _parameter(document: Document, param: Param) -> dict[str, Any]:
    schema = (
        SchemaMapper(document, "input").map(param.schema) if param.schema is not None else {"type": "string"}
    )
    kind = schema.get("type")
    where = f"{param.location} parameter '{param.name}'"
    if param.location in ("path", "header") and kind not in SCALARS:
        raise Unmappable(f"its {where} is {_kind(schema)}, not a string, number or boolean")
    if param.location == "query":
        if kind == "array":
            items = schema.get("items") or {}
            if items.get("type") not in SCALARS:
                raise Unmappable(f"its {where} is an array of {_kind(items)}, not of scalars")
            if (param.style or "form") != "form" or param.explode is False:
                style = f"style {param.style or 'form'}, explode {str(param.explode).lower()}"
                raise Unmappable(f"its {where} is sent as {style}; HTTP tools repeat the name (k=v&k=w)")
        elif kind not in SCALARS:
            raise Unmappable(f"its {where} is {_kind(schema)}, not a scalar or an array of scalars")
        elif param.style not in (None, "form"):
            raise Unmappable(f"its {where} is sent with style {param.style}")
    return _as_parameter(schema, param.required, param.description)


def _kind(schema: dict[str, Any]) -> str:
    if "type" in schema:
        return f"of type {schema['type']}"
    return "a choice of schemas (anyOf)" if "anyOf" in schema else "of no declared type"


def _as_parameter(schema: dict[str, Any], required: bool, description: str) -> dict[str, Any]:
    """A schema node as a spec parameter: `required` says whether callers must send it, and
    an object's own list moves to `requiredProperties`."""
    out = {k: v for k, v in schema.items() if k != "required"}
    if "required" in schema:
        out["requiredProperties"] = schema["required"]
    if description.strip():
        out["description"] = clean_text(description)
    if required:
        out = {"required": True, **out}
        out.pop("default", None)  # a default means nothing on a parameter callers must send
    return out


def _path(template: str, names: dict[str, str]) -> str:
    used = set()

    def rename(match: re.Match[str]) -> str:
        wire = match.group(1)
        if wire not in names:
            raise Unmappable(f"its path placeholder {{{wire}}} has no path parameter")
        used.add(wire)
        return "{" + names[wire] + "}"

    path = _PLACEHOLDER.sub(rename, template)
    unused = sorted(set(names) - used)
    if unused:
        raise Unmappable(f"its path parameter '{unused[0]}' does not appear in the path {template}")
    return path


def _body(document: Document, op: Operation, parameters: dict[str, dict[str, Any]]) -> Any:
    assert op.body is not None
    body = op.body
    schema = (
        SchemaMapper(document, "input").map(body.schema) if body.schema is not None else {"type": "object"}
    )
    properties = schema.get("properties") or {}
    names = {wire: parameter_name(str(wire)) for wire in properties}
    flat = (
        schema.get("type") == "object"
        and not schema.get("nullable")
        and properties
        and not isinstance(schema.get("additionalProperties"), dict)
        and len(set(names.values())) == len(names)
        and not set(names.values()) & set(parameters)
    )
    if flat:
        required = set(schema.get("required") or []) if body.required else set()
        for wire, child in properties.items():
            parameters[names[wire]] = _as_parameter(child, wire in required, "")
        return {wire: names[wire] for wire in properties}
    name = _free_name("body", "request", parameters)
    description = body.description or "The request body, sent as JSON."
    parameters[name] = _as_parameter(schema, body.required, description)
    return name


def _response(
    document: Document, op: Operation, http: dict[str, Any], notes: list[str]
) -> dict[str, Any] | None:
    response = op.response
    if response is None or response.kind == "none":
        http["response"] = "text"
        if op.method != "HEAD":
            notes.append("the document describes no response body: the tool returns the body as text")
        return None
    if response.kind == "text":
        http["response"] = "text"
        return None
    if response.schema is None:
        notes.append(f"the {response.status} response has no schema: the output is a permissive object")
        return {"type": "object", "description": "The API's JSON answer (the document gives no schema)."}
    mapper = SchemaMapper(document, "output")
    schema = mapper.map(response.schema)
    if set(schema) == {"$ref"}:  # a recursive type at the root: its definition, one level inlined
        schema = dict(mapper.defs[schema["$ref"].removeprefix("#/$defs/")])
    if not (schema.get("type") == "object" and not schema.get("nullable")):
        wrap = "items" if schema.get("type") == "array" else "value"
        http["wrap"] = wrap
        schema = {"type": "object", "properties": {wrap: schema}, "required": [wrap]}
    if mapper.defs:
        schema["$defs"] = dict(sorted(mapper.defs.items()))
    return schema


def _title(op: Operation) -> str | None:
    title = " ".join(op.summary.split()).rstrip(".")
    return title if title and len(title) <= 80 else None


def _description(op: Operation, http: dict[str, Any]) -> dict[str, str]:
    summary, rest = first_sentence(op.summary)
    described, more = first_sentence(op.description)
    if summary:
        purpose, usage = summary, " ".join(x for x in (rest, op.description) if x)
    elif described:
        purpose, usage = described, more
    else:
        purpose, usage = f"Call {op.method} {op.path} on the API", ""
    sections = {"purpose": clean_text(as_sentence(purpose))}
    usage = " ".join(usage.split())
    if usage and usage.rstrip(".") != purpose.rstrip("."):
        sections["usage"] = clean_text(usage)
    effect = "Reads only" if op.method in ("GET", "HEAD", "OPTIONS") else "Changes data on the API"
    behaviour = (
        f"{effect}: sends {op.method} {op.path}. An answer other than 2xx is a tool error with its "
        "status and the start of its body."
    )
    if op.deprecated:
        behaviour = "Deprecated by the API. " + behaviour
    sections["behaviour"] = clean_text(behaviour)
    sections["returns"] = clean_text(_returns(op, http))
    return sections


def _returns(op: Operation, http: dict[str, Any]) -> str:
    response = op.response
    said = " ".join((response.description if response else "").split()).rstrip(".")
    if http.get("response") == "text":
        what = "the answer's body as text with its content type"
        if response is None or response.kind == "none":
            what = "the answer's body as text (the API describes none) with its content type"
    elif "wrap" in http:
        what = f"the JSON answer under '{http['wrap']}'"
    else:
        what = "the JSON answer"
    return f"{said}: {what}." if len(said.split()) >= 2 else as_sentence(what)

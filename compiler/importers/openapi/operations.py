"""Read the operations of a document, 3.x or 2.0, into one shape: the parameters (path-level
ones merged in), the JSON request body and the success response chosen, or why there is none."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .document import Document, Located
from .errors import OpenAPIError

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")


@dataclass(frozen=True)
class Param:
    name: str
    location: str  # path, query, header, cookie
    required: bool
    description: str
    schema: Located | None
    style: str | None
    explode: bool | None
    pointer: str


@dataclass(frozen=True)
class Body:
    required: bool
    schema: Located | None
    description: str


@dataclass(frozen=True)
class Response:
    status: str
    kind: str  # json, text, none
    schema: Located | None
    description: str


@dataclass
class Operation:
    method: str
    path: str
    pointer: str
    operation_id: str | None
    summary: str
    description: str
    tags: list[str]
    params: list[Param] = field(default_factory=list)
    body: Body | None = None
    response: Response | None = None
    problems: list[str] = field(default_factory=list)  # why it cannot be imported
    security: list[dict[str, Any]] | None = None
    deprecated: bool = False


def read_operations(document: Document) -> list[Operation]:
    paths = document.at("paths")
    if not isinstance(paths.value, dict):
        raise OpenAPIError(document.display(document.location), "/paths", "is not an object")
    swagger2 = document.root.get("swagger") is not None
    out = []
    for path in paths.value:
        item = document.follow(paths.child(path))
        if not isinstance(item.value, dict):
            raise OpenAPIError(
                document.display(document.location), item.pointer, "a path item must be an object"
            )
        for method in METHODS:
            if method not in item.value:
                continue
            node = item.child(method)
            if not isinstance(node.value, dict):
                raise OpenAPIError(
                    document.display(document.location), node.pointer, "an operation must be an object"
                )
            out.append(_operation(document, str(path), method, item, node, swagger2))
    return out


def _operation(
    document: Document, path: str, method: str, item: Located, node: Located, swagger2: bool
) -> Operation:
    op = node.value
    operation = Operation(
        method=method.upper(),
        path=path,
        pointer=node.pointer,
        operation_id=op.get("operationId") if isinstance(op.get("operationId"), str) else None,
        summary=op.get("summary") if isinstance(op.get("summary"), str) else "",
        description=op.get("description") if isinstance(op.get("description"), str) else "",
        tags=[str(t) for t in op.get("tags") or [] if isinstance(t, str | int)],
        security=op.get("security") if isinstance(op.get("security"), list) else None,
        deprecated=op.get("deprecated") is True,
    )
    if operation.security is None and isinstance(document.root.get("security"), list):
        operation.security = document.root["security"]
    if method == "trace":
        operation.problems.append("TRACE is not a method HTTP tools send")
    if op.get("callbacks"):
        operation.problems.append("it declares callbacks (the API calls back a URL of the caller's)")
    raw_params = _params(document, item, node, operation)
    if swagger2:
        _swagger2(document, node, raw_params, operation)
    else:
        for param in raw_params:
            operation.params.append(_param3(param))
        if "requestBody" in op:
            operation.body = _body3(document, node.child("requestBody"), operation)
        operation.response = _response3(document, node, operation)
    return operation


def _params(document: Document, item: Located, node: Located, operation: Operation) -> list[Located]:
    """Path-level parameters, replaced by an operation's own of the same name and location."""
    merged: dict[tuple[str, str], Located] = {}
    for owner in (item, node):
        listed = owner.get("parameters") or []
        if not isinstance(listed, list):
            raise OpenAPIError(
                document.display(document.location), owner.pointer + "/parameters", "must be a list"
            )
        for index in range(len(listed)):
            param = document.follow(owner.child("parameters", index))
            value = param.value
            if not isinstance(value, dict) or not isinstance(value.get("name"), str) or "in" not in value:
                raise OpenAPIError(
                    document.display(param.file), param.pointer, "a parameter needs a name and an `in`"
                )
            merged[(value["name"], str(value["in"]))] = param
    return list(merged.values())


def _param3(param: Located) -> Param:
    value = param.value
    schema = param.child("schema") if isinstance(value.get("schema"), dict | bool) else None
    if schema is None and isinstance(value.get("content"), dict) and value["content"]:
        media = sorted(value["content"])[0]
        if isinstance(value["content"][media], dict) and "schema" in value["content"][media]:
            schema = param.child("content", media, "schema")
    return Param(
        name=value["name"],
        location=str(value["in"]),
        required=value.get("required") is True or value["in"] == "path",
        description=value.get("description") if isinstance(value.get("description"), str) else "",
        schema=schema,
        style=value.get("style"),
        explode=value.get("explode"),
        pointer=param.pointer,
    )


def _is_json(media: str) -> bool:
    base = media.split(";")[0].strip().lower()
    return base in ("application/json", "*/*", "application/*") or base.endswith("+json")


def _pick_media(content: dict[str, Any]) -> tuple[str | None, str | None]:
    """(the JSON media type, or None and what the content is instead)."""
    types = sorted(str(t) for t in content)
    for media in types:
        if _is_json(media) and media not in ("*/*", "application/*"):
            return media, None
    for media in types:
        if _is_json(media):
            return media, None
    return None, ", ".join(types)


def _body3(document: Document, located: Located, operation: Operation) -> Body | None:
    body = document.follow(located)
    content = body.get("content")
    if not isinstance(content, dict) or not content:
        return None
    media, other = _pick_media(content)
    if media is None:
        operation.problems.append(_body_problem(other or ""))
        return None
    schema = body.child("content", media, "schema") if "schema" in (content[media] or {}) else None
    return Body(
        required=body.get("required") is True,
        schema=schema,
        description=body.get("description") if isinstance(body.get("description"), str) else "",
    )


def _body_problem(types: str) -> str:
    if any(t in types for t in FORM_TYPES):
        return f"its request body is a form ({types}), and HTTP tools send JSON"
    if "xml" in types:
        return f"its request body is XML only ({types})"
    return f"its request body is {types}, and HTTP tools send JSON"


def _success_status(responses: dict[str, Any]) -> str | None:
    codes = sorted(str(c) for c in responses if str(c).startswith("2"))
    return codes[0] if codes else None


def _response3(document: Document, node: Located, operation: Operation) -> Response | None:
    responses = node.get("responses")
    if not isinstance(responses, dict):
        return Response("", "none", None, "")
    status = _success_status(responses)
    if status is None:
        return Response("", "none", None, "")
    response = document.follow(node.child("responses", status))
    description = response.get("description") if isinstance(response.get("description"), str) else ""
    content = response.get("content")
    if not isinstance(content, dict) or not content:
        return Response(status, "none", None, description)
    media, other = _pick_media(content)
    if media is not None:
        entry = content[media] or {}
        schema = response.child("content", media, "schema") if "schema" in entry else None
        return Response(status, "json", schema, description)
    return _non_json_response(status, other or "", description, operation)


def _non_json_response(status: str, types: str, description: str, operation: Operation) -> Response | None:
    textual = [t for t in types.split(", ") if t.startswith("text/") and "xml" not in t]
    if textual:
        return Response(status, "text", None, description)
    if "xml" in types:
        operation.problems.append(f"its {status} response is XML only ({types})")
    else:
        operation.problems.append(f"its {status} response is {types}, neither JSON nor text")
    return None


# --- Swagger 2.0 -------------------------------------------------------------------------------

_PARAM_SCHEMA_KEYS = (
    "type", "format", "items", "enum", "default", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems",
    "x-nullable",
)  # fmt: skip
_COLLECTION_STYLE = {"csv": ("form", False), "multi": ("form", True), "ssv": ("spaceDelimited", False),
                     "tsv": ("tabDelimited", False), "pipes": ("pipeDelimited", False)}  # fmt: skip


def _swagger2(document: Document, node: Located, params: list[Located], operation: Operation) -> None:
    """2.0's shape turned into 3.0's: `in: body` is the request body, `in: formData` a form,
    a non-body parameter's schema keywords sit on the parameter itself, `produces`/`consumes`
    say the media types."""
    op = node.value
    consumes = op.get("consumes") or document.root.get("consumes") or ["application/json"]
    produces = op.get("produces") or document.root.get("produces") or ["application/json"]
    for param in params:
        value = param.value
        where = value["in"]
        if where == "body":
            json_types = [t for t in consumes if _is_json(str(t))]
            if not json_types:
                operation.problems.append(_body_problem(", ".join(sorted(map(str, consumes)))))
                continue
            schema = param.child("schema") if isinstance(value.get("schema"), dict) else None
            operation.body = Body(value.get("required") is True, schema, value.get("description") or "")
        elif where == "formData":
            kind = (
                "multipart/form-data"
                if value.get("type") == "file"
                else ", ".join(sorted(map(str, consumes)))
            )
            operation.problems.append(f"its request body is a form ({kind}), and HTTP tools send JSON")
        else:
            schema = {k: value[k] for k in _PARAM_SCHEMA_KEYS if k in value}
            style, explode = _COLLECTION_STYLE.get(value.get("collectionFormat", "csv"), ("form", False))
            operation.params.append(
                Param(
                    name=value["name"],
                    location=str(where),
                    required=value.get("required") is True or where == "path",
                    description=value.get("description") if isinstance(value.get("description"), str) else "",
                    schema=Located(schema, param.file, param.pointer),
                    style=style if schema.get("type") == "array" else None,
                    explode=explode if schema.get("type") == "array" else None,
                    pointer=param.pointer,
                )
            )
    responses = op.get("responses") if isinstance(op.get("responses"), dict) else {}
    status = _success_status(responses)
    if status is None:
        operation.response = Response("", "none", None, "")
        return
    response = document.follow(node.child("responses", status))
    description = response.get("description") if isinstance(response.get("description"), str) else ""
    if not isinstance(response.get("schema"), dict):
        operation.response = Response(status, "none", None, description)
    elif any(_is_json(str(t)) for t in produces):
        operation.response = Response(status, "json", response.child("schema"), description)
    else:
        operation.response = _non_json_response(
            status, ", ".join(sorted(map(str, produces))), description, operation
        )

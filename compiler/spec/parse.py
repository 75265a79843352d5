"""Validate a positioned YAML document against the spec models, as diagnostics with places."""

from __future__ import annotations

import types
import typing
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..diagnostics import Diagnostic, Result
from ..rules import diagnostic
from ..suggest import did_you_mean
from .models import SPEC_VERSION
from .source import NodePath, SourceDoc

ModelT = TypeVar("ModelT", bound=BaseModel)


def parse_document(doc: SourceDoc, model: type[ModelT]) -> Result[ModelT]:
    """Check the version header first (its message is clearer than a model error), then the model."""
    data = doc.data
    if not isinstance(data, dict):
        return Result(
            None, (diagnostic("SPEC_VALUE_INVALID", "a spec file must be a mapping", doc.span(())),)
        )
    if "lynxc" not in data:
        return Result(
            None,
            (
                diagnostic(
                    "SPEC_KEY_MISSING",
                    "missing the format version 'lynxc'",
                    doc.span(()),
                    f"start the file with 'lynxc: {SPEC_VERSION}'",
                ),
            ),
        )
    if data["lynxc"] != SPEC_VERSION or isinstance(data["lynxc"], bool):
        return Result(
            None,
            (
                diagnostic(
                    "SPEC_VERSION_UNSUPPORTED",
                    f"spec format version {data['lynxc']!r} is not supported",
                    doc.span(("lynxc",)),
                    f"this lynxc reads 'lynxc: {SPEC_VERSION}'",
                ),
            ),
        )
    try:
        return Result(model.model_validate(data))
    except ValidationError as err:
        return Result(None, tuple(_diagnostics(err, doc, model)))


def _diagnostics(err: ValidationError, doc: SourceDoc, model: type[BaseModel]) -> list[Diagnostic]:
    found: dict[tuple[NodePath, str], Diagnostic] = {}
    for error in err.errors(include_url=False):
        kind = error["type"]
        path = _data_path(doc.data, error["loc"], names_key=kind in ("extra_forbidden", "missing"))
        if kind == "extra_forbidden":
            key = str(path[-1])
            allowed = _allowed_keys(model, path[:-1], key)
            diag = diagnostic(
                "SPEC_KEY_UNKNOWN",
                f"unknown key '{key}'" + _where(path[:-1]),
                doc.span(path, key=True),
                did_you_mean(key, allowed)
                or ("allowed keys: " + ", ".join(sorted(allowed)) if allowed else None),
            )
        elif kind == "missing":
            missing = str(error["loc"][-1])
            path = path[:-1]
            diag = diagnostic(
                "SPEC_KEY_MISSING",
                f"missing required key '{missing}'" + _where(path),
                doc.span(path, key=True),
            )
            path = (*path, missing)
        else:
            diag = diagnostic(
                "SPEC_VALUE_INVALID",
                f"{_dotted(path)}: {_message(error)}",
                doc.span(path),
            )
        found.setdefault((path, diag.rule_id), diag)
    # A union reports one error per member; keep the deepest, most specific ones.
    paths = [p for p, _ in found]
    kept = [
        (path, d)
        for (path, _), d in found.items()
        if not any(other != path and other[: len(path)] == path for other in paths)
    ]
    # A misspelt key is reported once, as unknown with its did-you-mean, not also as missing.
    suggested = {(path[:-1], d.hint) for path, d in kept if d.rule_id == "SPEC_KEY_UNKNOWN"}
    return [
        d
        for path, d in kept
        if not (d.rule_id == "SPEC_KEY_MISSING" and (path[:-1], f"did you mean '{path[-1]}'?") in suggested)
    ]


def _message(error: Any) -> str:
    message = error["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    if error["type"] == "literal_error" and "expected" in error.get("ctx", {}):
        return f"expected {error['ctx']['expected']}, got {error['input']!r}"
    return message[0].lower() + message[1:] if message else message


def _where(path: NodePath) -> str:
    return f" in '{_dotted(path)}'" if path else " at the top level"


def _dotted(path: NodePath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(root)"


def _data_path(data: Any, loc: tuple[Any, ...], *, names_key: bool) -> NodePath:
    """Pydantic's loc mixes data keys with union member tags; keep only the keys present in data."""
    path: list[str | int] = []
    node = data
    for part in loc:
        if (isinstance(node, dict) and isinstance(part, str) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        ):
            path.append(part)
            node = node[part]
        elif names_key and isinstance(node, dict) and isinstance(part, str) and part == loc[-1]:
            path.append(part)  # an extra key or a missing one: the last loc item names it
            node = None
    return tuple(path)


def _allowed_keys(model: type[BaseModel], path: NodePath, key: str) -> list[str]:
    """The keys of the node at `path`; where it is a union of models (a tool's backend), those
    of the member the misspelt `key` is closest to, so the did-you-mean finds it."""
    members = _union_models_at(model, path) or [_model_at(model, path)]
    for member in members:
        if did_you_mean(key, _field_names(member)):
            return _field_names(member)
    return _field_names(members[0])


def _union_models_at(model: type[BaseModel], path: NodePath) -> list[type[BaseModel]]:
    parent = _model_at(model, path[:-1]) if path else None
    field = _field_by_alias(parent, str(path[-1])) if parent is not None and path else None
    if field is None or typing.get_origin(field.annotation) not in (typing.Union, types.UnionType):
        return []
    members = [_without_metadata(a) for a in typing.get_args(field.annotation)]
    return [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]


def _model_at(model: type[BaseModel], path: NodePath) -> type[BaseModel] | None:
    """The spec model that describes the node at `path` (to list its allowed keys)."""
    current: Any = model
    for part in path:
        current = _unwrap_model(current, str(part))
        if current is None:
            return None
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = _field_by_alias(current, str(part))
            if field is None:
                return None
            current = field.annotation
        else:
            origin = typing.get_origin(current)
            args = typing.get_args(current)
            if origin is dict:
                current = args[1]
            elif origin is list:
                current = args[0]
            else:
                return None
    result = _unwrap_model(current)
    return result if isinstance(result, type) and issubclass(result, BaseModel) else None


def _unwrap_model(annotation: Any, key: str | None = None) -> Any:
    """The model (or container) a field's annotation holds; of a union of models, the one that
    has `key` when one does (a tool's backend: {sql: ...} or {http: ...})."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [_without_metadata(a) for a in typing.get_args(annotation) if a is not type(None)]
        models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
        models.sort(key=lambda m: key is None or _field_by_alias(m, key) is None)
        containers = [m for m in members if typing.get_origin(m) in (dict, list)]
        return (models or containers or [None])[0]
    if origin is typing.Annotated:
        return _unwrap_model(typing.get_args(annotation)[0])
    return annotation


def _without_metadata(annotation: Any) -> Any:
    """`Annotated[X, Tag(...)]` -> X: a discriminated union's members carry their tags."""
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated else annotation


def _field_by_alias(model: type[BaseModel], key: str) -> Any:
    for name, field in model.model_fields.items():
        if (field.alias or name) == key or name == key:
            return field
    return None


def _field_names(model: type[BaseModel] | None) -> list[str]:
    if model is None:
        return []
    return [field.alias or name for name, field in model.model_fields.items()]

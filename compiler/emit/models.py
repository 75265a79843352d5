"""Pydantic v2 models for each tool's input and output, and for one record of each declared
resource, by datamodel-code-generator."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..ir import CollectionIR, ToolIR

if TYPE_CHECKING:
    from ..cache import Store

MODELS_ENTRY = "models"  # the cache's entries of generated models
RECORD_CLASS = "Record"  # the class of a record model (runtime: ServerDefinition.load_record_model)


def class_prefix(tool_name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", tool_name) if part)


def model_names(tool: ToolIR) -> tuple[str, str]:
    prefix = class_prefix(tool.name)
    return f"{prefix}Input", f"{prefix}Output"


def models_document(tool: ToolIR) -> dict[str, Any]:
    """One schema document holding both models, so shared imports appear once per file."""
    input_name, output_name = model_names(tool)
    defs: dict[str, Any] = {input_name: _without_dialect(tool.input_schema)}
    output = tool.output_schema
    if output is not None:
        output_defs = output.pop("$defs", {})
        defs[output_name] = _without_dialect(output)
        defs.update(output_defs)  # refs stay '#/$defs/NAME': the defs move to the same root
    return {"$defs": _type_list_nullables(defs)}


def _type_list_nullables(schema: Any) -> Any:
    """`anyOf: [{type: T, ...}, {type: null}]` -> `{type: [T, null], ...}` for the generator only:
    the same values validate, and the model field becomes `T | None` instead of a wrapper class.
    The wire keeps anyOf, which every client accepts."""
    if isinstance(schema, list):
        return [_type_list_nullables(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _type_list_nullables(value) for key, value in schema.items()}
    members = out.get("anyOf")
    if (
        isinstance(members, list)
        and len(members) == 2
        and members[1] == {"type": "null"}
        and isinstance(members[0].get("type"), str)
        # A map (object of typed values) keeps anyOf: the generator reads a type list's
        # additionalProperties as Any, and anyOf gives `dict[str, T] | None` already.
        and not (members[0]["type"] == "object" and isinstance(members[0].get("additionalProperties"), dict))
    ):
        core = members[0]
        if "enum" in core and None not in core["enum"]:
            # The null member admits null; an enum beside a type list must list it to say so.
            core = {**core, "enum": [*core["enum"], None]}
        del out["anyOf"]
        out = {**core, "type": [core["type"], "null"], **out}
    return out


def record_document(resource: CollectionIR) -> dict[str, Any]:
    """The schema document of a resource's record model: one class, `Record` (nested objects get
    classes named after their fields; the generator renames one that would clash with it)."""
    return {"$defs": _type_list_nullables({RECORD_CLASS: resource.schema})}


def generate_models(tool: ToolIR, header: str, cache: Store | None = None) -> str:
    return _cached(models_document(tool), header, cache)


def generate_record_model(resource: CollectionIR, header: str, cache: Store | None = None) -> str:
    return _cached(record_document(resource), header, cache)


def _cached(document: dict[str, Any], header: str, cache: Store | None) -> str:
    """The models of `document`, from the cache when these schemas were generated before (the
    generator's options are code, which the cache's fingerprint covers)."""
    if cache is None:
        return _generate(document, header)
    key = {"document": document, "header": header}
    code = cache.get(MODELS_ENTRY, key, _code)
    if code is None:
        code = _generate(document, header)
        cache.put(MODELS_ENTRY, key, code)
    return code


def _code(payload: Any) -> str | None:
    return payload if isinstance(payload, str) else None


def _generate(document: dict[str, Any], header: str) -> str:
    # Imported here: datamodel-code-generator is slow to import and only `build` needs it.
    from datamodel_code_generator import DataModelType, InputFileType, PythonVersion, generate

    code = generate(
        document,
        input_file_type=InputFileType.JsonSchema,
        output_model_type=DataModelType.PydanticV2BaseModel,
        target_python_version=PythonVersion.PY_311,
        disable_timestamp=True,
        custom_file_header=header,
        use_annotated=True,
        field_constraints=True,
        use_union_operator=True,
        use_standard_collections=True,
        snake_case_field=True,
        allow_population_by_field_name=True,
        enum_field_as_literal="all",
        use_field_description=True,
        use_schema_description=True,
        strict_nullable=True,
        collapse_root_models=True,
        skip_root_model=True,
        # Constrained scalars (array items with a pattern or length) become Annotated aliases, not
        # RootModel classes: backends get plain values, not wrappers (upstream issue 2120).
        use_type_alias=True,
        formatters=[],
    )
    assert isinstance(code, str)
    return code.rstrip("\n") + "\n"


def _without_dialect(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "$schema"}

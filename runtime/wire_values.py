"""Backend results -> JSON values for `structuredContent`."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel


def to_wire(value: Any) -> Any:
    """Dump a result by its aliases. An optional field left at None is omitted; a required
    field that is None stays, as `null` (the output schema then says whether that is allowed)."""
    if isinstance(value, BaseModel):
        out = {}
        fields = type(value).model_fields
        for name, field in fields.items():
            item = getattr(value, name)
            if item is None and not field.is_required():
                continue
            out[field.alias or name] = to_wire(item)
        if value.model_extra:
            out.update({k: to_wire(v) for k, v in value.model_extra.items()})
        return out
    if isinstance(value, dict):
        return {str(k): to_wire(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_wire(v) for v in value]
    if (
        hasattr(value, "value")
        and type(value).__module__ != "builtins"
        and hasattr(type(value), "__members__")
    ):
        return value.value  # an Enum
    return value


def json_size(value: Any) -> int:
    """UTF-8 bytes of `value` as compact JSON: the measure output caps are enforced in."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def fit_list_to_json_cap(result: dict[str, Any], key: str, flag: str, limit: int) -> None:
    """Drop trailing items of `result[key]` until `result` is at most `limit` bytes of JSON,
    setting `result[flag]` when anything was dropped. Items are measured once each."""
    items = result[key]
    if json_size(result) <= limit:
        return
    result[flag] = True
    result[key] = []
    budget = limit - json_size(result)
    kept = 0
    for item in items:
        cost = json_size(item) + (1 if kept else 0)  # a comma between items
        if cost > budget:
            break
        budget -= cost
        kept += 1
    result[key] = items[:kept]

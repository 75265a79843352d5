"""The Collections section of a generated README: each declared collection as a reader needs it, with
one table row per field path (nested object fields and array items included)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ..ir import CollectionIR, RecordFieldIR, ServerIR


def collection_docs(server: ServerIR) -> list[dict[str, Any]]:
    ids = {r.name: r.id for r in server.collections}
    docs = []
    for resource in server.collections:
        nested = [r.id for r in server.collections if any(p.resource == resource.name for p in r.parents)]
        docs.append(
            {
                "ir": resource,
                "capabilities": ", ".join(resource.capabilities),
                "sort": _sort_text(resource),
                "text_limit": (
                    f"{resource.max_text_chars:,} characters per text field in list results"
                    if resource.max_text_chars is not None
                    else "none"
                ),
                "parents": [
                    {"placeholder": p.placeholder, "collection": ids.get(p.resource, p.resource)}
                    for p in resource.parents
                ],
                "nested": nested,
                "references": [
                    {"path": path, "collection": ids.get(to, to)}
                    for path, to in _references(resource.fields, "")
                ],
                "rows": list(_rows(resource, resource.fields, "", ids)),
            }
        )
    return docs


def _sort_text(resource: CollectionIR) -> str:
    keys = [f"`{s.field}` {'descending' if s.descending else 'ascending'}" for s in resource.sort]
    if not any(s.field == resource.key for s in resource.sort):
        keys.append(f"`{resource.key}` ascending")  # the key always breaks ties
    return ", then ".join(keys)


def _references(fields: Sequence[RecordFieldIR], prefix: str) -> Iterator[tuple[str, str]]:
    for f in fields:
        path = prefix + f.name
        target = f.items if f.type == "array" and f.items is not None else f
        if target.type == "reference" and target.to is not None:
            yield path, target.to
        elif target.type == "object" and f.type == "object":
            yield from _references(target.fields or (), path + ".")


def _rows(
    resource: CollectionIR, fields: Sequence[RecordFieldIR], prefix: str, ids: dict[str, str]
) -> Iterator[dict[str, Any]]:
    for f in fields:
        path = prefix + f.name
        search = [
            kind
            for kind, names in (("keyword", resource.keyword), ("meaning", resource.meaning))
            if not prefix and f.name in names
        ]
        yield {
            "path": path,
            "type": _type_text(f, ids),
            "required": f.required,
            "search": ", ".join(search),
            "description": f.description or "",
        }
        if f.type == "object":
            yield from _rows(resource, f.fields or (), path + ".", ids)
        elif f.type == "array" and f.items is not None and f.items.type == "object":
            yield from _rows(resource, f.items.fields or (), path + "[].", ids)


def _type_text(f: RecordFieldIR, ids: dict[str, str]) -> str:
    if f.type == "array" and f.items is not None:
        return "array of " + _type_text(f.items, ids)
    if f.type == "reference":
        return f"reference to `{ids.get(f.to or '', f.to)}`"
    if f.type == "enum":
        return "one of " + ", ".join(f"`{v}`" for v in f.values or ())
    return f.type

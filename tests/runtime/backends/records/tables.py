"""Test stores written directly in the layout of records-contract §4 (a Lance table per resource
and CURRENT.json), with the column code the loader uses (`columns`), so query and search tests
need no `lynxc load`. Also the declarations the records tests share."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lynxc.runtime.backends.records import columns
from lynxc.runtime.backends.records.definitions import Resource, Resources, parse_resources
from lynxc.runtime.backends.records.store import Current, ResourceState, read_current, write_current
from lynxc.runtime.backends.records.tokens import fts_index

LOADED_AT = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


def field(name: str, type: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": type, **extra}


def resource(name: str, key: str, fields: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "id": extra.pop("id", name),
        "title": extra.pop("title", name.title()),
        "description": None,
        "key": key,
        "fields": fields,
        "schema": {"type": "object"},
        "model": f"records_{name}",
        **extra,
    }


def declare(*items: dict[str, Any]) -> Resources:
    return parse_resources(json.dumps({"format": 1, "resources": list(items)}))


# Every field type, for filters and shape: `items` refers to `people` (integer keys).
PEOPLE = resource(
    "people",
    "pid",
    [
        field("pid", "integer", required=True),
        field("name", "string"),
        field("bio", "text"),
        field("motto", "localized"),
    ],
    keyword=["name", "bio"],
    sort=[{"field": "pid"}],
    max_text_chars=10,
)
ITEMS = resource(
    "items",
    "id",
    [
        field("id", "string", required=True),
        field("title", "string"),
        field("body", "text"),
        field("name", "localized"),
        field("status", "enum", values=["Draft", "Final", "It's"]),
        field("count", "integer"),
        field("score", "number"),
        field("flag", "boolean"),
        field("day", "date"),
        field("at", "datetime"),
        field("tags", "array", items=field("items", "string")),
        field("nums", "array", items=field("items", "integer")),
        field("days", "array", items=field("items", "date")),
        field("kinds", "array", items=field("items", "enum", values=["a", "b"])),
        field("author", "reference", to="people"),
        field("friends", "array", items=field("items", "reference", to="people")),
        field(
            "capital",
            "object",
            fields=[field("name", "string"), field("population", "integer"), field("note", "text")],
        ),
        field("parts", "array", items=field("items", "object", fields=[field("x", "text")])),
    ],
    keyword=["title", "body", "name"],
    meaning=["title", "body"],
    sort=[{"field": "count", "descending": True}],
    max_text_chars=20,
)
SECTIONS = resource(
    "sections",
    "sid",
    [
        field("sid", "string", required=True),
        field("item", "reference", to="items", required=True),
        field("person", "reference", to="people", required=True),
        field("n", "integer", required=True),
        field("title", "string"),
    ],
    id="items/{item}/people/{person}/sections",
    parents=[
        {"placeholder": "item", "field": "item", "resource": "items"},
        {"placeholder": "person", "field": "person", "resource": "people"},
    ],
    keyword=["title"],
    sort=[{"field": "n"}],
)
RESOURCES = declare(ITEMS, PEOPLE, SECTIONS)


def rows(
    resource: Resource, resources: Resources, records: Sequence[Mapping[str, Any]], embedder: str | None
) -> Any:
    """An Arrow table of `records` in the store's columns."""
    import pyarrow as pa

    types = columns.key_types(resources)
    vectors = None
    if resource.meaning:
        from lynxc.runtime.backends.retrieval.embedders import get_embedder

        assert embedder is not None
        texts = [columns.joined_text(resource, resource.meaning, r) for r in records]
        vectors = get_embedder(embedder).embed(texts)
    schema = columns.table_schema(resource, types, vectors.shape[1] if vectors is not None else None)
    out: dict[str, list[Any]] = {name: [] for name in schema.names}
    for i, record in enumerate(records):
        data = columns.canonical(resource, dict(record))
        text = columns.data_json(data)
        out[columns.KEY].append(columns.key_text(resource, data))
        out[columns.REVISION].append(1)
        out[columns.CREATED].append(LOADED_AT)
        out[columns.UPDATED].append(LOADED_AT)
        out[columns.HASH].append(columns.data_hash(text))
        out[columns.DATA].append(text)
        if resource.keyword:
            out[columns.TEXT].append(columns.keyword_terms(resource, data))
        if vectors is not None:
            out[columns.VECTOR].append(vectors[i].tolist())
        for path in resource.stored_paths():
            out[path.column].append(columns.path_value(path, data))
    return pa.Table.from_pydict(out, schema=schema)


def write_store(
    data_dir: Path,
    resources: Resources,
    records: Mapping[str, Sequence[Mapping[str, Any]]],
    embedder: str | None = "static",
) -> Current:
    """One generation (`<name>-1`) per resource in `records`, and CURRENT.json naming them."""
    import lancedb

    db = lancedb.connect(str(data_dir / "lance"))
    states = dict(read_current(data_dir).resources)
    for name, items in records.items():
        resource = resources.by_name(name)
        assert resource is not None
        table = db.create_table(f"{name}-1", rows(resource, resources, items, embedder), mode="overwrite")
        if resource.keyword:
            table.create_index(columns.TEXT, config=fts_index(), replace=True)
        states[name] = _state(resource, table, items, embedder)
    current = Current(states)
    write_current(data_dir, current)
    return current


def add_records(
    data_dir: Path,
    resources: Resources,
    name: str,
    records: Sequence[Mapping[str, Any]],
    embedder: str | None = "static",
    move_pointer: bool = True,
) -> int:
    """Append records to a resource's table (a new Lance version, as a load does), reindex, and
    move the pointer to that version unless told not to. Returns the new version."""
    import lancedb

    resource = resources.by_name(name)
    assert resource is not None
    table = lancedb.connect(str(data_dir / "lance")).open_table(f"{name}-1")
    table.add(rows(resource, resources, records, embedder))
    if resource.keyword:
        table.create_index(columns.TEXT, config=fts_index(), replace=True)
    if move_pointer:
        current = read_current(data_dir)
        state = current.resources[name]
        moved = ResourceState(
            state.table,
            table.version,
            table.count_rows(),
            state.locales,
            state.embedder,
            state.dimension,
            state.declaration_sha256,
            state.loaded_at,
        )
        write_current(data_dir, Current({**current.resources, name: moved}))
    return table.version


def _state(
    resource: Resource, table: Any, items: Sequence[Mapping[str, Any]], embedder: str | None
) -> ResourceState:
    found: set[str] = set()
    for item in items:
        found |= columns.locales(resource, item)
    vectors = bool(resource.meaning)
    return ResourceState(
        table=table.name,
        version=table.version,
        records=len(items),
        locales=tuple(sorted(found)),
        embedder=embedder if vectors else None,
        dimension=table.schema.field("_vector").type.list_size if vectors else None,
        declaration_sha256="test",
        loaded_at=LOADED_AT.isoformat(),
    )

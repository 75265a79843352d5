"""One validated record -> the values of its store columns, and the tables' Arrow schemas.

Columns (records-contract section 4): `_key` (the key as text), `_revision`, `_created_at`,
`_updated_at`, `_hash` (sha256 of `_data`), `_data` (the record's canonical JSON), `_terms`
(the keyword fields' text as search terms, keyword_terms, when declared), `_vector` (meaning
fields embedded, when declared), and one column per stored path (`Resource.stored_paths()`,
named `FieldPath.column`):

- string, text, enum -> string (an enum value that is not a string: its JSON text);
  integer -> int64; number -> float64; boolean -> bool; date -> date32;
  datetime -> timestamp(us, UTC) (a time without offset is taken as UTC);
  reference -> the type of the target's key (int64 or string);
- localized -> list<string> of "locale\\x1ftext", ordered by locale;
- an array of scalars -> list<element>; any other array -> int32, its length; a field of an
  array's objects (`currencies.code`) -> list<element> of every element's value.

The loader also spills `_meaning` (the text to embed) with each row until the vectors are made.
Heavy libraries load inside the functions: the compiler imports nothing of this module.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .definitions import Field, FieldPath, Resource, Resources
from .tokens import term_text

LOCALE_SEPARATOR = "\x1f"
NAME_WEIGHT = 2
KEY, REVISION, CREATED, UPDATED = "_key", "_revision", "_created_at", "_updated_at"
HASH, DATA, TEXT, VECTOR, MEANING = "_hash", "_data", "_terms", "_vector", "_meaning"


def key_types(resources: Resources) -> dict[str, str]:
    """Each resource's key type ('string' or 'integer'): what its references hold."""
    return {r.name: r.key_field.type for r in resources.items}


def table_schema(resource: Resource, types: Mapping[str, str], dimension: int | None) -> Any:
    """The Arrow schema of a resource's Lance table."""
    import pyarrow as pa

    timestamp = pa.timestamp("us", tz="UTC")
    columns = [
        (KEY, pa.string()),
        (REVISION, pa.int64()),
        (CREATED, timestamp),
        (UPDATED, timestamp),
        (HASH, pa.string()),
        (DATA, pa.string()),
    ]
    if resource.keyword:
        columns.append((TEXT, pa.string()))
    if resource.meaning:
        assert dimension is not None, "a resource with meaning fields has vectors"
        columns.append((VECTOR, pa.list_(pa.float32(), dimension)))
    columns += [(p.column, path_type(p, types)) for p in resource.stored_paths()]
    return pa.schema(columns)


def spill_schema(resource: Resource, types: Mapping[str, str]) -> Any:
    """The rows as the loader keeps them between validation and writing: the table's columns
    but the ones known only then (revision, times, vector), and the text to embed."""
    import pyarrow as pa

    columns = [(KEY, pa.string()), (HASH, pa.string()), (DATA, pa.string())]
    if resource.keyword:
        columns.append((TEXT, pa.string()))
    if resource.meaning:
        columns.append((MEANING, pa.string()))
    columns += [(p.column, path_type(p, types)) for p in resource.stored_paths()]
    return pa.schema(columns)


def path_type(path: FieldPath, types: Mapping[str, str]) -> Any:
    import pyarrow as pa

    if path.in_array:
        return pa.list_(pa.string() if path.field.type == "localized" else _scalar_type(path.field, types))
    if path.field.type == "array":
        return pa.int32()
    return _scalar_type(path.field, types)


def _scalar_type(f: Field, types: Mapping[str, str]) -> Any:
    import pyarrow as pa

    kind = types.get(f.to or "", "string") if f.type == "reference" else f.type
    return {
        "integer": pa.int64(),
        "number": pa.float64(),
        "boolean": pa.bool_(),
        "date": pa.date32(),
        "datetime": pa.timestamp("us", tz="UTC"),
        "localized": pa.list_(pa.string()),
    }.get(kind, pa.string())


def canonical(resource: Resource, data: dict[str, Any]) -> dict[str, Any]:
    """The dumped record with localized maps ordered by locale, so the same record always has
    the same JSON (the model keeps the order of declaration for everything else)."""
    return _ordered(resource.fields, data)


def _ordered(fields: Sequence[Field], data: dict[str, Any]) -> dict[str, Any]:
    by_name = {f.name: f for f in fields}
    return {name: _ordered_value(by_name.get(name), value) for name, value in data.items()}


def _ordered_value(f: Field | None, value: Any) -> Any:
    if f is None or value is None:
        return value
    if f.type == "localized" and isinstance(value, dict):
        return dict(sorted(value.items()))
    if f.type == "object" and isinstance(value, dict):
        return _ordered(f.fields or (), value)
    if f.type == "array" and isinstance(value, list):
        return [_ordered_value(f.items, item) for item in value]
    return value


def data_json(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def data_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def key_text(resource: Resource, data: Mapping[str, Any]) -> str:
    return str(data[resource.key])


def joined_text(resource: Resource, names: Iterable[str], data: Mapping[str, Any]) -> str:
    """The text of the given top-level fields, joined by newlines: every locale of a localized
    field, every element of an array."""
    parts: list[str] = []
    for name in names:
        value = data.get(name)
        f = resource.field(name)
        if value is None or f is None:
            continue
        if isinstance(value, dict):  # localized
            parts += [str(text) for _, text in sorted(value.items()) if text is not None]
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    parts += [str(text) for _, text in sorted(item.items()) if text is not None]
                elif item is not None:
                    parts.append(str(item))
        else:
            parts.append(str(value))
    return "\n".join(parts)


def keyword_terms(resource: Resource, data: Mapping[str, Any]) -> str:
    """The `_terms` of a record: each keyword field's text as search terms (tokens.term_text),
    a `string` field (a title, a name) NAME_WEIGHT times, so a word in a title counts for more
    than one deep in a body. Measured on the tune half of bench/data/pep-questions (text's MRR@10
    over the PEPs): 0.821 once, 0.848 twice, 0.848 three times."""
    parts: list[str] = []
    for name in resource.keyword:
        f = resource.field(name)
        terms = term_text(joined_text(resource, [name], data))
        if terms:
            parts += [terms] * (NAME_WEIGHT if f is not None and f.type == "string" else 1)
    return "\n".join(parts)


def path_value(path: FieldPath, data: Mapping[str, Any]) -> Any:
    """The column value of one stored path of a (dumped, JSON-mode) record; None if absent."""
    value: Any = data
    parts = path.path.split(".")
    for i, part in enumerate(parts):
        if isinstance(value, list) and path.in_array:  # the objects of an array: each one's value
            return _element_values(path, value, parts[i:])
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    if value is None:
        return None
    if path.in_array:
        if not isinstance(value, list):
            return None
        if path.field.type == "localized":
            return [pair for item in value if isinstance(item, dict) for pair in _pairs(item)]
        return [_scalar(path.field, item) for item in value]
    if path.field.type == "array":
        return len(value) if isinstance(value, list) else None
    return _scalar(path.field, value)


def _element_values(path: FieldPath, items: list[Any], parts: list[str]) -> list[Any]:
    found: list[Any] = []
    for item in items:
        value: Any = item
        for part in parts:
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            continue
        if path.field.type == "localized":
            found += _pairs(value) if isinstance(value, dict) else []
        else:
            found.append(_scalar(path.field, value))
    return found


def _pairs(value: Mapping[str, Any]) -> list[str]:
    return [f"{locale}{LOCALE_SEPARATOR}{text}" for locale, text in sorted(value.items()) if text is not None]


def _scalar(f: Field, value: Any) -> Any:
    if value is None:
        return None
    kind = f.type
    if kind == "localized":
        return _pairs(value) if isinstance(value, dict) else None
    if kind == "date":
        return dt.date.fromisoformat(value)
    if kind == "datetime":
        moment = dt.datetime.fromisoformat(value)
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=dt.UTC)
    if kind == "enum" and not isinstance(value, str):
        return json.dumps(value)
    if kind == "number":
        return float(value)
    return value


def locales(resource: Resource, data: Mapping[str, Any]) -> set[str]:
    """The locale codes the record's localized fields use, at any depth."""
    found: set[str] = set()
    _collect_locales(resource.fields, data, found)
    return found


def _collect_locales(fields: Sequence[Field], data: Any, found: set[str]) -> None:
    if not isinstance(data, dict):
        return
    for f in fields:
        _collect_value_locales(f, data.get(f.name), found)


def _collect_value_locales(f: Field | None, value: Any, found: set[str]) -> None:
    if f is None or value is None:
        return
    if f.type == "localized" and isinstance(value, dict):
        found.update(value)
    elif f.type == "object":
        _collect_locales(f.fields or (), value, found)
    elif f.type == "array" and isinstance(value, list):
        for item in value:
            _collect_value_locales(f.items, item, found)


class SpillBuilder:
    """Accumulates validated records (JSON-mode dumps) into one spill RecordBatch."""

    def __init__(self, resource: Resource, types: Mapping[str, str]):
        self.resource = resource
        self.schema = spill_schema(resource, types)
        self.paths = list(resource.stored_paths())
        self.locales: set[str] = set()
        self._columns: dict[str, list[Any]] = {name: [] for name in self.schema.names}

    def __len__(self) -> int:
        return len(self._columns[KEY])

    def add(self, data: dict[str, Any]) -> tuple[str, str]:
        """Adds one record; returns its (key, hash)."""
        resource = self.resource
        data = canonical(resource, data)
        text = data_json(data)
        key, digest = key_text(resource, data), data_hash(text)
        columns = self._columns
        columns[KEY].append(key)
        columns[HASH].append(digest)
        columns[DATA].append(text)
        if resource.keyword:
            columns[TEXT].append(keyword_terms(resource, data))
        if resource.meaning:
            columns[MEANING].append(joined_text(resource, resource.meaning, data))
        for path in self.paths:
            columns[path.column].append(path_value(path, data))
        self.locales |= locales(resource, data)
        return key, digest

    def take(self) -> Any:
        """The rows added so far as one RecordBatch; the builder starts empty again."""
        import pyarrow as pa

        arrays = [pa.array(self._columns[f.name], type=f.type) for f in self.schema]
        self._columns = {name: [] for name in self.schema.names}
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

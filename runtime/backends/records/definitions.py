"""The resources a records server declares, as the compiler wrote them to `collections.json`.

`lynxc build` lowers a spec's `collections:` block into `generated/<server>/collections.json`; this
module reads it back into frozen dataclasses. Every other module of the records runtime (the
store, the loader, the query engine, the five tools) works from these, never from the raw JSON.

The file's shape (format 1):

    {"_generated": "...header...", "format": 1, "resources": [RESOURCE, ...]}

    RESOURCE = {
      "name": "sections",                    # unique; what `to:` and `lynxc load` name
      "id": "peps/{pep}/sections",           # the resource_id clients pass; = name unless nested
      "title": "...", "description": "...",
      "key": "section_id",                   # a top-level string or integer field, required
      "parents": [{"placeholder": "pep", "field": "pep", "resource": "peps"}],
      "fields": [FIELD, ...],                # declaration order
      "keyword": ["title", "body"],          # top-level fields matched by keyword, in order
      "meaning": ["title"],                  # top-level fields embedded, in order
      "capabilities": ["search", "query", "get_one"],
      "sort": [{"field": "created", "descending": true}],   # default order; key breaks ties
      "max_text_chars": 2000,                # or null: no limit
      "schema": {...},                       # JSON Schema of one record (describe_resource)
      "model": "records_sections",           # models/<model>.py, class `Record`
      "bind": {"customer_email": "email"}    # optional: callers see only records whose field
    }                                        # equals that claim of theirs (binding.py)
    FIELD = {"name": "title", "type": "string", "required": true, "description": "..." | null,
             "values": [...] | null,         # enum
             "to": "peps" | null,            # reference
             "items": FIELD | null,          # array (its name is "items")
             "fields": [FIELD, ...] | null}  # object

Types: string, text (long; cut to max_text_chars in lists), integer, number, boolean, date,
datetime, enum, array, object, localized (text keyed by locale code), reference (a key of the
resource `to`, typed like that key).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

FORMAT = 1
SCALAR_TYPES = frozenset({"string", "integer", "number", "boolean", "date", "datetime", "enum", "reference"})
TEXT_TYPES = frozenset({"text", "localized"})
CAPABILITIES = ("search", "query", "get_one")


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    required: bool = False
    description: str | None = None
    values: tuple[Any, ...] | None = None
    to: str | None = None
    items: Field | None = None
    fields: tuple[Field, ...] | None = None

    def child(self, name: str) -> Field | None:
        return next((f for f in self.fields or () if f.name == name), None)


@dataclass(frozen=True)
class FieldPath:
    """A path clients name in filters, sort and populate: `status`, `capital.name`, `name.fr`
    (one locale of a localized field). `field` is the declared field at the end of the path;
    `locale` is set for a localized field's locale; `in_array` when the value is an element of an
    array (filters then test membership)."""

    path: str
    field: Field
    locale: str | None = None
    in_array: bool = False

    @property
    def column(self) -> str:
        """The store column holding this path's values (one per declared path, never per locale)."""
        return column_name(self.path if self.locale is None else self.path.rsplit(".", 1)[0])

    @property
    def value_type(self) -> str:
        """The type a filter value must have: the element type for an array."""
        return self.field.type


def column_name(path: str) -> str:
    """`capital.name` -> `f_capital__name`. Field names are lower snake case without `__` (the
    compiler checks), so the mapping is one to one and needs no quoting in SQL."""
    return "f_" + path.replace(".", "__")


@dataclass(frozen=True)
class Parent:
    placeholder: str
    field: str
    resource: str


@dataclass(frozen=True)
class SortKey:
    field: str
    descending: bool = False


@dataclass(frozen=True)
class Bound:
    """A top-level field every read of the resource must find equal to the caller's `claim`."""

    field: str
    claim: str


@dataclass(frozen=True)
class Resource:
    name: str
    id: str
    title: str | None
    description: str | None
    key: str
    parents: tuple[Parent, ...]
    fields: tuple[Field, ...]
    keyword: tuple[str, ...]
    meaning: tuple[str, ...]
    capabilities: tuple[str, ...]
    sort: tuple[SortKey, ...]
    max_text_chars: int | None
    schema: Mapping[str, Any]
    model: str
    bind: tuple[Bound, ...] = ()

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    @property
    def key_field(self) -> Field:
        found = self.field(self.key)
        assert found is not None, "the compiler checks that the key is a declared field"
        return found

    def stored_paths(self) -> Iterator[FieldPath]:
        """Every path with a store column: scalars, text and localized fields at any object
        depth, arrays of scalars (element paths). An array of objects is stored as its length
        (`exists`), and each scalar or localized field of its elements as an element path
        (`currencies.code`: the codes of every element, tested like an array of scalars)."""
        yield from _paths(self.fields, "", False)

    def references(self) -> Iterator[FieldPath]:
        """Paths whose values are keys of another resource (populate accepts these)."""
        return (p for p in self.stored_paths() if p.field.type == "reference" and not _in_objects(self, p))

    def element_paths(self) -> list[str]:
        """The paths of fields inside an array's objects (`currencies.code`)."""
        return [p.path for p in self.stored_paths() if _in_objects(self, p)]


def _in_objects(resource: Resource, path: FieldPath) -> bool:
    """Whether `path` names a field of the objects of an array (not an array of scalars)."""
    if not path.in_array:
        return False
    head = resource.field(path.path.split(".", 1)[0])
    return (
        head is not None and head.type == "array" and head.items is not None and head.items.type == "object"
    )


def _paths(fields: tuple[Field, ...], prefix: str, in_array: bool) -> Iterator[FieldPath]:
    for f in fields:
        path = prefix + f.name
        if f.type == "object":
            if not in_array:
                yield from _paths(f.fields or (), path + ".", False)
        elif f.type == "array":
            if in_array:
                continue  # an array inside an array's elements: kept in the record only
            item = f.items
            if item is not None and item.type not in ("object", "array"):
                yield FieldPath(path, item, None, True)
            else:
                yield FieldPath(path, f, None, False)  # exists
                if item is not None and item.type == "object":
                    scalars = tuple(c for c in item.fields or () if c.type not in ("object", "array"))
                    yield from _paths(scalars, path + ".", True)
        else:
            yield FieldPath(path, f, None, in_array)


@dataclass(frozen=True)
class Resources:
    items: tuple[Resource, ...]

    def by_name(self, name: str) -> Resource | None:
        return next((r for r in self.items if r.name == name), None)

    def by_id(self, resource_id: str) -> Resource | None:
        """The resource whose id (template) is exactly `resource_id`."""
        return next((r for r in self.items if r.id == resource_id), None)

    def nested_under(self, name: str) -> tuple[Resource, ...]:
        return tuple(r for r in self.items if any(p.resource == name for p in r.parents))


def parse_resources(text: str) -> Resources:
    """collections.json text -> Resources. The file is the compiler's output, checked against its
    sha256 at start-up, so a shape error here is a bug, not user input: it raises ValueError."""
    document = json.loads(text)
    if document.get("format") != FORMAT:
        raise ValueError(f"collections.json format {document.get('format')!r} (this runtime reads {FORMAT})")
    return Resources(tuple(_resource(item) for item in document["resources"]))


def _resource(raw: Mapping[str, Any]) -> Resource:
    return Resource(
        name=raw["name"],
        id=raw["id"],
        title=raw.get("title"),
        description=raw.get("description"),
        key=raw["key"],
        parents=tuple(Parent(p["placeholder"], p["field"], p["resource"]) for p in raw.get("parents", ())),
        fields=tuple(_field(f) for f in raw["fields"]),
        keyword=tuple(raw.get("keyword", ())),
        meaning=tuple(raw.get("meaning", ())),
        capabilities=tuple(raw.get("capabilities", CAPABILITIES)),
        sort=tuple(SortKey(s["field"], bool(s.get("descending", False))) for s in raw.get("sort", ())),
        max_text_chars=raw.get("max_text_chars"),
        schema=raw["schema"],
        model=raw["model"],
        bind=tuple(Bound(name, claim) for name, claim in (raw.get("bind") or {}).items()),
    )


def _field(raw: Mapping[str, Any]) -> Field:
    values = raw.get("values")
    items = raw.get("items")
    fields = raw.get("fields")
    return Field(
        name=raw["name"],
        type=raw["type"],
        required=bool(raw.get("required", False)),
        description=raw.get("description"),
        values=tuple(values) if values is not None else None,
        to=raw.get("to"),
        items=_field(items) if items is not None else None,
        fields=tuple(_field(f) for f in fields) if fields is not None else None,
    )

"""Lower declared collections of records (`collections:` in a server file, `collection:` files
in a folder) into CollectionIR, with every check a record declaration needs, and the JSON Schema
of one record.

Collections refer to each other (`to:`, and the parents that id placeholders name), so lowering
takes two passes: each collection's own fields first, then what needs the others (reference types
are the target's key type; parents must not nest in a cycle).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic, Span
from ..ir import CollectionIR, CollectionParentIR, CollectionSortIR, RecordFieldIR, canonical_json
from ..rules import diagnostic
from ..spec.load import CollectionSource
from ..spec.models import RECORD_FIELD_TYPES, RESOURCE_CAPABILITIES, Collection, RecordField
from ..spec.source import NodePath
from ..suggest import did_you_mean

NAME = re.compile(r"^[a-z][a-z0-9_]*$")
LOCALE_PATTERN = "^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$"
MODEL_PREFIX = "records_"
_ID_LITERAL = re.compile(r"^[A-Za-z0-9_.~-]+$")
_ID_PLACEHOLDER = re.compile(r"^\{([^{}]*)\}$")
KEY_TYPES = ("string", "integer")
SEARCHABLE_TYPES = ("string", "text", "localized")
SORTABLE_TYPES = ("string", "integer", "number", "boolean", "date", "datetime", "enum", "reference")
# The key each type needs, and which type each key belongs to.
_NEEDED_KEY = {"enum": "values", "reference": "to", "array": "items", "object": "fields"}
_KEY_OWNER = {key: kind for kind, key in _NEEDED_KEY.items()}
_SCALAR_SCHEMAS: Mapping[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "text": {"type": "string"},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "date": {"type": "string", "format": "date"},
    "datetime": {"type": "string", "format": "date-time"},
    "localized": {
        "type": "object",
        "additionalProperties": {"type": "string"},
        "propertyNames": {"pattern": LOCALE_PATTERN},
    },
}


def model_module(resource_name: str) -> str:
    """The file stem under models/ of a collection's record model."""
    return MODEL_PREFIX + resource_name


@dataclass(frozen=True)
class FieldPathInfo:
    """A path clients may name (`capital.name`) and what stands there."""

    path: str
    field: RecordFieldIR  # for an array of scalars, its items; for other arrays, the array
    in_array: bool
    element: bool = False  # the path of an array, standing for its elements

    @property
    def sortable(self) -> bool:
        return self.field.type in SORTABLE_TYPES and not self.in_array


def field_paths(
    fields: Sequence[RecordFieldIR], prefix: str = "", in_array: bool = False
) -> Iterator[FieldPathInfo]:
    """Every path of a record: fields at any object depth; an array's path stands for its elements."""
    for f in fields:
        path = prefix + f.name
        if f.type == "array" and f.items is not None:
            item = f.items
            yield FieldPathInfo(path, item if item.type not in ("array", "object") else f, True, True)
            if item.type == "object":
                yield from field_paths(item.fields or (), path + ".", True)
            continue
        yield FieldPathInfo(path, f, in_array)
        if f.type == "object":
            yield from field_paths(f.fields or (), path + ".", in_array)


def lower_collections(
    sources: Sequence[CollectionSource],
) -> tuple[tuple[CollectionIR, ...], list[Diagnostic]]:
    names = [source.collection.name for source in sources]
    diagnostics: list[Diagnostic] = []
    firsts: dict[str, CollectionSource] = {}
    lowered: list[_Lowered] = []
    for source in sources:
        name = source.collection.name
        span = source.doc.span((*source.base, "name"))
        if not NAME.match(name):
            diagnostics.append(
                diagnostic(
                    "COLLECTION_NAME_INVALID",
                    f"collection name '{name}' must be lowercase letters, digits and underscores, "
                    "starting with a letter",
                    span,
                    _snake_hint(name),
                )
            )
        if name in firsts:
            first = firsts[name].doc.span((*firsts[name].base, "name"))
            diagnostics.append(
                diagnostic(
                    "COLLECTION_NAME_DUPLICATE",
                    f"collection '{name}' is declared twice (first at {first})",
                    span,
                    "rename one: `to:` and `lynxc load` name a collection by its name",
                )
            )
        firsts.setdefault(name, source)
        checker = _CollectionChecker(source, frozenset(names))
        lowered.append(checker.lower())
        diagnostics.extend(checker.diagnostics)
    diagnostics.extend(_check_ids(lowered))
    diagnostics.extend(_check_parent_cycles(lowered))
    key_types = {item.name: item.key_type for item in reversed(lowered)}  # the first of a name wins
    resources = tuple(item.collection_ir(key_types) for item in lowered)
    return resources, diagnostics


@dataclass
class _Lowered:
    """One collection after its own checks, before what depends on the other collections."""

    source: CollectionSource
    name: str
    id: str
    id_shape: str  # the id with placeholders blanked: two ids of one shape are ambiguous
    parents: tuple[CollectionParentIR, ...]
    fields: tuple[RecordFieldIR, ...]
    key: str
    key_type: str
    keyword: tuple[str, ...]
    meaning: tuple[str, ...]
    capabilities: tuple[str, ...]
    sort: tuple[CollectionSortIR, ...]
    bind: tuple[tuple[str, str], ...] = ()

    def collection_ir(self, key_types: Mapping[str, str]) -> CollectionIR:
        resource = self.source.collection
        return CollectionIR(
            name=self.name,
            id=self.id,
            title=resource.title,
            description=resource.description,
            key=self.key,
            parents=self.parents,
            fields=self.fields,
            keyword=self.keyword,
            meaning=self.meaning,
            capabilities=self.capabilities,
            sort=self.sort,
            max_text_chars=resource.max_text_chars,
            schema_json=canonical_json(
                record_schema(resource.title, resource.description, self.fields, key_types)
            ),
            model=model_module(self.name),
            span=self.source.doc.span((*self.source.base, "name")),
            bind=self.bind,
        )


@dataclass
class _CollectionChecker:
    source: CollectionSource
    resource_names: frozenset[str]
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def resource(self) -> Collection:
        return self.source.collection

    def span(self, *path: str | int, key: bool = False) -> Span:
        return self.source.doc.span((*self.source.base, *path), key=key)

    def report(self, rule_id: str, message: str, span: Span, hint: str | None = None) -> None:
        self.diagnostics.append(diagnostic(rule_id, message, span, hint))

    def lower(self) -> _Lowered:
        resource = self.resource
        fields = tuple(
            self.field(name, node, ("fields", name), name) for name, node in resource.fields.items()
        )
        top = {f.name: f for f in fields}
        key_type = self.check_key(top)
        id_text = resource.id if resource.id is not None else resource.name
        parents, id_shape = self.check_id(id_text, top)
        keyword = self.search_fields("keyword", top)
        meaning = self.search_fields("meaning", top)
        capabilities = self.check_capabilities(keyword, meaning, top)
        sort = self.check_sort(fields)
        bind = self.check_bind(top)
        return _Lowered(
            self.source,
            resource.name,
            id_text,
            id_shape,
            parents,
            fields,
            resource.key,
            key_type,
            keyword,
            meaning,
            capabilities,
            sort,
            bind,
        )

    # fields ---------------------------------------------------------------------------------

    def field(self, name: str, node: RecordField, path: NodePath, label: str) -> RecordFieldIR:
        if not NAME.match(name) or "__" in name:
            self.report(
                "COLLECTION_FIELD_NAME_INVALID",
                f"field name '{label}' must be lowercase letters, digits and single underscores, "
                "starting with a letter",
                self.span(*path, key=True),
                _snake_hint(name),
            )
        return self.field_body(name, node, path, label)

    def field_body(self, name: str, node: RecordField, path: NodePath, label: str) -> RecordFieldIR:
        kind = node.type
        written = node.model_fields_set
        known = kind in RECORD_FIELD_TYPES
        if not known:
            self.report(
                "COLLECTION_FIELD_TYPE_UNKNOWN",
                f"field '{label}': '{kind}' is not a record type",
                self.span(*path, "type"),
                did_you_mean(kind, RECORD_FIELD_TYPES) or "types: " + ", ".join(RECORD_FIELD_TYPES),
            )
        else:
            for key, owner in _KEY_OWNER.items():
                if key in written and getattr(node, key) is not None and kind != owner:
                    self.report(
                        "COLLECTION_FIELD_KEY_MISPLACED",
                        f"field '{label}': '{key}' applies to type {owner}, not {kind}",
                        self.span(*path, key, key=True),
                        f"remove '{key}', or make the field type {owner}",
                    )
            needed = _NEEDED_KEY.get(kind)
            if needed is not None and getattr(node, needed) is None and kind != "enum":
                self.report(
                    "COLLECTION_FIELD_KEY_MISSING",
                    f"field '{label}' of type {kind} needs '{needed}:'",
                    self.span(*path, "type"),
                    _MISSING_HINTS[kind],
                )
        values = self.enum_values(node, path, label) if kind == "enum" else None
        to = node.to if kind == "reference" else None
        if to is not None and to not in self.resource_names:
            self.report(
                "COLLECTION_REFERENCE_UNKNOWN",
                f"field '{label}' refers to collection '{to}', which the server does not declare",
                self.span(*path, "to"),
                did_you_mean(to, self.resource_names)
                or ("collections: " + ", ".join(sorted(self.resource_names))),
            )
        items = None
        if kind == "array" and node.items is not None:
            if "required" in node.items.model_fields_set:
                self.report(
                    "COLLECTION_FIELD_KEY_MISPLACED",
                    f"field '{label}': 'required' applies to a field, not to the items of an array",
                    self.span(*path, "items", "required", key=True),
                    "remove it; an array holds no null items",
                )
            items = self.field_body("items", node.items, (*path, "items"), f"{label}[]")
        children = None
        if kind == "object" and node.fields is not None:
            if not node.fields:
                self.report(
                    "COLLECTION_FIELD_KEY_MISSING",
                    f"field '{label}' of type object declares no fields",
                    self.span(*path, "fields"),
                    _MISSING_HINTS["object"],
                )
            children = tuple(
                self.field(child, child_node, (*path, "fields", child), f"{label}.{child}")
                for child, child_node in node.fields.items()
            )
        return RecordFieldIR(
            name=name,
            type=kind,
            required=node.required,
            description=node.description,
            values=values,
            to=to,
            items=items,
            fields=children,
            span=self.span(*path, key=True),
        )

    def enum_values(self, node: RecordField, path: NodePath, label: str) -> tuple[str, ...]:
        if not node.values:
            where = self.span(*path, "values") if node.values is not None else self.span(*path, "type")
            self.report(
                "COLLECTION_ENUM_EMPTY",
                f"enum field '{label}' lists no values",
                where,
                "list them, e.g. values: [Draft, Final]",
            )
            return ()
        seen: set[str] = set()
        for index, value in enumerate(node.values):
            if value in seen:
                self.report(
                    "COLLECTION_ENUM_VALUE_DUPLICATE",
                    f"enum field '{label}' lists '{value}' twice",
                    self.span(*path, "values", index),
                )
            seen.add(value)
        return tuple(dict.fromkeys(node.values))

    # key, id -------------------------------------------------------------------------------

    def check_key(self, top: Mapping[str, RecordFieldIR]) -> str:
        key = self.resource.key
        found = top.get(key)
        if found is None:
            self.report(
                "COLLECTION_FIELD_UNKNOWN",
                f"key '{key}' names no top-level field of collection '{self.resource.name}'",
                self.span("key"),
                did_you_mean(key, top) or _fields_hint(top, KEY_TYPES),
            )
            return "string"
        if not _known(found):
            return "string"  # its type is reported already
        if found.type not in KEY_TYPES:
            self.report(
                "COLLECTION_KEY_INVALID",
                f"key '{key}' is of type {found.type}; a key is a string or an integer",
                self.span("key"),
                _fields_hint(top, KEY_TYPES),
            )
            return "string"
        if not found.required:
            self.report(
                "COLLECTION_KEY_INVALID",
                f"key '{key}' is not required: every record needs its key",
                self.span("key"),
                f"add 'required: true' to field '{key}'",
            )
        return found.type

    def check_id(
        self, id_text: str, top: Mapping[str, RecordFieldIR]
    ) -> tuple[tuple[CollectionParentIR, ...], str]:
        where = self.span("id") if self.resource.id is not None else self.span("name")
        segments = id_text.split("/")
        parents: list[CollectionParentIR] = []
        shape: list[str] = []
        for segment in segments:
            placeholder = _ID_PLACEHOLDER.match(segment)
            if placeholder is None:
                if not _ID_LITERAL.match(segment):
                    self.report(
                        "COLLECTION_ID_INVALID",
                        f"resource id '{id_text}': segment '{segment}' is neither plain text "
                        "(letters, digits, '_', '-', '.', '~') nor one {placeholder}",
                        where,
                        "write it like 'peps/{pep}/sections'",
                    )
                    return (), id_text
                shape.append(segment)
                continue
            name = placeholder.group(1)
            shape.append("{}")
            if not NAME.match(name):
                self.report(
                    "COLLECTION_ID_INVALID",
                    f"resource id '{id_text}': placeholder '{{{name}}}' is not a field name",
                    where,
                    "a placeholder names a top-level reference field, like {pep}",
                )
                continue
            if any(p.placeholder == name for p in parents):
                self.report(
                    "COLLECTION_ID_INVALID",
                    f"resource id '{id_text}' names placeholder '{{{name}}}' twice",
                    where,
                )
                continue
            found = top.get(name)
            if found is None:
                references = {n: f for n, f in top.items() if f.type == "reference"}
                self.report(
                    "COLLECTION_FIELD_UNKNOWN",
                    f"placeholder '{{{name}}}' of resource id '{id_text}' names no top-level field",
                    where,
                    did_you_mean(name, top) or _fields_hint(references, ("reference",)),
                )
                continue
            if not _known(found) or (found.type == "reference" and found.to is None):
                continue  # reported already, as an unknown type or a reference without `to:`
            if found.type != "reference" or not found.required:
                problem = (
                    f"is of type {found.type}, not a reference to the parent collection"
                    if found.type != "reference"
                    else "is not required: every record must name its parent"
                )
                self.report(
                    "COLLECTION_PLACEHOLDER_NO_PARENT",
                    f"placeholder '{{{name}}}' of resource id '{id_text}': field '{name}' {problem}",
                    where,
                    f"declare {name}: {{type: reference, to: <parent collection>, required: true}}",
                )
                continue
            parents.append(CollectionParentIR(name, name, found.to))
        return tuple(parents), "/".join(shape)

    # search fields, capabilities, sort ----------------------------------------------------

    def search_fields(self, key: str, top: Mapping[str, RecordFieldIR]) -> tuple[str, ...]:
        names: list[str] = getattr(self.resource, key)
        for index, name in enumerate(names):
            span = self.span(key, index)
            if name in names[:index]:
                self.report("COLLECTION_ENTRY_DUPLICATE", f"{key} names field '{name}' twice", span)
                continue
            found = top.get(name)
            if found is None:
                self.report(
                    "COLLECTION_FIELD_UNKNOWN",
                    f"{key} field '{name}' names no top-level field of collection '{self.resource.name}'",
                    span,
                    did_you_mean(name, top) or _search_hint(top),
                )
            elif _known(found) and not _searchable(found):
                self.report(
                    "COLLECTION_SEARCH_FIELD_NOT_TEXT",
                    f"{key} field '{name}' is of type {_type_label(found)}: search matches text only",
                    span,
                    _search_hint(top),
                )
        return tuple(dict.fromkeys(names))

    def check_capabilities(
        self, keyword: tuple[str, ...], meaning: tuple[str, ...], top: Mapping[str, RecordFieldIR]
    ) -> tuple[str, ...]:
        capabilities = self.resource.capabilities
        written = "capabilities" in self.resource.model_fields_set
        if written and not capabilities:
            self.report(
                "COLLECTION_CAPABILITIES_EMPTY",
                f"collection '{self.resource.name}' allows no capability, so no tool can read its records",
                self.span("capabilities"),
                "list some of: " + ", ".join(RESOURCE_CAPABILITIES) + " (omit the key for all three)",
            )
        for index, capability in enumerate(capabilities):
            span = self.span("capabilities", index)
            if capability not in RESOURCE_CAPABILITIES:
                self.report(
                    "COLLECTION_CAPABILITY_UNKNOWN",
                    f"'{capability}' is not a capability",
                    span,
                    did_you_mean(capability, RESOURCE_CAPABILITIES)
                    or "capabilities: " + ", ".join(RESOURCE_CAPABILITIES),
                )
            elif capability in capabilities[:index]:
                self.report("COLLECTION_ENTRY_DUPLICATE", f"capabilities name '{capability}' twice", span)
        if "search" in capabilities and not keyword and not meaning:
            self.report(
                "COLLECTION_SEARCH_FIELDS_MISSING",
                f"collection '{self.resource.name}' allows search but declares no keyword or meaning fields",
                self.span("capabilities", key=True) if written else self.span("name"),
                _search_fields_hint(top),
            )
        elif "search" not in capabilities and capabilities:
            for key in ("keyword", "meaning"):
                if getattr(self.resource, key):
                    self.report(
                        "COLLECTION_SEARCH_FIELDS_UNUSED",
                        f"collection '{self.resource.name}' declares {key} fields but does not allow search",
                        self.span(key, key=True),
                        f"add search to capabilities, or remove '{key}'",
                    )
        return tuple(dict.fromkeys(c for c in capabilities if c in RESOURCE_CAPABILITIES))

    def check_sort(self, fields: Sequence[RecordFieldIR]) -> tuple[CollectionSortIR, ...]:
        paths = {info.path: info for info in field_paths(fields)}
        sortable = [path for path, info in paths.items() if info.sortable]
        seen: set[str] = set()
        out: list[CollectionSortIR] = []
        for index, entry in enumerate(self.resource.sort):
            span = self.span("sort", index)
            descending = entry.startswith("-")
            path = entry[1:] if descending else entry
            info = paths.get(path)
            if info is None:
                self.report(
                    "COLLECTION_FIELD_UNKNOWN",
                    f"sort field '{path}' names no field of collection '{self.resource.name}'",
                    span,
                    did_you_mean(path, sortable) or _sortable_hint(sortable),
                )
                continue
            if path in seen:
                self.report("COLLECTION_ENTRY_DUPLICATE", f"sort names field '{path}' twice", span)
                continue
            seen.add(path)
            if not info.sortable and _known(info.field):
                if info.element:
                    why = "an array"
                elif info.in_array:
                    why = "inside an array"
                else:
                    why = f"of type {info.field.type}"
                self.report(
                    "COLLECTION_SORT_NOT_SORTABLE",
                    f"sort field '{path}' is {why}, which has no order",
                    span,
                    _sortable_hint(sortable),
                )
                continue
            out.append(CollectionSortIR(path, descending))
        return tuple(out)

    def check_bind(self, top: Mapping[str, RecordFieldIR]) -> tuple[tuple[str, str], ...]:
        """Row-level security: each bound field is a top-level scalar a claim can equal."""
        bound: list[tuple[str, str]] = []
        scalar = [name for name, f in top.items() if f.type in BINDABLE_FIELD_TYPES]
        for name, binding in self.resource.bind.items():
            span = self.span("bind", name, key=True)
            record_field = top.get(name)
            if record_field is None:
                self.report(
                    "COLLECTION_FIELD_UNKNOWN",
                    f"bind names no top-level field '{name}' of collection '{self.resource.name}'",
                    span,
                    did_you_mean(name, scalar) or f"fields that can be bound: {', '.join(scalar) or 'none'}",
                )
                continue
            if record_field.type not in BINDABLE_FIELD_TYPES:
                self.report(
                    "COLLECTION_BIND_INVALID",
                    f"field '{name}' is of type {record_field.type}: only "
                    f"{', '.join(BINDABLE_FIELD_TYPES)} fields can equal a claim",
                    span,
                )
                continue
            if not binding.from_claim.strip():
                self.report("COLLECTION_BIND_INVALID", "from_claim names no claim", self.span("bind", name))
                continue
            bound.append((name, binding.from_claim))
        return tuple(bound)


# Record field types whose value a caller's claim (a string, number or boolean) can equal.
BINDABLE_FIELD_TYPES = ("string", "integer", "number", "boolean", "enum")

_MISSING_HINTS = {
    "reference": "name the collection it points at, e.g. to: countries",
    "array": "describe each element, e.g. items: {type: string}",
    "object": "declare its fields, e.g. fields: {name: {type: string}}",
}


def _check_ids(lowered: Sequence[_Lowered]) -> Iterator[Diagnostic]:
    first: dict[str, _Lowered] = {}
    for item in lowered:
        other = first.get(item.id_shape)
        if other is not None and other.name != item.name:
            source = item.source
            span = source.doc.span((*source.base, "id" if source.collection.id is not None else "name"))
            yield diagnostic(
                "COLLECTION_ID_DUPLICATE",
                f"collection '{item.name}' has the id '{item.id}', which collection '{other.name}' "
                f"already answers to ('{other.id}')",
                span,
                "give one of them its own id",
            )
        first.setdefault(item.id_shape, item)


def _check_parent_cycles(lowered: Sequence[_Lowered]) -> Iterator[Diagnostic]:
    parents = {item.name: [p.resource for p in item.parents] for item in reversed(lowered)}
    reported: set[frozenset[str]] = set()
    for item in lowered:
        chain = _cycle_from(item.name, parents)
        if chain is None or frozenset(chain) in reported:
            continue
        reported.add(frozenset(chain))
        source = item.source
        span = source.doc.span((*source.base, "id" if source.collection.id is not None else "name"))
        yield diagnostic(
            "COLLECTION_PARENT_CYCLE",
            f"collection '{item.name}' nests under itself: " + " -> ".join([*chain, chain[0]]),
            span,
            "a parent is the collection a record belongs to; it cannot belong to its own child",
        )


def _cycle_from(start: str, parents: Mapping[str, list[str]]) -> list[str] | None:
    """The chain start -> ... -> start through parents, if there is one (depth first)."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    visited: set[str] = set()
    while stack:
        name, chain = stack.pop()
        for parent in parents.get(name, ()):
            if parent == start:
                return chain
            if parent not in visited:
                visited.add(parent)
                stack.append((parent, [*chain, parent]))
    return None


def _known(f: RecordFieldIR) -> bool:
    """Whether the field's type (and its items' type) is one lowering knows: checks that depend
    on the type stay quiet about a field whose type is already reported unknown."""
    if f.type not in RECORD_FIELD_TYPES:
        return False
    return f.items is None or _known(f.items)


def _searchable(f: RecordFieldIR) -> bool:
    if f.type == "array":
        return f.items is not None and f.items.type in ("string", "text")
    return f.type in SEARCHABLE_TYPES


def _type_label(f: RecordFieldIR) -> str:
    if f.type == "array" and f.items is not None:
        return f"array of {f.items.type}"
    return f.type


def _search_hint(top: Mapping[str, RecordFieldIR]) -> str:
    candidates = [name for name, f in top.items() if _searchable(f)]
    if not candidates:
        return "the collection declares no text field (string, text, localized, or arrays of string or text)"
    return "text fields: " + ", ".join(candidates[:8])


def _search_fields_hint(top: Mapping[str, RecordFieldIR]) -> str:
    candidates = [name for name, f in top.items() if _searchable(f)]
    if not candidates:
        return "declare a text field to list under keyword: or meaning:, or leave search out of capabilities"
    return (
        f"list some of {', '.join(candidates[:8])} under keyword: or meaning:, "
        "or leave search out of capabilities"
    )


def _fields_hint(top: Mapping[str, RecordFieldIR], types: Sequence[str]) -> str:
    candidates = [name for name, f in top.items() if f.type in types]
    what = " or ".join(types)
    if not candidates:
        return f"declare a field of type {what}"
    return f"fields of type {what}: " + ", ".join(candidates[:8])


def _sortable_hint(sortable: Sequence[str]) -> str:
    if not sortable:
        return "the collection declares no sortable field (string, number, date, enum, ... outside arrays)"
    return "sortable: " + ", ".join(sortable[:8]) + (", ..." if len(sortable) > 8 else "")


def _snake_hint(name: str) -> str | None:
    snake = re.sub(
        r"_+", "_", re.sub(r"[^a-z0-9]+", "_", re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower())
    )
    snake = snake.strip("_")
    if snake and snake[0].isalpha() and snake != name:
        return f"did you mean '{snake}'?"
    return None


# The record JSON Schema --------------------------------------------------------------------


def record_schema(
    title: str | None,
    description: str | None,
    fields: Sequence[RecordFieldIR],
    key_types: Mapping[str, str],
) -> dict[str, Any]:
    """The JSON Schema of one record: what describe_resource shows and the record model checks.
    A field that is not required may be absent or null."""
    schema: dict[str, Any] = {"type": "object"}
    if title:
        schema["title"] = title
    if description:
        schema["description"] = description
    schema.update(_object_body(fields, key_types))
    return schema


def _object_body(fields: Sequence[RecordFieldIR], key_types: Mapping[str, str]) -> dict[str, Any]:
    properties = {}
    for f in fields:
        node = field_schema(f, key_types)
        if not f.required:
            described = {k: node.pop(k) for k in ("description",) if k in node}
            node = {"anyOf": [node, {"type": "null"}], **described}
        properties[f.name] = node
    body: dict[str, Any] = {"properties": properties}
    required = [f.name for f in fields if f.required]
    if required:
        body["required"] = required
    body["additionalProperties"] = False
    return body


def field_schema(f: RecordFieldIR, key_types: Mapping[str, str]) -> dict[str, Any]:
    """One field's JSON Schema (never nullable: the caller wraps an optional field)."""
    description = f.description
    if f.type == "enum":
        node: dict[str, Any] = {"type": "string", "enum": list(f.values or ())}
    elif f.type == "reference":
        node = {"type": key_types.get(f.to or "", "string")}
        target = f"The key of a record of resource `{f.to}`."
        if description:
            written = description.rstrip()
            description = f"{written}{'' if written.endswith(('.', '!', '?')) else '.'} {target}"
        else:
            description = target
    elif f.type == "array":
        node = {"type": "array", "items": field_schema(f.items, key_types) if f.items else {}}
    elif f.type == "object":
        node = {"type": "object", **_object_body(f.fields or (), key_types)}
    else:
        node = dict(_SCALAR_SCHEMAS.get(f.type, {}))
    if description:
        node["description"] = description
    return node

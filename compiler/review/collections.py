"""Diff and judge the records a server declares: the `resources` of its collections.json.

Collections are matched by name (a renamed collection is one removed and one added), fields by
name within their collection or object field. One change per changed part, with a path such as
`Collection peps / fields / status / values` and the previous and new JSON values, the way tool
changes read. A field whose type changes changes as a whole: its `values`, `to`, `items` or
`fields` follow from the type and are shown in the whole values, not judged one by one.

What is compared is the declaration, with absent parts read as their defaults (`id` = the name,
all three capabilities, no search fields, no sort, no text limit) so writing a default out is no
change. The parts derived from others are left out, each of their changes shows once on what it
derives from: `schema` (the record JSON Schema, from `fields`), `parents` (from `id` and the
reference fields) and `model` (the module name, from the name). Field order is not compared:
records are JSON objects, as property order is not compared in tool schemas.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from lynxc.runtime.backends.records.definitions import CAPABILITIES

from ..diagnostics import Span
from ..wire import ServerWire
from .diff import MISSING, Change, same_json
from .judge_context import Finding, worst_of

PREFIX = "Collection "
_DERIVED = frozenset({"name", "schema", "parents", "model"})
_DEFAULTS: Mapping[str, Any] = {
    "capabilities": list(CAPABILITIES),
    "keyword": [],
    "meaning": [],
    "sort": [],
}


def diff_resources(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]) -> list[Change]:
    """Changes from one collections list to another: collections in name order, each one's changes
    in path order."""
    old = {resource["name"]: resource for resource in before}
    new = {resource["name"]: resource for resource in after}
    changes: list[Change] = []
    for name in sorted(old.keys() | new.keys()):
        head = (PREFIX + name,)
        if name not in new:
            changes.append(Change("removed", "", head, before=declared(old[name]), resource=name))
        elif name not in old:
            changes.append(Change("added", "", head, after=declared(new[name]), resource=name))
        else:
            found = _diff_mapping(name, head, declared(old[name]), declared(new[name]))
            changes.extend(sorted(found, key=lambda change: change.path))
    return changes


def declared(resource: Mapping[str, Any]) -> dict[str, Any]:
    """A collection as its spec declares it: derived parts left out, defaults written out, null
    read as absent, and `fields` as a mapping from name to field (as a spec writes them)."""
    out: dict[str, Any] = {"id": resource["name"], **{key: list(value) for key, value in _DEFAULTS.items()}}
    for key, value in resource.items():
        if key not in _DERIVED and value is not None:
            out[key] = _fields(value) if key == "fields" else value
    return out


def _fields(fields: Any) -> Any:
    if not isinstance(fields, list):
        return fields  # not the format's shape: compared as a whole, judged for review
    return {str(f.get("name")): _field(f) for f in fields if isinstance(f, dict)}


def _field(field: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"required": False}
    for key, value in field.items():
        if key == "name" or value is None:
            continue
        if key == "items" and isinstance(value, dict):
            value = _field(value)
        elif key == "fields":
            value = _fields(value)
        out[key] = value
    return out


def _diff_mapping(
    name: str, path: tuple[str, ...], old: Mapping[str, Any], new: Mapping[str, Any]
) -> Iterator[Change]:
    for key in sorted(old.keys() | new.keys()):
        before, after = old.get(key, MISSING), new.get(key, MISSING)
        if key == "fields" and isinstance(before, dict) and isinstance(after, dict):
            for field in sorted(before.keys() | after.keys()):
                yield from _diff_field(
                    name, (*path, key, field), before.get(field, MISSING), after.get(field, MISSING)
                )
        elif key == "items" and isinstance(before, dict) and isinstance(after, dict):
            yield from _diff_field(name, (*path, key), before, after)
        else:
            yield from _diff_whole(name, (*path, key), before, after)


def _diff_field(name: str, path: tuple[str, ...], old: Any, new: Any) -> Iterator[Change]:
    if isinstance(old, dict) and isinstance(new, dict) and old.get("type") == new.get("type"):
        yield from _diff_mapping(name, path, old, new)
    else:
        yield from _diff_whole(name, path, old, new)


def _diff_whole(name: str, path: tuple[str, ...], old: Any, new: Any) -> Iterator[Change]:
    if old is MISSING and new is MISSING:
        return
    if old is MISSING:
        yield Change("added", "", path, after=new, resource=name)
    elif new is MISSING:
        yield Change("removed", "", path, before=old, resource=name)
    elif not same_json(old, new):
        yield Change("changed", "", path, before=old, after=new, resource=name)


def resource_span(side: ServerWire, change: Change) -> Span | None:
    """Where a collection change stands in a spec: its innermost field still declared there, else
    the collection (a removed field points at its collection)."""
    names = [change.resource or ""]
    path = change.path[1:]
    index = 0
    while index + 1 < len(path) and path[index] == "fields":
        names.append(path[index + 1])
        index += 2
        while index < len(path) and path[index] == "items":
            index += 1
    while names:
        found = side.resource_spans.get(tuple(names))
        if found is not None:
            return found
        names.pop()
    return None


# --- judging ------------------------------------------------------------------------------


def judge_resource(change: Change) -> Finding:
    name = change.resource or ""
    path = change.path[1:]
    if not path:
        if change.op == "removed":
            return Finding(change, "COLLECTION_REMOVED", f"collection '{name}' was removed")
        return Finding(change, "COLLECTION_ADDED", f"collection '{name}' was added")
    if path[0] == "fields" and len(path) > 1:
        return _field_change(change, path[1:])
    return _SECTIONS.get(path[0], _other)(change)


def _field_change(change: Change, path: tuple[str, ...]) -> Finding:
    field, attribute = _locate(path)
    who = f"field '{field}'"
    before, after = change.before, change.after
    if attribute is None:
        if field.endswith("[]") and change.op != "changed":
            return _other(change)
        if change.op == "removed":
            return Finding(
                change,
                "COLLECTION_FIELD_REMOVED",
                f"{who} was removed: filters, sorts and populate naming it fail, "
                "and records that still carry it no longer load",
            )
        if change.op == "added":
            if isinstance(after, dict) and after.get("required") is True:
                return Finding(
                    change,
                    "COLLECTION_FIELD_ADDED_REQUIRED",
                    f"{who} was added as required: records without it no longer load",
                )
            return Finding(change, "COLLECTION_FIELD_ADDED_OPTIONAL", f"{who} was added as optional")
        return Finding(
            change, "COLLECTION_FIELD_TYPE_CHANGED", f"{who} changed type: {_type(before)} -> {_type(after)}"
        )
    if attribute == "required" and isinstance(after, bool):
        if after:
            return Finding(
                change,
                "COLLECTION_FIELD_BECAME_REQUIRED",
                f"{who} is now required: records without it no longer load",
            )
        return Finding(
            change, "COLLECTION_FIELD_BECAME_OPTIONAL", f"{who} is now optional: records may lack it"
        )
    if attribute == "description":
        return Finding(change, "COLLECTION_DESCRIPTION_CHANGED", f"{who}: description changed")
    if attribute == "values":
        return _enum(change, who)
    if attribute == "to":
        return Finding(
            change,
            "COLLECTION_REFERENCE_CHANGED",
            f"{who} now refers to collection {_shown(after)} instead of {_shown(before)}",
        )
    return _other(change)


def _locate(path: tuple[str, ...]) -> tuple[str, str | None]:
    """The field a path inside `fields` is about, and the attribute changed (None: the field as
    a whole). ('capital', 'fields', 'name', 'type') -> ('capital.name', 'type'); array items
    read as `tags[]`. A name always follows `fields`, so fields named `fields` or `items` parse."""
    names = path[0]
    index = 1
    while index < len(path):
        part = path[index]
        if part == "fields" and index + 1 < len(path):
            names += "." + path[index + 1]
            index += 2
        elif part == "items":
            names += "[]"
            index += 1
        else:
            return names, part
    return names, None


def _enum(change: Change, who: str) -> Finding:
    old = change.before if isinstance(change.before, list) else []
    new = change.after if isinstance(change.after, list) else []
    removed = [v for v in old if _key(v) not in {_key(n) for n in new}]
    added = [v for v in new if _key(v) not in {_key(o) for o in old}]
    if removed:
        also = f" (and now allows {_list(added)})" if added else ""
        return Finding(
            change,
            "COLLECTION_ENUM_VALUE_REMOVED",
            f"{who} no longer allows {_list(removed)}{also}: "
            "records holding it no longer load, filters on it match nothing",
        )
    if added:
        return Finding(change, "COLLECTION_ENUM_VALUE_ADDED", f"{who} may now hold {_list(added)}")
    return Finding(change, "COLLECTION_REORDERED", f"{who}: enum values were reordered")


def _listed(
    kind: str,
    removed_rule: str,
    added_rule: str,
    removed_says: str,
    added_says: str,
    shown: Callable[[Any], str] = str,
) -> Callable[[Change], Finding]:
    """A judge for a list of names (capabilities, search fields): what left it weighs most."""

    def names(values: list[Any]) -> str:
        return ", ".join(shown(v) for v in values)

    def judge(change: Change) -> Finding:
        old = change.before if isinstance(change.before, list) else []
        new = change.after if isinstance(change.after, list) else []
        removed = [v for v in old if v not in new]
        added = [v for v in new if v not in old]
        if removed:
            also = f"; {added_says} {names(added)}" if added else ""
            return Finding(change, removed_rule, f"{removed_says} {names(removed)}{also}")
        if added:
            return Finding(change, added_rule, f"{added_says} {names(added)}")
        return Finding(change, "COLLECTION_REORDERED", f"{kind} were reordered")

    return judge


def _id(change: Change) -> Finding:
    return Finding(
        change,
        "COLLECTION_ID_CHANGED",
        f"resource_id {_shown(change.before)} -> {_shown(change.after)}: "
        "clients passing the old one get an error",
    )


def _key_change(change: Change) -> Finding:
    return Finding(
        change,
        "COLLECTION_KEY_CHANGED",
        f"key {_shown(change.before)} -> {_shown(change.after)}: "
        "record ids and the references to them change",
    )


def _sort(change: Change) -> Finding:
    return Finding(
        change,
        "COLLECTION_SORT_CHANGED",
        f"default order {_order(change.before)} -> {_order(change.after)}: "
        "calls without a sort get records in another order",
    )


def _text_limit(change: Change) -> Finding:
    old = change.before if isinstance(change.before, int) else None
    new = change.after if isinstance(change.after, int) else None
    shown = f"max_text_chars {_limit(old)} -> {_limit(new)}"
    if new is not None and (old is None or new < old):
        return Finding(change, "COLLECTION_TEXT_LIMIT_LOWERED", f"{shown}: lists cut text fields shorter")
    return Finding(change, "COLLECTION_TEXT_LIMIT_RAISED", f"{shown}: lists carry more of each text field")


def _bind(change: Change) -> Finding:
    """Row-level security (issue 27): `bind` maps a field to the caller's claim, and each caller
    sees only the records whose field equals it. Binding narrows what callers see; unbinding
    widens it, which nothing fails on, so a reviewer is told."""
    old = change.before if isinstance(change.before, dict) else {}
    new = change.after if isinstance(change.after, dict) else {}
    moved = []
    added = [f"'{field}' to the caller's '{new[field]}' claim" for field in new if field not in old]
    if added:
        moved.append(
            ("COLLECTION_BIND_ADDED", f"binds {', '.join(added)}: callers see only their own records")
        )
    changed = [
        f"'{field}' to '{new[field]}' instead of '{old[field]}'"
        for field in old
        if field in new and not same_json(old[field], new[field])
    ]
    if changed:
        moved.append(
            ("COLLECTION_BIND_CHANGED", f"binds {', '.join(changed)}: the same caller sees other records")
        )
    removed = [f"'{field}' (was the caller's '{old[field]}' claim)" for field in old if field not in new]
    if removed:
        moved.append(
            (
                "COLLECTION_BIND_REMOVED",
                f"no longer binds {', '.join(removed)}: every caller now sees records it could not before",
            )
        )
    return worst_of(change, moved) if moved else _other(change)


def _other(change: Change) -> Finding:
    """What the format did not have when these rules were written: a reviewer must look."""
    return Finding(
        change,
        "COLLECTION_CHANGED",
        f"'{change.path[-1]}' {change.op}, a change lynxc cannot classify; review it",
    )


def _type(field: Any) -> str:
    if not isinstance(field, dict):
        return _shown(field)
    kind = str(field.get("type"))
    if kind == "array" and isinstance(field.get("items"), dict):
        return f"array of {_type(field['items'])}"
    if kind == "reference":
        return f"reference to {field.get('to')}"
    return kind


def _order(sort: Any) -> str:
    if not isinstance(sort, list) or not sort:
        return "(by key)"
    keys = [
        ("-" if isinstance(s, dict) and s.get("descending") else "") + str(_get(s, "field")) for s in sort
    ]
    return ", ".join(keys)


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else value


def _limit(value: int | None) -> str:
    return "(none)" if value is None else str(value)


def _key(value: Any) -> str:
    """JSON identity for membership: `true` is not `1`."""
    return json.dumps(value, sort_keys=True)


def _list(values: list[Any]) -> str:
    return ", ".join(json.dumps(v, ensure_ascii=False) for v in values)


# The synthesized tool each capability allows on a resource.
_CAPABILITY_TOOLS = {"search": "search_records", "query": "query_records", "get_one": "get_record"}


def _capability(value: Any) -> str:
    tool = _CAPABILITY_TOOLS.get(value) if isinstance(value, str) else None
    return f"{value} ({tool})" if tool else str(value)


def _shown(value: Any) -> str:
    return "(none)" if value is MISSING else json.dumps(value, ensure_ascii=False)


_SECTIONS = {
    "id": _id,
    "key": _key_change,
    "title": lambda change: Finding(change, "COLLECTION_TITLE_CHANGED", "the collection's title changed"),
    "description": lambda change: Finding(
        change, "COLLECTION_DESCRIPTION_CHANGED", "the collection's description changed"
    ),
    "capabilities": _listed(
        "capabilities",
        "COLLECTION_CAPABILITY_REMOVED",
        "COLLECTION_CAPABILITY_ADDED",
        "no longer allows",
        "now allows",
        _capability,
    ),
    "keyword": _listed(
        "keyword fields",
        "COLLECTION_SEARCH_FIELD_REMOVED",
        "COLLECTION_SEARCH_FIELD_ADDED",
        "no longer matched by keyword:",
        "now matched by keyword:",
    ),
    "meaning": _listed(
        "meaning fields",
        "COLLECTION_SEARCH_FIELD_REMOVED",
        "COLLECTION_SEARCH_FIELD_ADDED",
        "no longer matched by meaning:",
        "now matched by meaning:",
    ),
    "sort": _sort,
    "max_text_chars": _text_limit,
    "bind": _bind,
}

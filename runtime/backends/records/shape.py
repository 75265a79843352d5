"""What a records tool returns for each record: locales kept, long text cut, references grafted.

An item is `{id, data, _sys}`: `id` is the record key as a string (what get_record takes),
`data` the record as loaded, `_sys` its key, revision, load times and, in lists, its relevance.

- `locales` keeps only the named locale keys of every localized field, at any depth, populated
  records included; an unknown code is no error, it keeps nothing.
- Truncation cuts every text and localized value longer than the resource's `max_text_chars`
  to its first `max_text_chars` characters, in list results only (get_record never cuts). Each
  cut is listed in `_sys.truncated` as {field, locale, original_length}: `field` is the path from
  the record's root, objects joined with `.` and array elements written `[i]` (`sections[2].body`,
  `tags[0]`); a cut inside a populated record is prefixed with the populated path (`author.bio`,
  `borders[3].name.common`). `locale` is the locale of a localized value, else null.
- Populate replaces each named reference (a key) by the referenced record's `data`, shaped the
  same way under the same limit. The keys of every listed record are fetched with one batched
  lookup per populated path; a key with no record stays a key.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.errors import ToolError

from .definitions import Field, FieldPath, Resource, Resources
from .filters import did_you_mean

# (target resource, keys) -> {key: data} for the keys that have a record
Fetch = Callable[[Resource, list[str]], Awaitable[Mapping[str, Mapping[str, Any]]]]

NOTE = (
    "Text and localized fields longer than {n} characters are cut to {n} in list results; "
    "_sys.truncated names each cut. get_record returns the full record."
)


@dataclass(frozen=True)
class Shaping:
    """How records are shaped in one response."""

    max_text_chars: int | None = None  # None: nothing is cut (get_record, or no limit declared)
    locales: frozenset[str] | None = None  # None: every locale is kept


@dataclass
class Shaped:
    data: dict[str, Any]
    cuts: list[dict[str, Any]]


# --- one record -------------------------------------------------------------------------------


def shape_data(fields: Sequence[Field], data: dict[str, Any], shaping: Shaping, prefix: str = "") -> Shaped:
    """`data` (a record's data, modified in place) with locales kept and long text cut."""
    cuts: list[dict[str, Any]] = []
    _walk(fields, data, prefix, shaping, cuts)
    return Shaped(data, cuts)


def _walk(fields: Sequence[Field], data: dict[str, Any], prefix: str, shaping: Shaping, cuts: list) -> None:
    for field in fields:
        if data.get(field.name) is not None:
            data[field.name] = _value(field, data[field.name], prefix + field.name, shaping, cuts)


def _value(field: Field, value: Any, path: str, shaping: Shaping, cuts: list) -> Any:
    if field.type == "text" and isinstance(value, str):
        return _cut(value, path, None, shaping, cuts)
    if field.type == "localized" and isinstance(value, dict):
        kept = {k: v for k, v in value.items() if shaping.locales is None or k in shaping.locales}
        return {k: _cut(v, path, k, shaping, cuts) if isinstance(v, str) else v for k, v in kept.items()}
    if field.type == "object" and isinstance(value, dict):
        _walk(field.fields or (), value, path + ".", shaping, cuts)
    elif field.type == "array" and isinstance(value, list) and field.items is not None:
        return [_value(field.items, item, f"{path}[{i}]", shaping, cuts) for i, item in enumerate(value)]
    return value


def _cut(text: str, path: str, locale: str | None, shaping: Shaping, cuts: list) -> str:
    limit = shaping.max_text_chars
    if limit is None or len(text) <= limit:
        return text
    cuts.append({"field": path, "locale": locale, "original_length": len(text)})
    return text[:limit]


def item(
    row: Mapping[str, Any], shaped: Shaped, relevance: float | None, *, listed: bool = True
) -> dict[str, Any]:
    """The output item of one store row. `listed`: a list result (relevance and cuts shown)."""
    sys: dict[str, Any] = {
        "key": row["_key"],
        "revision": str(row["_revision"]),
        "created_at": _iso(row["_created_at"]),
        "updated_at": _iso(row["_updated_at"]),
    }
    if listed:
        sys["relevance"] = relevance
        if shaped.cuts:
            sys["truncated"] = shaped.cuts
    return {"id": row["_key"], "data": shaped.data, "_sys": sys}


def _iso(value: Any) -> str:
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")
    return str(value)


def truncation_block(max_text_chars: int | None, applied: bool) -> dict[str, Any] | None:
    """The response's `truncation` block, present whenever a limit is in force."""
    if max_text_chars is None:
        return None
    return {"applied": applied, "max_text_chars": max_text_chars, "note": NOTE.format(n=max_text_chars)}


def parse_data(row: Mapping[str, Any]) -> dict[str, Any]:
    return json.loads(row["_data"])


# --- populate -------------------------------------------------------------------------------


def populate_paths(resource: Resource, names: Sequence[str] | None) -> list[FieldPath]:
    """The reference paths `names` names, in order, without repeats; ToolError for any other."""
    references = {p.path: p for p in resource.references()}
    chosen: list[FieldPath] = []
    for i, name in enumerate(names or ()):
        if name not in references:
            if not references:
                raise ToolError(f"populate.{i}: {resource.id!r} has no reference fields to populate")
            raise ToolError(
                f"populate.{i}: {name!r} is not a reference field of {resource.id!r}"
                f"{did_you_mean(name, references)}; references: {', '.join(references)}"
            )
        if references[name] not in chosen:
            chosen.append(references[name])
    return chosen


async def populate(
    resources: Resources,
    records: Sequence[dict[str, Any]],
    cuts: Sequence[list[dict[str, Any]]],
    paths: Sequence[FieldPath],
    shaping: Shaping,
    fetch: Fetch,
) -> None:
    """Graft the records each path refers to into `records` (datas, modified in place); each
    graft's cuts are added to the matching list of `cuts`. One `fetch` per path."""
    for path in paths:
        target = resources.by_name(path.field.to or "")
        if target is None:
            continue
        slots = [(i, slot) for i, data in enumerate(records) for slot in _slots(data, path.path)]
        keys = sorted({str(slot.key) for _, slot in slots if _is_key(slot.key)})
        if not keys:
            continue
        found = await fetch(target, keys)
        shaped: dict[str, Shaped] = {
            key: shape_data(target.fields, json.loads(json.dumps(data)), shaping)
            for key, data in found.items()
        }
        for i, slot in slots:
            graft = shaped.get(str(slot.key)) if _is_key(slot.key) else None
            if graft is None:
                continue  # dangling: the key stays
            slot.container[slot.index] = graft.data
            cuts[i].extend({**cut, "field": f"{slot.display}.{cut['field']}"} for cut in graft.cuts)


def _is_key(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


@dataclass
class _Slot:
    container: Any  # the dict or list holding the key
    index: Any  # its name or position there
    display: str  # the path of the slot as truncation entries name it

    @property
    def key(self) -> Any:
        return self.container[self.index]


def _slots(data: dict[str, Any], path: str) -> list[_Slot]:
    """Where the values of a reference path sit in one record: one slot, or one per element of
    an array of references."""
    node: Any = data
    parts = path.split(".")
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    last = parts[-1]
    if not isinstance(node, dict) or node.get(last) is None:
        return []
    value = node[last]
    if isinstance(value, list):
        return [_Slot(value, i, f"{path}[{i}]") for i in range(len(value))]
    return [_Slot(node, last, path)]

"""The five records tools: discover_resources, describe_resource, search_records, query_records,
get_record (contract §3), synthesized by the compiler for every server that declares resources.

They read the declared resources from the served definition (`ctx.server.records()`) and the
records from the store under the `data_dir` setting, at the version CURRENT.json names (or the
one a cursor names). This module stays light to import: `lynxc build` reads the declarations,
and LanceDB, DuckDB and the embedders load inside the calls.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lynxc.runtime.backend import backend
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

from .binding import Visibility, visibility, visible_records
from .cursors import Position, decode_cursor, encode_cursor, query_hash
from .definitions import Resource, Resources, column_name, parse_resources
from .facets import facetable, parse_facets
from .filters import (
    DUCKDB,
    condition_paths,
    condition_sql,
    did_you_mean,
    is_sortable,
    kind,
    ops_for,
    parent_clauses,
    parse_filters,
    parse_key,
    where_sql,
)
from .shape import Shaped, Shaping, item, parse_data, populate, populate_paths, shape_data, truncation_block

if TYPE_CHECKING:
    from .frame import Selection
    from .search import Ranking
    from .store import RecordStore, ResourceState

SETTINGS = {"data_dir", "data_storage", "embedder"}
LIST_PARAMS = {
    "resource_id",
    "filters",
    "facets",
    "facet_size",
    "locales",
    "populate",
    "limit",
    "cursor",
    "parents",
}
DEFAULT_LIMIT = 5


# --- shared -------------------------------------------------------------------------------------


def server_resources(ctx: ToolContext) -> Resources:
    """The resources the served server declares."""
    server = ctx.server
    if server is None:
        raise ToolError("no server definition: the records tools run inside a generated server")
    records = getattr(server, "records", None)
    if callable(records):
        return records()
    return parse_resources(server.read_checked(server.collections))


def resolve_resource(
    resources: Resources, resource_id: str, parents: Mapping[str, Any] | None
) -> tuple[Resource, dict[str, str]]:
    """The resource `resource_id` names (its id, or a nested id's template filled in, such as
    `peps/8/sections`) and the parents' keys by placeholder, from the id and `parents`."""
    given = dict(parents or {})
    found = resources.by_id(resource_id)
    if found is not None:
        return found, given
    for resource in resources.items:
        filled = _match_template(resource.id, resource_id)
        if filled is None:
            continue
        for name, value in filled.items():
            if name in given and given[name] != value:
                raise ToolError(
                    f"parents.{name}: {given[name]!r} contradicts {value!r} in resource_id {resource_id!r}"
                )
        return resource, {**given, **filled}
    ids = [r.id for r in resources.items]
    named = resources.by_name(resource_id)
    hint = (
        f" (did you mean {named.id!r}, with parents?)"
        if named is not None
        else did_you_mean(resource_id, ids)
    )
    raise ToolError(f"resource_id: no resource {resource_id!r}{hint}; resources: {', '.join(ids) or 'none'}")


def _match_template(template: str, resource_id: str) -> dict[str, str] | None:
    if "{" not in template:
        return None
    parts, given = template.split("/"), resource_id.split("/")
    if len(parts) != len(given):
        return None
    filled: dict[str, str] = {}
    for part, value in zip(parts, given, strict=True):
        if part.startswith("{") and part.endswith("}"):
            if not value:
                return None
            filled[part[1:-1]] = value
        elif part != value:
            return None
    return filled


def _require(resource: Resource, capability: str, tool: str) -> None:
    if capability not in resource.capabilities:
        raise ToolError(
            f"resource_id: {resource.id!r} does not allow {capability} (its capabilities: "
            f"{', '.join(resource.capabilities) or 'none'}), so {tool} cannot read it"
        )


def _store(ctx: ToolContext) -> RecordStore:
    from .store import RecordStore

    data_dir = ctx.settings.get("data_dir")
    if not data_dir:
        raise ToolError("the data_dir setting is empty: set it to the folder `lynxc load` writes")
    return RecordStore.for_dir(data_dir, ctx.settings.get("data_storage"))


def _state(ctx: ToolContext, store: RecordStore, resource: Resource) -> ResourceState:
    state = _current(store).resources.get(resource.name)
    if state is None:
        server = getattr(ctx.server, "name", "<server>")
        raise ToolError(
            f"{resource.id!r} holds no records yet: run `lynxc load {server} {resource.name} FILE` "
            f"to load them (data_dir {store.data_dir})"
        )
    return state


def _current(store: RecordStore) -> Any:
    from .store import StoreError

    try:
        return store.current()
    except StoreError as err:
        raise ToolError(str(err)) from None


async def _open(store: RecordStore, table: str, version: int, from_cursor: bool) -> Any:
    from .store import StoreError, VersionGone

    try:
        return await store.table_at(table, version)
    except VersionGone as err:
        if from_cursor:
            raise ToolError(
                f"cursor: the data it pages was replaced by a newer load ({err}); "
                "run the query again without cursor"
            ) from None
        raise ToolError(str(err)) from None
    except StoreError as err:
        raise ToolError(str(err)) from None


def _arguments(params: Any) -> dict[str, Any]:
    if hasattr(params, "model_dump"):
        return params.model_dump(mode="json")
    return dict(params) if isinstance(params, Mapping) else dict(vars(params))


def _optional(params: Any, name: str) -> Any:
    """A parameter a server's tool may not have: locales, parents and populate are published
    only where some resource can use them (a localized field, a nested resource, a reference)."""
    return getattr(params, name, None)


def _locales(params: Any) -> frozenset[str] | None:
    locales = _optional(params, "locales")
    return frozenset(locales) if locales else None


def _limit(params: Any, ctx: ToolContext) -> int:
    limit = getattr(params, "limit", None) or DEFAULT_LIMIT
    return max(1, min(int(limit), ctx.caps.get("max_limit", 100)))


# --- discover_resources -------------------------------------------------------------------------


@backend(params=set(), settings=SETTINGS)
async def discover_resources(params: Any, ctx: ToolContext) -> dict[str, Any]:
    resources = server_resources(ctx)
    store = _store(ctx)
    current = _current(store)
    out = []
    for resource in resources.items:
        state = current.resources.get(resource.name)
        entry = {
            "resource_id": resource.id,
            "title": resource.title,
            "description": resource.description,
            "capabilities": list(resource.capabilities),
            "record_count": await _record_count(ctx, store, resource, state),
            "locales": list(state.locales) if state else [],
            "parents": [p.placeholder for p in resource.parents],
            "nested": [r.id for r in resources.nested_under(resource.name)],
            "key": resource.key,
        }
        out.append(_with_visibility(entry, resource))
    return {"resources": out}


async def _record_count(ctx: ToolContext, store: RecordStore, resource: Resource, state: Any) -> int:
    """How many records the caller can read: the pointer's count, or for a bound resource the
    caller's own (counted in the store; 0 for a caller who cannot be bound, whom every read of
    it refuses), so a total never tells one caller how many records the others have."""
    if state is None:
        return 0
    if not resource.bind:
        return state.records
    try:
        clauses = visibility(resource, ctx.caller).clauses
    except ToolError:
        return 0
    table = await _open(store, state.table, state.version, False)
    return await table.count_rows(where_sql([], clauses))


def _with_visibility(entry: dict[str, Any], resource: Resource) -> dict[str, Any]:
    note = visible_records(resource)
    return entry if note is None else {**entry, "visible_records": note}


# --- describe_resource --------------------------------------------------------------------------


@backend(params={"resource_id"}, required_params={"resource_id"}, settings=SETTINGS)
async def describe_resource(params: Any, ctx: ToolContext) -> dict[str, Any]:
    resources = server_resources(ctx)
    resource, _ = resolve_resource(resources, params.resource_id, None)
    store = _store(ctx)
    state = _current(store).resources.get(resource.name)
    record_count = await _record_count(ctx, store, resource, state)
    return _with_visibility(describe(resources, resource, state, record_count), resource)


def describe(
    resources: Resources, resource: Resource, state: ResourceState | None, record_count: int
) -> dict[str, Any]:
    """describe_resource's answer for `resource` (`state`: its pointer entry, None if not loaded;
    `record_count`: how many records the caller can read)."""
    fields = []
    for path in resource.stored_paths():
        entry: dict[str, Any] = {
            "path": path.path,
            "type": "array" if path.in_array else path.field.type,
            "sortable": is_sortable(path),
            "ops": list(ops_for(path)),
            "locale_keyed": kind(path) == "localized",
            "facetable": facetable(path),
        }
        if path.in_array:
            entry["items"] = path.field.type  # the element type the ops compare with
        if path.field.type == "enum":
            entry["values"] = list(path.field.values or ())
        fields.append(entry)
    references = []
    for path in resource.references():
        target = resources.by_name(path.field.to or "")
        references.append({"field": path.path, "resource_id": target.id if target else path.field.to})
    return {
        "resource_id": resource.id,
        "name": resource.name,
        "title": resource.title,
        "description": resource.description,
        "key": resource.key,
        "capabilities": list(resource.capabilities),
        "schema": resource.schema,
        "fields": fields,
        "keyword_fields": list(resource.keyword),
        "embedded_fields": list(resource.meaning),
        "references": references,
        "locales": list(state.locales) if state else [],
        "nested": [r.id for r in resources.nested_under(resource.name)],
        "parents": [p.placeholder for p in resource.parents],
        "default_sort": [
            {"field": s.field, "order": "desc" if s.descending else "asc"} for s in resource.sort
        ],
        "max_text_chars": resource.max_text_chars,
        "record_count": record_count,
    }


# --- lists (search_records, query_records) ------------------------------------------------------


class _List:
    """What search_records and query_records share: the resource, its filters, the table at the
    version to read, the page asked for, and how to shape and page the answer."""

    def __init__(self, params: Any, ctx: ToolContext, tool: str, capability: str):
        self.ctx = ctx
        self.resources = server_resources(ctx)
        self.resource, self.parents = resolve_resource(
            self.resources, params.resource_id, _optional(params, "parents")
        )
        _require(self.resource, capability, tool)
        # Before anything is read: a caller who cannot be bound to the resource is refused here.
        self.visible = visibility(self.resource, ctx.caller)
        self.conditions = parse_filters(self.resources, self.resource, params.filters)
        self.where = where_sql(
            self.conditions,
            [*self.visible.clauses, *parent_clauses(self.resources, self.resource, self.parents)],
        )
        self.facets, self.facet_size = parse_facets(
            self.resource, _optional(params, "facets"), _optional(params, "facet_size")
        )
        self.populate = populate_paths(self.resource, _optional(params, "populate"))
        self.limit = _limit(params, ctx)
        arguments = _arguments(params)
        arguments.update(tool=tool, resource_id=self.resource.id, parents=self.parents)
        if self.visible.identity:  # a cursor pages on only for the caller it was issued to
            arguments["visible"] = self.visible.identity
        self.hash = query_hash(arguments)
        self.cursor = params.cursor
        self.shaping = Shaping(self.resource.max_text_chars, _locales(params))
        self.store = _store(ctx)

    async def open(self) -> tuple[Any, Position, str | None]:
        """The table to read, the page's position, and the embedder of the table's vectors."""
        if self.cursor:
            position = decode_cursor(self.cursor, self.hash, self.resource.name)
            table = await _open(self.store, position.table, position.version, True)
            return table, position, position.embedder
        state = _state(self.ctx, self.store, self.resource)
        table = await _open(self.store, state.table, state.version, False)
        return table, Position(state.table, state.version, 0, state.embedder), state.embedder

    async def selection(self, table: Any, position: Position, keys: Any = None) -> Selection:
        """The records of the table's frame this request reads (frame.py): those its filters
        select, in DuckDB; when a filter reads a column the frame lacks (long text), the keys
        Lance selects. `keys` (an Arrow table of `_key`): only those, already filtered."""
        from .frame import Selection, frame_of
        from .query import selected

        frame = await frame_of(
            self.ctx, str(self.store.data_dir), table, position.table, position.version, self.resource
        )
        if keys is not None:
            return Selection(frame, None, keys)
        visible = [c.path.column for c in self.visible.conditions]
        parents = [p.field for p in self.resource.parents if p.placeholder in self.parents]
        columns = [*(p.column for p in condition_paths(self.conditions)), *visible]
        if frame.holds(columns) and frame.holds([f"f_{name}" for name in parents]):
            clauses = [
                *(condition_sql(c, DUCKDB) for c in self.visible.conditions),
                *parent_clauses(self.resources, self.resource, self.parents, DUCKDB),
            ]
            return Selection(frame, where_sql(self.conditions, clauses, DUCKDB))
        return Selection(frame, None, await selected(table, self.where, []))

    async def answer(
        self,
        position: Position,
        rows: list[dict[str, Any]],
        has_more: bool,
        relevance: Any,
        total: tuple[int, str],
        facets: dict[str, Any] | None,
    ) -> dict[str, Any]:
        datas = [parse_data(row) for row in rows]
        shaped = [shape_data(self.resource.fields, data, self.shaping) for data in datas]
        await populate(
            self.resources, datas, [s.cuts for s in shaped], self.populate, self.shaping, self._fetch
        )
        items = [item(row, s, relevance(row)) for row, s in zip(rows, shaped, strict=True)]
        offset = position.offset
        following = Position(position.table, position.version, offset + len(rows), position.embedder)
        previous = Position(position.table, position.version, max(0, offset - self.limit), position.embedder)
        result: dict[str, Any] = {
            "items": items,
            "page": {
                "has_more": has_more,
                "returned": len(items),
                "limit": self.limit,
                "next_cursor": encode_cursor(following, self.hash) if has_more else None,
                "previous_cursor": encode_cursor(previous, self.hash) if offset > 0 else None,
                "total": total[0],
                "total_relation": total[1],
            },
        }
        if facets is not None:
            result["facets"] = facets
        block = truncation_block(self.resource.max_text_chars, any(s.cuts for s in shaped))
        if block is not None:
            result["truncation"] = block
        return result

    async def _fetch(self, target: Resource, keys: list[str]) -> dict[str, Any]:
        return await fetch_records(self.store, target, keys, visibility(target, self.ctx.caller))


async def fetch_records(
    store: RecordStore, target: Resource, keys: list[str], visible: Visibility
) -> dict[str, Any]:
    """The data of the records of `target` with these keys that the caller may see (`visible`),
    in one lookup on its pointed table (none when it was never loaded)."""
    from .query import rows_by_key

    state = _current(store).resources.get(target.name)
    if state is None:
        return {}
    table = await _open(store, state.table, state.version, False)
    rows = await rows_by_key(table, keys, ["_key", "_data"], visible.clauses)
    return {key: json.loads(row["_data"]) for key, row in rows.items()}


# --- search_records -----------------------------------------------------------------------------


@backend(
    params={"query", "search_type", *LIST_PARAMS},
    required_params={"query", "resource_id"},
    caps={"max_limit"},
    settings=SETTINGS,
)
async def search_records(params: Any, ctx: ToolContext) -> dict[str, Any]:
    from .query import ROW_COLUMNS, rows_by_key
    from .search import WINDOW, Searchable, rank, similarity

    listing = _List(params, ctx, "search_records", "search")
    query = params.query
    if not query or not query.strip():
        raise ToolError("query: give some words to search for")
    search_type = getattr(params.search_type, "value", params.search_type) or "hybrid"
    table, position, embedder = await listing.open()
    searchable = Searchable(listing.resource, embedder)
    vector = await _embed(ctx, embedder, query) if searchable.has_vectors else None
    ranking: Ranking = await rank(table, searchable, query, vector, search_type, listing.where)
    keys, has_more = ranking.page(position.offset, listing.limit)
    columns = ROW_COLUMNS + (["_vector"] if vector is not None else [])
    found = await rows_by_key(table, keys, columns, listing.visible.clauses)
    rows = [found[k] for k in keys if k in found]
    # The ranking holds every match when no window it was cut from came back full (WINDOW).
    total = (len(ranking.keys), "gte" if len(ranking.keys) >= WINDOW else "eq")
    facets = None
    if listing.facets:
        import pyarrow as pa

        ranked = pa.table({"_key": pa.array(ranking.keys, pa.string())})
        facets = await _facets(listing, await listing.selection(table, position, ranked))
    result = await listing.answer(
        position, rows, has_more, lambda row: ranking.relevance(row["_key"]), total, facets
    )
    if vector is not None:  # the cosine beside the ranking's own score, as lynx-mcp reports it
        for entry, row in zip(result["items"], rows, strict=True):
            entry["_sys"]["similarity"] = similarity(row.get("_vector"), vector)
    result["execution_info"] = {"search_mode": ranking.mode, "applied_search_type": ranking.applied}
    await _log_search_mode(ctx, listing.resource.name, search_type, ranking)
    note = _coverage(listing, position, ranking.applied)
    if note:  # vectors still to fill after `lynxc load --embed later`
        result["execution_info"]["search_mode"] += f"; {note}"
    return result


async def _log_search_mode(ctx: ToolContext, resource: str, asked: str, ranking: Ranking) -> None:
    """The client's log at info: the search mode that ran, and whether it fell back from the one
    asked for (no vectors, say), which the operator of the client may want to fix."""
    fell_back = ranking.applied != asked
    message = (
        f"search over {resource!r} fell back from {asked} to {ranking.applied}"
        if fell_back
        else f"search over {resource!r} ran {ranking.applied}"
    )
    await ctx.log("info", message, resource=resource, asked=asked, applied=ranking.applied, mode=ranking.mode)


def _coverage(listing: _List, position: Position, applied: str) -> str | None:
    from .coverage import meaning_coverage

    state = _current(listing.store).resources.get(listing.resource.name)
    server = getattr(listing.ctx.server, "name", "<server>")
    return meaning_coverage(state, listing.resource.name, position.table, position.version, applied, server)


async def _embed(ctx: ToolContext, embedder: str | None, query: str) -> Any:
    """The query's vector under the embedder the resource was loaded with, off the event loop."""
    from lynxc.runtime.backends.retrieval.embedders import get_embedder

    name = embedder or ctx.settings.get("embedder", "minilm")
    return (await ctx.run_sync(lambda: get_embedder(name).embed([query])))[0]


# --- query_records ------------------------------------------------------------------------------


@backend(
    params={"sort", *LIST_PARAMS}, required_params={"resource_id"}, caps={"max_limit"}, settings=SETTINGS
)
async def query_records(params: Any, ctx: ToolContext) -> dict[str, Any]:
    from .facets import facet_answer, facet_statements
    from .frame import run
    from .query import ROW_COLUMNS, parse_sort, rows_by_key

    listing = _List(params, ctx, "query_records", "query")
    order = parse_sort(listing.resource, params.sort)
    table, position, _ = await listing.open()
    selection = await listing.selection(table, position)
    page = (
        f"SELECT _key FROM records ORDER BY {order.sql()} "
        f"LIMIT {int(listing.limit) + 1} OFFSET {int(position.offset)}"
    )
    results = await ctx.run_sync(
        run, selection, [page, *facet_statements(listing.facets, listing.facet_size)]
    )
    keys = [row[0] for row in results[0]]
    has_more = len(keys) > listing.limit
    keys = keys[: listing.limit]
    if has_more or (not keys and position.offset):  # else the page shows how many there are
        [[(total,)]] = await ctx.run_sync(run, selection, ["SELECT count(*) FROM records"])
    else:
        total = position.offset + len(keys)
    found = await rows_by_key(table, keys, ROW_COLUMNS, listing.visible.clauses)
    rows = [found[k] for k in keys if k in found]
    facets = facet_answer(listing.facets, results[1:]) if listing.facets else None
    return await listing.answer(position, rows, has_more, lambda row: None, (total, "eq"), facets)


async def _facets(listing: _List, selection: Selection) -> dict[str, Any]:
    from .facets import facet_answer, facet_statements
    from .frame import run

    statements = facet_statements(listing.facets, listing.facet_size)
    return facet_answer(listing.facets, await listing.ctx.run_sync(run, selection, statements))


# --- get_record ---------------------------------------------------------------------------------


MAX_INCLUDE = 4
MAX_INCLUDE_LIMIT = 50
DEFAULT_INCLUDE_LIMIT = 10


@backend(
    params={"resource_id", "record_id", "locales", "populate", "parents", "include", "include_limit"},
    required_params={"resource_id", "record_id"},
    settings=SETTINGS,
)
async def get_record(params: Any, ctx: ToolContext) -> dict[str, Any]:
    from .query import record_row

    resources = server_resources(ctx)
    resource, parents = resolve_resource(resources, params.resource_id, _optional(params, "parents"))
    _require(resource, "get_one", "get_record")
    visible = visibility(resource, ctx.caller)  # before anything is read
    clauses = [*visible.clauses, *parent_clauses(resources, resource, parents)]
    paths = populate_paths(resource, _optional(params, "populate"))
    key = str(parse_key(resource, params.record_id, "record_id"))
    store = _store(ctx)
    state = _state(ctx, store, resource)
    table = await _open(store, state.table, state.version, False)
    row = await record_row(table, key, clauses)
    if row is None:  # another caller's record answers exactly as a missing one
        under = f" under {parents}" if parents else ""
        raise ToolError(f"record_id: {resource.id!r} has no record {params.record_id!r}{under}")
    shaping = Shaping(None, _locales(params))
    data = parse_data(row)
    shaped: Shaped = shape_data(resource.fields, data, shaping)

    async def fetch(target: Resource, keys: list[str]) -> dict[str, Any]:
        return await fetch_records(store, target, keys, visibility(target, ctx.caller))

    included = _included_resources(resources, resource, _optional(params, "include"))
    include_limit = _include_limit(_optional(params, "include_limit"))
    await populate(resources, [data], [shaped.cuts], paths, shaping, fetch)
    out = item(row, shaped, None, listed=False)
    if included:
        out["included"] = {
            child.name: await _children(ctx, store, resource, key, child, include_limit, _locales(params))
            for child in included
        }
    return out


def _included_resources(resources: Resources, resource: Resource, names: Any) -> list[Resource]:
    """The nested resources `include` names, checked, without repeats."""
    names = list(names or ())
    nested = resources.nested_under(resource.name)
    if len(names) > MAX_INCLUDE:
        raise ToolError(f"include: at most {MAX_INCLUDE} resources, not {len(names)}")
    chosen: list[Resource] = []
    for i, name in enumerate(names):
        child = next((r for r in nested if name in (r.name, r.id)), None)
        if child is None:
            known = [r.name for r in nested]
            raise ToolError(
                f"include.{i}: {name!r} is not a resource nested under {resource.id!r}"
                f"{did_you_mean(name, known) if known else ''}; "
                f"nested: {', '.join(known) or 'none'}"
            )
        _require(child, "query", "include")
        if child not in chosen:
            chosen.append(child)
    return chosen


def _include_limit(value: Any) -> int:
    if value is None:
        return DEFAULT_INCLUDE_LIMIT
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INCLUDE_LIMIT:
        raise ToolError(f"include_limit: an integer from 1 to {MAX_INCLUDE_LIMIT}, not {value!r}")
    return value


async def _children(
    ctx: ToolContext,
    store: RecordStore,
    parent: Resource,
    key: str,
    child: Resource,
    limit: int,
    locales: frozenset[str] | None,
) -> dict[str, Any]:
    """The first `limit` records of `child` under the record `key` of `parent`, in the child's
    default order, with their total: selected in the child table's frame, read by key."""
    from .filters import sql_literal
    from .frame import Selection, frame_of, run
    from .query import ROW_COLUMNS, default_order, rows_by_key, selected

    state = _current(store).resources.get(child.name)
    if state is None:
        return {"items": [], "total": 0, "has_more": False}
    visible = visibility(child, ctx.caller)
    typed = parse_key(parent, key, "record_id")
    vtype = "integer" if isinstance(typed, int) else "string"
    clauses = [
        f"{column_name(p.field)} = {sql_literal(typed, vtype, DUCKDB)}"
        for p in child.parents
        if p.resource == parent.name
    ]
    table = await _open(store, state.table, state.version, False)
    frame = await frame_of(ctx, str(store.data_dir), table, state.table, state.version, child)
    if frame.holds([c.path.column for c in visible.conditions]):
        clauses += [condition_sql(c, DUCKDB) for c in visible.conditions]
        selection = Selection(frame, " AND ".join(f"({c})" for c in clauses))
    else:  # a bound field the frame lacks (long text): Lance selects the caller's records
        selection = Selection(
            frame,
            " AND ".join(f"({c})" for c in clauses),
            await selected(table, where_sql([], visible.clauses), []),
        )
    order = default_order(child)
    page = f"SELECT _key FROM records ORDER BY {order.sql()} LIMIT {limit + 1}"
    keys_rows, count = await ctx.run_sync(run, selection, [page, "SELECT count(*) FROM records"])
    keys = [r[0] for r in keys_rows][:limit]
    found = await rows_by_key(table, keys, ROW_COLUMNS, visible.clauses)
    shaping = Shaping(child.max_text_chars, locales)
    items = []
    for k in keys:
        if k in found:
            shaped = shape_data(child.fields, parse_data(found[k]), shaping)
            items.append(item(found[k], shaped, None))
    return {"items": items, "total": count[0][0], "has_more": len(keys_rows) > limit}

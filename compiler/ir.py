"""The IR: frozen, resolved, deterministic. Everything downstream of lowering reads only this.

JSON schemas are held as canonical JSON text so the IR stays immutable and hashable; the
properties below hand out fresh copies.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from lynxc.runtime.backends.sql.catalog import THREADS_SETTING as SQL_THREADS_SETTING
from lynxc.runtime.backends.sql.catalog import TIMEOUT_SETTING as SQL_TIMEOUT_SETTING
from lynxc.runtime.caller_arguments import AUTH_META_KEY as AUTH_META_KEY  # who may call what

from .diagnostics import Span


@dataclass(frozen=True)
class CapIR:
    name: str
    value: int
    max: int
    unit: str
    description: str


@dataclass(frozen=True)
class ParamIR:
    """A parameter's facts for documentation; the schema itself is in ToolIR.input_schema."""

    name: str
    required: bool
    span: Span


@dataclass(frozen=True)
class ClaimParamIR:
    """A parameter bound to a claim of the verified caller: never sent by the caller, always
    filled from its identity (issue 27)."""

    name: str
    claim: str
    type: str  # its JSON type: string, integer, number or boolean


@dataclass(frozen=True)
class ToolIR:
    name: str
    title: str | None
    description: str
    annotations: tuple[tuple[str, bool], ...]
    input_schema_json: str
    output_schema_json: str | None
    caps: tuple[CapIR, ...]
    params: tuple[ParamIR, ...]
    backend: str
    backend_target: str
    span: Span
    # every description as written (before caps are filled in) and where: lint checks for
    # numbers that should have been cap placeholders
    description_sources: tuple[tuple[Span, str], ...] = ()
    suppressions: tuple[tuple[str, str], ...] = ()  # (rule, reason), server-wide ones included
    scopes: tuple[str, ...] = ()  # what a caller over an authenticated transport must hold
    claims: tuple[ClaimParamIR, ...] = ()  # identity-bound parameters

    @property
    def input_schema(self) -> dict[str, Any]:
        """The whole input, identity-bound parameters included: what the generated model and
        the statement checks read. Clients see `published_input_schema`."""
        return json.loads(self.input_schema_json)

    @property
    def published_input_schema(self) -> dict[str, Any]:
        """The inputSchema of tools/list: without the parameters a caller may not send."""
        schema = self.input_schema
        bound = {claim.name for claim in self.claims}
        if bound:
            schema["properties"] = {k: v for k, v in schema["properties"].items() if k not in bound}
            required = [name for name in schema.get("required", []) if name not in bound]
            if required:
                schema["required"] = required
            else:
                schema.pop("required", None)
        return schema

    @property
    def auth_meta(self) -> dict[str, Any] | None:
        """What tools/list tells clients of this tool's access: the scopes it needs and the
        parameters its caller's identity fills. None when it has neither."""
        if not self.scopes and not self.claims:
            return None
        meta: dict[str, Any] = {}
        if self.scopes:
            meta["scopes"] = list(self.scopes)
        if self.claims:
            meta["claims"] = {c.name: {"claim": c.claim, "type": c.type} for c in self.claims}
        return meta

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return json.loads(self.output_schema_json) if self.output_schema_json else None

    @property
    def cap_values(self) -> dict[str, int]:
        return {cap.name: cap.value for cap in self.caps}


@dataclass(frozen=True)
class SettingIR:
    name: str
    schema_json: str
    description: str | None

    @property
    def schema(self) -> dict[str, Any]:
        return json.loads(self.schema_json)


@dataclass(frozen=True)
class SpecFileIR:
    path: str
    sha256: str


@dataclass(frozen=True)
class AcknowledgementIR:
    version: str
    rule: str
    reason: str
    span: Span


@dataclass(frozen=True)
class RecordFieldIR:
    """One declared field of a record, checked: `values` only for enum, `to` only for
    reference (naming a declared resource), `items` only for array, `fields` only for object."""

    name: str
    type: str
    required: bool = False
    description: str | None = None
    values: tuple[str, ...] | None = None
    to: str | None = None
    items: RecordFieldIR | None = None
    fields: tuple[RecordFieldIR, ...] | None = None
    span: Span = field(default=Span(""), compare=False)

    def entry(self) -> dict[str, Any]:
        """This field as collections.json holds it (runtime/backends/records/definitions.py)."""
        return {
            "name": self.name,
            "type": self.type,
            "required": self.required,
            "description": self.description,
            "values": list(self.values) if self.values is not None else None,
            "to": self.to,
            "items": self.items.entry() if self.items is not None else None,
            "fields": [f.entry() for f in self.fields] if self.fields is not None else None,
        }


@dataclass(frozen=True)
class CollectionParentIR:
    """A placeholder of a nested resource id and the reference field that fills it."""

    placeholder: str
    field: str
    resource: str


@dataclass(frozen=True)
class CollectionSortIR:
    field: str  # a path: `created`, `capital.name`
    descending: bool = False


@dataclass(frozen=True)
class CollectionIR:
    """One declared resource, resolved: the id template, its parents, the record schema."""

    name: str
    id: str
    title: str | None
    description: str | None
    key: str
    parents: tuple[CollectionParentIR, ...]
    fields: tuple[RecordFieldIR, ...]
    keyword: tuple[str, ...]
    meaning: tuple[str, ...]
    capabilities: tuple[str, ...]
    sort: tuple[CollectionSortIR, ...]
    max_text_chars: int | None
    schema_json: str  # the JSON Schema of one record
    model: str  # models/<model>.py, class `Record`
    span: Span = field(default=Span(""), compare=False)
    bind: tuple[tuple[str, str], ...] = ()  # (field, claim): callers see only their own records

    @property
    def schema(self) -> dict[str, Any]:
        return json.loads(self.schema_json)

    def entry(self) -> dict[str, Any]:
        """This resource as collections.json holds it (runtime/backends/records/definitions.py)."""
        return {
            "name": self.name,
            "id": self.id,
            "title": self.title,
            "description": self.description,
            "key": self.key,
            "parents": [
                {"placeholder": p.placeholder, "field": p.field, "resource": p.resource} for p in self.parents
            ],
            "fields": [f.entry() for f in self.fields],
            "keyword": list(self.keyword),
            "meaning": list(self.meaning),
            "capabilities": list(self.capabilities),
            "sort": [{"field": s.field, "descending": s.descending} for s in self.sort],
            "max_text_chars": self.max_text_chars,
            "schema": self.schema,
            "model": self.model,
        } | ({"bind": {name: claim for name, claim in self.bind}} if self.bind else {})


@dataclass(frozen=True)
class SqlParamIR:
    """A declared parameter of a SQL tool and the DuckDB type its values bind as."""

    name: str
    duckdb_type: str


@dataclass(frozen=True)
class SqlColumnIR:
    """One result column: its name, DuckDB type tree (runtime/backends/sql/types.py) and whether
    it can hold NULL (unless proven otherwise, it can)."""

    name: str
    type_json: str
    nullable: bool
    # The database's own name of the type, where the tree does not carry one: Postgres's
    # format_type(), SQLite's declared type (sql.json records it: the runtime's fit check reads it).
    sql_type: str = ""


@dataclass(frozen=True)
class SqlToolIR:
    """A tool whose behaviour is one DuckDB statement, as checked against the declared data."""

    tool: str
    statement: str  # as written
    wrapped: str  # what runs: the statement under the row cap
    params: tuple[SqlParamIR, ...]
    columns: tuple[SqlColumnIR, ...]
    result: str  # "many" or "one"
    max_rows: int
    read_only: bool
    source: str  # the .sql file it is written in, or "" when inline in the spec
    depends_json: str = ""  # SQLite: {table: {column: declared type}} the statement reads

    def entry(self) -> dict[str, Any]:
        entry = {
            "statement": self.statement,
            "wrapped": self.wrapped,
            "params": [{"name": p.name, "type": p.duckdb_type} for p in self.params],
            "columns": [
                {"name": c.name, "type": json.loads(c.type_json), "nullable": c.nullable}
                | ({"declared": c.sql_type} if c.sql_type else {})
                for c in self.columns
            ],
            "result": self.result,
            "max_rows": self.max_rows,
            "read_only": self.read_only,
        }
        if self.depends_json:
            depends = json.loads(self.depends_json)
            entry["depends"] = depends
            entry["fingerprint"] = hashlib.sha256(canonical_json(depends).encode()).hexdigest()
        return entry


@dataclass(frozen=True)
class SqlViewIR:
    name: str
    reader: str  # read_parquet, read_csv or read_json
    setting: str  # the setting that holds its file path or glob
    options_json: str
    shape: str = ""  # where the build took its columns from: `columns`, or `sample: PATH`


@dataclass(frozen=True)
class SqlDataIR:
    """A server's DuckDB data and its SQL tools, as generated/<server>/sql.json holds them."""

    database_setting: str | None
    writable: bool
    views: tuple[SqlViewIR, ...]
    tools: tuple[SqlToolIR, ...]
    not_null: tuple[str, ...] = ()  # `table.column` the database must still declare NOT NULL
    database_shape: str = (
        ""  # where the build took the database's tables from: `schema: PATH`, `sample: PATH`
    )
    engine: str = "duckdb"  # or "sqlite": sql.json then has its own shape (sqlite_document)


@dataclass(frozen=True)
class PgParamIR:
    """A declared parameter of a Postgres SQL tool and the type Postgres inferred for its $n."""

    name: str
    type: str  # format_type() of the inferred type: `integer`, `text`, `mpaa_rating`
    oid: int  # a built-in type's OID; 0 for a user-defined type (its OID is the database's own)


@dataclass(frozen=True)
class PgToolIR:
    """A tool whose behaviour is one PostgreSQL statement, as prepared against the build database."""

    tool: str
    statement: str  # as written, with $name
    wrapped: str  # what runs: $1..$n, under the row cap when it reads
    params: tuple[PgParamIR, ...]  # in $1..$n order
    columns: tuple[SqlColumnIR, ...]
    result: str
    max_rows: int
    read_only: bool
    source: str  # the .sql file it is written in, or "" when inline in the spec
    depends_json: str  # canonical JSON of the catalog entries the statement depends on
    fingerprint: str  # sha256 of depends_json

    def entry(self) -> dict[str, Any]:
        return {
            "statement": self.statement,
            "wrapped": self.wrapped,
            "params": [{"name": p.name, "type": p.type, "oid": p.oid} for p in self.params],
            "columns": [
                {"name": c.name, "type": json.loads(c.type_json), "nullable": c.nullable}
                for c in self.columns
            ],
            "result": self.result,
            "max_rows": self.max_rows,
            "read_only": self.read_only,
            "depends": json.loads(self.depends_json),
            "fingerprint": self.fingerprint,
        }


@dataclass(frozen=True)
class PgDataIR:
    """A server's PostgreSQL database and its SQL tools, as generated/<server>/sql.json holds them."""

    dsn_setting: str
    writable: bool
    shape: str  # what the build prepared against: `schema: PATH`, or `database given at build`
    tools: tuple[PgToolIR, ...]


@dataclass(frozen=True)
class ValueSourceIR:
    """A value written in the spec, or the name of the setting that holds it when serving."""

    value: str | None = None
    setting: str | None = None

    def entry(self) -> dict[str, str]:
        return {"setting": self.setting} if self.setting is not None else {"value": self.value or ""}


@dataclass(frozen=True)
class AuthIR:
    """How the server authenticates callers over HTTP (issue 27)."""

    scopes: tuple[str, ...]  # scopes_supported
    issuer: ValueSourceIR | None = None  # oauth: None when the server takes no access tokens
    resource: ValueSourceIR | None = None
    introspection: tuple[str, str] | None = None  # the client id and secret settings
    api_keys_setting: str | None = None

    @property
    def methods(self) -> list[str]:
        return [m for m, on in (("oauth", self.issuer), ("api_keys", self.api_keys_setting)) if on]

    def wire(self) -> dict[str, Any]:
        """What tools/list says of it: the methods a caller can use and the scopes there are."""
        return {"methods": self.methods, "scopes_supported": list(self.scopes)}

    def entry(self) -> dict[str, Any]:
        """What generated/<server>/server.py declares for the runtime (runtime/auth/config.py)."""
        entry: dict[str, Any] = {"scopes_supported": list(self.scopes)}
        if self.issuer is not None and self.resource is not None:
            entry["oauth"] = {"issuer": self.issuer.entry(), "resource": self.resource.entry()}
            if self.introspection is not None:
                entry["oauth"]["introspection"] = {
                    "client_id_setting": self.introspection[0],
                    "client_secret_setting": self.introspection[1],
                }
        if self.api_keys_setting is not None:
            entry["api_keys"] = {"file_setting": self.api_keys_setting}
        return entry


@dataclass(frozen=True)
class HttpToolIR:
    """A tool whose behaviour is one request to the server's HTTP API (issue 28)."""

    tool: str
    method: str
    path: str
    path_params: tuple[tuple[str, str], ...]  # (placeholder, parameter)
    query: tuple[tuple[str, str], ...]  # (wire name, parameter)
    headers: tuple[tuple[str, str], ...]
    body_fields: tuple[tuple[str, str], ...] | None  # a JSON object built from parameters
    body_param: str | None  # or one parameter sent whole
    response: str  # json or text
    result: str | None  # a JSON pointer
    wrap: str | None

    @property
    def idempotent(self) -> bool:
        return self.method in IDEMPOTENT_METHODS

    def entry(self) -> dict[str, Any]:
        body: dict[str, Any] | None = None
        if self.body_fields is not None:
            body = {"fields": dict(self.body_fields)}
        elif self.body_param is not None:
            body = {"param": self.body_param}
        return {
            "method": self.method,
            "path": self.path,
            "path_params": dict(self.path_params),
            "query": dict(self.query),
            "headers": dict(self.headers),
            "body": body,
            "response": self.response,
            "result": self.result,
            "wrap": self.wrap,
            "idempotent": self.idempotent,
        }


IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
HTTP_FORMAT = 1  # the `format` of http.json that runtime/backends/http reads
HTTP_TIMEOUT_SETTING = "http_timeout_seconds"
HTTP_RETRIES_SETTING = "http_max_retries"


@dataclass(frozen=True)
class HttpDataIR:
    """A server's HTTP API and its HTTP tools, as generated/<server>/http.json holds them."""

    base_url: ValueSourceIR
    auth_json: str  # canonical JSON of http.json's `auth` (null when the API takes none)
    headers: tuple[tuple[str, str], ...]
    tools: tuple[HttpToolIR, ...]


def http_document(server: ServerIR) -> dict[str, Any]:
    """The content of generated/<server>/http.json (without its `_generated` header)."""
    http = server.http
    assert http is not None
    return {
        "format": HTTP_FORMAT,
        "server": {
            "base_url": http.base_url.entry(),
            "auth": json.loads(http.auth_json),
            "headers": dict(http.headers),
            "settings": {"timeout": HTTP_TIMEOUT_SETTING, "retries": HTTP_RETRIES_SETTING},
        },
        "tools": {t.tool: t.entry() for t in http.tools},
    }


POSTGRES_POOL_SETTING = "postgres_pool_size"
POSTGRES_DEFAULT_POOL_SIZE = 10


@dataclass(frozen=True)
class ExampleIR:
    """One example of a tool (issue 29): a call and what must hold of its answer. Never on the
    wire: the README documents it and `lynxc test` runs it."""

    tool: str
    name: str
    arguments_json: str  # canonical JSON of the arguments
    expect_json: str  # canonical JSON of the expectation, the keys given only
    span: Span = field(compare=False)

    @property
    def arguments(self) -> dict[str, Any]:
        return json.loads(self.arguments_json)

    @property
    def expect(self) -> dict[str, Any]:
        return json.loads(self.expect_json)


@dataclass(frozen=True)
class SetupStepIR:
    lynxc: tuple[str, ...]
    span: Span = field(compare=False)


@dataclass(frozen=True)
class TestFixtureIR:
    """What `lynxc test` prepares before it serves: settings ({spec_dir}, {tmp} unfilled) and
    the lynxc commands to run."""

    settings_json: str
    setup: tuple[SetupStepIR, ...]

    @property
    def settings(self) -> dict[str, Any]:
        return json.loads(self.settings_json)


@dataclass(frozen=True)
class PromptIR:
    """One prompt (issue 31): its `prompts/list` entry, how it renders, where it is declared."""

    name: str
    wire_json: str  # canonical JSON of its prompts/list entry
    span: Span
    argument_spans: tuple[tuple[str, Span], ...]  # (argument, where it is declared)
    render_json: str  # canonical JSON of its prompt_messages.json entry (lower/prompts.py's shape)

    @property
    def wire(self) -> dict[str, Any]:
        return json.loads(self.wire_json)

    @property
    def render(self) -> dict[str, Any]:
        return json.loads(self.render_json)


@dataclass(frozen=True)
class McpResourceIR:
    """One MCP resource (issue 31), static or templated: its list entry, how it is read, where
    it is declared. (The server's declared records are `collections` above.)"""

    name: str
    templated: bool  # an entry of resources/templates/list, else of resources/list
    wire_json: str  # canonical JSON of that list entry
    span: Span
    source_json: str  # canonical JSON of its resource_sources.json entry (lower/mcp_resources.py's shape)
    files: tuple[tuple[str, str], ...] = ()  # (build path, text) of the files it copies into the build

    @property
    def wire(self) -> dict[str, Any]:
        return json.loads(self.wire_json)

    @property
    def source(self) -> dict[str, Any]:
        return json.loads(self.source_json)


@dataclass(frozen=True)
class ServerIR:
    name: str
    version: str
    title: str | None
    instructions: str | None
    settings: tuple[SettingIR, ...]
    tools: tuple[ToolIR, ...]
    spec_files: tuple[SpecFileIR, ...]
    version_span: Span
    acknowledgements: tuple[AcknowledgementIR, ...] = ()
    collections: tuple[CollectionIR, ...] = ()
    sql: SqlDataIR | PgDataIR | None = None
    auth: AuthIR | None = None
    transports: tuple[str, ...] = ("stdio", "http")
    http: HttpDataIR | None = None
    examples: tuple[ExampleIR, ...] = ()
    test_fixture: TestFixtureIR | None = None
    prompts: tuple[PromptIR, ...] = ()
    completions_json: str = ""  # canonical JSON of completions.json (lower/completions.py), "" when none
    mcp_resources: tuple[McpResourceIR, ...] = ()
    # server.lint.suppress as (rule, reason): lint of prompts and MCP resources applies them.
    lint_suppressions: tuple[tuple[str, str], ...] = ()


RESOURCES_FORMAT = 1  # the `format` of collections.json that runtime/backends/records reads


def collections_document(server: ServerIR) -> dict[str, Any]:
    """The content of generated/<server>/collections.json (without its `_generated` header):
    every collection of the server in declaration order. Lives beside the IR because it is the
    IR's own projection, read by emit (to write the file) and by review (to compare versions)."""
    return {
        "format": RESOURCES_FORMAT,
        "resources": [collection.entry() for collection in server.collections],
    }


SQL_FORMAT = 1  # the `format` of sql.json that runtime/backends/sql reads


def sql_document(server: ServerIR) -> dict[str, Any]:
    """The content of generated/<server>/sql.json (without its `_generated` header)."""
    sql = server.sql
    assert sql is not None
    if isinstance(sql, PgDataIR):
        return {
            "format": SQL_FORMAT,
            "engine": "postgres",
            "data": {"dsn_setting": sql.dsn_setting, "writable": sql.writable, "shape": sql.shape},
            "settings": {"timeout": SQL_TIMEOUT_SETTING, "pool_size": POSTGRES_POOL_SETTING},
            "tools": {t.tool: t.entry() for t in sql.tools},
        }
    if sql.engine == "sqlite":
        return sqlite_document(sql)
    database = (
        {
            "setting": sql.database_setting,
            "writable": sql.writable,
            "not_null": list(sql.not_null),
            "shape": sql.database_shape,
        }
        if sql.database_setting
        else None
    )
    return {
        "format": SQL_FORMAT,
        "data": {
            "database": database,
            "views": [
                {
                    "name": v.name,
                    "reader": v.reader,
                    "setting": v.setting,
                    "options": json.loads(v.options_json),
                    "shape": v.shape,
                }
                for v in sql.views
            ],
        },
        "settings": {"threads": SQL_THREADS_SETTING, "timeout": SQL_TIMEOUT_SETTING},
        "tools": {t.tool: t.entry() for t in sql.tools},
    }


def sqlite_document(sql: SqlDataIR) -> dict[str, Any]:
    """sql.json of a server over SQLite (issue 26): `"engine": "sqlite"`, its database setting."""
    return {
        "format": SQL_FORMAT,
        "engine": "sqlite",
        "data": {
            "database_setting": sql.database_setting,
            "writable": sql.writable,
            "shape": sql.database_shape,
        },
        "settings": {"timeout": SQL_TIMEOUT_SETTING},
        "tools": {t.tool: t.entry() for t in sql.tools},
    }


def canonical_json(value: Any) -> str:
    """Stable text for a JSON value: key order as written, no whitespace noise. NaN and Infinity
    are refused (the spec checks refuse them first): they are not JSON."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

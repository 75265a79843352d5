"""Spec format v1: the versioned Pydantic models a YAML spec must satisfy.

The models are strict (`extra="forbid"`) so a typo is an error with a did-you-mean, never a
silently ignored key. `SpecFile.model_json_schema()` is what `lynxc schema` prints for editors.
"""

from __future__ import annotations

import difflib
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, StrictBool, StrictInt, StrictStr, Tag
from pydantic.functional_validators import BeforeValidator

from . import surface

SPEC_VERSION = 1

CAP_REF_PREFIX = "caps."


def _bound(value: Any) -> Any:
    """Numeric bounds are numbers or a reference to a cap (`caps.NAME`), resolved when lowering."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ValueError("expected a number or a cap reference such as 'caps.max_results'")
    if isinstance(value, str) and not value.startswith(CAP_REF_PREFIX):
        raise ValueError(f"expected a number or a cap reference such as 'caps.max_results', got {value!r}")
    return value


Bound = Annotated[int | float | str, BeforeValidator(_bound)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class SchemaNode(_Strict):
    """A JSON Schema node in the subset MCP clients handle well, plus `nullable`."""

    type: StrictStr | None = Field(
        None,
        description="string, integer, number, boolean, array, object or null; omit with enum, anyOf, $ref",
    )
    title: StrictStr | None = None
    description: StrictStr | None = Field(None, description="May quote caps as {caps.NAME}.")
    default: Any = None
    examples: list[Any] | None = None
    enum: list[Any] | None = None
    const: Any = None
    nullable: StrictBool = Field(False, description="Also accept null (emitted as anyOf with null).")
    minimum: Bound | None = None
    maximum: Bound | None = None
    exclusiveMinimum: Bound | None = None
    exclusiveMaximum: Bound | None = None
    minLength: Bound | None = None
    maxLength: Bound | None = None
    pattern: StrictStr | None = None
    format: StrictStr | None = None
    items: SchemaNode | None = None
    minItems: Bound | None = None
    maxItems: Bound | None = None
    uniqueItems: StrictBool | None = None
    properties: dict[str, SchemaNode] | None = None
    required: list[StrictStr] | None = None
    additionalProperties: StrictBool | SchemaNode | None = None
    anyOf: list[SchemaNode] | None = None
    ref: StrictStr | None = Field(None, alias="$ref")
    defs: dict[str, SchemaNode] | None = Field(None, alias="$defs")


class Parameter(SchemaNode):
    """One input parameter: a schema node plus whether callers must send it."""

    required: StrictBool = False  # type: ignore[assignment]
    requiredProperties: list[StrictStr] | None = Field(
        None, description="For an object parameter: which of its properties are required."
    )
    from_claim: StrictStr | None = Field(
        None,
        description="Bind this parameter to a claim of the verified caller (e.g. email): it leaves the "
        "published inputSchema, a caller who sends it is refused, and its value comes from the token "
        "or API key (over stdio, from the caller_claims setting).",
    )


class Cap(_Strict):
    """A hard limit the runtime enforces; descriptions quote it as {caps.NAME}."""

    value: StrictInt = Field(description="The limit in force.")
    max: StrictInt | None = Field(
        None, description="The hard maximum the value may be raised to; defaults to value."
    )
    unit: Literal["count", "bytes", "chars"] = "count"
    description: StrictStr


class Annotations(_Strict):
    readOnlyHint: StrictBool | None = None
    destructiveHint: StrictBool | None = None
    idempotentHint: StrictBool | None = None
    openWorldHint: StrictBool | None = None


class Description(_Strict):
    """Sections rendered, in this order, into the one description a client sees."""

    purpose: StrictStr = Field(description="One sentence first: the action and its object.")
    usage: StrictStr | None = Field(
        None, description="When to use this tool, and when a sibling fits better."
    )
    behaviour: StrictStr | None = Field(None, description="Side effects, limits, failure modes.")
    returns: StrictStr | None = Field(None, description="What comes back, including empty and error results.")


class Suppression(_Strict):
    """Silence one lint rule, with the reason a reviewer reads."""

    rule: StrictStr
    reason: StrictStr = Field(min_length=1)


class LintConfig(_Strict):
    suppress: list[Suppression] = Field(default_factory=list)


SQL_RESULTS = ("many", "one")


class SqlBackend(_Strict):
    """A tool whose whole behaviour is one DuckDB statement over the server's `duckdb` data."""

    sql: StrictStr | None = Field(
        None, description="The statement, with parameters as $name (always bound, never spliced)."
    )
    sql_file: StrictStr | None = Field(None, description="A .sql file beside the spec holding the statement.")
    result: Literal["many", "one"] = Field(
        "many",
        description="many: {rows, row_count, truncated}; one: the first row itself (none is an error).",
    )


class HttpOperation(_Strict):
    """One HTTP request to the server's API: where each parameter goes, and what comes back."""

    method: Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
    path: StrictStr = Field(
        description="Below the base URL, e.g. /pets/{petId}: each {placeholder} names a parameter."
    )
    query: dict[StrictStr, StrictStr] = Field(
        default_factory=dict, description="Query names and the parameters that fill them: {limit: limit}."
    )
    headers: dict[StrictStr, StrictStr] = Field(
        default_factory=dict,
        description="Header names and the parameters that fill them: {X-Trace-Id: trace_id}.",
    )
    body: dict[StrictStr, StrictStr] | StrictStr | None = Field(
        None,
        description="The JSON body: {field: parameter} builds an object, or "
        "one parameter's name sends it whole.",
    )
    response: Literal["json", "text"] = Field("json", description="How the answer is read.")
    result: StrictStr | None = Field(
        None,
        description="A JSON pointer (RFC 6901) to the part of a JSON answer that is the result, e.g. /data.",
    )
    wrap: StrictStr | None = Field(
        None, description="Put the result under this key (a result that is not an object must be)."
    )


class HttpBackend(_Strict):
    """A tool whose whole behaviour is one HTTP request to the server's API (server.http)."""

    http: HttpOperation


def _backend_kind(value: Any) -> str:
    """Which form of `backend` a value is meant to be, so that a mistake in it is reported
    against that form alone (a misspelt `sqll` as SQL's, not also as a missing `http`)."""
    if isinstance(value, SqlBackend | HttpBackend):
        return "sql" if isinstance(value, SqlBackend) else "http"
    if not isinstance(value, dict):
        return "name"
    keys = [key for key in value if isinstance(key, str)]
    if "http" in keys or (
        not set(keys) & set(SqlBackend.model_fields) and difflib.get_close_matches("http", keys, 1, 0.6)
    ):
        return "http"
    return "sql"


# --- Examples and `lynxc test` (issue 29) --------------------------------------------------------

ERROR_KINDS = ("invalid_arguments", "forbidden", "tool_error")


class RowsExpectation(_Strict):
    """How many items the list at `at` holds (a JSON pointer into the structured result)."""

    at: StrictStr = Field("/rows", description="A JSON pointer (RFC 6901) to a list of the result.")
    count: StrictInt | None = Field(None, ge=0, description="Exactly this many.")
    min: StrictInt | None = Field(None, ge=0, description="At least this many.")
    max: StrictInt | None = Field(None, ge=0, description="At most this many.")


class ErrorExpectation(_Strict):
    """The call must be refused (isError): by whom, naming what."""

    kind: Literal["invalid_arguments", "forbidden", "tool_error"] | None = Field(
        None,
        description="invalid_arguments: the host refused the arguments against the inputSchema; "
        "forbidden: the caller may not call it; tool_error: the tool ran and failed or refused.",
    )
    field: StrictStr | None = Field(None, description="A parameter the error message must name.")
    message: StrictStr | None = Field(None, description="A fragment the error message must contain.")


class Expectation(_Strict):
    """What must hold of the answer; every key given is checked."""

    result: dict[StrictStr, Any] | None = Field(
        None,
        description="A subset of the structured result: objects match key by key (extra keys "
        "allowed), lists and scalars exactly; {contains: [...]} matches a list holding those items.",
    )
    rows: RowsExpectation | None = Field(None, description="The length of a list in the result.")
    error: ErrorExpectation | None = Field(None, description="The call is refused (isError: true).")
    text: StrictStr | None = Field(None, description="A fragment of the text content.")


class Example(_Strict):
    """A call of the tool and what must hold of its answer: documented in the generated README
    and run by `lynxc test`."""

    name: StrictStr | None = Field(None, description="Shown in reports; default `example N`.")
    arguments: dict[StrictStr, Any] = Field(default_factory=dict)
    expect: Expectation = Field(default_factory=Expectation)


class ServerExample(Example):
    """An example of any tool of the server, records tools included."""

    tool: StrictStr = Field(description="The tool the example calls.")


class SetupStep(_Strict):
    """One command `lynxc test` runs before starting the server (the fixture's settings are
    appended as --set flags)."""

    lynxc: list[StrictStr] = Field(
        description="The arguments of one lynxc command, e.g. "
        "[load, NAME, RESOURCE, '{spec_dir}/data/x.jsonl']; {spec_dir} and {tmp} are filled in."
    )


class TestFixture(_Strict):
    """What `lynxc test` prepares before serving: settings, setup commands, examples of tools
    the spec does not declare one by one."""

    settings: dict[StrictStr, Any] = Field(
        default_factory=dict,
        description="Setting values for the test run; strings may name {spec_dir} and {tmp} "
        "(a fresh folder per run). `lynxc test --set` overrides them.",
    )
    setup: list[SetupStep] = Field(default_factory=list)
    examples: list[ServerExample] = Field(default_factory=list)


class ToolAuth(_Strict):
    """Who may call a tool, over an authenticated transport."""

    scopes: list[StrictStr] = Field(
        default_factory=list,
        description="Scopes the caller's token or API key must carry, all of them; each one of "
        "server.auth.scopes.",
    )


class Tool(_Strict):
    name: StrictStr
    title: StrictStr | None = None
    description: Description
    annotations: Annotations | None = None
    backend: Annotated[
        Annotated[StrictStr, Tag("name")]
        | Annotated[SqlBackend, Tag("sql")]
        | Annotated[HttpBackend, Tag("http")],
        Discriminator(_backend_kind),
    ] = Field(
        description="A built-in backend name, 'package.module:function', {sql: ...} for a SQL tool or "
        "{http: ...} for one request to the server's HTTP API."
    )
    parameters: dict[str, Parameter] = Field(default_factory=dict)
    output: SchemaNode | None = None
    caps: dict[str, Cap] = Field(default_factory=dict)
    auth: ToolAuth | None = Field(
        None, description="The scopes a caller needs (server.auth must be declared)."
    )
    lint: LintConfig | None = None
    examples: list[Example] = Field(
        default_factory=list, description="Calls and what must hold of their answers (`lynxc test`)."
    )


class Acknowledgement(_Strict):
    """A breaking change released without a major version bump, on purpose."""

    version: StrictStr = Field(description="The version that makes the change.")
    rule: StrictStr = Field(description="The diff rule it acknowledges, e.g. PARAM_REMOVED.")
    reason: StrictStr = Field(min_length=1, description="Why callers can live with it.")


class _DatabaseFile(_Strict):
    """What DuckDB's and SQLite's database declarations share: the setting holding the file's
    path, and the schema the build checks against (or, in each, a sample file of the engine)."""

    setting: StrictStr = Field(description="The server setting holding the database file's path.")
    schema_: StrictStr | None = Field(
        None,
        alias="schema",
        description="A .sql file beside the spec of CREATE statements: the tables the build checks against.",
    )


class DuckDBDatabase(_DatabaseFile):
    """A DuckDB database file the server reads, its path from a setting."""

    sample: StrictStr | None = Field(
        None, description="Or a small .duckdb file beside the spec with the same tables."
    )


class DuckDBView(_Strict):
    """A view over data files (Parquet, CSV, JSON; globs allowed), its path from a setting."""

    reader: Literal["read_parquet", "read_csv", "read_json"]
    setting: StrictStr = Field(description="The server setting holding the file path or glob.")
    options: dict[
        StrictStr, StrictStr | StrictBool | StrictInt | float | list[StrictStr] | dict[StrictStr, StrictStr]
    ] = Field(
        default_factory=dict,
        description="Named options of the reader, e.g. {header: true} or {columns: {code: VARCHAR}}.",
    )
    columns: dict[StrictStr, StrictStr] | None = Field(
        None, description="The columns and their DuckDB types, for the build: {code: VARCHAR NOT NULL}."
    )
    sample: StrictStr | None = Field(
        None, description="Or a small file beside the spec in the same format, read by the build."
    )


class DuckDBData(_Strict):
    """The data a server's SQL tools read, attached read-only."""

    database: DuckDBDatabase | None = None
    views: dict[StrictStr, DuckDBView] = Field(default_factory=dict)
    allow_writes: StrictBool = Field(
        False, description="Let tools annotated destructiveHint: true run statements that write."
    )


class SettingRef(_Strict):
    """A value the server reads from one of its settings (never written in the spec)."""

    setting: StrictStr = Field(description="The server setting that holds the value.")


class PostgresData(_Strict):
    """The PostgreSQL database a server's SQL tools read; its DSN only ever from a setting."""

    dsn: SettingRef = Field(description="The setting holding the connection string (postgresql://...).")
    schema_: StrictStr | None = Field(
        None,
        alias="schema",
        description="A .sql file beside the spec of CREATE statements (e.g. pg_dump --schema-only): "
        "without a build-time DSN (`lynxc build --set SETTING=...`), the build starts a PostgreSQL of "
        "its own, loads it and checks the statements there.",
    )
    allow_writes: StrictBool = Field(
        False, description="Let tools annotated destructiveHint: true run statements that write."
    )


# --- SQLite (issue 26) ---------------------------------------------------------------------------


class SqliteDatabase(_DatabaseFile):
    """A SQLite database file the server reads, its path from a setting."""

    sample: StrictStr | None = Field(
        None,
        description="Or a small SQLite file beside the spec with the same tables (copied, never written).",
    )


class SqliteData(_Strict):
    """The SQLite database a server's SQL tools read, opened read-only."""

    database: SqliteDatabase
    allow_writes: StrictBool = Field(
        False, description="Let tools annotated destructiveHint: true run statements that write."
    )


SQL_ENGINES = ("duckdb", "postgres", "sqlite")


# --- Authentication (issue 27) -------------------------------------------------------------------


class IntrospectionConfig(_Strict):
    """Opaque access tokens, checked at the issuer's RFC 7662 introspection endpoint."""

    client_id: SettingRef = Field(description="The setting holding this server's client id at the issuer.")
    client_secret: SettingRef = Field(description="The setting holding its client secret.")


class OAuthConfig(_Strict):
    """The server is an OAuth 2.1 resource server: callers bring access tokens from one issuer."""

    issuer: StrictStr | SettingRef = Field(
        description="The authorization server's issuer URL (https), or {setting: NAME}."
    )
    resource: StrictStr | SettingRef = Field(
        description="This server's canonical resource URI (e.g. https://mcp.example.com/mcp), or "
        "{setting: NAME}: a token's audience must name it."
    )
    introspection: IntrospectionConfig | None = Field(
        None, description="Also accept opaque tokens, asking the issuer about each (cached briefly)."
    )


class ApiKeysConfig(_Strict):
    """API keys kept hashed in a file (`lynxc keys add`), for deployments without an issuer."""

    file: SettingRef = Field(description="The setting holding the keys file's path.")


class ServerAuth(_Strict):
    """How callers over HTTP are authenticated; stdio has no caller authentication."""

    scopes: list[StrictStr] = Field(
        default_factory=list, description="Every scope the server's tools may require (scopes_supported)."
    )
    oauth: OAuthConfig | None = None
    api_keys: ApiKeysConfig | None = None


TRANSPORTS = ("stdio", "http")


# --- HTTP APIs (issue 28) -------------------------------------------------------------------------


class BearerAuth(_Strict):
    token: SettingRef = Field(description="The setting holding the bearer token.")


class ApiKeyAuth(_Strict):
    in_: Literal["header", "query"] = Field(alias="in", description="Where the key goes.")
    name: StrictStr = Field(description="The header or query parameter name, e.g. X-API-Key.")
    value: SettingRef = Field(description="The setting holding the key.")


class BasicAuth(_Strict):
    username: SettingRef
    password: SettingRef


class ClientCredentialsAuth(_Strict):
    """OAuth 2 client credentials: a token fetched from the token URL, cached until it expires."""

    token_url: StrictStr | SettingRef
    client_id: SettingRef
    client_secret: SettingRef
    scopes: list[StrictStr] = Field(default_factory=list)


class HttpAuth(_Strict):
    """How the server proves itself to the API: one of the four, secrets only from settings."""

    bearer: BearerAuth | None = None
    api_key: ApiKeyAuth | None = None
    basic: BasicAuth | None = None
    oauth2_client_credentials: ClientCredentialsAuth | None = None


class HttpApi(_Strict):
    """The HTTP API a server's HTTP tools call."""

    base_url: StrictStr | SettingRef = Field(
        description="e.g. https://api.example.com/v1, or {setting: NAME}."
    )
    auth: HttpAuth | None = None
    headers: dict[StrictStr, StrictStr] = Field(
        default_factory=dict, description="Fixed headers sent with every request, e.g. {User-Agent: ...}."
    )


class Server(_Strict):
    name: StrictStr
    version: StrictStr
    title: StrictStr | None = None
    instructions: StrictStr | None = None
    settings: dict[str, SchemaNode] = Field(
        default_factory=dict, description="Values supplied when serving (flags or LYNXC_<NAME> variables)."
    )
    acknowledge: list[Acknowledgement] = Field(
        default_factory=list, description="Breaking changes accepted without a major version bump."
    )
    lint: LintConfig | None = Field(None, description="Lint suppressions for every tool of the server.")
    duckdb: DuckDBData | None = Field(None, description="The DuckDB data of the server's SQL tools.")
    postgres: PostgresData | None = Field(
        None, description="Or the PostgreSQL database of the server's SQL tools."
    )
    sqlite: SqliteData | None = Field(None, description="The SQLite database of the server's SQL tools.")
    auth: ServerAuth | None = Field(None, description="How HTTP callers are authenticated: oauth, api_keys.")
    http: HttpApi | None = Field(None, description="The HTTP API the server's HTTP tools call.")
    transports: list[Literal["stdio", "http"]] = Field(
        default_factory=lambda: list(TRANSPORTS), description="The transports the server may be served on."
    )
    test: TestFixture | None = Field(None, description="How `lynxc test` prepares and what it runs.")


# Names lowering checks with a did-you-mean; listed here too so editors complete them.
RECORD_FIELD_TYPES = (
    "string",
    "text",
    "integer",
    "number",
    "boolean",
    "date",
    "datetime",
    "enum",
    "reference",
    "localized",
    "array",
    "object",
)
RESOURCE_CAPABILITIES = ("search", "query", "get_one")


class RecordField(_Strict):
    """One field of a declared record. `type` decides which other keys apply."""

    type: StrictStr = Field(
        description="string, text (long), integer, number, boolean, date, datetime, enum, "
        "reference, localized (text keyed by locale), array or object",
        json_schema_extra={"enum": list(RECORD_FIELD_TYPES)},
    )
    description: StrictStr | None = None
    required: StrictBool = Field(False, description="Every record must carry a value (not null).")
    values: list[StrictStr] | None = Field(None, description="For enum: the values allowed.")
    to: StrictStr | None = Field(None, description="For reference: the name of the collection referred to.")
    items: RecordField | None = Field(None, description="For array: the field of each element.")
    fields: dict[str, RecordField] | None = Field(None, description="For object: its fields by name.")


class ClaimBinding(_Strict):
    from_claim: StrictStr = Field(description="The claim of the verified caller the field must equal.")


class Collection(_Strict):
    """A collection of records the server serves through its records tools (`collections:`)."""

    name: StrictStr = Field(description="Lowercase snake case, unique in the server.")
    id: StrictStr | None = Field(
        None,
        description="The resource_id clients pass; defaults to name. Each {placeholder} names a "
        "required reference field of this collection: its target is the parent collection.",
    )
    title: StrictStr | None = None
    description: StrictStr | None = None
    key: StrictStr = Field(
        description="The top-level string or integer field, required, that identifies a record."
    )
    fields: dict[str, RecordField]
    keyword: list[StrictStr] = Field(
        default_factory=list, description="Top-level text fields matched by keyword search."
    )
    meaning: list[StrictStr] = Field(
        default_factory=list, description="Top-level text fields embedded for search by meaning."
    )
    capabilities: list[StrictStr] = Field(
        default_factory=lambda: list(RESOURCE_CAPABILITIES),
        description="Which of search, query and get_one clients may use; default all three.",
        json_schema_extra={"items": {"type": "string", "enum": list(RESOURCE_CAPABILITIES)}},
    )
    sort: list[StrictStr] = Field(
        default_factory=list,
        description="Default order of list results: field paths, '-' first for descending; "
        "the key breaks ties.",
    )
    max_text_chars: StrictInt | None = Field(
        None, ge=1, description="Text and localized fields are cut to this many characters in list results."
    )
    bind: dict[str, ClaimBinding] = Field(
        default_factory=dict,
        description="Row-level security: {field: {from_claim: CLAIM}}; a caller only ever sees records "
        "whose field equals that claim of theirs.",
    )


class ServerFile(_Strict):
    """A server spec: `server:` and its tools, collections, prompts and resources, inline or in
    sibling files."""

    lynxc: Literal[1]
    server: Server
    tools: list[Tool] = Field(default_factory=list)
    collections: list[Collection] = Field(
        default_factory=list, description="Collections of declared records, served by the records tools."
    )
    prompts: list[surface.Prompt] = Field(default_factory=list, description="MCP prompts.")
    resources: list[surface.Resource] = Field(
        default_factory=list, description="MCP resources: data a client reads by URI."
    )


class ToolFile(_Strict):
    """One tool of a server whose spec is a folder (`server.yaml` beside one file per tool)."""

    lynxc: Literal[1]
    tool: Tool


class CollectionFile(_Strict):
    """One collection of records of a server whose spec is a folder, beside its tool files."""

    lynxc: Literal[1]
    collection: Collection


class PromptFile(_Strict):
    """One MCP prompt of a server whose spec is a folder."""

    lynxc: Literal[1]
    prompt: surface.Prompt


class ResourceFile(_Strict):
    """One MCP resource of a server whose spec is a folder."""

    lynxc: Literal[1]
    resource: surface.Resource


# The keys of a file beside server.yaml, each declaring one item.
FOLDER_ITEM_KEYS = ("tool", "collection", "prompt", "resource")


class FolderItemFile(_Strict):
    """A file beside server.yaml that names none of `tool:`, `collection:`, `prompt:` or
    `resource:`: read against all, so a misspelt key gets its did-you-mean."""

    lynxc: Literal[1]
    tool: Tool | None = None
    collection: Collection | None = None
    prompt: surface.Prompt | None = None
    resource: surface.Resource | None = None


class SpecFile(_Strict):
    """Any form of spec file, for editors' completion."""

    lynxc: Literal[1]
    server: Server | None = None
    tools: list[Tool] | None = None
    tool: Tool | None = None
    collections: list[Collection] | None = None
    collection: Collection | None = None
    prompts: list[surface.Prompt] | None = None
    prompt: surface.Prompt | None = None
    resources: list[surface.Resource] | None = None
    resource: surface.Resource | None = None


SchemaNode.model_rebuild()
Parameter.model_rebuild()
RecordField.model_rebuild()

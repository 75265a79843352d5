"""The one catalogue of rule IDs that spec checks (and later lint and diff) report under."""

from __future__ import annotations

from dataclasses import dataclass

from .diagnostics import Diagnostic, Severity, Span


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    category: str
    purpose: str


_RULES = (
    # spec: reading and shape
    Rule("YAML_SYNTAX", "error", "spec", "The file must be well-formed YAML."),
    Rule(
        "YAML_DUPLICATE_KEY",
        "error",
        "spec",
        "A mapping must not repeat a key; the later one would win silently.",
    ),
    Rule("SPEC_FILE_EMPTY", "error", "spec", "A spec file must hold a mapping, not nothing."),
    Rule(
        "SPEC_VERSION_UNSUPPORTED",
        "error",
        "spec",
        "`lynxc:` must name a spec format version this compiler reads.",
    ),
    Rule(
        "SPEC_KEY_UNKNOWN",
        "error",
        "spec",
        "Every key must be one the spec format defines (typos are caught).",
    ),
    Rule("SPEC_KEY_MISSING", "error", "spec", "Required keys must be present."),
    Rule("SPEC_VALUE_INVALID", "error", "spec", "A value must have the type and form its key requires."),
    Rule("SPEC_NOT_FOUND", "error", "spec", "A spec path given on the command line must exist."),
    Rule("SUPPRESSION_RULE_UNKNOWN", "error", "spec", "A lint suppression must name a lint rule."),
    # spec: keys renamed (issue 31: declared records are `collections:`, `resources:` is MCP's)
    Rule(
        "SPEC_KEY_RENAMED",
        "error",
        "spec",
        "A key the spec format renamed is written under its new name (records: `collections:`).",
    ),
    Rule(
        "RULE_ID_RENAMED",
        "error",
        "spec",
        "A suppression or acknowledgement names a rule by its current ID (records rules: COLLECTION_*).",
    ),
    # spec: limits on what the compiler reads (compiler/limits.py says why each sits where it does)
    Rule("SPEC_TOO_LARGE", "error", "spec", "A server's spec files together stay within the size limit."),
    Rule("SPEC_STRING_TOO_LONG", "error", "spec", "One string of a spec stays within the length limit."),
    Rule("TOOLS_TOO_MANY", "error", "spec", "A server declares at most the limit of tools."),
    Rule("YAML_NESTING_TOO_DEEP", "error", "spec", "YAML nests (aliases expanded) within the depth limit."),
    Rule(
        "YAML_ALIAS_BUDGET_EXCEEDED",
        "error",
        "spec",
        "Aliases may share fragments but not multiply them beyond the budget, nor contain themselves.",
    ),
    Rule("YAML_TAG_UNSUPPORTED", "error", "spec", "A spec holds plain YAML data, no tags (`!!python/...`)."),
    Rule(
        "NUMBER_NOT_FINITE",
        "error",
        "spec",
        "Numbers must be finite doubles: JSON has no NaN or Infinity.",
    ),
    # server
    Rule("SERVER_NAME_INVALID", "error", "server", "A server name is lowercase letters, digits and dashes."),
    Rule(
        "SERVER_VERSION_INVALID", "error", "server", "A server version must be semantic (MAJOR.MINOR.PATCH)."
    ),
    Rule("SERVER_NAME_DUPLICATE", "error", "server", "Two specs must not define the same server."),
    Rule("SETTING_DEFAULT_INVALID", "error", "server", "A setting's default must match its declared type."),
    # tools
    Rule(
        "TOOL_NAME_INVALID", "error", "hygiene", "A tool name must match the MCP rule [A-Za-z0-9_.-]{1,128}."
    ),
    Rule("TOOL_NAME_DUPLICATE", "error", "tool", "Tool names must be unique within a server."),
    Rule(
        "TOOL_NAME_COLLISION",
        "error",
        "tool",
        "Two tool names must not map to one generated models file (they differ only by '-', '.', '_' "
        "or case), nor to models/__init__.py.",
    ),
    Rule("TOOL_NONE", "error", "tool", "A server must declare at least one tool."),
    Rule(
        "TOOL_REFERENCE_UNKNOWN",
        "error",
        "usage",
        "A tool quoted in a description (`name`) must exist in the server.",
    ),
    Rule(
        "DESCRIPTION_TEMPLATE_UNKNOWN",
        "error",
        "tool",
        "A `{...}` placeholder in a description must name a declared cap (`{caps.NAME}`).",
    ),
    Rule("DESCRIPTION_FORMAT_UNKNOWN", "error", "tool", "A cap placeholder format must be one lynxc knows."),
    # parameters and schemas
    Rule("PARAM_TYPE_UNKNOWN", "error", "schema", "A schema type must be a JSON Schema type lynxc supports."),
    Rule(
        "PARAM_NAME_INVALID",
        "error",
        "schema",
        "A parameter name must be a plain identifier clients can send.",
    ),
    Rule("PARAM_BOUNDS_INVALID", "error", "schema", "Lower bounds must not exceed upper bounds."),
    Rule("PARAM_DEFAULT_INVALID", "error", "schema", "A default must satisfy its own schema."),
    Rule(
        "PARAM_KEYWORD_MISPLACED",
        "error",
        "schema",
        "A keyword must suit the schema's type (no minLength on an integer).",
    ),
    Rule("PATTERN_INVALID", "error", "schema", "A `pattern` must be a regular expression that compiles."),
    Rule("REF_UNRESOLVED", "error", "schema", "A `$ref` must point at a `$defs` entry of the same schema."),
    Rule("DEFS_NAME_CLASH", "error", "schema", "Input and output `$defs` of one tool must not share a name."),
    Rule(
        "SCHEMA_REF_CYCLE",
        "error",
        "schema",
        "A `$ref` chain must reach a schema: types recurse via properties, items or additionalProperties.",
    ),
    Rule(
        "SCHEMA_REF_BUDGET_EXCEEDED",
        "error",
        "schema",
        "An output schema with its `$ref`s inlined stays within the node and depth budget.",
    ),
    # caps
    Rule(
        "CAP_UNKNOWN", "error", "caps", "A reference to a cap (`caps.NAME`) must name one the tool declares."
    ),
    Rule("CAP_VALUE_EXCEEDS_MAX", "error", "caps", "A cap's value must not exceed its hard maximum."),
    Rule("CAP_MAX_UNDEFINED", "error", "caps", "`caps.NAME.max` needs a cap that declares `max:`."),
    # backends
    Rule(
        "BACKEND_UNKNOWN",
        "error",
        "backend",
        "A tool must bind to a built-in backend or an importable function.",
    ),
    Rule(
        "BACKEND_IMPORT_FAILED", "error", "backend", "A custom backend `package.module:function` must import."
    ),
    Rule(
        "BACKEND_IMPORT_TIMEOUT",
        "error",
        "backend",
        "Importing custom backends must finish within the CPU time limit (and never hang).",
    ),
    Rule(
        "BACKEND_NOT_ALLOWED",
        "error",
        "backend",
        "A custom backend is the user's code, not a function of Python's standard library.",
    ),
    Rule(
        "BACKEND_NOT_DECLARED",
        "error",
        "backend",
        "A custom backend declares itself with `@backend` from `lynxc.runtime.backend`.",
    ),
    Rule("BACKEND_NOT_ASYNC", "error", "backend", "A backend is an `async def` function."),
    Rule(
        "BACKEND_PARAM_UNSUPPORTED",
        "error",
        "backend",
        "Every declared parameter must be one the backend honours.",
    ),
    Rule("BACKEND_PARAM_MISSING", "error", "backend", "Parameters the backend requires must be declared."),
    Rule(
        "BACKEND_CAP_UNSUPPORTED", "error", "backend", "Every declared cap must be one the backend enforces."
    ),
    Rule("BACKEND_CAP_MISSING", "error", "backend", "Caps the backend requires must be declared."),
    Rule(
        "BACKEND_SETTING_MISSING", "error", "backend", "Server settings the backend reads must be declared."
    ),
    # collections: declared records (the `collections:` block and `collection:` files)
    Rule(
        "COLLECTION_NAME_INVALID",
        "error",
        "collection",
        "A collection name is lower snake case: ^[a-z][a-z0-9_]*$.",
    ),
    Rule("COLLECTION_NAME_DUPLICATE", "error", "collection", "Collection names are unique within a server."),
    Rule(
        "COLLECTION_ID_INVALID",
        "error",
        "collection",
        "A resource id is '/'-separated segments, each plain text or one {placeholder}, none repeated.",
    ),
    Rule("COLLECTION_ID_DUPLICATE", "error", "collection", "Two collections must not share a resource id."),
    Rule(
        "COLLECTION_FIELD_NAME_INVALID",
        "error",
        "collection",
        "A field name is lower snake case without '__', so each path maps to one store column.",
    ),
    Rule(
        "COLLECTION_FIELD_TYPE_UNKNOWN", "error", "collection", "A field's type is one of the record types."
    ),
    Rule(
        "COLLECTION_FIELD_KEY_MISPLACED",
        "error",
        "collection",
        "values, to, items and fields apply only to enum, reference, array and object fields.",
    ),
    Rule(
        "COLLECTION_FIELD_KEY_MISSING",
        "error",
        "collection",
        "A reference names its collection (to:), an array its items, an object at least one field.",
    ),
    Rule("COLLECTION_ENUM_EMPTY", "error", "collection", "An enum field lists at least one value."),
    Rule("COLLECTION_ENUM_VALUE_DUPLICATE", "error", "collection", "An enum field lists each value once."),
    Rule(
        "COLLECTION_REFERENCE_UNKNOWN",
        "error",
        "collection",
        "A reference's `to:` names a collection of the server.",
    ),
    Rule(
        "COLLECTION_FIELD_UNKNOWN",
        "error",
        "collection",
        "key, keyword, meaning, sort and id placeholders name fields the collection declares.",
    ),
    Rule(
        "COLLECTION_KEY_INVALID",
        "error",
        "collection",
        "The key is a required top-level field of type string or integer.",
    ),
    Rule(
        "COLLECTION_PLACEHOLDER_NO_PARENT",
        "error",
        "collection",
        "An id placeholder names a required reference field: the parent each record belongs to.",
    ),
    Rule(
        "COLLECTION_PARENT_CYCLE",
        "error",
        "collection",
        "Collections nest under parents that do not nest, directly or not, under them.",
    ),
    Rule(
        "COLLECTION_SEARCH_FIELD_NOT_TEXT",
        "error",
        "collection",
        "keyword and meaning fields are string, text, localized, or arrays of string or text.",
    ),
    Rule(
        "COLLECTION_SEARCH_FIELDS_MISSING",
        "error",
        "collection",
        "A collection with the search capability declares keyword or meaning fields to match.",
    ),
    Rule(
        "COLLECTION_SEARCH_FIELDS_UNUSED",
        "warning",
        "collection",
        "keyword and meaning fields serve only search: without it they cost load time for nothing.",
    ),
    Rule(
        "COLLECTION_SORT_NOT_SORTABLE",
        "error",
        "collection",
        "Sort fields are scalars (not text, localized, array or object) outside arrays.",
    ),
    Rule(
        "COLLECTION_CAPABILITY_UNKNOWN",
        "error",
        "collection",
        "A capability is one of search, query, get_one.",
    ),
    Rule(
        "COLLECTION_CAPABILITIES_EMPTY",
        "error",
        "collection",
        "A collection allows at least one capability; omit the key for all three.",
    ),
    Rule(
        "COLLECTION_ENTRY_DUPLICATE",
        "error",
        "collection",
        "capabilities, keyword, meaning and sort name each entry once.",
    ),
    Rule(
        "COLLECTION_TOOL_NAME_TAKEN",
        "error",
        "collection",
        "A server with collections leaves the records tools' names (and models files) to them.",
    ),
    Rule(
        "COLLECTION_SETTING_INVALID",
        "error",
        "collection",
        "A declared data_dir or embedder setting has the type the records tools read.",
    ),
    # sql: tools whose behaviour is one DuckDB statement (compiler/lower/sql)
    Rule(
        "SQL_SOURCE_MISSING",
        "error",
        "sql",
        "A SQL tool gives its statement inline (sql) or in a file (sql_file), not both.",
    ),
    Rule(
        "SQL_FILE_UNREADABLE",
        "error",
        "sql",
        "A file a SQL spec names lies beside the spec, within the size limit, and reads as UTF-8.",
    ),
    Rule(
        "SQL_DATA_MISSING",
        "error",
        "sql",
        "A server with SQL tools declares its DuckDB data (`duckdb:` views or a database).",
    ),
    Rule(
        "SQL_DATA_INVALID",
        "error",
        "sql",
        "Declared DuckDB data builds: valid column types, readable samples, a schema of CREATE statements.",
    ),
    Rule(
        "SQL_SETTING_UNKNOWN",
        "error",
        "sql",
        "A view or database names a declared string setting for its path.",
    ),
    Rule("SQL_SYNTAX", "error", "sql", "A SQL tool's statement parses in DuckDB."),
    Rule("SQL_STATEMENT_COUNT", "error", "sql", "A SQL tool runs exactly one statement."),
    Rule(
        "SQL_BIND",
        "error",
        "sql",
        "A statement binds against the declared data: its tables, columns and functions exist.",
    ),
    Rule(
        "SQL_NOT_READ_ONLY",
        "error",
        "sql",
        "A statement only reads, unless its tool is destructive and the server allows writes.",
    ),
    Rule(
        "SQL_DYNAMIC",
        "error",
        "sql",
        "A statement never runs SQL text made at run time (query(), query_table()): parameters stay values.",
    ),
    Rule(
        "SQL_FUNCTION_REFUSED",
        "error",
        "sql",
        "A statement calls only reviewed DuckDB functions: none that reveals the server's settings, "
        "paths or catalog, reads a file it names, or changes state.",
    ),
    Rule(
        "SQL_PARAM_CASTS_COLUMN",
        "warning",
        "sql",
        "A parameter's declared type does not make DuckDB cast a column in a filter (which stops it "
        "skipping data by the column's statistics).",
    ),
    Rule(
        "SQL_PARAM_POSITIONAL",
        "error",
        "sql",
        "Parameters are named ($name), so each binds to a declared parameter.",
    ),
    Rule(
        "SQL_PARAM_UNDECLARED",
        "error",
        "sql",
        "Every $name in a statement is a declared parameter of its tool.",
    ),
    Rule(
        "SQL_PARAM_UNUSED", "error", "sql", "Every declared parameter of a SQL tool is used by its statement."
    ),
    Rule(
        "SQL_PARAM_TYPE",
        "error",
        "sql",
        "A parameter's declared type is one DuckDB can bind where the statement uses it.",
    ),
    Rule(
        "SQL_PARAM_RANGE",
        "error",
        "sql",
        "A parameter's declared bounds lie within the range of the SQL type it binds as (BIGINT "
        "for an integer), which its published schema carries.",
    ),
    Rule(
        "SQL_LIMIT_UNBOUNDED",
        "warning",
        "sql",
        "A parameter that sets a LIMIT or OFFSET declares a maximum.",
    ),
    Rule(
        "SQL_COLUMN_INVALID",
        "error",
        "sql",
        "Result columns have distinct, non-empty names: they become the keys of each row.",
    ),
    Rule("SQL_TYPE_UNSUPPORTED", "error", "sql", "Every result column has a type lynxc can render as JSON."),
    Rule(
        "SQL_TYPE_LOSSY",
        "warning",
        "sql",
        "Every result value arrives whole (a date, timestamp or interval inside a UNION does not).",
    ),
    Rule(
        "SQL_OUTPUT_MISMATCH",
        "error",
        "sql",
        "A written output schema accepts every value the statement's result types can produce.",
    ),
    Rule(
        "SQL_TIMEOUT",
        "error",
        "sql",
        "Checking a statement against the declared data ends within the time limit.",
    ),
    # sql over PostgreSQL (compiler/lower/sql/postgres)
    Rule(
        "SQL_ENGINE_CONFLICT",
        "error",
        "sql",
        "A server declares one database for its SQL tools: duckdb, postgres or sqlite.",
    ),
    Rule(
        "SQL_DATABASE_UNREACHABLE",
        "error",
        "sql",
        "The database given at build (`lynxc build --set SETTING=DSN`) accepts the build's connection.",
    ),
    # auth (compiler/lower/auth.py)
    Rule(
        "AUTH_METHOD_MISSING",
        "error",
        "auth",
        "server.auth declares how callers prove who they are: oauth, api_keys or both.",
    ),
    Rule(
        "AUTH_STDIO_ONLY",
        "error",
        "auth",
        "Caller authentication is for HTTP: a server served only on stdio (its client started it) "
        "declares none.",
    ),
    Rule(
        "AUTH_NOT_DECLARED",
        "error",
        "auth",
        "Tool scopes, and identity-bound parameters and records on a server served over HTTP, need "
        "server.auth: without it no caller over HTTP has an identity.",
    ),
    Rule(
        "AUTH_SCOPE_INVALID",
        "error",
        "auth",
        "A scope is an RFC 6749 scope token (printable ASCII, no space, quote or backslash), declared once.",
    ),
    Rule("AUTH_SCOPE_UNKNOWN", "error", "auth", "A tool's scope is one of server.auth.scopes."),
    Rule(
        "AUTH_URL_INVALID",
        "error",
        "auth",
        "An issuer written in the spec is https (or http to this machine); a resource is an "
        "absolute http(s) URI without a fragment.",
    ),
    Rule(
        "AUTH_DESTRUCTIVE_UNSCOPED",
        "warning",
        "auth",
        "On a server that authenticates callers, a destructive tool requires a scope, so that "
        "not every caller can run it.",
    ),
    Rule(
        "PARAM_CLAIM_INVALID",
        "error",
        "auth",
        "An identity-bound parameter is a string, integer, number or boolean, not nullable and "
        "without a default: its value is the caller's claim, or the call is refused.",
    ),
    Rule(
        "COLLECTION_BIND_INVALID",
        "error",
        "auth",
        "A field bound to a claim is a top-level string, integer, number, boolean or enum.",
    ),
    # http (compiler/lower/http.py)
    Rule(
        "HTTP_API_MISSING",
        "error",
        "http",
        "A server with HTTP tools declares its API: server.http with base_url.",
    ),
    Rule(
        "HTTP_OPERATION_MISSING",
        "error",
        "http",
        "An HTTP tool writes its request as backend: {http: {method, path, ...}}.",
    ),
    Rule(
        "HTTP_URL_INVALID",
        "error",
        "http",
        "A URL in the spec is absolute http(s), without credentials or a query.",
    ),
    Rule(
        "HTTP_AUTH_INVALID",
        "error",
        "http",
        "server.http.auth declares exactly one way to authenticate to the API.",
    ),
    Rule(
        "HTTP_HEADER_INVALID",
        "error",
        "http",
        "A header name is an RFC 7230 token; a fixed value holds no line break.",
    ),
    Rule(
        "HTTP_PATH_INVALID",
        "error",
        "http",
        "A path starts with /, with balanced {placeholders}, no query or fragment.",
    ),
    Rule(
        "HTTP_PATH_PARAM_INVALID",
        "error",
        "http",
        "A path placeholder names a required string, integer, number or boolean parameter.",
    ),
    Rule("HTTP_PARAM_UNKNOWN", "error", "http", "Path, query, headers and body name declared parameters."),
    Rule("HTTP_PARAM_PLACED_TWICE", "error", "http", "Each parameter goes to one place in the request."),
    Rule("HTTP_PARAM_UNPLACED", "error", "http", "Every parameter goes somewhere in the request."),
    Rule(
        "HTTP_LOCATION_TYPE",
        "error",
        "http",
        "A query value is a scalar or a list of scalars; a header value a scalar.",
    ),
    Rule("HTTP_BODY_NOT_ALLOWED", "error", "http", "Only POST, PUT, PATCH and DELETE requests carry a body."),
    Rule(
        "HTTP_RESULT_INVALID",
        "error",
        "http",
        "result is a JSON pointer into a JSON answer; a result that is not an object is wrapped.",
    ),
    Rule(
        "HTTP_OUTPUT_REQUIRED",
        "error",
        "http",
        "A tool answering JSON declares its output schema, which every answer is checked against.",
    ),
    # examples and `lynxc test` (compiler/lower/examples.py)
    Rule("EXAMPLE_TOOL_UNKNOWN", "error", "examples", "A server's test example names one of its tools."),
    Rule("EXAMPLE_NAME_DUPLICATE", "error", "examples", "A tool's examples have different names."),
    Rule(
        "EXAMPLE_ARGUMENTS_INVALID",
        "error",
        "examples",
        "An example's arguments satisfy the tool's published inputSchema (or, expecting "
        "invalid_arguments, break it).",
    ),
    Rule(
        "EXAMPLE_EXPECT_INVALID",
        "error",
        "examples",
        "What an example expects can happen: result keys and values the outputSchema allows, a "
        "list at rows.at, an error field that is a parameter.",
    ),
    Rule(
        "TEST_SETTING_UNKNOWN", "error", "examples", "A test fixture sets only settings the server declares."
    ),
    Rule("TEST_SETUP_INVALID", "error", "examples", "A test fixture's setup runs lynxc load, index or keys."),
    # prompts and completions (compiler/lower/prompts.py, compiler/lower/completions.py)
    Rule("PROMPT_NAME_INVALID", "error", "prompt", "A prompt name matches [A-Za-z0-9_.-]{1,64}."),
    Rule("PROMPT_NAME_DUPLICATE", "error", "prompt", "Prompt names are unique within a server."),
    Rule(
        "PROMPT_ARGUMENT_NAME_INVALID",
        "error",
        "prompt",
        "A prompt argument's name is an identifier its templates can use (not a Jinja2 keyword).",
    ),
    Rule(
        "PROMPT_MESSAGE_INVALID",
        "error",
        "prompt",
        "A prompt message holds exactly one of text, resource or image.",
    ),
    Rule("PROMPT_TEMPLATE_SYNTAX", "error", "prompt", "A prompt template is well-formed Jinja2."),
    Rule(
        "PROMPT_TEMPLATE_UNSAFE",
        "error",
        "prompt",
        "A prompt template reads only its arguments: no attribute or item whose name starts with '_'.",
    ),
    Rule(
        "PROMPT_ARGUMENT_UNDECLARED",
        "error",
        "prompt",
        "A prompt template uses only the prompt's declared arguments.",
    ),
    Rule(
        "PROMPT_ARGUMENT_UNUSED",
        "warning",
        "prompt",
        "Every declared argument of a prompt is used by one of its messages.",
    ),
    Rule(
        "PROMPT_RENDER_FAILED",
        "error",
        "prompt",
        "Every prompt renders with its sample arguments (the build renders each one).",
    ),
    Rule(
        "PROMPT_RESOURCE_UNKNOWN",
        "error",
        "prompt",
        "A resource message's URI, rendered with the samples, is one of the server's MCP resources.",
    ),
    Rule(
        "PROMPT_IMAGE_INVALID",
        "error",
        "prompt",
        "An image message names an image file beside the spec (image/* MIME type, at most 1 MiB).",
    ),
    Rule(
        "COMPLETION_SOURCE_INVALID",
        "error",
        "prompt",
        "A completion source is exactly one of values (non-empty), collection with field, sql or function.",
    ),
    Rule("COMPLETION_COLLECTION_UNKNOWN", "error", "prompt", "A completion's collection is a declared one."),
    Rule(
        "COMPLETION_FIELD_INVALID",
        "error",
        "prompt",
        "A completion's field is a top-level string, integer or enum field of its collection.",
    ),
    Rule(
        "COMPLETION_SQL_INVALID",
        "error",
        "prompt",
        "A SQL completion runs over the server's SQL data, binds only $value and known names, and "
        "returns one column.",
    ),
    Rule(
        "COMPLETION_FUNCTION_INVALID",
        "error",
        "prompt",
        "A function completion names an importable 'package.module:function'.",
    ),
    Rule(
        "COMPLETION_VARIABLE_UNKNOWN",
        "error",
        "prompt",
        "A resource template's completed variables are variables of its URI template.",
    ),
    # MCP resources: data a client reads by URI (`resources:`, compiler/lower/mcp_resources.py)
    Rule(
        "MCP_RESOURCE_NAME_DUPLICATE", "error", "mcp-resource", "MCP resource names are unique in a server."
    ),
    Rule(
        "MCP_RESOURCE_URI_DUPLICATE",
        "error",
        "mcp-resource",
        "Two MCP resources must not declare the same uri or uri_template.",
    ),
    Rule(
        "MCP_RESOURCE_URI_ONE_OF",
        "error",
        "mcp-resource",
        "An MCP resource declares exactly one of uri (static) and uri_template (templated).",
    ),
    Rule(
        "MCP_RESOURCE_URI_INVALID",
        "error",
        "mcp-resource",
        "A resource's uri is an absolute URI with a scheme.",
    ),
    Rule(
        "MCP_RESOURCE_TEMPLATE_INVALID",
        "error",
        "mcp-resource",
        "A uri_template is an RFC 6570 template (as the MCP SDK parses it) with at least one variable.",
    ),
    Rule(
        "MCP_RESOURCE_VARIABLE_UNKNOWN",
        "error",
        "mcp-resource",
        "`variables` describes only variables of the resource's uri_template.",
    ),
    Rule(
        "MCP_RESOURCE_SOURCE_ONE_OF",
        "error",
        "mcp-resource",
        "An MCP resource is read from exactly one of file, text, record, sql and function.",
    ),
    Rule(
        "MCP_RESOURCE_MIME_TYPE_INVALID", "error", "mcp-resource", "A resource's mime_type is `type/subtype`."
    ),
    Rule(
        "MCP_RESOURCE_FILE_TEMPLATED",
        "error",
        "mcp-resource",
        "A resource read from a file is static: a file is one content, not one per URI.",
    ),
    Rule(
        "MCP_RESOURCE_FILE_MISSING",
        "error",
        "mcp-resource",
        "A resource's file lies beside the spec, inside its folder (UTF-8 for a text mime_type).",
    ),
    Rule(
        "MCP_RESOURCE_TOO_LARGE",
        "error",
        "mcp-resource",
        "A static resource's content (file or text) fits within its max_bytes.",
    ),
    Rule(
        "MCP_RESOURCE_TEXT_TEMPLATE_INVALID",
        "error",
        "mcp-resource",
        "A templated text is a Jinja2 template that uses only the uri_template's variables.",
    ),
    Rule(
        "MCP_RESOURCE_COLLECTION_UNKNOWN",
        "error",
        "mcp-resource",
        "A resource read from a record names a collection the server declares.",
    ),
    Rule(
        "MCP_RESOURCE_RECORD_VARIABLES",
        "error",
        "mcp-resource",
        "A resource read from a record has a uri_template with exactly one variable: the record's key.",
    ),
    Rule(
        "MCP_RESOURCE_SQL_DATA_MISSING",
        "error",
        "mcp-resource",
        "A resource read by SQL needs the server's SQL data (duckdb, postgres or sqlite).",
    ),
    Rule(
        "MCP_RESOURCE_SQL_PARAMETERS",
        "error",
        "mcp-resource",
        "A resource's SQL statement takes exactly the uri_template's variables as $name parameters.",
    ),
    Rule(
        "MCP_RESOURCE_FUNCTION_INVALID",
        "error",
        "mcp-resource",
        "A resource's function is 'package.module:function', importable, and an async function.",
    ),
    # build
    Rule(
        "GENERATED_STALE", "error", "build", "`generated/` must match what the specs produce (`lynxc build`)."
    ),
)

# Diff rules: what a schema change does to clients. One level each: an output-side change that
# differs in effect from its input-side twin has its own rule (MAXIMUM_DECREASED vs OUTPUT_RANGE_NARROWED).
# Lint rules: categories are the six TDQS dimensions plus schema hygiene.
LINT_CATEGORIES = ("purpose", "usage", "behaviour", "parameters", "conciseness", "completeness", "hygiene")
_LINT_RULES = (
    (
        "TOOL_DESCRIPTION_REQUIRED",
        "error",
        "purpose",
        "A tool needs a description; without one every dimension scores 1.",
    ),
    (
        "DESCRIPTION_TAUTOLOGICAL",
        "error",
        "purpose",
        "The description must not just restate the tool's name or title.",
    ),
    (
        "DESCRIPTION_RESTATES_NAME",
        "warning",
        "purpose",
        "The first sentence must add more than the name's own words.",
    ),
    (
        "PURPOSE_SENTENCE_VAGUE",
        "warning",
        "purpose",
        "Open with one specific sentence: the action and its object.",
    ),
    ("USAGE_GUIDANCE_MISSING", "warning", "usage", "Say when to use the tool (and when not to)."),
    (
        "RECORD_PATH_UNDECLARED",
        "error",
        "usage",
        "A resource id or field path a description names must be one the server's resources declare.",
    ),
    (
        "SIBLING_NOT_NAMED",
        "warning",
        "usage",
        "In a server of several tools, name the sibling that fits better when.",
    ),
    (
        "ANNOTATIONS_MISSING",
        "warning",
        "behaviour",
        "Declare MCP annotations (readOnlyHint, destructiveHint, ...).",
    ),
    (
        "READ_ONLY_CONTRADICTED",
        "error",
        "behaviour",
        "A read-only tool must not describe writing, deleting or sending.",
    ),
    (
        "DESTRUCTIVE_WITHOUT_CONFIRMATION",
        "warning",
        "behaviour",
        "A destructive tool needs a confirm or dry-run parameter.",
    ),
    (
        "BEHAVIOUR_UNDISCLOSED",
        "warning",
        "behaviour",
        "State limits and failure modes: what can stop or cut a call.",
    ),
    ("PARAMS_UNDOCUMENTED", "warning", "parameters", "Below 50% of parameters have a schema description."),
    (
        "PARAMS_PARTLY_DOCUMENTED",
        "info",
        "parameters",
        "Between 50% and 80% of parameters have a schema description.",
    ),
    ("PARAM_DESCRIPTION_MISSING", "warning", "parameters", "Every parameter needs a description."),
    (
        "PARAM_DESCRIPTION_RESTATES_NAME",
        "warning",
        "parameters",
        "A parameter description must add meaning beyond its name.",
    ),
    (
        "PARAM_DEFAULT_MISMATCH",
        "error",
        "parameters",
        "A default stated in prose must equal the schema's default.",
    ),
    ("PARAM_BOUND_MISMATCH", "error", "parameters", "A bound stated in prose must equal the schema's bound."),
    (
        "PARAM_ENUM_MISMATCH",
        "error",
        "parameters",
        "Values listed in prose must be the schema's enum values.",
    ),
    (
        "CAP_LITERAL_IN_DESCRIPTION",
        "warning",
        "parameters",
        "Quote caps as {caps.NAME}, not as literal numbers that can drift.",
    ),
    ("DESCRIPTION_TOO_LONG", "warning", "conciseness", "A tool description stays within its token budget."),
    (
        "SERVER_TOO_LONG",
        "warning",
        "conciseness",
        "All tool definitions of a server stay within the server budget.",
    ),
    (
        "SENTENCE_REPEATED",
        "warning",
        "conciseness",
        "No sentence is said twice (tool and parameter descriptions).",
    ),
    ("OUTPUT_SCHEMA_MISSING", "info", "completeness", "An output schema tells agents what comes back."),
    (
        "RETURN_UNDESCRIBED",
        "warning",
        "completeness",
        "Without an output schema, the description must say what returns.",
    ),
    (
        "ERROR_BEHAVIOUR_UNDESCRIBED",
        "warning",
        "completeness",
        "Say what happens on errors and empty results.",
    ),
    ("REQUIRED_PROPERTY_UNKNOWN", "error", "hygiene", "Every name in `required` must be a property."),
    (
        "TYPE_ARRAY_NOT_PORTABLE",
        "warning",
        "hygiene",
        "Input `type` arrays are rejected by some clients; use anyOf.",
    ),
    (
        "SHADOWED_BY_CHEAPER_SIBLING",
        "warning",
        "hygiene",
        "A much cheaper sibling may answer the same question.",
    ),
)

_CHANGELOG_RULES = (
    ("VERSION_NOT_BUMPED", "A released version's schema must not change: bump the version."),
    ("VERSION_NOT_INCREASING", "A new version must be newer than every released one."),
    (
        "BREAKING_CHANGE_UNACKNOWLEDGED",
        "A breaking change needs a major bump (a minor one below 1.0) or an acknowledgement.",
    ),
    ("ACKNOWLEDGE_RULE_UNKNOWN", "An acknowledgement must name a diff rule."),
    ("BASELINE_INVALID", "A released baseline in schema-changelog/ must be readable tools/list JSON."),
)

_DIFF_RULES = (
    ("TOOL_REMOVED", "breaking", "A tool was removed: every caller of it fails."),
    ("TOOL_ADDED", "info", "A tool was added."),
    ("TITLE_CHANGED", "info", "A title changed (tool or schema)."),
    ("DESCRIPTION_CHANGED", "info", "A description changed (tool or schema); read it for changed behaviour."),
    ("EXAMPLES_CHANGED", "info", "Examples changed."),
    ("ANNOTATION_CHANGED", "info", "An annotation changed without changing its effective value."),
    ("READ_ONLY_HINT_REMOVED", "breaking", "No longer read-only: clients that auto-approve reads must ask."),
    ("READ_ONLY_HINT_ADDED", "info", "The tool now declares it is read-only."),
    ("DESTRUCTIVE_HINT_ADDED", "breaking", "The tool may now destroy data."),
    ("DESTRUCTIVE_HINT_REMOVED", "info", "The tool no longer declares destructive updates."),
    ("IDEMPOTENT_HINT_REMOVED", "warning", "Repeating a call may now have more effect; retries are unsafe."),
    ("IDEMPOTENT_HINT_ADDED", "info", "Repeating a call now has no further effect."),
    ("OPEN_WORLD_HINT_ADDED", "warning", "The tool may now reach systems outside the server."),
    ("OPEN_WORLD_HINT_REMOVED", "info", "The tool no longer reaches outside systems."),
    (
        "INPUT_SCHEMA_REPLACED",
        "breaking",
        "The input schema became null or a non-object: not valid in MCP; clients may refuse the tool.",
    ),
    (
        "INPUT_SCHEMA_REPAIRED",
        "info",
        "A null or non-object input schema became a valid object schema that accepts every call.",
    ),
    (
        "OUTPUT_SCHEMA_REMOVED",
        "breaking",
        "The output schema was removed: consumers lose structured results.",
    ),
    ("OUTPUT_SCHEMA_ADDED", "info", "An output schema was added."),
    ("PARAM_ADDED_REQUIRED", "breaking", "A new required parameter: existing callers do not send it."),
    ("PARAM_ADDED_OPTIONAL", "info", "A new optional parameter."),
    (
        "PARAM_REMOVED",
        "breaking",
        "A parameter was removed: callers still sending it are rejected, or (open object) silently ignored.",
    ),
    (
        "PARAM_BECAME_REQUIRED",
        "breaking",
        "An existing parameter became required, or callers must now send one of a group (anyOf of required).",
    ),
    (
        "PARAM_BECAME_OPTIONAL",
        "info",
        "A required parameter, or a required group of parameters, became optional.",
    ),
    ("REQUIRED_CHANGED", "info", "`required` changed only to follow parameters added or removed."),
    ("PARAM_TYPE_NARROWED", "breaking", "A parameter accepts fewer JSON types."),
    ("PARAM_TYPE_WIDENED", "info", "A parameter accepts more JSON types."),
    ("PARAM_TYPE_CHANGED", "breaking", "A parameter's type changed incompatibly."),
    ("ENUM_ADDED", "breaking", "An input is now limited to listed values."),
    ("ENUM_REMOVED", "info", "An input is no longer limited to listed values."),
    ("ENUM_VALUE_REMOVED", "breaking", "An input no longer accepts a value it listed."),
    ("ENUM_VALUE_ADDED", "info", "An input accepts a new listed value."),
    ("MAXIMUM_DECREASED", "breaking", "An input's maximum (or exclusiveMaximum) was lowered or added."),
    ("MAXIMUM_INCREASED", "info", "An input's maximum was raised or removed."),
    ("MINIMUM_INCREASED", "breaking", "An input's minimum (or exclusiveMinimum) was raised or added."),
    ("MINIMUM_DECREASED", "info", "An input's minimum was lowered or removed."),
    ("MAX_LENGTH_DECREASED", "breaking", "An input string's maxLength was lowered or added."),
    ("MAX_LENGTH_INCREASED", "info", "An input string's maxLength was raised or removed."),
    ("MIN_LENGTH_INCREASED", "breaking", "An input string's minLength was raised or added."),
    ("MIN_LENGTH_DECREASED", "info", "An input string's minLength was lowered or removed."),
    ("MAX_ITEMS_DECREASED", "breaking", "An input array's maxItems was lowered or added."),
    ("MAX_ITEMS_INCREASED", "info", "An input array's maxItems was raised or removed."),
    ("MIN_ITEMS_INCREASED", "breaking", "An input array's minItems was raised or added."),
    ("MIN_ITEMS_DECREASED", "info", "An input array's minItems was lowered or removed."),
    ("PATTERN_CHANGED", "breaking", "An input string must match a new or changed pattern."),
    ("PATTERN_REMOVED", "info", "An input string no longer has a pattern."),
    ("ADDITIONAL_PROPERTIES_RESTRICTED", "breaking", "An input object now rejects keys it accepted."),
    ("ADDITIONAL_PROPERTIES_CHANGED", "info", "additionalProperties changed without rejecting more input."),
    (
        "PROPERTIES_UNDECLARED",
        "info",
        "An object's `properties` were dropped but additionalProperties still accepts them.",
    ),
    ("DEFAULT_CHANGED", "warning", "An input default changed: callers that omit it get new behaviour."),
    (
        "DEFAULT_ADDED",
        "info",
        "A default was added to a parameter that was required: every caller sent it; none relied on it.",
    ),
    ("FORMAT_CHANGED", "warning", "A string format changed."),
    ("SCHEMA_DIALECT_CHANGED", "info", "The $schema dialect changed."),
    ("DEFINITION_ADDED", "info", "A $defs entry was added."),
    ("DEFINITION_REMOVED", "info", "A $defs entry was removed (changes to references show on their own)."),
    ("OUTPUT_PROPERTY_REMOVED", "breaking", "An output field was removed: consumers reading it break."),
    ("OUTPUT_PROPERTY_ADDED", "info", "An output field was added."),
    (
        "OUTPUT_REQUIRED_REMOVED",
        "breaking",
        "An output field (or one of a group) is no longer guaranteed to be present.",
    ),
    ("OUTPUT_REQUIRED_ADDED", "info", "An output field (or one of a group) is now guaranteed to be present."),
    ("OUTPUT_TYPE_WIDENED", "breaking", "An output field may return JSON types it did not before."),
    ("OUTPUT_TYPE_NARROWED", "info", "An output field returns fewer JSON types."),
    ("OUTPUT_TYPE_CHANGED", "breaking", "An output field's type changed incompatibly."),
    ("OUTPUT_ENUM_VALUE_ADDED", "warning", "An output field may return a value consumers have not seen."),
    ("OUTPUT_ENUM_VALUE_REMOVED", "info", "An output field no longer returns a listed value."),
    (
        "OUTPUT_RANGE_WIDENED",
        "warning",
        "An output bound was relaxed: values outside the old range may return.",
    ),
    ("OUTPUT_RANGE_NARROWED", "info", "An output bound was tightened."),
    ("OUTPUT_PATTERN_CHANGED", "warning", "An output string's pattern changed or was removed."),
    ("OUTPUT_DEFAULT_CHANGED", "info", "A documented default in the output schema changed."),
    (
        "PARAM_ALTERNATIVE_REMOVED",
        "breaking",
        "An input's anyOf/oneOf member was dropped, or the input split into members, and what is left "
        "accepts less.",
    ),
    (
        "PARAM_ALTERNATIVE_ADDED",
        "info",
        "An input accepts a new anyOf/oneOf member of a type it had, or members merged into a wider schema.",
    ),
    (
        "OUTPUT_ALTERNATIVE_ADDED",
        "breaking",
        "An output may return a new anyOf/oneOf member its earlier member of that type does not cover, "
        "or members merged into a wider schema.",
    ),
    (
        "OUTPUT_ALTERNATIVE_REMOVED",
        "info",
        "An output no longer returns one of its anyOf/oneOf members, or only some shapes of what it did.",
    ),
    (
        "DEPENDENCY_ADDED",
        "breaking",
        "An input dependency (dependentRequired/dependentSchemas) was added or tightened: "
        "when its key is sent, more is required or forbidden.",
    ),
    (
        "DEPENDENCY_REMOVED",
        "info",
        "An input dependency was removed or loosened: it only lets more calls through.",
    ),
    (
        "OUTPUT_DEPENDENCY_ADDED",
        "info",
        "An output dependency was added or tightened: a result with its key guarantees more.",
    ),
    (
        "OUTPUT_DEPENDENCY_REMOVED",
        "breaking",
        "An output dependency was removed or loosened: consumers relying on it break.",
    ),
    ("SCHEMA_REORDERED", "info", "Members of a list keyword were reordered; nothing else changed."),
    (
        "SCHEMA_RESTRUCTURED",
        "info",
        "A keyword changed form (moved into or out of anyOf members, emptied) but admits the same.",
    ),
    ("SCHEMA_CHANGED", "warning", "A schema keyword changed in a way lynxc cannot classify; review it."),
    # Tool fields that are not schemas (review/tool_fields.py).
    (
        "ICONS_CHANGED",
        "info",
        "Icons were added, removed or changed (sizes, theme, type): clients only display them.",
    ),
    (
        "TASK_SUPPORT_NARROWED",
        "breaking",
        "execution.taskSupport no longer allows a way of calling that worked: to `required`, a plain "
        "call fails; to `forbidden`, a call run as a task fails (absent means `forbidden`).",
    ),
    (
        "TASK_SUPPORT_WIDENED",
        "info",
        "execution.taskSupport allows one more way of calling (to `optional`); every call that worked works.",
    ),
    (
        "EXECUTION_CHANGED",
        "info",
        "execution changed, taskSupport's effective value did not (a default written out or dropped).",
    ),
    (
        "TOOL_HIDDEN_FROM_MODEL",
        "breaking",
        "MCP Apps _meta.ui.visibility no longer includes `model`: for the model the tool is gone, as "
        "if removed (only the server's app may call it).",
    ),
    (
        "TOOL_SHOWN_TO_MODEL",
        "warning",
        "MCP Apps _meta.ui.visibility now includes `model`: the model may call a tool that only the "
        "server's app could; check it is safe without the app's user in the loop.",
    ),
    (
        "TOOL_VISIBILITY_CHANGED",
        "info",
        "MCP Apps _meta.ui.visibility changed for the server's own app only; the model sees the same.",
    ),
    (
        "TOOL_UI_ADDED",
        "info",
        "MCP Apps _meta.ui.resourceUri was added: hosts that support apps show a UI with the results.",
    ),
    (
        "TOOL_UI_REMOVED",
        "warning",
        "MCP Apps _meta.ui.resourceUri was removed: users lose the tool's UI; the model gets the same.",
    ),
    (
        "TOOL_UI_CHANGED",
        "warning",
        "MCP Apps _meta.ui.resourceUri names another UI resource: hosts show another view of the results.",
    ),
    (
        "META_CHANGED",
        "info",
        "A _meta key changed that lynxc does not interpret (or an MCP Apps key moved form, same "
        "effect); the message names the key.",
    ),
    (
        "TOOL_FIELD_UNKNOWN",
        "info",
        "A field that no MCP revision lynxc knows defines (on the tool, in annotations or in execution), "
        "or a taskSupport value outside forbidden/optional/required, changed; review it.",
    ),
)

# Diff rules of declared records (collections.json): what a change does to the clients of the five
# record tools and to the records a loader holds. Each purpose says why its level is what it is.
_COLLECTION_DIFF_RULES = (
    (
        "COLLECTION_REMOVED",
        "breaking",
        "A collection was removed: calls naming its resource_id fail and its records are no longer served.",
    ),
    ("COLLECTION_ADDED", "info", "A collection was added: clients find it with discover_resources."),
    (
        "COLLECTION_ID_CHANGED",
        "breaking",
        "A collection's resource id changed: clients pass the id to every record tool, so the old one fails.",
    ),
    (
        "COLLECTION_KEY_CHANGED",
        "breaking",
        "A collection's key changed: record ids, get_record arguments and references to the records "
        "change meaning, and the store must be reloaded.",
    ),
    (
        "COLLECTION_FIELD_REMOVED",
        "breaking",
        "A field was removed: filters, sorts and populate naming it fail, consumers reading it miss "
        "it, and records that still carry it are rejected (records forbid unknown fields).",
    ),
    (
        "COLLECTION_FIELD_ADDED_REQUIRED",
        "breaking",
        "A field was added as required: loading records written before it fails.",
    ),
    (
        "COLLECTION_FIELD_ADDED_OPTIONAL",
        "info",
        "A field was added as optional: existing records still load; clients may now filter on it.",
    ),
    (
        "COLLECTION_FIELD_BECAME_REQUIRED",
        "breaking",
        "A field became required: loading records without it fails.",
    ),
    (
        "COLLECTION_FIELD_BECAME_OPTIONAL",
        "breaking",
        "A field became optional: records may now lack it, and a client that reads it from every "
        "record breaks, as with OUTPUT_REQUIRED_REMOVED (loading is unaffected).",
    ),
    (
        "COLLECTION_FIELD_TYPE_CHANGED",
        "breaking",
        "A field's type changed: stored records no longer validate, and the filter operators and "
        "values clients send for it change.",
    ),
    (
        "COLLECTION_ENUM_VALUE_REMOVED",
        "breaking",
        "An enum field no longer allows a value: records holding it fail to load and filters on it "
        "match nothing.",
    ),
    (
        "COLLECTION_ENUM_VALUE_ADDED",
        "warning",
        "An enum field allows a new value: nothing fails, but consumers may receive a value they have "
        "not seen (as OUTPUT_ENUM_VALUE_ADDED for tool outputs).",
    ),
    (
        "COLLECTION_REFERENCE_CHANGED",
        "breaking",
        "A reference field points at another collection: stored keys name other records and populate "
        "returns records of another shape.",
    ),
    (
        "COLLECTION_CAPABILITY_REMOVED",
        "breaking",
        "A capability (search, query, get_one) was removed: calls of that tool on the collection fail.",
    ),
    ("COLLECTION_CAPABILITY_ADDED", "info", "A capability was added: one more tool serves the collection."),
    (
        "COLLECTION_SEARCH_FIELD_REMOVED",
        "breaking",
        "A keyword or meaning field was removed: searches that matched text there no longer find "
        "those records, a change of results no error reveals.",
    ),
    (
        "COLLECTION_SEARCH_FIELD_ADDED",
        "info",
        "A keyword or meaning field was added: searches match more text (after the next load).",
    ),
    (
        "COLLECTION_SORT_CHANGED",
        "warning",
        "The default order changed: the same records come back, but calls without a sort page "
        "through them in another order (as DEFAULT_CHANGED for tool inputs).",
    ),
    (
        "COLLECTION_TEXT_LIMIT_LOWERED",
        "warning",
        "max_text_chars was lowered or set: lists cut text fields shorter (marked in _sys.truncated; "
        "get_record still returns the whole text), so nothing fails.",
    ),
    (
        "COLLECTION_TEXT_LIMIT_RAISED",
        "info",
        "max_text_chars was raised or removed: lists carry more text, and answers grow.",
    ),
    ("COLLECTION_TITLE_CHANGED", "info", "A collection's title changed."),
    (
        "COLLECTION_DESCRIPTION_CHANGED",
        "info",
        "A collection's or a field's description changed; read it for changed meaning.",
    ),
    (
        "COLLECTION_REORDERED",
        "info",
        "Enum values, capabilities or search fields were reordered; nothing was added or removed.",
    ),
    (
        "COLLECTION_CHANGED",
        "warning",
        "A part of a collection changed in a way lynxc cannot classify; review it.",
    ),
)

# auth (issue 27): who may call what (tools/list `_meta` "lynxc/auth", per tool and per server)
# and which records a caller sees (collections.json `bind`). Judged by whether a caller who could
# call before still can; a change that widens what callers may do or see is a warning, so that
# a reviewer notices it even though no call fails.
_AUTH_DIFF_RULES = (
    (
        "TOOL_SCOPE_ADDED",
        "breaking",
        "A tool requires a scope it did not: callers holding only the old scopes are refused (403).",
    ),
    (
        "TOOL_SCOPE_REMOVED",
        "info",
        "A tool requires fewer scopes: every caller that could call it still can.",
    ),
    (
        "PARAM_BOUND_TO_CLAIM",
        "breaking",
        "A parameter now comes from a claim of the verified caller: callers that send it are refused, "
        "and callers whose token lacks the claim too.",
    ),
    (
        "PARAM_CLAIM_UNBOUND",
        "warning",
        "An identity-bound parameter is no longer bound to the caller's claim (now an optional "
        "parameter, or gone): no call fails, but callers may now choose the value their identity "
        "gave; check the tool still limits what each caller reaches.",
    ),
    (
        "PARAM_CLAIM_UNBOUND_REQUIRED",
        "breaking",
        "An identity-bound parameter became an ordinary required parameter: existing callers do not "
        "send it (as PARAM_ADDED_REQUIRED).",
    ),
    (
        "PARAM_CLAIM_CHANGED",
        "breaking",
        "An identity-bound parameter reads another claim, or a claim of another type: the same caller "
        "may now get another value, or be refused.",
    ),
    (
        "SERVER_AUTH_CHANGED",
        "breaking",
        "The server's caller authentication changed so that existing callers lose access: it now "
        "authenticates callers where anyone could call, or a method (oauth, api_keys) was removed.",
    ),
    (
        "SERVER_AUTH_METHOD_ADDED",
        "info",
        "The server accepts one more authentication method; every caller that could call still can.",
    ),
    (
        "SERVER_AUTH_REMOVED",
        "warning",
        "The server no longer authenticates callers: anyone reaching its port may call every tool; "
        "no call fails, but a reviewer must mean it.",
    ),
    (
        "SERVER_SCOPES_CHANGED",
        "info",
        "The scopes the server supports changed (what each tool requires is judged per tool).",
    ),
    (
        "COLLECTION_BIND_ADDED",
        "breaking",
        "A collection's field is now bound to a claim of the caller: each caller sees only the records "
        "whose field equals its claim, and loses the rest.",
    ),
    (
        "COLLECTION_BIND_CHANGED",
        "breaking",
        "A bound field of a collection reads another claim: the same caller now sees other records.",
    ),
    (
        "COLLECTION_BIND_REMOVED",
        "warning",
        "A collection's field is no longer bound to a claim: nothing fails, but every caller now sees "
        "records it could not before; a reviewer must mean it.",
    ),
)

# Diff rules of prompts and MCP resources (issue 31): what a change to a `prompts/list`,
# `resources/list` or `resources/templates/list` entry does to clients. MCP resources' rules are
# RESOURCE_URI_*, RESOURCE_TEMPLATE_* and RESOURCE_MIME_TYPE_CHANGED, never a records rule's ID
# (an acknowledgement names a rule, so a reused ID would change what an old one allows).
_SURFACE_DIFF_RULES = (
    ("PROMPT_REMOVED", "breaking", "A prompt was removed: clients getting it by name fail."),
    ("PROMPT_ADDED", "info", "A prompt was added."),
    (
        "PROMPT_ARGUMENT_REMOVED",
        "breaking",
        "A prompt's argument was removed: clients passing it get an error.",
    ),
    (
        "PROMPT_ARGUMENT_ADDED_REQUIRED",
        "breaking",
        "A required argument was added to a prompt: clients not passing it get an error.",
    ),
    ("PROMPT_ARGUMENT_ADDED_OPTIONAL", "info", "An optional argument was added to a prompt."),
    (
        "PROMPT_ARGUMENT_BECAME_REQUIRED",
        "breaking",
        "A prompt's argument is now required: clients not passing it get an error.",
    ),
    ("PROMPT_ARGUMENT_BECAME_OPTIONAL", "info", "A prompt's argument is now optional."),
    ("PROMPT_TITLE_CHANGED", "info", "A prompt's or an argument's title changed."),
    (
        "PROMPT_DESCRIPTION_CHANGED",
        "info",
        "A prompt's or an argument's description changed; read it for changed behaviour.",
    ),
    (
        "PROMPT_CHANGED",
        "warning",
        "A part of a prompt changed that lynxc cannot classify (icons, _meta, a later field); review it.",
    ),
    ("RESOURCE_URI_REMOVED", "breaking", "A static MCP resource was removed: reading its URI fails."),
    ("RESOURCE_URI_ADDED", "info", "A static MCP resource was added to resources/list."),
    (
        "RESOURCE_URI_NAME_CHANGED",
        "info",
        "A static MCP resource's name changed; clients read it by URI, which stays.",
    ),
    ("RESOURCE_URI_TITLE_CHANGED", "info", "A static MCP resource's title changed."),
    ("RESOURCE_URI_DESCRIPTION_CHANGED", "info", "A static MCP resource's description changed."),
    ("RESOURCE_URI_SIZE_CHANGED", "info", "A static MCP resource's size changed (its content did)."),
    (
        "RESOURCE_URI_CHANGED",
        "warning",
        "A part of a static MCP resource changed that lynxc cannot classify; review it.",
    ),
    (
        "RESOURCE_TEMPLATE_REMOVED",
        "breaking",
        "An MCP resource template was removed: reading the URIs it matched fails.",
    ),
    ("RESOURCE_TEMPLATE_ADDED", "info", "An MCP resource template was added."),
    (
        "RESOURCE_TEMPLATE_RENAMED",
        "info",
        "An MCP resource template has a new name and the same uriTemplate: its URIs read as before.",
    ),
    (
        "RESOURCE_TEMPLATE_NARROWED",
        "breaking",
        "A resource template no longer matches some URI it matched (by RFC 6570 expansion and "
        "matching): clients reading such URIs fail.",
    ),
    (
        "RESOURCE_TEMPLATE_WIDENED",
        "info",
        "A resource template matches more URIs, and every URI it matched still: nothing fails.",
    ),
    (
        "RESOURCE_TEMPLATE_REWRITTEN",
        "warning",
        "A resource template matches the same URIs written anew (a variable renamed): reads work, "
        "but completion requests name a template by its text.",
    ),
    ("RESOURCE_TEMPLATE_TITLE_CHANGED", "info", "An MCP resource template's title changed."),
    (
        "RESOURCE_TEMPLATE_DESCRIPTION_CHANGED",
        "info",
        "An MCP resource template's description changed.",
    ),
    (
        "RESOURCE_TEMPLATE_CHANGED",
        "warning",
        "A part of an MCP resource template changed that lynxc cannot classify; review it.",
    ),
    (
        "RESOURCE_MIME_TYPE_CHANGED",
        "breaking",
        "An MCP resource's or template's MIME type changed or was dropped: clients parse its contents by it.",
    ),
    (
        "RESOURCE_MIME_TYPE_DECLARED",
        "info",
        "An MCP resource or template now declares the MIME type it did not: clients no longer guess.",
    ),
)

# Lint rules of prompts and MCP resources (issue 31, compiler/lint/surface.py): what a client
# shows a user picking a prompt, and what an agent reads before reading a resource.
_SURFACE_LINT_RULES = (
    ("PROMPT_DESCRIPTION_MISSING", "error", "purpose", "A prompt needs a description: what it asks for."),
    (
        "PROMPT_DESCRIPTION_TOO_SHORT",
        "warning",
        "purpose",
        "A prompt's description says more than a few words: what it asks for and when to pick it.",
    ),
    (
        "PROMPT_DESCRIPTION_TOO_LONG",
        "warning",
        "conciseness",
        "A prompt's description stays within its budget.",
    ),
    (
        "PROMPT_USAGE_UNDESCRIBED",
        "info",
        "usage",
        "Say what the prompt produces or when to pick it (a user chooses among prompts by it).",
    ),
    (
        "PROMPT_ARGUMENT_UNDECLARED",
        "error",
        "parameters",
        "A prompt's description quotes only arguments it declares ({name}, {{ name }}, argument `name`).",
    ),
    (
        "PROMPT_PLACEHOLDER_TEXT",
        "warning",
        "hygiene",
        "No placeholder text (TODO, TBD, FIXME, lorem ipsum) in a prompt's descriptions.",
    ),
    (
        "PROMPT_ARGUMENT_DESCRIPTION_MISSING",
        "warning",
        "parameters",
        "Every prompt argument needs a description.",
    ),
    (
        "PROMPT_ARGUMENT_DESCRIPTION_RESTATES_NAME",
        "warning",
        "parameters",
        "A prompt argument's description adds meaning beyond its name.",
    ),
    ("RESOURCE_DESCRIPTION_MISSING", "error", "purpose", "An MCP resource or template needs a description."),
    (
        "RESOURCE_DESCRIPTION_TOO_SHORT",
        "warning",
        "purpose",
        "An MCP resource's description says more than a few words: what the data is.",
    ),
    (
        "RESOURCE_DESCRIPTION_TOO_LONG",
        "warning",
        "conciseness",
        "An MCP resource's description stays within its budget.",
    ),
    (
        "RESOURCE_CONTENT_UNDESCRIBED",
        "info",
        "completeness",
        "Say what an MCP resource holds or returns, or when to read it.",
    ),
    (
        "RESOURCE_VARIABLE_UNDECLARED",
        "error",
        "parameters",
        "A resource template's description quotes only its own variables ({name}).",
    ),
    (
        "RESOURCE_PLACEHOLDER_TEXT",
        "warning",
        "hygiene",
        "No placeholder text (TODO, TBD, FIXME, lorem ipsum) in an MCP resource's description.",
    ),
)

RULES: dict[str, Rule] = (
    {rule.id: rule for rule in _RULES}
    | {rule_id: Rule(rule_id, "error", "changelog", purpose) for rule_id, purpose in _CHANGELOG_RULES}
    | {rule_id: Rule(rule_id, level, category, purpose) for rule_id, level, category, purpose in _LINT_RULES}
    | {rule_id: Rule(rule_id, level, "diff", purpose) for rule_id, level, purpose in _DIFF_RULES}
    | {rule_id: Rule(rule_id, level, "diff", purpose) for rule_id, level, purpose in _COLLECTION_DIFF_RULES}
    | {rule_id: Rule(rule_id, level, "diff", purpose) for rule_id, level, purpose in _AUTH_DIFF_RULES}
    | {rule_id: Rule(rule_id, level, "diff", purpose) for rule_id, level, purpose in _SURFACE_DIFF_RULES}
    | {
        rule_id: Rule(rule_id, level, category, purpose)
        for rule_id, level, category, purpose in _SURFACE_LINT_RULES
    }
)


def diagnostic(rule_id: str, message: str, span: Span, hint: str | None = None) -> Diagnostic:
    """A diagnostic at the severity the catalogue gives its rule."""
    return Diagnostic(rule_id, RULES[rule_id].severity, message, span, hint)


# Rule IDs renamed by issue 31 (declared records are collections): RESOURCE_X became COLLECTION_X.
# A suppression or acknowledgement naming an old ID is told the new one, unless the old ID names a
# current rule (MCP resources have RESOURCE_* rules of their own).
RENAMED_RULES: dict[str, str] = {
    "RESOURCE_" + rule_id.removeprefix("COLLECTION_"): rule_id
    for rule_id in RULES
    if rule_id.startswith("COLLECTION_")
}


def renamed_rule(rule_id: str, span: Span) -> Diagnostic | None:
    """RULE_ID_RENAMED when `rule_id` is an old records rule ID that no current rule carries."""
    if rule_id in RULES or rule_id not in RENAMED_RULES:
        return None
    new = RENAMED_RULES[rule_id]
    return diagnostic(
        "RULE_ID_RENAMED",
        f"'{rule_id}' was renamed '{new}' (declared records are collections)",
        span,
        f"write {new}",
    )

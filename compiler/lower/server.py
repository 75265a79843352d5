"""Lower a parsed spec into the IR, with the semantic checks that need the whole server:
names, caps, description templates, tool references and backend bindings; declared collections
(and the records tools they bring) are lowered by `collections` and `records_tools`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lynxc.runtime.backend import BUILTIN_BACKENDS, BackendInfo, resolve_target
from lynxc.runtime.backends.sql.catalog import (
    DEFAULT_THREADS,
    DEFAULT_TIMEOUT_SECONDS,
    THREADS_SETTING,
    TIMEOUT_SETTING,
)

from ..backticks import code_spans
from ..diagnostics import Diagnostic, Result, Span, has_errors
from ..ir import (
    POSTGRES_DEFAULT_POOL_SIZE,
    POSTGRES_POOL_SETTING,
    AcknowledgementIR,
    AuthIR,
    CapIR,
    CollectionIR,
    HttpDataIR,
    ParamIR,
    ServerIR,
    SettingIR,
    SpecFileIR,
    ToolIR,
    canonical_json,
)
from ..limits import MAX_TOOLS
from ..rules import LINT_CATEGORIES, RULES, diagnostic, renamed_rule
from ..spec.load import SpecSource, ToolSource, load_spec
from ..spec.models import SQL_ENGINES, Cap, HttpBackend, SchemaNode, Server, SqlBackend, Suppression, Tool
from ..suggest import did_you_mean
from ..wire import TOOL_NAME
from .auth import (
    CALLER_CLAIMS_NODE,
    CALLER_CLAIMS_SETTING,
    bound_resources_without_auth,
    lower_server_auth,
    lower_tool_auth,
)
from .backend_probe import Declaration, read_declarations, refused_target
from .collections import lower_collections
from .examples import lower_examples
from .http import HTTP_BACKEND, check_http_tool, is_http_tool, lower_http_api, with_http_caps
from .mcp_resources import hidden_sql_diagnostics, hidden_sql_tools, lower_server_resources, resource_items
from .model_files import check_model_files, same_file, tool_module
from .prompts import collection_fields, lower_surface
from .records_tools import (
    DATA_DIR_SETTING,
    EMBEDDER_SETTING,
    EMBEDDERS,
    SYNTHESIZED_TOOLS,
    records_tools,
)
from .schema import SchemaLowering
from .sql.check import check_sql, is_sql_tool, server_files

if TYPE_CHECKING:
    from ..cache import Store

SERVER_NAME = re.compile(r"^[a-z][a-z0-9-]{0,63}$")
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
DESCRIPTION_SECTIONS = ("purpose", "usage", "behaviour", "returns")
ANNOTATION_KEYS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
SQL_BACKEND = "sql.query"
# What every SQL tool is held to unless its spec says otherwise (caps) and the settings its
# server gets (the duckdb data's own path settings are the spec's).
SQL_CAPS = {
    "max_rows": Cap(
        value=100, max=100_000, description="Rows returned at most; the rest are cut and flagged truncated."
    ),
    "max_output_json_bytes": Cap(
        value=1_048_576,
        unit="bytes",
        description="Bytes of JSON one result may take: rows past it are left out and flagged "
        "truncated (a single row over it is an error).",
    ),
}
SQL_SETTINGS = {
    THREADS_SETTING: SchemaNode(
        type="integer",
        minimum=1,
        maximum=256,
        default=DEFAULT_THREADS,
        description="Threads DuckDB may use for one statement; calls run concurrently besides.",
    ),
    TIMEOUT_SETTING: SchemaNode(
        type="number",
        exclusiveMinimum=0,
        maximum=3600,
        default=DEFAULT_TIMEOUT_SECONDS,
        description="Seconds a statement may run before DuckDB is interrupted and the call fails.",
    ),
}

SQLITE_TIMEOUT_DESCRIPTION = "Seconds a statement may run before SQLite stops it and the call fails."


# A Postgres server's implied settings: the same timeout, and the size of its connection pool.
POSTGRES_SETTINGS = {
    TIMEOUT_SETTING: SQL_SETTINGS[TIMEOUT_SETTING].model_copy(
        update={"description": "Seconds a statement may run before PostgreSQL cancels it and the call fails."}
    ),
    POSTGRES_POOL_SETTING: SchemaNode(
        type="integer",
        minimum=1,
        maximum=1000,
        default=POSTGRES_DEFAULT_POOL_SIZE,
        description="Connections to PostgreSQL the server keeps open at most; calls beyond them wait.",
    ),
}
# A SQLite server's implied setting: the timeout alone (SQLite runs in the server's threads).
SQLITE_SETTINGS = {
    TIMEOUT_SETTING: SQL_SETTINGS[TIMEOUT_SETTING].model_copy(
        update={"description": SQLITE_TIMEOUT_DESCRIPTION}
    )
}


def _implied_sql_settings(server: Server) -> dict[str, SchemaNode]:
    """The settings a server's SQL tools imply, by the engine it declares."""
    if server.postgres is not None:
        return POSTGRES_SETTINGS
    if server.sqlite is not None:
        return SQLITE_SETTINGS
    return SQL_SETTINGS


def backend_name(tool: Tool) -> str:
    """The backend a tool binds: a SQL tool binds the built-in that runs its statement, an HTTP
    tool the one that makes its request."""
    if isinstance(tool.backend, SqlBackend):
        return SQL_BACKEND
    return HTTP_BACKEND if isinstance(tool.backend, HttpBackend) else tool.backend


def _with_sql_caps(source: ToolSource) -> ToolSource:
    """A SQL tool's own caps, plus the SQL caps it leaves out."""
    if not is_sql_tool(source):
        return source
    caps = {**SQL_CAPS, **source.tool.caps}
    return ToolSource(source.doc, source.tool.model_copy(update={"caps": caps}), source.base)


def lower(
    source: SpecSource,
    *,
    check_backends: bool = True,
    build_settings: Mapping[str, str] | None = None,
    cache: Store | None = None,
) -> Result[ServerIR]:
    """`check_backends=False` skips importing backends and checking examples: `lynxc diff`
    reads old specs whose backends may no longer exist, and needs only their wire form (an
    example a change left behind is the build's error, and must not stop the review). `build_settings` are the
    setting values given on the build's command line (`--set`): only a database's are read.
    A `cache` keeps the checks of SQL statements (sql/check.py)."""
    diagnostics: list[Diagnostic] = []
    server = source.server.server
    doc = source.server_doc
    resources, resource_diagnostics = lower_collections(source.collections)
    diagnostics.extend(resource_diagnostics)
    mcp = lower_server_resources(source, resources, check_backends=check_backends)  # MCP resources
    diagnostics.extend(mcp.diagnostics)
    hidden_sql = [_with_sql_caps(t) for t in hidden_sql_tools(source, mcp.resources)]
    records = records_tools(resources, server.name) if resources else None
    synthesized = records.tools if records else ()
    declared_tools = tuple(with_http_caps(_with_sql_caps(t)) for t in source.tools)
    sql_tools = [t for t in declared_tools if is_sql_tool(t)] + hidden_sql
    http_tools = [t for t in declared_tools if is_http_tool(t)]
    # Every backend of the server is read at once: one child process for all user backends.
    targets = [
        target
        for t in (*declared_tools, *synthesized, *hidden_sql)
        if (target := resolve_target(backend_name(t.tool))) is not None
    ]
    declarations = read_declarations(targets, cache=cache) if check_backends else {}
    if not SERVER_NAME.match(server.name):
        diagnostics.append(
            diagnostic(
                "SERVER_NAME_INVALID",
                f"server name '{server.name}' must be lowercase letters, digits and dashes",
                doc.span(("server", "name")),
            )
        )
    if not SEMVER.match(server.version):
        diagnostics.append(
            diagnostic(
                "SERVER_VERSION_INVALID",
                f"version '{server.version}' is not semantic (MAJOR.MINOR.PATCH)",
                doc.span(("server", "version")),
            )
        )
    settings_lowering = SchemaLowering(doc, caps={})
    settings = []
    for name, node in server.settings.items():
        path = ("server", "settings", name)
        schema = settings_lowering.node(node, path)
        settings_lowering.check_default(node, schema, path)
        settings.append(SettingIR(name, canonical_json(schema), node.description))
    if records is not None:
        diagnostics.extend(_check_records_settings(source))
        for name, node in records.settings.items():
            if name not in server.settings:  # implied: declared by the records tools' own file
                implied = SchemaLowering(records.tools[0].doc, caps={}).node(
                    node, ("server", "settings", name)
                )
                settings.append(SettingIR(name, canonical_json(implied), node.description))
    diagnostics.extend(_check_engines(source))
    auth, auth_settings, auth_diagnostics = lower_server_auth(source)
    diagnostics.extend(auth_diagnostics)
    bound_resources = [(r.name, r.span) for r in resources if r.bind]
    diagnostics.extend(bound_resources_without_auth(source, bound_resources))
    if bound_resources or any(p.from_claim for t in source.tools for p in t.tool.parameters.values()):
        auth_settings[CALLER_CLAIMS_SETTING] = CALLER_CLAIMS_NODE
    for name, node in auth_settings.items():
        if name not in server.settings:  # implied, as the SQL settings are
            implied = SchemaLowering(doc, caps={}).node(node, ("server", "settings", name))
            settings.append(SettingIR(name, canonical_json(implied), node.description))
    base_url, http_auth, http_headers, http_settings, http_diagnostics = lower_http_api(source, http_tools)
    diagnostics.extend(http_diagnostics)
    for name, node in (http_settings if http_tools else {}).items():
        if name not in server.settings:  # implied, as the SQL settings are
            implied = SchemaLowering(doc, caps={}).node(node, ("server", "settings", name))
            settings.append(SettingIR(name, canonical_json(implied), node.description))
    if sql_tools:
        diagnostics.extend(_check_dsn_setting(source))
        for name, node in _implied_sql_settings(server).items():
            if name not in server.settings:  # implied, as the records settings are
                implied = SchemaLowering(doc, caps={}).node(node, ("server", "settings", name))
                settings.append(SettingIR(name, canonical_json(implied), node.description))
    diagnostics.extend(
        d
        if d.rule_id != "PARAM_DEFAULT_INVALID"
        else diagnostic("SETTING_DEFAULT_INVALID", d.message, d.span)
        for d in settings_lowering.diagnostics
    )
    for index, ack in enumerate(server.acknowledge):
        if renamed := renamed_rule(ack.rule, doc.span(("server", "acknowledge", index, "rule"))):
            diagnostics.append(renamed)
        elif RULES.get(ack.rule) is None or RULES[ack.rule].category != "diff":
            diagnostics.append(
                diagnostic(
                    "ACKNOWLEDGE_RULE_UNKNOWN",
                    f"'{ack.rule}' is not a diff rule",
                    doc.span(("server", "acknowledge", index, "rule")),
                    did_you_mean(ack.rule, [r for r, rule in RULES.items() if rule.category == "diff"])
                    or "see `lynxc rules`",
                )
            )
    for index, suppression in enumerate(server.lint.suppress if server.lint else []):
        diagnostics.extend(
            _check_suppression(suppression.rule, doc.span(("server", "lint", "suppress", index, "rule")))
        )
    if not source.tools and not resources:
        diagnostics.append(
            diagnostic("TOOL_NONE", "the server declares no tools", doc.span(("server",), key=True))
        )
    diagnostics.extend(_check_synthesized_names(source, resources, synthesized))
    if len(source.tools) + len(synthesized) > MAX_TOOLS >= len(source.tools):
        diagnostics.append(
            diagnostic(
                "TOOLS_TOO_MANY",
                f"the server declares {len(source.tools)} tools and its collections add "
                f"{len(synthesized)}, over the limit of {MAX_TOOLS}",
                doc.span(("server",), key=True),
            )
        )

    all_sources = (*declared_tools, *synthesized)
    diagnostics.extend(check_model_files(all_sources))
    synthesized_names = {t.tool.name for t in synthesized}
    tool_names = [t.tool.name for t in all_sources]
    setting_names = {s.name for s in settings}
    if server.postgres is not None:
        # The runtime's sql.query declares DuckDB's thread setting; a Postgres server has none.
        setting_names.add(THREADS_SETTING)
    tools: list[ToolIR] = []
    seen: set[str] = set()
    unchecked: set[str] = set()
    for tool_source in all_sources:
        name = tool_source.tool.name
        if name in seen and name not in synthesized_names:  # reported as COLLECTION_TOOL_NAME_TAKEN
            diagnostics.append(
                diagnostic(
                    "TOOL_NAME_DUPLICATE",
                    f"tool '{name}' is declared twice",
                    tool_source.doc.span((*tool_source.base, "name")),
                )
            )
        seen.add(name)
        tool_ir, tool_diagnostics = _lower_tool(
            tool_source,
            tool_names,
            setting_names,
            declarations,
            server.lint.suppress if server.lint else [],
            auth,
            tuple(server.transports),
        )
        diagnostics.extend(tool_diagnostics)
        tools.append(tool_ir)
        if has_errors(tool_diagnostics):
            unchecked.add(name)

    hidden_lowered = {}  # MCP resources read by SQL: checked and served as tools never listed
    for hidden in hidden_sql:
        hidden_ir, hidden_diagnostics = _lower_tool(
            hidden, tool_names, setting_names, declarations, [], auth, tuple(server.transports)
        )
        diagnostics.extend(hidden_sql_diagnostics(resource_items(source), hidden_diagnostics))
        if not has_errors(hidden_diagnostics):
            hidden_lowered[hidden_ir.name] = hidden_ir

    # A SQL tool's statement is checked once the tool lowered cleanly: the checks read its
    # lowered parameters and caps.
    sql = None
    spec_files = source.files
    if sql_tools:
        checked = check_sql(
            source,
            sql_tools,
            {**{t.name: t for t in tools if t.name not in unchecked}, **hidden_lowered},
            build_settings=build_settings,
            cache=cache,
        )
        diagnostics.extend(hidden_sql_diagnostics(resource_items(source), checked.diagnostics))
        tools = [checked.tools.get(t.name, t) for t in tools]
        sql = checked.data
        spec_files = server_files(source, checked.files)
    spec_files = server_files(source, [*spec_files, *mcp.read])

    http = None
    if http_tools and base_url is not None:
        requests = []
        for tool_source in http_tools:
            index = next(i for i, t in enumerate(tools) if t.name == tool_source.tool.name)
            if tools[index].name in unchecked:
                continue
            request, checked_tool, request_diagnostics = check_http_tool(tool_source, tools[index])
            diagnostics.extend(request_diagnostics)
            tools[index] = checked_tool
            requests.append(request)
        http = HttpDataIR(base_url, http_auth, http_headers, tuple(requests))

    surface = lower_surface(
        source,
        source.prompts,
        source.resources,
        collection_fields(c.collection for c in source.collections),
        check_backends=check_backends,
        cache=cache,
    )
    diagnostics.extend(surface.diagnostics)
    spec_files = server_files(source, [*spec_files, *surface.files])

    examples, test_fixture = (), None
    if check_backends:
        examples, test_fixture, example_diagnostics = lower_examples(
            source, [t for t in tools if t.name not in unchecked], setting_names, tool_names
        )
        diagnostics.extend(example_diagnostics)

    if has_errors(diagnostics):
        return Result(None, tuple(diagnostics))
    return Result(
        ServerIR(
            name=server.name,
            version=server.version,
            title=server.title,
            instructions=server.instructions,
            settings=tuple(settings),
            tools=tuple(tools),
            spec_files=tuple(SpecFileIR(path, digest) for path, digest in spec_files),
            version_span=doc.span(("server", "version")),
            acknowledgements=tuple(
                AcknowledgementIR(
                    ack.version, ack.rule, ack.reason, doc.span(("server", "acknowledge", i, "rule"))
                )
                for i, ack in enumerate(server.acknowledge)
            ),
            collections=resources,
            sql=sql,
            auth=auth,
            transports=tuple(server.transports),
            http=http,
            examples=examples,
            test_fixture=test_fixture,
            prompts=surface.prompts,
            completions_json=surface.completions_json,
            mcp_resources=mcp.resources,
            lint_suppressions=tuple(
                (s.rule, s.reason) for s in (server.lint.suppress if server.lint else [])
            ),
        ),
        tuple(diagnostics),
    )


def _check_engines(source: SpecSource) -> list[Diagnostic]:
    """At most one database per server: the second declared is the one reported."""
    server = source.server.server
    declared = [name for name in SQL_ENGINES if getattr(server, name, None) is not None]
    doc = source.server_doc
    return [
        diagnostic(
            "SQL_ENGINE_CONFLICT",
            f"the server declares both {declared[0]} and {name}: its SQL tools read one database",
            doc.span(("server", name), key=True),
            "keep one; a second database is a second server",
        )
        for name in declared[1:]
    ]


def _check_dsn_setting(source: SpecSource) -> list[Diagnostic]:
    """The setting a Postgres DSN comes from is declared, as a string."""
    data = source.server.server.postgres
    if data is None:
        return []
    settings = source.server.server.settings
    node = settings.get(data.dsn.setting)
    if node is not None and node.type == "string":
        return []
    return [
        diagnostic(
            "SQL_SETTING_UNKNOWN",
            f"setting '{data.dsn.setting}' holds the database's connection string: declare it under "
            "server.settings as a string"
            + ("" if node is None else f" (it is declared as {node.type or 'untyped'})"),
            source.server_doc.span(("server", "postgres", "dsn", "setting")),
            did_you_mean(data.dsn.setting, list(settings)) if node is None else None,
        )
    ]


def _check_synthesized_names(
    source: SpecSource, resources: tuple[CollectionIR, ...], synthesized: tuple[ToolSource, ...]
) -> list[Diagnostic]:
    """A declared tool must not take the name of a records tool the server gets, nor the models
    file of a resource's record (models/records_<name>.py)."""
    given = {t.tool.name for t in synthesized}
    models = {same_file(r.model): r for r in resources}
    found = []
    for tool_source in source.tools:
        name = tool_source.tool.name
        span = tool_source.doc.span((*tool_source.base, "name"))
        if name in given:
            found.append(
                diagnostic(
                    "COLLECTION_TOOL_NAME_TAKEN",
                    f"tool '{name}' is one of the records tools a server with collections gets",
                    span,
                    "rename the tool; the records tools are "
                    + ", ".join(n for n in SYNTHESIZED_TOOLS if n in given),
                )
            )
        elif (resource := models.get(same_file(tool_module(name)))) is not None:
            found.append(
                diagnostic(
                    "COLLECTION_TOOL_NAME_TAKEN",
                    f"tool '{name}' would write models/{resource.model}.py, the record model of collection "
                    f"'{resource.name}'",
                    span,
                    "rename the tool",
                )
            )
    return found


def _check_records_settings(source: SpecSource) -> list[Diagnostic]:
    """data_dir and embedder, when the spec declares them, must be what the records tools read."""
    settings = source.server.server.settings
    doc = source.server_doc
    found = []
    data_dir = settings.get(DATA_DIR_SETTING)
    if data_dir is not None and data_dir.type != "string":
        found.append(
            diagnostic(
                "COLLECTION_SETTING_INVALID",
                f"setting '{DATA_DIR_SETTING}' is where the records store lives: it must be of type string",
                doc.span(("server", "settings", DATA_DIR_SETTING)),
                "declare it as {type: string, format: path}, or leave it out for the default",
            )
        )
    embedder = settings.get(EMBEDDER_SETTING)
    if embedder is not None and not _names_embedders(embedder):
        found.append(
            diagnostic(
                "COLLECTION_SETTING_INVALID",
                f"setting '{EMBEDDER_SETTING}' chooses the records embedder: a string among "
                + ", ".join(EMBEDDERS),
                doc.span(("server", "settings", EMBEDDER_SETTING)),
                f"declare it as {{type: string, enum: [{', '.join(EMBEDDERS)}]}}, or leave it out",
            )
        )
    return found


def _names_embedders(node: SchemaNode) -> bool:
    return node.type == "string" and (node.enum is None or all(v in EMBEDDERS for v in node.enum))


def _lower_tool(
    source: ToolSource,
    tool_names: list[str],
    setting_names: set[str],
    declarations: Mapping[str, Declaration],
    server_suppressions: list[Suppression],
    auth: AuthIR | None = None,
    transports: tuple[str, ...] = ("stdio", "http"),
) -> tuple[ToolIR, list[Diagnostic]]:
    tool, doc, base = source.tool, source.doc, source.base
    diagnostics: list[Diagnostic] = []
    if not TOOL_NAME.match(tool.name):
        diagnostics.append(
            diagnostic(
                "TOOL_NAME_INVALID",
                f"tool name '{tool.name}' does not match [A-Za-z0-9_.-]{{1,128}}",
                doc.span((*base, "name")),
            )
        )
    caps = _lower_caps(tool.caps, source, diagnostics)
    cap_values = {cap.name: cap.value for cap in caps}
    # `caps.NAME` is the value in force (the default); `caps.NAME.max` the most a caller may ask,
    # only where the cap declares one (schema lowering reports a reference to an undeclared max).
    cap_refs = {
        **cap_values,
        **{f"{name}.max": cap.max for name, cap in tool.caps.items() if cap.max is not None},
    }

    lowering = SchemaLowering(doc, cap_refs)
    input_schema = lowering.input_schema(tool.parameters, (*base, "parameters"))
    output_schema = None
    if tool.output is not None:
        output_schema = lowering.output_schema(tool.output, (*base, "output"))
    description = "\n\n".join(
        lowering.text(text, (*base, "description", section))
        for section in DESCRIPTION_SECTIONS
        if (text := getattr(tool.description, section))
    )
    diagnostics.extend(lowering.diagnostics)

    known_words = _schema_words(input_schema) | _schema_words(output_schema) | set(cap_values) | setting_names
    diagnostics.extend(_check_tool_references(source, tool_names, known_words))

    target = resolve_target(backend_name(tool))
    if tool.backend == HTTP_BACKEND:  # the built-in that makes requests needs the request
        diagnostics.append(
            diagnostic(
                "HTTP_OPERATION_MISSING",
                f"'{HTTP_BACKEND}' makes the request of an HTTP tool: write it as "
                f"backend: {{http: {{method: ..., path: ...}}}}",
                doc.span((*base, "backend")),
            )
        )
    elif tool.backend == SQL_BACKEND:  # the built-in that runs SQL needs the statement beside it
        diagnostics.append(
            diagnostic(
                "SQL_SOURCE_MISSING",
                f"'{SQL_BACKEND}' runs the statement of a SQL tool: write it as backend: {{sql: ...}}",
                doc.span((*base, "backend")),
            )
        )
    elif target is None:
        diagnostics.append(
            diagnostic(
                "BACKEND_UNKNOWN",
                f"'{tool.backend}' is neither a built-in backend nor 'package.module:function'",
                doc.span((*base, "backend")),
                did_you_mean(tool.backend, BUILTIN_BACKENDS)
                or "built-in: " + ", ".join(sorted(BUILTIN_BACKENDS)),
            )
        )
    elif (read := declarations.get(target) or refused_target(target)) is not None:
        diagnostics.extend(_check_backend(source, read, setting_names))

    for index, suppression in enumerate(tool.lint.suppress if tool.lint else []):
        diagnostics.extend(
            _check_suppression(suppression.rule, doc.span((*base, "lint", "suppress", index, "rule")))
        )
    annotations = tuple(
        (key, value)
        for key in ANNOTATION_KEYS
        if tool.annotations is not None and (value := getattr(tool.annotations, key)) is not None
    )
    scopes, claims, auth_diagnostics = lower_tool_auth(
        source, auth, transports, dict(annotations), input_schema
    )
    diagnostics.extend(auth_diagnostics)
    if claims:  # the caller never sends them, and the call never runs without them
        bound = {claim.name for claim in claims}
        input_schema["required"] = [
            *input_schema.get("required", []),
            *(
                name
                for name in input_schema["properties"]
                if name in bound and name not in input_schema.get("required", [])
            ),
        ]
    params = tuple(
        ParamIR(
            name,
            parameter.required or parameter.from_claim is not None,
            doc.span((*base, "parameters", name), key=True),
        )
        for name, parameter in tool.parameters.items()
    )
    tool_ir = ToolIR(
        name=tool.name,
        title=tool.title,
        description=description,
        annotations=annotations,
        input_schema_json=canonical_json(input_schema),
        output_schema_json=canonical_json(output_schema) if output_schema is not None else None,
        caps=tuple(caps),
        params=params,
        backend=backend_name(tool),
        backend_target=target or "",
        span=doc.span((*base, "name")),
        description_sources=tuple(lowering.sources),
        suppressions=tuple(
            (s.rule, s.reason) for s in [*server_suppressions, *(tool.lint.suppress if tool.lint else [])]
        ),
        scopes=scopes,
        claims=claims,
    )
    return tool_ir, diagnostics


def _check_suppression(rule_id: str, span: Span) -> list[Diagnostic]:
    if renamed := renamed_rule(rule_id, span):
        return [renamed]
    if RULES.get(rule_id) is not None and RULES[rule_id].category in LINT_CATEGORIES:
        return []
    lint_rules = [r for r, rule in RULES.items() if rule.category in LINT_CATEGORIES]
    return [
        diagnostic(
            "SUPPRESSION_RULE_UNKNOWN",
            f"'{rule_id}' is not a lint rule",
            span,
            did_you_mean(rule_id, lint_rules) or "see `lynxc rules`",
        )
    ]


def _lower_caps(caps: Mapping[str, Cap], source: ToolSource, diagnostics: list[Diagnostic]) -> list[CapIR]:
    lowered = []
    for name, cap in caps.items():
        hard_max = cap.max if cap.max is not None else cap.value
        if cap.value > hard_max or cap.value < 0:
            diagnostics.append(
                diagnostic(
                    "CAP_VALUE_EXCEEDS_MAX",
                    f"cap '{name}' has value {cap.value} outside 0..{hard_max}",
                    source.doc.span((*source.base, "caps", name, "value")),
                )
            )
        lowered.append(CapIR(name, cap.value, hard_max, cap.unit, cap.description))
    return lowered


def _schema_words(schema: Any) -> set[str]:
    """Property names and string enum values anywhere in a schema: words a description may quote."""
    words: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                words.update(value)
            if key in ("enum", "examples", "default") and isinstance(value, list):
                words.update(v for v in value if isinstance(v, str))
            if key == "default" and isinstance(value, str):
                words.add(value)
            words |= _schema_words(value)
    elif isinstance(schema, list):
        for item in schema:
            words |= _schema_words(item)
    return words


def _check_tool_references(
    source: ToolSource, tool_names: Iterable[str], known_words: set[str]
) -> list[Diagnostic]:
    """A bare identifier in backticks that is not one of the tool's own words names a tool."""
    names = set(tool_names)
    found = []
    for section in DESCRIPTION_SECTIONS:
        for span in code_spans(getattr(source.tool.description, section) or ""):
            word = span.group(1).strip()
            if (
                not IDENTIFIER.match(word)
                or word in names
                or word in known_words
                or word in ("true", "false", "null")
            ):
                continue
            found.append(
                diagnostic(
                    "TOOL_REFERENCE_UNKNOWN",
                    f"the description quotes `{word}`, which is no tool of this server",
                    source.doc.span((*source.base, "description", section)),
                    did_you_mean(word, names) or "tools: " + ", ".join(sorted(names)),
                )
            )
    return found


def _check_backend(source: ToolSource, read: Declaration, setting_names: set[str]) -> list[Diagnostic]:
    span = source.doc.span((*source.base, "backend"))
    if read.info is None and read.rule_id is not None:
        return [diagnostic(read.rule_id, read.message or "", span, read.hint)]
    if read.info is None:  # unread: an import before it in the same child hung or ended it
        return []
    return list(_binding_problems(source, read.info, setting_names, span))


def _binding_problems(
    source: ToolSource, info: BackendInfo, setting_names: set[str], span
) -> Iterable[Diagnostic]:
    tool, doc, base = source.tool, source.doc, source.base
    declared = set(tool.parameters)
    if info.params is not None:
        for name in sorted(declared - info.params):
            yield diagnostic(
                "BACKEND_PARAM_UNSUPPORTED",
                f"backend '{backend_name(tool)}' does not honour parameter '{name}'",
                doc.span((*base, "parameters", name), key=True),
                did_you_mean(name, info.params - declared) or "it honours: " + ", ".join(sorted(info.params)),
            )
    for name in sorted(info.required_params - declared):
        yield diagnostic(
            "BACKEND_PARAM_MISSING", f"backend '{backend_name(tool)}' needs parameter '{name}'", span
        )
    for name in sorted(set(tool.caps) - info.caps):
        yield diagnostic(
            "BACKEND_CAP_UNSUPPORTED",
            f"backend '{backend_name(tool)}' does not enforce cap '{name}'",
            doc.span((*base, "caps", name), key=True),
            did_you_mean(name, info.caps - set(tool.caps))
            or ("it enforces: " + ", ".join(sorted(info.caps)) if info.caps else "it enforces no caps"),
        )
    for name in sorted(info.required_caps - set(tool.caps)):
        yield diagnostic("BACKEND_CAP_MISSING", f"backend '{backend_name(tool)}' needs cap '{name}'", span)
    for name in sorted(info.settings - setting_names):
        yield diagnostic(
            "BACKEND_SETTING_MISSING",
            f"backend '{backend_name(tool)}' reads server setting '{name}', "
            "which the server does not declare",
            span,
        )


def compile_spec(
    path: Path,
    *,
    check_backends: bool = True,
    build_settings: Mapping[str, str] | None = None,
    cache: Store | None = None,
    legacy_records: bool = False,
) -> Result[ServerIR]:
    loaded = load_spec(path, cache, legacy_records=legacy_records)
    if loaded.value is None:
        return Result(None, loaded.diagnostics)
    lowered = lower(loaded.value, check_backends=check_backends, build_settings=build_settings, cache=cache)
    return Result(lowered.value, loaded.diagnostics + lowered.diagnostics)

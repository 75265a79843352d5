"""Lower a server's MCP resources (`resources:`, issue 31) into McpResourceIR, with their checks.

A resource is data a client reads by URI: static (`uri`, listed by resources/list) or
templated (`uri_template`, RFC 6570, listed by resources/templates/list), served from exactly
one source:

- `file`: a file beside the spec (static only), copied into the build under `resource_files/`
  (text as is, binary content as base64 text: every generated file is text);
- `text`: the content itself; with a template, a sandboxed Jinja2 template over its variables;
- `record`: one record of a declared collection, the template's one variable being its key;
- `sql`: one statement over the server's SQL data, its parameters exactly the template's
  variables; it is checked by the SQL lowering as a hidden tool (`sql_tool_sources`), and served
  by the SQL engine (the first row, as a JSON object);
- `function`: 'package.module:function', probed like a Python backend.

Each entry's `wire` is exactly its list entry (resources.json), its `source` how the runtime
reads it (resource_sources.json, runtime/resources.py).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from lynxc.runtime.prompt_templates import template_environment
from lynxc.runtime.resource_media import RESOURCE_FILES_DIR, SQL_TOOL_PREFIX, is_text_mime, uri_templates

from ..diagnostics import Diagnostic, Span
from ..ir import McpResourceIR, canonical_json
from ..rules import diagnostic
from ..spec.source import NodePath, SourceDoc
from ..spec.surface import Resource

_SOURCES = ("file", "text", "record", "sql", "function")
_TOKEN = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*"
MIME_TYPE = re.compile(rf"^{_TOKEN}/{_TOKEN}(\s*;\s*{_TOKEN}=[^;\s]+)*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*$")
_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_FILE_NAME = re.compile(r"[^A-Za-z0-9._-]")


class ResourceItem(Protocol):
    """One `resources:` entry as the spec loader gives it: its model and where it stands."""

    doc: SourceDoc
    base: NodePath

    @property
    def resource(self) -> Resource: ...


@dataclass(frozen=True)
class McpResourceSource:
    doc: SourceDoc
    resource: Resource
    base: NodePath


@dataclass(frozen=True)
class ResourceContext:
    """What the checks need of the rest of the server."""

    spec_dir: Path
    collections: Mapping[str, str] = field(default_factory=dict)  # name -> its resource id
    collection_spans: Mapping[str, Span] = field(default_factory=dict)
    sql_data: bool = False  # the server declares SQL data (duckdb, postgres or sqlite)
    # target -> a problem reading it (None: fine); None: functions are not probed (lynxc diff)
    probe: Callable[[list[str]], Mapping[str, str | None]] | None = None


@dataclass
class LoweredResources:
    resources: tuple[McpResourceIR, ...] = ()
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # build path -> text (copied files)
    read: list[tuple[str, str]] = field(default_factory=list)  # (display path, sha256) of files read


def lower_mcp_resources(items: Iterable[ResourceItem], context: ResourceContext) -> LoweredResources:
    out = LoweredResources()
    items = list(items)
    names: dict[str, Span] = {}
    addresses: dict[str, Span] = {}
    functions: dict[str, list[tuple[ResourceItem, Span]]] = {}
    lowered: list[McpResourceIR] = []
    for item in items:
        r = item.resource
        span = _span(item, ("name",))
        if r.name in names:
            out.diagnostics.append(
                diagnostic(
                    "MCP_RESOURCE_NAME_DUPLICATE",
                    f"resource '{r.name}' is declared twice (first at {names[r.name]})",
                    span,
                )
            )
        names.setdefault(r.name, span)
        problems: list[Diagnostic] = []
        address = _check_address(item, problems)
        if address is not None:
            if address in addresses:
                key = "uri" if r.uri is not None else "uri_template"
                problems.append(
                    diagnostic(
                        "MCP_RESOURCE_URI_DUPLICATE",
                        f"resource '{r.name}': {address!r} is already declared at {addresses[address]}",
                        _span(item, (key,)),
                    )
                )
            addresses.setdefault(address, _span(item, ("uri" if r.uri is not None else "uri_template",)))
        variables = _template_variables(r)
        if not MIME_TYPE.match(r.mime_type):
            problems.append(
                diagnostic(
                    "MCP_RESOURCE_MIME_TYPE_INVALID",
                    f"resource '{r.name}': mime_type {r.mime_type!r} is not `type/subtype`",
                    _span(item, ("mime_type",)),
                    "e.g. text/markdown, application/json, image/png",
                )
            )
        kinds = [kind for kind in _SOURCES if getattr(r, kind) is not None]
        if len(kinds) != 1:
            problems.append(
                diagnostic(
                    "MCP_RESOURCE_SOURCE_ONE_OF",
                    f"resource '{r.name}' declares {' and '.join(kinds) if kinds else 'no source'}: "
                    f"it needs exactly one of {', '.join(_SOURCES)}",
                    _span(item, (kinds[1],) if len(kinds) > 1 else ("name",), key=True),
                )
            )
            out.diagnostics.extend(problems)
            continue
        kind = kinds[0]
        source: dict[str, Any] | None = None
        size: int | None = None
        if address is not None and variables is not None:
            source, size = _SOURCE_LOWERING[kind](item, variables, context, out, problems)
        if kind == "function" and r.function is not None and _TARGET.match(r.function):
            functions.setdefault(r.function, []).append((item, _span(item, ("function",))))
        out.diagnostics.extend(problems)
        if problems or source is None or address is None:
            continue
        copied = tuple((path, out.files[path]) for path in [source.get("path")] if path in out.files)
        lowered.append(_resource_ir(item, source, size, copied))
    if context.probe is not None and functions:
        for target, problem in context.probe(list(functions)).items():
            if problem is None:
                continue
            for item, span in functions.get(target, []):
                out.diagnostics.append(
                    diagnostic(
                        "MCP_RESOURCE_FUNCTION_INVALID",
                        f"resource '{item.resource.name}': {problem}",
                        span,
                        "an async function (variables: dict[str, str], ctx) -> str, bytes or a JSON value",
                    )
                )
    out.resources = tuple(lowered)
    return out


def sql_tool_sources(items: Iterable[ResourceItem]) -> list[Any]:
    """A hidden SQL tool for each resource read by SQL, so that its statement is checked (and
    then run) exactly like a SQL tool's: named `SQL_TOOL_PREFIX + name`, one string parameter per
    variable, `result: one`. It is in sql.json, never in tools.json."""
    from ..spec.load import ToolSource
    from ..spec.models import Description, Parameter, SqlBackend, Tool

    out = []
    for item in items:
        r = item.resource
        if r.sql is None:
            continue
        variables = _template_variables(r) or []
        tool = Tool(
            name=sql_tool_name(r.name),
            description=Description(purpose=f"Reads the resource {r.name}."),
            backend=SqlBackend(sql=r.sql, result="one"),
            parameters={
                name: Parameter.model_validate(
                    {"type": "string", "description": f"The URI variable {name}.", "required": True}
                )
                for name in variables
            },
        )
        out.append(ToolSource(item.doc, tool, item.base))
    return out


def sql_tool_name(resource: str) -> str:
    return SQL_TOOL_PREFIX + _FILE_NAME.sub("_", resource)


def _sdk_templates() -> tuple[Any, Any]:
    module = uri_templates()
    return module.InvalidUriTemplate, module.UriTemplate


# --- the address ---------------------------------------------------------------------------------


def _check_address(item: ResourceItem, problems: list[Diagnostic]) -> str | None:
    r = item.resource
    if (r.uri is None) == (r.uri_template is None):
        both = r.uri is not None
        problems.append(
            diagnostic(
                "MCP_RESOURCE_URI_ONE_OF",
                f"resource '{r.name}' declares "
                + ("both uri and uri_template" if both else "neither uri nor uri_template")
                + ": it needs exactly one",
                _span(item, ("uri_template",) if both else ("name",), key=True),
                "uri: a fixed URI (docs://guide); uri_template: an RFC 6570 template (pep://{number})",
            )
        )
        return None
    if r.uri is not None:
        problem = _uri_problem(r.uri)
        if problem is not None:
            problems.append(
                diagnostic(
                    "MCP_RESOURCE_URI_INVALID",
                    f"resource '{r.name}': uri {r.uri!r} {problem}",
                    _span(item, ("uri",)),
                    "e.g. docs://project/guide or file:///guide.md",
                )
            )
            return None
        if r.variables:
            problems.append(
                diagnostic(
                    "MCP_RESOURCE_VARIABLE_UNKNOWN",
                    f"resource '{r.name}' has a fixed uri, so it has no variables to describe",
                    _span(item, ("variables",), key=True),
                )
            )
        return r.uri
    InvalidUriTemplate, UriTemplate = _sdk_templates()

    assert r.uri_template is not None
    try:
        template = UriTemplate.parse(r.uri_template)
    except InvalidUriTemplate as err:
        problems.append(
            diagnostic(
                "MCP_RESOURCE_TEMPLATE_INVALID",
                f"resource '{r.name}': uri_template {r.uri_template!r}: {err}",
                _value_span(item, ("uri_template",), err.position),
            )
        )
        return None
    names = template.variable_names
    if not names:
        problems.append(
            diagnostic(
                "MCP_RESOURCE_TEMPLATE_INVALID",
                f"resource '{r.name}': uri_template {r.uri_template!r} has no variables",
                _span(item, ("uri_template",)),
                "a URI without variables is a static resource: write it as uri",
            )
        )
        return None
    problem = _uri_problem(r.uri_template.split("{", 1)[0] + "x")
    if problem is not None and not r.uri_template.startswith("{"):
        problems.append(
            diagnostic(
                "MCP_RESOURCE_TEMPLATE_INVALID",
                f"resource '{r.name}': uri_template {r.uri_template!r} {problem}",
                _span(item, ("uri_template",)),
            )
        )
        return None
    for name in r.variables:
        if name not in names:
            problems.append(
                diagnostic(
                    "MCP_RESOURCE_VARIABLE_UNKNOWN",
                    f"resource '{r.name}': variable '{name}' is not in uri_template {r.uri_template!r} "
                    f"(its variables: {', '.join(names)})",
                    _span(item, ("variables", name), key=True),
                )
            )
    return r.uri_template


def _uri_problem(uri: str) -> str | None:
    if not uri or any(c.isspace() for c in uri):
        return "is empty or holds whitespace"
    scheme, _, rest = uri.partition(":")
    if not rest or not _SCHEME.match(scheme):
        return "is not an absolute URI (it needs a scheme, as in docs://guide)"
    try:
        urlsplit(uri)
    except ValueError as err:
        return f"is not a URI ({err})"
    return None


def _template_variables(r: Resource) -> list[str] | None:
    """The template's variables; [] for a static resource; None when the template is invalid."""
    if r.uri_template is None:
        return []
    InvalidUriTemplate, UriTemplate = _sdk_templates()

    try:
        return list(UriTemplate.parse(r.uri_template).variable_names)
    except InvalidUriTemplate:
        return None


# --- the sources ---------------------------------------------------------------------------------

_Lowered = tuple[dict[str, Any] | None, int | None]


def _file(
    item: ResourceItem, variables: list[str], context: ResourceContext, out: LoweredResources, problems: list
) -> _Lowered:
    r = item.resource
    span = _span(item, ("file",))
    assert r.file is not None
    if variables:
        problems.append(
            diagnostic(
                "MCP_RESOURCE_FILE_TEMPLATED",
                f"resource '{r.name}' reads a file, which is one content: it takes a fixed uri, "
                "not a uri_template",
                span,
            )
        )
        return None, None
    base = context.spec_dir.resolve()
    candidate = Path(r.file)
    resolved = (base / candidate).resolve()
    if candidate.is_absolute() or not resolved.is_relative_to(base):
        problem = "must be a path relative to the spec's folder, inside it"
    elif not resolved.is_file():
        problem = "is not a file beside the spec"
    else:
        problem = None
    if problem is not None:
        problems.append(
            diagnostic("MCP_RESOURCE_FILE_MISSING", f"resource '{r.name}': file '{r.file}' {problem}", span)
        )
        return None, None
    size = resolved.stat().st_size
    if size > r.max_bytes:
        problems.append(_too_large(item, f"file '{r.file}' holds {size} bytes", span))
        return None, None
    data = resolved.read_bytes()
    text = is_text_mime(r.mime_type)
    if text:
        try:
            content = data.decode("utf-8")
        except UnicodeDecodeError as err:
            problems.append(
                diagnostic(
                    "MCP_RESOURCE_FILE_MISSING",
                    f"resource '{r.name}': file '{r.file}' is not UTF-8 text ({err.reason}), "
                    f"as its mime_type {r.mime_type} says",
                    span,
                    "a binary file takes a binary mime_type (image/png, application/pdf, ...)",
                )
            )
            return None, None
    else:
        content = base64.b64encode(data).decode("ascii")
    import hashlib

    from ..spec.discover import display_path

    path = f"{RESOURCE_FILES_DIR}/{_FILE_NAME.sub('_', r.name)}{'' if text else '.base64'}"
    out.files[path] = content
    out.read.append((display_path(resolved), hashlib.sha256(data).hexdigest()))
    return {"kind": "file", "path": path, "encoding": "text" if text else "base64"}, size


def _text(
    item: ResourceItem, variables: list[str], context: ResourceContext, out: LoweredResources, problems: list
) -> _Lowered:
    r = item.resource
    assert r.text is not None
    span = _span(item, ("text",))
    if not variables:
        size = len(r.text.encode())
        if size > r.max_bytes:
            problems.append(_too_large(item, f"text holds {size} bytes", span))
            return None, None
        return {"kind": "text", "text": r.text}, size
    problem = template_problem(r.text, variables)
    if problem is not None:
        problems.append(
            diagnostic("MCP_RESOURCE_TEXT_TEMPLATE_INVALID", f"resource '{r.name}': text {problem}", span)
        )
        return None, None
    return {"kind": "template", "template": r.text}, None


def template_problem(text: str, variables: list[str]) -> str | None:
    """Why `text` is no sandboxed Jinja2 template over exactly these variables, or None."""
    import jinja2
    from jinja2 import meta

    from .prompts import unsafe_attributes

    try:
        parsed = template_environment().parse(text)  # the prompts' sandbox: one for every template
    except jinja2.TemplateSyntaxError as err:
        return f"is not a valid Jinja2 template (line {err.lineno}: {err.message})"
    unsafe = unsafe_attributes(parsed)
    if unsafe:
        attribute, line = unsafe[0]
        return f"reads '{attribute}' (line {line}): a template reads its variables, never Python's attributes"
    unknown = sorted(meta.find_undeclared_variables(parsed) - set(variables))
    if unknown:
        return (
            f"uses {', '.join(unknown)}, which the uri_template does not bind "
            f"(its variables: {', '.join(variables)})"
        )
    return None


def _record(
    item: ResourceItem, variables: list[str], context: ResourceContext, out: LoweredResources, problems: list
) -> _Lowered:
    r = item.resource
    assert r.record is not None
    collection = r.record.collection
    if collection not in context.collections:
        from ..suggest import did_you_mean

        problems.append(
            diagnostic(
                "MCP_RESOURCE_COLLECTION_UNKNOWN",
                f"resource '{r.name}' reads collection '{collection}', which the server does not declare",
                _span(item, ("record", "collection")),
                did_you_mean(collection, list(context.collections))
                or f"collections: {', '.join(context.collections) or 'none'}",
            )
        )
        return None, None
    if len(variables) != 1:
        problems.append(
            diagnostic(
                "MCP_RESOURCE_RECORD_VARIABLES",
                f"resource '{r.name}' reads one record of '{collection}': its uri_template needs exactly "
                f"one variable, the record's key (it has {len(variables)})",
                _span(item, ("uri_template",) if r.uri_template is not None else ("uri",)),
                f"e.g. {collection}://{{key}}",
            )
        )
        return None, None
    return {
        "kind": "record",
        "collection": collection,
        "collection_id": context.collections[collection],
        "variable": variables[0],
    }, None


def _sql(
    item: ResourceItem, variables: list[str], context: ResourceContext, out: LoweredResources, problems: list
) -> _Lowered:
    r = item.resource
    assert r.sql is not None
    span = _span(item, ("sql",))
    if not context.sql_data:
        problems.append(
            diagnostic(
                "MCP_RESOURCE_SQL_DATA_MISSING",
                f"resource '{r.name}' runs SQL, but the server declares no database",
                span,
                "declare it under server: duckdb, postgres or sqlite, as for SQL tools",
            )
        )
        return None, None
    from .sql.statements import parameter_occurrences

    try:
        used = {o.name for o in parameter_occurrences(r.sql)}
    except Exception:  # a statement DuckDB cannot tokenize: the SQL check reports it
        used = set()
    missing, unknown = sorted(set(variables) - used), sorted(used - set(variables))
    if missing or unknown:
        said = []
        if unknown:
            said.append(f"uses ${', $'.join(unknown)}, not a variable of its URI")
        if missing:
            said.append(f"does not use ${', $'.join(missing)}")
        problems.append(
            diagnostic(
                "MCP_RESOURCE_SQL_PARAMETERS",
                f"resource '{r.name}': the statement {' and '.join(said)}",
                span,
                "its parameters are exactly the uri_template's variables, as $name"
                + (" (a fixed uri: none)" if not variables else ""),
            )
        )
        return None, None
    return {"kind": "sql", "tool": sql_tool_name(r.name)}, None


def _function(
    item: ResourceItem, variables: list[str], context: ResourceContext, out: LoweredResources, problems: list
) -> _Lowered:
    r = item.resource
    assert r.function is not None
    if not _TARGET.match(r.function):
        problems.append(
            diagnostic(
                "MCP_RESOURCE_FUNCTION_INVALID",
                f"resource '{r.name}': function {r.function!r} is not 'package.module:function'",
                _span(item, ("function",)),
            )
        )
        return None, None
    return {"kind": "function", "target": r.function}, None


_SOURCE_LOWERING: dict[str, Callable[..., _Lowered]] = {
    "file": _file,
    "text": _text,
    "record": _record,
    "sql": _sql,
    "function": _function,
}


# --- the IR --------------------------------------------------------------------------------------


def _resource_ir(
    item: ResourceItem, source: dict[str, Any], size: int | None, files: tuple[tuple[str, str], ...]
) -> McpResourceIR:
    r = item.resource
    templated = r.uri_template is not None
    wire: dict[str, Any] = {"uriTemplate": r.uri_template} if templated else {"uri": r.uri}
    wire["name"] = r.name
    if r.title is not None:
        wire["title"] = r.title
    wire["description"] = r.description
    wire["mimeType"] = r.mime_type
    if size is not None:
        wire["size"] = size
    address = {"uri_template": r.uri_template} if templated else {"uri": r.uri}
    full = {
        "name": r.name,
        **address,
        "mime_type": r.mime_type,
        "text": is_text_mime(r.mime_type),
        "max_bytes": r.max_bytes,
        **source,
        **(
            {"variables": {name: v.description for name, v in r.variables.items() if v.description}}
            if any(v.description for v in r.variables.values())
            else {}
        ),
    }
    return McpResourceIR(
        name=r.name,
        templated=templated,
        wire_json=canonical_json(wire),
        span=_span(item, ("name",)),
        source_json=canonical_json(full),
        files=files,
    )


def resources_document(resources: Iterable[McpResourceIR]) -> dict[str, Any]:
    """resources.json without its header: exactly the two list answers."""
    resources = list(resources)
    return {
        "resources": [r.wire for r in resources if not r.templated],
        "resourceTemplates": [r.wire for r in resources if r.templated],
    }


def sources_document(resources: Iterable[McpResourceIR]) -> dict[str, Any]:
    """resource_sources.json without its header: how each resource is read, in declaration order."""
    return {"format": 1, "resources": [r.source for r in resources]}


# --- places --------------------------------------------------------------------------------------


def _span(item: ResourceItem, path: NodePath, *, key: bool = False) -> Span:
    return item.doc.span((*item.base, *path), key=key)


def _value_span(item: ResourceItem, path: NodePath, offset: int | None) -> Span:
    """Where character `offset` of a one-line string value stands (past its opening quote)."""
    span = _span(item, path)
    if offset is None:
        return span
    lines = item.doc.text.splitlines()
    quote = 0
    if 0 < span.line <= len(lines):
        line = lines[span.line - 1]
        if span.col - 1 < len(line) and line[span.col - 1] in "\"'":
            quote = 1
    return Span(span.file, span.line, span.col + quote + offset)


def _too_large(item: ResourceItem, what: str, span: Span) -> Diagnostic:
    r = item.resource
    return diagnostic(
        "MCP_RESOURCE_TOO_LARGE",
        f"resource '{r.name}': its {what}, over its max_bytes of {r.max_bytes}",
        span,
        "raise max_bytes, or serve a smaller content",
    )


# --- the server's lowering -----------------------------------------------------------------------


def resource_items(source: Any) -> list[ResourceItem]:
    """The spec's MCP resources (`source.resources`), each with its document and place."""
    return [
        item
        for item in getattr(source, "resources", ())
        if isinstance(getattr(item, "resource", None), Resource)
    ]


def lower_server_resources(
    source: Any, collections: Iterable[Any], *, check_backends: bool
) -> LoweredResources:
    """lower_mcp_resources for a whole spec: `collections` are the server's lowered collections
    (name and id); functions are probed unless `check_backends` is off (lynxc diff)."""
    server = source.server.server
    sql_data = any(getattr(server, engine, None) is not None for engine in ("duckdb", "postgres", "sqlite"))
    context = ResourceContext(
        spec_dir=Path(source.server_doc.file).parent,
        collections={c.name: c.id for c in collections},
        sql_data=sql_data,
        probe=_probe if check_backends else None,
    )
    return lower_mcp_resources(resource_items(source), context)


def _probe(targets: list[str]) -> dict[str, str | None]:
    """A problem with each function target, read as backends are (in a child process)."""
    from .backend_probe import read_declarations

    found = read_declarations(targets)
    # A resource function need not be declared with @backend: only a failed import is refused.
    return {
        target: None if read.info is not None or read.rule_id == "BACKEND_NOT_DECLARED" else read.message
        for target, read in found.items()
    }


def hidden_sql_diagnostics(
    items: Iterable[ResourceItem], diagnostics: Iterable[Diagnostic]
) -> list[Diagnostic]:
    """The SQL check's diagnostics, those about a resource's hidden tool placed at its `sql`
    (the tool's own keys do not exist in the spec: they fall back to the resource's entry)."""
    entries = {_span(item, ()): _span(item, ("sql",)) for item in items if item.resource.sql is not None}
    out = []
    for d in diagnostics:
        moved = entries.get(d.span)
        out.append(d if moved is None else Diagnostic(d.rule_id, d.severity, d.message, moved, d.hint))
    return out


def hidden_sql_tools(source: Any, lowered: Iterable[McpResourceIR]) -> list[Any]:
    """The hidden SQL tools of the resources that lowered cleanly (sql_tool_sources)."""
    names = {r.name for r in lowered if r.source.get("kind") == "sql"}
    return [
        tool
        for tool in sql_tool_sources(resource_items(source))
        if tool.tool.name in {sql_tool_name(n) for n in names}
    ]

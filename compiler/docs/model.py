"""What the pages show, as plain data: one `ServerDoc` per compiled server, read from its IR,
its exact tools/list wire form (compiler/wire.py), its lint score (`lynxc lint --score`) and its
changelog (compiler/review/changelog.py, as `lynxc build` writes changelog.json).

Every text here is still raw: the templates escape it (autoescape). What may be huge (a default,
an enum, an example, a description) is clipped to a bound here, so a hostile spec cannot make a
page of megabytes."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ir import CapIR, ServerIR, ToolIR
from ..lint.linter import lint_server
from ..lint.score import DimensionScore, ToolScore
from ..review.changelog import build_changelog, load_releases
from ..review.judge import HINT_DEFAULTS
from ..wire import wire_from_ir, wire_tool

MAX_TEXT = 20_000  # characters of one description shown
MAX_VALUE = 400  # characters of one JSON value shown (a default, an enum value, a bound)
MAX_JSON = 8_000  # characters of one JSON document shown (an example, a changelog value)
MAX_ENUM = 60  # enum values listed
MAX_TREE_DEPTH = 8  # levels of an output schema's tree
MAX_TREE_NODES = 400  # nodes of one output schema's tree

ANNOTATIONS = (  # MCP tool annotation -> badge text
    ("readOnlyHint", "read-only"),
    ("destructiveHint", "destructive"),
    ("idempotentHint", "idempotent"),
    ("openWorldHint", "open-world"),
)
_BOUNDS = (
    ("minimum", "≥"),
    ("exclusiveMinimum", ">"),
    ("maximum", "≤"),
    ("exclusiveMaximum", "<"),
    ("minLength", "length ≥"),
    ("maxLength", "length ≤"),
    ("minItems", "items ≥"),
    ("maxItems", "items ≤"),
    ("minProperties", "properties ≥"),
    ("maxProperties", "properties ≤"),
    ("pattern", "pattern"),
    ("format", "format"),
    ("multipleOf", "multiple of"),
)
_CAP_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
# A setting name whose words say it holds a secret: `api_token`, `client_secret`, `brave_api_key`
# (not `max_tokens`, not `sort_key`).
_SECRET_NAME = re.compile(
    r"(^|[_-])(secret|password|passwd|token|credentials?|(api|private|access|secret)[_-]?key)($|[_-])",
    re.IGNORECASE,
)
_SECRET_AUTH_KEYS = {"token", "value", "password", "client_secret"}
_RENAMED = re.compile(r"renamed to '([^']+)'")
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


def clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def show_json(value: Any, limit: int = MAX_VALUE, indent: int | None = None) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=indent is not None, indent=indent)
    return clip(text, limit)


def anchor(kind: str, name: str) -> str:
    """A stable id for an element of a page: `tool-search`; characters outside [A-Za-z0-9_.-]
    become dashes (tool names never have them: MCP allows only those). Kept whole up to 200
    characters, past MCP's 128 for a tool name. The ids of an element's parts put their word
    first (`h-tool-search`, its heading): a word after the name could be another tool's name
    (`search-h`)."""
    safe = _UNSAFE_ID.sub("-", name)[:200]
    return f"{kind}-{safe}"


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    required: bool
    description: str
    bounds: tuple[str, ...]
    default: str | None
    enum: tuple[str, ...]
    caps: tuple[str, ...]


@dataclass(frozen=True)
class TreeNode:
    name: str
    type: str
    required: bool
    description: str
    bounds: tuple[str, ...]
    children: tuple[TreeNode, ...]


@dataclass(frozen=True)
class Example:
    name: str
    arguments: str
    expect: str


@dataclass(frozen=True)
class Score:
    total: str
    tier: str
    dimensions: tuple[DimensionScore, ...]  # lint's own, as `lynxc lint --score` prints them


@dataclass(frozen=True)
class Cap:
    name: str
    value: int
    max: int
    unit: str
    description: str


@dataclass(frozen=True)
class Tool:
    name: str
    anchor: str
    title: str
    sections: tuple[str, ...]
    summary: str
    badges: tuple[tuple[str, str], ...]  # (css class, text): shown as words, not colour alone
    params: tuple[Param, ...]
    output: TreeNode | None
    caps: tuple[Cap, ...]
    examples: tuple[Example, ...]
    score: Score | None
    scopes: tuple[str, ...]
    wire: str  # the exact tools/list entry, pretty JSON


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool


@dataclass(frozen=True)
class Statement:
    tool: str
    tool_anchor: str
    statement: str
    params: tuple[tuple[str, str], ...]
    columns: tuple[Column, ...]
    result: str
    max_rows: int
    read_only: bool
    source: str


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    required: bool
    description: str
    values: tuple[str, ...]
    children: tuple[Field, ...]


@dataclass(frozen=True)
class Collection:
    name: str
    anchor: str
    title: str
    description: str
    key: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Prompt:
    name: str
    anchor: str
    title: str
    description: str
    arguments: tuple[tuple[str, bool, str], ...]  # (name, required, description)


@dataclass(frozen=True)
class Resource:
    name: str
    anchor: str
    title: str
    uri: str
    templated: bool
    description: str
    mime_type: str


@dataclass(frozen=True)
class Setting:
    name: str
    type: str
    description: str
    default: str | None  # None: no default, or a secret's (never shown)
    secret: bool
    required: bool


@dataclass(frozen=True)
class ChangeEntry:
    level: str
    breaking: bool
    rule: str
    message: str
    subject: str
    subject_link: str | None  # the current anchor on the server page, when it still exists
    path: str
    op: str
    before: str | None
    after: str | None
    hint: str
    renamed_to: str | None
    renamed_link: str | None


@dataclass(frozen=True)
class Version:
    version: str
    anchor: str
    date: str
    since: str | None
    breaking: int
    entries: tuple[ChangeEntry, ...]


@dataclass(frozen=True)
class ServerDoc:
    name: str
    title: str
    version: str
    description: str  # one line, for the index
    instructions: tuple[str, ...]  # sections
    tools: tuple[Tool, ...]
    statements: tuple[Statement, ...]
    collections: tuple[Collection, ...]
    prompts: tuple[Prompt, ...]
    resources: tuple[Resource, ...]
    settings: tuple[Setting, ...]
    versions: tuple[Version, ...]
    score: str
    tier: str
    transports: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)


def server_doc(server: ServerIR, project: Path) -> ServerDoc:
    """Everything the pages say of one compiled server."""
    wire = wire_from_ir(server, "")
    lint = lint_server(wire).score
    scores = {s.tool: s for s in lint.tools}
    examples: dict[str, list[Example]] = {}
    for example in server.examples:
        examples.setdefault(example.tool, []).append(
            Example(
                clip(example.name, MAX_VALUE),
                _pretty(example.arguments_json),
                _pretty(example.expect_json) if example.expect_json not in ("", "{}") else "",
            )
        )
    tools = tuple(_tool(tool, scores.get(tool.name), examples.get(tool.name, [])) for tool in server.tools)
    root = project.resolve()
    tool_names = {tool.name for tool in server.tools}
    releases, _ = load_releases(project, server.name)
    changelog = build_changelog(server, wire, releases)
    sections = _sections(server.instructions or "")
    return ServerDoc(
        name=server.name,
        title=clip(server.title or server.name, MAX_VALUE),
        version=server.version,
        description=clip(_first_line(server.instructions or ""), 300),
        instructions=sections,
        tools=tools,
        statements=_statements(server, root),
        collections=tuple(_collection(c) for c in server.collections),
        prompts=tuple(_prompt(p.wire_json) for p in server.prompts),
        resources=tuple(_resource(r.wire_json, r.templated) for r in server.mcp_resources),
        settings=_settings(server),
        versions=tuple(_version(entry, tool_names) for entry in changelog.versions),
        score=f"{lint.total:.2f}",
        tier=lint.tier,
        transports=server.transports,
        counts={
            "tools": len(tools),
            "read_only": sum(dict(t.annotations).get("readOnlyHint") is True for t in server.tools),
            "prompts": len(server.prompts),
            "resources": len(server.mcp_resources),
            "collections": len(server.collections),
        },
    )


def _pretty(text: str) -> str:
    try:
        return show_json(json.loads(text), MAX_JSON, indent=2)
    except ValueError:
        return clip(text, MAX_JSON)


def _sections(text: str) -> tuple[str, ...]:
    """A description's paragraphs (blank-line separated), each clipped, at most 50."""
    parts = [part.strip() for part in re.split(r"\n\s*\n", clip(text)) if part.strip()]
    return tuple(parts[:50])


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _tool(tool: ToolIR, score: ToolScore | None, examples: list[Example]) -> Tool:
    entry = wire_tool(tool)
    schema = tool.published_input_schema
    sections = _sections(tool.description)
    return Tool(
        name=tool.name,
        anchor=anchor("tool", tool.name),
        title=clip(tool.title or "", MAX_VALUE),
        sections=sections,
        summary=clip(sections[0] if sections else "", 300),
        badges=badges(dict(tool.annotations)),
        params=_params(schema, tool.caps),
        output=_tree("result", tool.output_schema, True, [0]) if tool.output_schema else None,
        caps=tuple(Cap(c.name, c.value, c.max, c.unit, clip(c.description, MAX_VALUE)) for c in tool.caps),
        examples=tuple(examples),
        score=_score(score),
        scopes=tool.scopes,
        wire=show_json(entry, MAX_JSON * 8, indent=2),
    )


def badges(annotations: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The hints a tool declares true, and the ones MCP clients assume of a tool that declares
    nothing: destructive (unless read-only) and open-world. A page silent on those would read
    as safer than clients take the tool to be."""
    out = []
    for key, text in ANNOTATIONS:
        value = annotations.get(key)
        if value is True:
            out.append((text, text))
        elif value is None and HINT_DEFAULTS[key] is True:
            if key == "destructiveHint" and annotations.get("readOnlyHint") is True:
                continue  # MCP: destructiveHint means something only for a tool that writes
            out.append((text, f"{text} (assumed)"))
    return tuple(out)


def _score(score: ToolScore | None) -> Score | None:
    if score is None:
        return None
    return Score(f"{score.total:.2f}", score.tier, score.dimensions)


def _params(schema: dict[str, Any], caps: tuple[CapIR, ...]) -> tuple[Param, ...]:
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return ()
    required = set(schema.get("required") or ())
    params = []
    for name, node in properties.items():
        node = node if isinstance(node, dict) else {}
        params.append(
            Param(
                name=str(name),
                type=type_text(node),
                required=name in required,
                description=clip(str(node.get("description") or "")),
                bounds=bounds(node),
                default=show_json(node["default"]) if "default" in node else None,
                enum=_enum(node),
                caps=_quoted_caps(node, caps),
            )
        )
    return tuple(params)


def _variants(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The node and the alternatives of its anyOf/oneOf: where bounds and enums live."""
    out = [node]
    for key in ("anyOf", "oneOf"):
        for sub in node.get(key) or ():
            if isinstance(sub, dict):
                out.append(sub)
    return out


def type_text(node: Any) -> str:
    """`string`, `integer | null`, `array of string`, `object`, `$ref Name`."""
    if not isinstance(node, dict):
        return "any"
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list):
            parts = dict.fromkeys(type_text(sub) for sub in node[key])
            return clip(" | ".join(parts), MAX_VALUE)
    if "$ref" in node:
        return f"$ref {str(node['$ref']).rsplit('/', 1)[-1]}"
    kind = node.get("type")
    if isinstance(kind, list):
        return " | ".join(map(str, kind))
    if kind == "array":
        items = node.get("items")
        if not isinstance(items, dict):
            return "array"
        inner = type_text(items)
        return f"array of ({inner})" if " | " in inner else f"array of {inner}"
    if kind is None:
        if "enum" in node:
            return "enum"
        if "const" in node:
            return "const"
        return "any"
    return str(kind)


def bounds(node: dict[str, Any]) -> tuple[str, ...]:
    out = []
    for variant in _variants(node):
        for key, word in _BOUNDS:
            if key in variant and not isinstance(variant[key], dict | list):
                out.append(f"{word} {clip(str(variant[key]), MAX_VALUE)}")
        if "const" in variant:
            out.append(f"= {show_json(variant['const'])}")
    return tuple(dict.fromkeys(out))


def _enum(node: dict[str, Any]) -> tuple[str, ...]:
    values: list[str] = []
    for variant in _variants(node):
        items = variant.get("items") if isinstance(variant.get("items"), dict) else {}
        for source in (variant.get("enum"), items.get("enum")):
            if isinstance(source, list):
                values += [show_json(v) for v in source]
    return _listed(values)


def _listed(values: list[str]) -> tuple[str, ...]:
    """Enum values as a page lists them: each once, the first MAX_ENUM, then how many more."""
    values = list(dict.fromkeys(values))
    if len(values) > MAX_ENUM:
        values = [*values[:MAX_ENUM], f"… {len(values) - MAX_ENUM} more"]
    return tuple(values)


def _quoted_caps(node: dict[str, Any], caps: tuple[CapIR, ...]) -> tuple[str, ...]:
    """The caps a parameter's bounds quote: a maximum (of value, length, items) equal to a cap."""
    limits = {v[k] for v in _variants(node) for k in _CAP_BOUNDS if isinstance(v.get(k), int)}
    items = node.get("items")
    if isinstance(items, dict):
        limits |= {items[k] for k in _CAP_BOUNDS if isinstance(items.get(k), int)}
    return tuple(f"{cap.name} = {cap.value}" for cap in caps if cap.value in limits)


def _resolve(node: Any, root: dict[str, Any], seen: frozenset[str]) -> tuple[dict[str, Any], frozenset[str]]:
    """A node with its local `$ref` (`#/$defs/Hit`) read in, unless the ref is already being
    shown above it (a recursive schema stops there)."""
    node = node if isinstance(node, dict) else {}
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/") or ref in seen:
        return node, seen
    target: Any = root
    for part in ref[2:].split("/"):
        target = target.get(part) if isinstance(target, dict) else None
    if not isinstance(target, dict):
        return node, seen
    return {**target, **{k: v for k, v in node.items() if k != "$ref"}}, seen | {ref}


def _tree(
    name: str,
    node: Any,
    required: bool,
    budget: list[int],
    depth: int = 0,
    root: dict[str, Any] | None = None,
    seen: frozenset[str] = frozenset(),
) -> TreeNode:
    """The output schema as a tree of named nodes, local $refs read in, bounded in depth and
    size."""
    budget[0] += 1
    root = root if root is not None else (node if isinstance(node, dict) else {})
    shown = type_text(node)
    node, seen = _resolve(node, root, seen)
    children: list[TreeNode] = []
    if depth < MAX_TREE_DEPTH and budget[0] < MAX_TREE_NODES:
        for variant in _variants(node):
            target, inner = _resolve(variant, root, seen)
            if target.get("type") == "array" and isinstance(target.get("items"), dict):
                target, inner = _resolve(target["items"], root, inner)
            properties = target.get("properties")
            if isinstance(properties, dict):
                needed = set(target.get("required") or ())
                for key, sub in properties.items():
                    if budget[0] >= MAX_TREE_NODES:
                        break
                    children.append(_tree(str(key), sub, key in needed, budget, depth + 1, root, inner))
    return TreeNode(
        name=clip(name, MAX_VALUE),
        type=shown if "$ref" in shown else type_text(node),
        required=required,
        description=clip(str(node.get("description") or "")),
        bounds=bounds(node) + tuple(f"one of: {', '.join(values)}" for values in [_enum(node)] if values),
        children=tuple(children),
    )


def _column_type(type_json: str) -> str:
    try:
        parsed = json.loads(type_json)
    except ValueError:
        return clip(type_json, MAX_VALUE)
    return clip(str(parsed.get("sql") or parsed.get("id") or type_json), MAX_VALUE)


def _project_path(name: str, root: Path) -> str:
    """A spec file named relative to the project, as the generated headers name it: the same
    site wherever `lynxc docs` runs from. A file outside the project shows its name alone."""
    path = Path(name).resolve()
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name


def _statements(server: ServerIR, root: Path) -> tuple[Statement, ...]:
    if server.sql is None:
        return ()
    out = []
    for tool in server.sql.tools:
        params = tuple(
            (p.name, getattr(p, "duckdb_type", None) or getattr(p, "type", "")) for p in tool.params
        )
        out.append(
            Statement(
                tool=tool.tool,
                tool_anchor=anchor("tool", tool.tool),
                statement=clip(tool.statement),
                params=params,
                columns=tuple(
                    Column(c.name, c.sql_type or _column_type(c.type_json), c.nullable) for c in tool.columns
                ),
                result=tool.result,
                max_rows=tool.max_rows,
                read_only=tool.read_only,
                source=_project_path(tool.source, root) if tool.source.endswith(".sql") else "",
            )
        )
    return tuple(out)


def _field(item: Any) -> Field:
    children = tuple(_field(f) for f in item.fields or ())
    if item.items is not None and item.items.fields:
        children += tuple(_field(f) for f in item.items.fields)
    kind = item.type
    if item.items is not None:
        kind = f"{kind} of {item.items.type}"
        if item.items.to:
            kind = f"{kind} → {item.items.to}"
    if item.to:
        kind = f"{kind} → {item.to}"
    return Field(
        name=item.name,
        type=kind,
        required=item.required,
        description=clip(item.description or ""),
        values=_listed([clip(value, MAX_VALUE) for value in item.values or ()]),
        children=children,
    )


def _collection(collection: Any) -> Collection:
    return Collection(
        name=collection.name,
        anchor=anchor("collection", collection.name),
        title=clip(collection.title or collection.name, MAX_VALUE),
        description=clip(collection.description or ""),
        key=collection.key,
        fields=tuple(_field(f) for f in collection.fields),
    )


def _prompt(wire_json: str) -> Prompt:
    wire = json.loads(wire_json)
    name = str(wire.get("name", ""))
    arguments = tuple(
        (str(a.get("name", "")), bool(a.get("required")), clip(str(a.get("description") or "")))
        for a in wire.get("arguments") or ()
        if isinstance(a, dict)
    )
    return Prompt(
        name=name,
        anchor=anchor("prompt", name),
        title=clip(str(wire.get("title") or ""), MAX_VALUE),
        description=clip(str(wire.get("description") or "")),
        arguments=arguments,
    )


def _resource(wire_json: str, templated: bool) -> Resource:
    wire = json.loads(wire_json)
    name = str(wire.get("name", ""))
    return Resource(
        name=name,
        anchor=anchor("template" if templated else "resource", name),
        title=clip(str(wire.get("title") or ""), MAX_VALUE),
        uri=clip(str(wire.get("uriTemplate") if templated else wire.get("uri")), MAX_VALUE),
        templated=templated,
        description=clip(str(wire.get("description") or "")),
        mime_type=str(wire.get("mimeType") or ""),
    )


def secret_settings(server: ServerIR) -> set[str]:
    """The settings that hold a secret: those the spec names as a credential (an HTTP API's
    token, key or password, an OAuth client secret, a PostgreSQL DSN, which may carry a
    password), a schema marked writeOnly, or a name that says so (`api_token`)."""
    secret: set[str] = set()
    if server.auth is not None and server.auth.introspection is not None:
        secret.add(server.auth.introspection[1])
    if server.http is not None:
        _auth_settings(json.loads(server.http.auth_json or "null"), secret, False)
    dsn = getattr(server.sql, "dsn_setting", None)
    if dsn:
        secret.add(dsn)
    for setting in server.settings:
        if _SECRET_NAME.search(setting.name) or setting.schema.get("writeOnly") is True:
            secret.add(setting.name)
    return secret


def _auth_settings(node: Any, out: set[str], under_secret: bool) -> None:
    if isinstance(node, dict):
        if under_secret and isinstance(node.get("setting"), str):
            out.add(node["setting"])
        for key, value in node.items():
            _auth_settings(value, out, key in _SECRET_AUTH_KEYS)
    elif isinstance(node, list):
        for value in node:
            _auth_settings(value, out, under_secret)


def _settings(server: ServerIR) -> tuple[Setting, ...]:
    secret = secret_settings(server)
    out = []
    for setting in server.settings:
        schema = setting.schema
        is_secret = setting.name in secret
        default = None if is_secret or "default" not in schema else show_json(schema["default"])
        out.append(
            Setting(
                name=setting.name,
                type=type_text(schema),
                description=clip(setting.description or str(schema.get("description") or "")),
                default=default,
                secret=is_secret,
                required="default" not in schema,
            )
        )
    return tuple(sorted(out, key=lambda s: s.name))


def _version(entry: Any, tool_names: set[str]) -> Version:
    entries = []
    for finding in entry.findings:
        data = finding.to_json()
        subject = _subject(data)
        tool = data.get("tool") if "tool" in data else None
        renamed = _RENAMED.search(finding.hint or "")
        target = renamed.group(1) if renamed else None
        entries.append(
            ChangeEntry(
                level=finding.level,
                breaking=finding.level == "breaking",
                rule=finding.rule_id,
                message=clip(finding.message, MAX_VALUE * 2),
                subject=clip(subject, MAX_VALUE),
                subject_link=anchor("tool", tool) if tool and tool in tool_names else None,
                path=clip(data.get("path", ""), MAX_VALUE),
                op=data.get("op", ""),
                before=show_json(data["before"], MAX_JSON, indent=2) if "before" in data else None,
                after=show_json(data["after"], MAX_JSON, indent=2) if "after" in data else None,
                hint=clip(finding.hint or "", MAX_VALUE),
                renamed_to=target,
                renamed_link=anchor("tool", target) if target and target in tool_names else None,
            )
        )
    return Version(
        version=entry.version,
        anchor=anchor("v", entry.version),
        date=entry.date or "unreleased",
        since=entry.since,
        breaking=sum(e.breaking for e in entries),
        entries=tuple(entries),
    )


def _subject(data: dict[str, Any]) -> str:
    for key, word in (
        ("tool", "tool"),
        ("collection", "collection"),
        ("prompt", "prompt"),
        ("resourceTemplate", "resource template"),
        ("resourceUri", "resource"),
    ):
        if data.get(key):
            return f"{word} {data[key]}"
    return "server" if data.get("scope") == "server" else ""

"""The wire form of a server: the `tools/list` entries a client sees, rendered from the IR,
and the resources it declares (the `resources` of its collections.json).

`lynxc diff` and `lynxc lint` judge this form, so they work equally on servers lynxc did not build.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .diagnostics import Diagnostic, Span
from .ir import AUTH_META_KEY, RESOURCES_FORMAT, ServerIR, ToolIR, collections_document

# tools.json keeps its do-not-edit header under this key, beside the payload, never in it:
# the runtime strips it, so clients do not receive it in every tools/list answer.
GENERATED_KEY = "_generated"
# The MCP rule for tool names; both the spec checks and lint of saved tools/list apply it.
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def wire_tool(tool: ToolIR) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": tool.name}
    if tool.title:
        entry["title"] = tool.title
    entry["description"] = tool.description
    entry["inputSchema"] = tool.published_input_schema
    if tool.output_schema is not None:
        entry["outputSchema"] = tool.output_schema
    if tool.annotations:
        entry["annotations"] = dict(tool.annotations)
    # Who may call it, said on the wire so that clients can ask for the scope before calling,
    # and so that `lynxc diff` judges a change of access like any change of the contract.
    if (auth := tool.auth_meta) is not None:
        entry["_meta"] = {AUTH_META_KEY: auth}
    return entry


def auth_of_payload(payload: Any) -> dict[str, Any] | None:
    """What a tools/list answer, a tools.json or a released baseline says of caller
    authentication (its top-level `_meta` "lynxc/auth"); None when it says nothing: then anyone
    reaching the server may call. Not an object: compared as given, for a reviewer to judge."""
    meta = payload.get("_meta") if isinstance(payload, dict) else None
    return meta.get(AUTH_META_KEY) if isinstance(meta, dict) else None


def tools_list(server: ServerIR) -> dict[str, Any]:
    """Exactly what `tools/list` answers (all pages together)."""
    payload: dict[str, Any] = {"tools": [wire_tool(tool) for tool in server.tools]}
    if server.auth is not None:
        payload["_meta"] = {AUTH_META_KEY: server.auth.wire()}
    return payload


@dataclass(frozen=True)
class SpecExtras:
    """What a spec knows about a tool beyond its wire form (lint uses it)."""

    caps: dict[str, int]
    description_sources: tuple[tuple[Span, str], ...]
    suppressions: dict[str, str]  # rule -> reason


@dataclass(frozen=True)
class ServerWire:
    """One server's tools as a client sees them, its declared records, and where they came from."""

    name: str
    tools: list[dict[str, Any]]
    origin: str
    # (tool, parameter or None) -> where it is declared, when the side is a spec
    spans: dict[tuple[str, str | None], Span] = field(default_factory=dict)
    extras: dict[str, SpecExtras] = field(default_factory=dict)
    # The `resources` of its collections.json. None when the input cannot tell (a saved tools/list
    # answer): resources are then not compared. [] when it can and there are none.
    resources: list[dict[str, Any]] | None = None
    # (resource, field, subfield...) or (resource,) -> where it is declared, when the side is a spec
    resource_spans: dict[tuple[str, ...], Span] = field(default_factory=dict)
    # What tools/list's `_meta` says of caller authentication (`lynxc/auth`), None when nothing.
    auth: dict[str, Any] | None = None
    # The server's version when the side says it (a spec, a released baseline); None for a saved
    # tools/list answer or a tools.json. `lynxc diff` judges breaking changes by it.
    version: str | None = None
    # (version, rule, reason) of each `server.acknowledge` entry, when the side is a spec.
    acknowledgements: tuple[tuple[str, str, str], ...] = ()
    # Its `prompts/list` entries (issue 31). None when the input cannot tell (a saved tools/list
    # answer, a baseline released before prompts were recorded): prompts are then not compared.
    prompts: list[dict[str, Any]] | None = None
    # (prompt, argument or None) -> where it is declared, when the side is a spec
    prompt_spans: dict[tuple[str, str | None], Span] = field(default_factory=dict)
    # Its MCP resources: `{"resources": [...], "resourceTemplates": [...]}`, the entries of the two
    # list answers; None when the input cannot tell, as for prompts.
    mcp_resources: dict[str, list[dict[str, Any]]] | None = None
    # ("uri", URI) or ("template", name) -> where it is declared, when the side is a spec
    mcp_resource_spans: dict[tuple[str, str], Span] = field(default_factory=dict)
    # Lint suppressions the server declares for all it offers (`server.lint.suppress`): rule ->
    # reason. Prompts and MCP resources, which carry none of their own, are suppressed by these.
    suppressions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Side:
    """What one input of `lynxc diff` or `lynxc lint` holds: servers by name."""

    servers: dict[str, ServerWire]
    diagnostics: tuple[Diagnostic, ...] = ()


def wire_from_ir(server: ServerIR, origin: str) -> ServerWire:
    spans: dict[tuple[str, str | None], Span] = {}
    extras: dict[str, SpecExtras] = {}
    for tool in server.tools:
        spans[(tool.name, None)] = tool.span
        for param in tool.params:
            spans[(tool.name, param.name)] = param.span
        extras[tool.name] = SpecExtras(tool.cap_values, tool.description_sources, dict(tool.suppressions))
    return ServerWire(
        server.name,
        [wire_tool(tool) for tool in server.tools],
        origin,
        spans,
        extras,
        resources=collections_document(server)["resources"],
        resource_spans=dict(_resource_spans(server)),
        auth=server.auth.wire() if server.auth is not None else None,
        version=server.version,
        acknowledgements=tuple((a.version, a.rule, a.reason) for a in server.acknowledgements),
        prompts=[prompt.wire for prompt in server.prompts],
        prompt_spans=dict(_prompt_spans(server)),
        mcp_resources=mcp_resources_of(server),
        mcp_resource_spans={_mcp_key(r.templated, r.wire, r.name): r.span for r in server.mcp_resources},
        suppressions=dict(server.lint_suppressions),
    )


def mcp_resources_of(server: ServerIR) -> dict[str, list[dict[str, Any]]]:
    """The entries of the server's `resources/list` and `resources/templates/list` answers."""
    return {
        "resources": [r.wire for r in server.mcp_resources if not r.templated],
        "resourceTemplates": [r.wire for r in server.mcp_resources if r.templated],
    }


def _mcp_key(templated: bool, wire: dict[str, Any], name: str) -> tuple[str, str]:
    """How review names an MCP resource: a static one by its URI, a template by its name."""
    return ("template", name) if templated else ("uri", str(wire.get("uri", name)))


def _prompt_spans(server: ServerIR) -> Iterator[tuple[tuple[str, str | None], Span]]:
    for prompt in server.prompts:
        yield (prompt.name, None), prompt.span
        for argument, span in prompt.argument_spans:
            yield (prompt.name, argument), span


def prompts_from_payload(payload: Any) -> list[dict[str, Any]]:
    """The prompts of a `prompts/list` answer (or of a baseline's `prompts`): a list of objects,
    each named by a unique string. Raises ValueError saying what is wrong."""
    prompts = payload.get("prompts") if isinstance(payload, dict) else payload
    if not isinstance(prompts, list) or not all(
        isinstance(p, dict) and isinstance(p.get("name"), str) for p in prompts
    ):
        raise ValueError('expected "prompts": a list of objects, each with a "name"')
    _unique([p["name"] for p in prompts], "prompt")
    return prompts


def mcp_resources_from_payload(payload: Any) -> dict[str, list[dict[str, Any]]]:
    """The MCP resources of a document holding `resources` (each with a `uri`) and/or
    `resourceTemplates` (each with a `name` and a `uriTemplate`): a generated resources.json, a
    saved answer of either list, or a baseline's. Raises ValueError saying what is wrong."""
    if not isinstance(payload, dict):
        raise ValueError("expected an object with resources and resourceTemplates")
    resources = payload.get("resources", [])
    templates = payload.get("resourceTemplates", [])
    if not isinstance(resources, list) or not all(
        isinstance(r, dict) and isinstance(r.get("uri"), str) for r in resources
    ):
        raise ValueError('expected "resources": a list of objects, each with a "uri"')
    if not isinstance(templates, list) or not all(
        isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("uriTemplate"), str)
        for t in templates
    ):
        raise ValueError(
            'expected "resourceTemplates": a list of objects, each with a "name" and a "uriTemplate"'
        )
    _unique([r["uri"] for r in resources], "resource URI")
    _unique([t["name"] for t in templates], "resource template")
    return {"resources": resources, "resourceTemplates": templates}


def is_mcp_resources(payload: Any) -> bool:
    """Whether a resources document lists MCP resources (not declared records, which carry a
    `format`): it has `resourceTemplates`, or its resources have URIs."""
    if not isinstance(payload, dict) or "format" in payload:
        return False
    resources = payload.get("resources")
    return "resourceTemplates" in payload or (
        isinstance(resources, list) and all(isinstance(r, dict) and "uri" in r for r in resources)
    )


def _unique(names: list[str], what: str) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ValueError(f"{what} {name!r} is listed twice")
        seen.add(name)


def _resource_spans(server: ServerIR) -> Iterator[tuple[tuple[str, ...], Span]]:
    for resource in server.collections:
        yield (resource.name,), resource.span
        stack = [((resource.name, f.name), f) for f in resource.fields]
        while stack:
            path, record_field = stack.pop()
            yield path, record_field.span
            stack.extend(((*path, f.name), f) for f in record_field.fields or ())


def resources_from_document(document: Any) -> list[dict[str, Any]]:
    """The resources of a collections.json document (a generated one, or one a released baseline
    keeps), checked as far as comparing them needs: the format this compiler writes, a list of
    objects each named by a unique string. Raises ValueError saying what is wrong."""
    if not isinstance(document, dict) or document.get("format") != RESOURCES_FORMAT:
        found = document.get("format") if isinstance(document, dict) else type(document).__name__
        raise ValueError(f"expected a collections document of format {RESOURCES_FORMAT}, found {found!r}")
    resources = document.get("resources")
    if not isinstance(resources, list) or not all(
        isinstance(r, dict) and isinstance(r.get("name"), str) for r in resources
    ):
        raise ValueError('expected "resources": a list of objects, each with a "name"')
    seen: set[str] = set()
    for resource in resources:
        if resource["name"] in seen:
            raise ValueError(f"collection {resource['name']!r} is listed twice")
        seen.add(resource["name"])
    return resources


def resources_payload(resources: list[dict[str, Any]]) -> dict[str, Any]:
    """A resources document around a list of resources (no `_generated` header)."""
    return {"format": RESOURCES_FORMAT, "resources": resources}

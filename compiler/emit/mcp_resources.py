"""Emit a server's MCP resources (issue 31): resources.json (exactly the resources/list and
resources/templates/list answers), resource_sources.json (how each is read) and the files the
build copied under resource_files/; and what the README says of each."""

from __future__ import annotations

from typing import Any

from lynxc.runtime.resource_media import RESOURCES_FILE, SOURCES_FILE, uri_templates

from ..ir import ServerIR
from ..lower.mcp_resources import resources_document, sources_document
from ..wire import GENERATED_KEY

MCP_RESOURCES_FILE = RESOURCES_FILE  # ServerDefinition.resources

_KINDS = {
    "file": "a file of the project, copied into the build",
    "text": "a fixed text",
    "template": "a text template over the URI's variables",
    "record": "a record",
    "sql": "the first row of a SQL statement, as a JSON object",
    "function": "a Python function",
}


def mcp_resource_files(server: ServerIR, header: str) -> dict[str, dict[str, Any] | str]:
    """{file: document or text}; nothing when the server declares no MCP resources."""
    if not server.mcp_resources:
        return {}
    files: dict[str, dict[str, Any] | str] = {
        RESOURCES_FILE: {GENERATED_KEY: header, **resources_document(server.mcp_resources)},
        SOURCES_FILE: {GENERATED_KEY: header, **sources_document(server.mcp_resources)},
    }
    for resource in server.mcp_resources:
        files.update(dict(resource.files))
    return files


def mcp_resource_docs(server: ServerIR) -> list[dict[str, Any]]:
    """One entry per resource, as the README lists it."""
    docs = []
    bound = {collection.name for collection in server.collections if collection.bind}
    for resource in server.mcp_resources:
        wire, source = resource.wire, resource.source
        variables = []
        if resource.templated:
            variables = uri_templates().UriTemplate.parse(wire["uriTemplate"]).variable_names
        where = {
            "file": lambda s: f" (`{s['path']}`)",
            "record": lambda s: (
                f" of `{s['collection']}`, keyed by `{{{s['variable']}}}`"
                + (" (the caller's own: the collection is bound)" if s["collection"] in bound else "")
            ),
            "function": lambda s: f" `{s['target']}`",
        }.get(source["kind"], lambda s: "")
        docs.append(
            {
                "name": resource.name,
                "address": wire.get("uri") or wire.get("uriTemplate"),
                "templated": resource.templated,
                "title": wire.get("title"),
                "description": wire["description"],
                "mime_type": wire["mimeType"],
                "size": wire.get("size"),
                "max_bytes": source["max_bytes"],
                "source": _KINDS[source["kind"]] + where(source),
                "variables": [(name, source.get("variables", {}).get(name, "")) for name in variables],
                "watched": source["kind"] == "record",
            }
        )
    return docs

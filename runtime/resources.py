"""MCP resources (issue 31): resources/list, resources/templates/list and resources/read.

The compiler writes two files beside server.py: resources.json, exactly the two list answers,
and resource_sources.json, how each resource is read (compiler/lower/mcp_resources.py). A read
matches the URI against the static resources first (exact match), then against the templates
in declaration order (the SDK's RFC 6570 `UriTemplate.match`), and reads the first match:

- `text` / `file`: the content the build wrote (a binary file is kept as base64 text);
- `template`: a sandboxed Jinja2 template rendered with the URI's variables;
- `record`: the record of a collection, through the records engine's `get_record` WITH the
  caller, so a bound collection's row-level rule holds (another caller's record reads as a
  missing one: "Resource not found");
- `sql`: the hidden SQL tool the build checked for it, through the SQL engine (bound
  parameters, its timeout); its first row as a JSON object, no row: not found;
- `function`: 'package.module:function', imported on its first read, awaited with
  (variables, ctx); a str is text, bytes a blob, anything else JSON.

A content larger than the resource's max_bytes is refused with an error naming the limit.
An unknown URI is JSON-RPC -32602 "Resource not found" with data {"uri": uri}.
"""

from __future__ import annotations

import base64
import importlib
import inspect
import json
import logging
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import SimpleNamespace
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from .context import ToolContext
from .errors import ToolError
from .pages import page
from .prompt_templates import RenderedTooLarge, render_bounded, template_environment
from .resource_media import RESOURCES_FILE, SOURCES_FILE, is_text_mime  # noqa: F401 (re-exported)
from .wire_values import NotJSONError, encode_json, to_wire

logger = logging.getLogger("lynxc.runtime")

RESOURCE_NOT_FOUND = "Resource not found"
MAX_URI_CHARS = 4096  # a longer URI names no resource (and is never matched against templates)
# The engines a resource reads through, imported by name on the first read (the runtime core
# loads backends by name, never by import).
RECORDS_TOOLS = "lynxc.runtime.backends.records.tools"
SQL_TOOLS = "lynxc.runtime.backends.sql.tools"
RECORDS_CHANGES = "lynxc.runtime.backends.records.changes"
RECORDS_STORE = "lynxc.runtime.backends.records.store"

Contents = types.TextResourceContents | types.BlobResourceContents


class ResourceNotFound(MCPError):
    """No resource of this server has this URI (or the caller may not see it)."""

    def __init__(self, uri: str):
        super().__init__(types.INVALID_PARAMS, RESOURCE_NOT_FOUND, {"uri": uri})
        self.uri = uri


class ResourceError(MCPError):
    """The resource exists, but reading it failed (too large, a failing source)."""

    def __init__(self, message: str):
        super().__init__(types.INTERNAL_ERROR, message)


@dataclass(frozen=True)
class Match:
    source: Mapping[str, Any]
    variables: dict[str, str]


class ResourceReader:
    """Serves one server's resources. `definition` is its ServerDefinition: the build's files are
    read from it, checked; `settings` are the server's."""

    def __init__(
        self,
        definition: Any,
        settings: Mapping[str, Any],
        listing: Mapping[str, Any],
        sources: Mapping[str, Any],
        *,
        page_size: int = 50,
    ):
        from mcp.shared.uri_template import UriTemplate

        self.definition = definition
        self.settings = settings
        self.page_size = page_size
        self._resources = [types.Resource.model_validate(r) for r in listing.get("resources", [])]
        self._templates = [
            types.ResourceTemplate.model_validate(t) for t in listing.get("resourceTemplates", [])
        ]
        entries = list(sources.get("resources", []))
        self._static = {entry["uri"]: entry for entry in entries if "uri" in entry}
        self._templated = [
            (UriTemplate.parse(entry["uri_template"]), entry) for entry in entries if "uri_template" in entry
        ]
        self._functions: dict[str, Any] = {}

    # lists ------------------------------------------------------------------------------------

    async def list_resources(self, params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        listed, cursor = page("resources", self._resources, params.cursor if params else None, self.page_size)
        return types.ListResourcesResult(resources=listed, next_cursor=cursor)

    async def list_templates(
        self, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        listed, cursor = page("templates", self._templates, params.cursor if params else None, self.page_size)
        return types.ListResourceTemplatesResult(resource_templates=listed, next_cursor=cursor)

    def templated(self) -> list[tuple[Any, Mapping[str, Any]]]:
        """Each template (parsed) with its source, in declaration order."""
        return list(self._templated)

    # read -------------------------------------------------------------------------------------

    def match(self, uri: str) -> Match | None:
        """The resource `uri` names: a static one first, then the first template that matches."""
        if len(uri) > MAX_URI_CHARS:
            return None
        entry = self._static.get(uri)
        if entry is not None:
            return Match(entry, {})
        for template, entry in self._templated:
            found = template.match(uri)
            if found is not None:
                values = {k: v if isinstance(v, str) else ",".join(v) for k, v in found.items()}
                if all(values.values()):
                    return Match(entry, values)
        return None

    async def read(self, uri: str, ctx: ToolContext) -> list[Contents]:
        """The contents of `uri` as `ctx.caller` may see them; ResourceNotFound or ResourceError."""
        found = self.match(uri)
        if found is None:
            raise ResourceNotFound(uri)
        entry = found.source
        reader = _READERS[entry["kind"]]
        try:
            content = await reader(self, entry, found.variables, ctx, uri)
        except (ResourceNotFound, ResourceError):
            raise
        except Exception as err:
            logger.error("reading resource %s failed:\n%s", uri, traceback.format_exc())
            raise ResourceError(f"reading {uri} failed: {type(err).__name__}: {err}") from None
        return [_contents(uri, entry, content)]

    # the sources ------------------------------------------------------------------------------

    async def _text(self, entry: Mapping[str, Any], variables: dict[str, str], ctx: Any, uri: str) -> Any:
        return entry["text"]

    async def _file(self, entry: Mapping[str, Any], variables: dict[str, str], ctx: Any, uri: str) -> Any:
        text = self.definition.read_checked(entry["path"])
        if entry.get("encoding") == "base64":
            return base64.b64decode(text)
        return text

    async def _template(self, entry: Mapping[str, Any], variables: dict[str, str], ctx: Any, uri: str) -> Any:
        # the prompts' sandbox, rendered piece by piece and stopped past the resource's max_bytes
        template = _compiled(entry["template"])
        try:
            return render_bounded(template, variables, limit=entry["max_bytes"])
        except RenderedTooLarge:
            raise ResourceError(f"{uri} is over the resource's max_bytes of {entry['max_bytes']}") from None

    async def _record(self, entry: Mapping[str, Any], variables: dict[str, str], ctx: Any, uri: str) -> Any:
        get_record = _engine(RECORDS_TOOLS, "get_record")
        params = SimpleNamespace(resource_id=entry["collection_id"], record_id=variables[entry["variable"]])
        context = _context(ctx, "get_record", self)
        try:
            record = await get_record(params, context)
        except ToolError as err:
            if str(err).startswith("record_id:"):  # no such record, or another caller's
                raise ResourceNotFound(uri) from None
            raise ResourceError(f"reading {uri} failed: {err}") from None
        return record

    async def _sql(self, entry: Mapping[str, Any], variables: dict[str, str], ctx: Any, uri: str) -> Any:
        run_sql = _engine(SQL_TOOLS, "run_sql")
        try:
            return await run_sql(dict(variables), _context(ctx, entry["tool"], self))
        except ToolError as err:
            if str(err).startswith("no row matched"):
                raise ResourceNotFound(uri) from None
            raise ResourceError(f"reading {uri} failed: {err}") from None

    async def _function(self, entry: Mapping[str, Any], variables: dict[str, str], ctx: Any, uri: str) -> Any:
        target = entry["target"]
        fn = self._functions.get(target)
        if fn is None:
            module_name, _, attr = target.partition(":")
            fn = getattr(importlib.import_module(module_name), attr)
            if not inspect.iscoroutinefunction(fn):
                raise ResourceError(f"resource function {target} is not an async function")
            self._functions[target] = fn
        try:
            return await fn(dict(variables), ctx)
        except ToolError as err:
            raise ResourceError(f"reading {uri} failed: {err}") from None


_READERS = {
    "text": ResourceReader._text,
    "file": ResourceReader._file,
    "template": ResourceReader._template,
    "record": ResourceReader._record,
    "sql": ResourceReader._sql,
    "function": ResourceReader._function,
}


def _engine(module: str, name: str) -> Any:
    return getattr(importlib.import_module(module), name)


def _context(ctx: Any, tool: str, reader: ResourceReader) -> ToolContext:
    """A tool context for an engine: the caller, the settings and the server of `ctx`."""
    return ToolContext(
        tool=tool,
        caps={},
        settings=getattr(ctx, "settings", None) or reader.settings,
        server=reader.definition,
        caller=getattr(ctx, "caller", None),
    )


def _contents(uri: str, entry: Mapping[str, Any], content: Any) -> Contents:
    mime, limit, text = entry["mime_type"], entry["max_bytes"], entry["text"]
    if isinstance(content, bytes | bytearray):
        data = bytes(content)
    elif isinstance(content, str):
        data = content.encode("utf-8", "surrogatepass")
    else:
        try:
            data = encode_json(to_wire(content))  # dates, decimals, models: as tool results are
        except NotJSONError as err:
            raise ResourceError(f"{uri} could not be sent as JSON: {err.where}: {err.reason}") from None
    if len(data) > limit:
        raise ResourceError(f"{uri} is {len(data)} bytes, over the resource's max_bytes of {limit}")
    if text:
        try:
            decoded = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ResourceError(f"{uri} is not UTF-8 text, as its mime type {mime} says") from None
        return types.TextResourceContents(uri=uri, mime_type=mime, text=decoded)
    return types.BlobResourceContents(uri=uri, mime_type=mime, blob=base64.b64encode(data).decode("ascii"))


@cache
def _compiled(template: str) -> Any:
    return template_environment().from_string(template)


def load_reader(definition: Any, settings: Mapping[str, Any], page_size: int) -> ResourceReader | None:
    """The reader of a server that declares resources (its ServerDefinition's `resources`, the
    file resources.json, beside resource_sources.json), else None."""
    listing_file = getattr(definition, "resources", None)
    if not listing_file or SOURCES_FILE not in getattr(definition, "files_sha256", {}):
        return None
    listing = json.loads(definition.read_checked(listing_file))
    sources = json.loads(definition.read_checked(SOURCES_FILE))
    return ResourceReader(definition, settings, listing, sources, page_size=page_size)

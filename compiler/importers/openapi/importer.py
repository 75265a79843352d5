"""The import itself: a document in, the server mapping and one tool mapping per imported
operation out, with what was skipped and why. Pure: nothing is written here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .document import Document
from .errors import OpenAPIError, Unmappable
from .names import tool_base_name, unique_names
from .operations import Operation, read_operations
from .security import Auth, choose_auth
from .source import is_url, parse, read_text
from .texts import clean_text
from .tool import ToolDraft, build_tool

SERVER_NAME = re.compile(r"^[a-z][a-z0-9-]{0,62}$")
_VERSION = re.compile(r"\d+")


@dataclass(frozen=True)
class Skipped:
    operation: str  # METHOD /path (operationId)
    reason: str


@dataclass
class ImportResult:
    name: str
    server: dict[str, Any]
    tools: dict[str, dict[str, Any]]  # by tool name, sorted
    imported: list[str] = field(default_factory=list)  # "METHOD /path -> tool"
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def load_document(source: str) -> Document:
    location = source if is_url(source) else str(_absolute(source))
    try:
        root = parse(read_text(location), location)
    except OpenAPIError as err:  # name the file as the user did
        raise OpenAPIError(source, err.pointer, err.message) from None
    if not isinstance(root, dict):
        raise OpenAPIError(source, "", "is not an OpenAPI document (its top level is not a mapping)")
    version = str(root.get("openapi") or root.get("swagger") or "")
    if not (version.startswith(("3.0", "3.1")) and "openapi" in root) and not (
        version == "2.0" and "swagger" in root
    ):
        found = f" (it says {version!r})" if version else ""
        raise OpenAPIError(source, "", f"is not an OpenAPI 3.0, 3.1 or Swagger 2.0 document{found}")
    if not isinstance(root.get("paths"), dict):
        raise OpenAPIError(
            source, "/paths", "is missing or not an object: the document declares no operations"
        )
    return Document(location, root, {location: root}, label=source)


def _absolute(source: str) -> Any:
    from pathlib import Path

    return Path(source).resolve()


def import_document(
    source: str, name: str, *, tags: tuple[str, ...] = (), operations: tuple[str, ...] = ()
) -> ImportResult:
    if not SERVER_NAME.match(name):
        raise ValueError(
            f"server name {name!r}: lowercase letters, digits and dashes, starting with a letter"
        )
    document = load_document(source)
    try:
        return _import(document, name, tags, operations)
    except RecursionError:  # a document nested past what any walk of it can follow
        raise OpenAPIError(source, "", "nests too deeply to import") from None


def _import(
    document: Document, name: str, tags: tuple[str, ...], operations: tuple[str, ...]
) -> ImportResult:
    ops = _select(document, read_operations(document), tags, operations)
    prefix = name.replace("-", "_")
    drafts: list[tuple[Operation, ToolDraft]] = []
    skipped: list[Skipped] = []
    for op in ops:
        if not op.problems:
            try:
                drafts.append((op, build_tool(document, op)))
                continue
            except Unmappable as err:
                op.problems.append(err.reason)
        skipped.append(Skipped(_label(op), op.problems[0]))
    auth = choose_auth(document, [op for op, _ in drafts], prefix)
    kept = []
    for op, draft in drafts:
        if op.problems:
            skipped.append(Skipped(_label(op), op.problems[0]))
        else:
            kept.append((op, draft))
    names = unique_names(tool_base_name(op.operation_id, op.method, op.path) for op, _ in kept)
    result = ImportResult(name, _server(document, name, prefix, auth), {})
    for tool_name, (op, draft) in sorted(zip(names, kept, strict=True), key=lambda pair: pair[0]):
        result.tools[tool_name] = {"name": tool_name, **draft.spec}
        result.imported.append(f"{_label(op)} -> {tool_name}")
        result.notes += [f"{tool_name}: {note}" for note in draft.notes]
    result.skipped = sorted(skipped, key=lambda s: s.operation)
    return result


def _label(op: Operation) -> str:
    return f"{op.method} {op.path}" + (f" ({op.operation_id})" if op.operation_id else "")


def _select(
    document: Document, ops: list[Operation], tags: tuple[str, ...], wanted: tuple[str, ...]
) -> list[Operation]:
    if not tags and not wanted:
        return ops
    chosen = []
    found: set[str] = set()
    for op in ops:
        derived = tool_base_name(op.operation_id, op.method, op.path)
        names = {n for n in (op.operation_id, derived) if n}
        if (tags and set(op.tags) & set(tags)) or (names & set(wanted)):
            chosen.append(op)
            found |= names & set(wanted)
    missing = sorted(set(wanted) - found)
    if missing:
        raise OpenAPIError(
            document.display(document.location),
            "/paths",
            f"no operation has the operationId or tool name {missing[0]!r}",
        )
    return chosen


def _server(document: Document, name: str, prefix: str, auth: Auth | None) -> dict[str, Any]:
    info = document.root.get("info") if isinstance(document.root.get("info"), dict) else {}
    server: dict[str, Any] = {"name": name, "version": _version(info.get("version"))}
    title = " ".join(str(info.get("title") or "").split())
    if title:
        server["title"] = title[:120]
    if isinstance(info.get("description"), str) and info["description"].strip():
        server["instructions"] = clean_text(info["description"], 1200, template=False)
    url_setting = f"{prefix}_url"
    base = _base_url(document)
    setting: dict[str, Any] = {"type": "string", "minLength": 1}
    if base:
        setting["default"] = base
        setting["description"] = f"The API's base URL, the document's first server by default ({base})."
    else:
        setting["description"] = "The API's base URL (the document names no absolute server URL)."
    settings = {url_setting: setting}
    http: dict[str, Any] = {"base_url": {"setting": url_setting}}
    if auth is not None:
        settings.update(auth.settings)
        http["auth"] = auth.spec
    server["settings"] = settings
    server["http"] = http
    return server


def _version(raw: Any) -> str:
    numbers = _VERSION.findall(str(raw or ""))[:3]
    if not numbers:
        return "0.1.0"
    return ".".join(str(int(n)) for n in [*numbers, "0", "0"][:3])


def _base_url(document: Document) -> str | None:
    root = document.root
    if root.get("swagger") is not None:
        host = root.get("host")
        if not isinstance(host, str) or not host:
            return None
        schemes = [s for s in root.get("schemes") or [] if s in ("https", "http")]
        scheme = "https" if "https" in schemes or not schemes else schemes[0]
        return f"{scheme}://{host}{str(root.get('basePath') or '').rstrip('/')}"
    servers = root.get("servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], dict):
        return None
    url = str(servers[0].get("url") or "")
    variables = servers[0].get("variables") if isinstance(servers[0].get("variables"), dict) else {}
    for var, spec in variables.items():
        if isinstance(spec, dict) and "default" in spec:
            url = url.replace("{" + str(var) + "}", str(spec["default"]))
    url = url.rstrip("/")
    return url if url.startswith(("https://", "http://")) and "{" not in url else None

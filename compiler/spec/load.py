"""Find spec sources and parse them: a server is one YAML file, or a folder holding
`server.yaml` beside one YAML file per tool, collection, prompt or resource."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..diagnostics import Diagnostic, Result, Span
from ..limits import MAX_TOOLS
from ..rules import diagnostic
from . import surface
from .discover import SERVER_FILE, YAML_SUFFIXES, display_path
from .discover import discover_specs as discover_specs  # where callers have found it
from .models import (
    FOLDER_ITEM_KEYS,
    Collection,
    CollectionFile,
    FolderItemFile,
    PromptFile,
    ResourceFile,
    ServerFile,
    Tool,
    ToolFile,
)
from .parse import parse_document
from .source import NodePath, SourceDoc, load_yaml, too_large

if TYPE_CHECKING:
    from ..cache import Store


@dataclass(frozen=True)
class ToolSource:
    doc: SourceDoc
    tool: Tool
    base: NodePath  # where the tool mapping sits in its document


@dataclass(frozen=True)
class CollectionSource:
    doc: SourceDoc
    collection: Collection
    base: NodePath  # where the collection mapping sits in its document


@dataclass(frozen=True)
class PromptSource:
    doc: SourceDoc
    prompt: surface.Prompt
    base: NodePath  # where the prompt mapping sits in its document


@dataclass(frozen=True)
class ResourceSource:
    """An MCP resource (data a client reads by URI), not a collection of records."""

    doc: SourceDoc
    resource: surface.Resource
    base: NodePath  # where the resource mapping sits in its document


@dataclass(frozen=True)
class SpecSource:
    server_doc: SourceDoc
    server: ServerFile
    tools: tuple[ToolSource, ...]
    files: tuple[tuple[str, str], ...]  # (display path, sha256) of every file read
    collections: tuple[CollectionSource, ...] = ()
    prompts: tuple[PromptSource, ...] = ()
    resources: tuple[ResourceSource, ...] = ()


def load_spec(path: Path, cache: Store | None = None, *, legacy_records: bool = False) -> Result[SpecSource]:
    """The spec at `path`; a `cache` keeps each file's parsed YAML (source.py). With
    `legacy_records` (`lynxc diff`, whose old side may predate issue 31), records declared under
    the old keys `resources:`/`resource:` are read as `collections:`/`collection:` instead of
    being refused with SPEC_KEY_RENAMED."""
    if path.is_dir():
        return _load_folder(path, cache, legacy_records)
    if path.is_file():
        return _load_file(path, cache, legacy_records)
    return Result(
        None, (diagnostic("SPEC_NOT_FOUND", "no spec file or folder here", Span(display_path(path))),)
    )


def _read(path: Path, cache: Store | None) -> tuple[Result[SourceDoc], tuple[str, str]]:
    display = display_path(path)
    loaded = load_yaml(path, display, cache)  # refuses an oversized file before reading it
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if loaded.value is not None else ""
    return loaded, (display, digest)


def _load_file(path: Path, cache: Store | None = None, legacy_records: bool = False) -> Result[SpecSource]:
    loaded, file_id = _read(path, cache)
    if loaded.value is None:
        return Result(None, loaded.diagnostics)
    doc = _renamed_to_collections(loaded.value) if legacy_records else loaded.value
    renamed = renamed_records(doc)
    if renamed:
        return Result(None, tuple(renamed))
    parsed = parse_document(doc, ServerFile)
    if parsed.value is None:
        return Result(None, parsed.diagnostics)
    spec = parsed.value
    tools = tuple(ToolSource(doc, tool, ("tools", i)) for i, tool in enumerate(spec.tools))
    if len(tools) > MAX_TOOLS:
        return Result(None, (_too_many(len(tools), doc.span(("tools", MAX_TOOLS))),))
    return Result(
        SpecSource(
            doc,
            spec,
            tools,
            (file_id,),
            tuple(CollectionSource(doc, c, ("collections", i)) for i, c in enumerate(spec.collections)),
            tuple(PromptSource(doc, p, ("prompts", i)) for i, p in enumerate(spec.prompts)),
            tuple(ResourceSource(doc, r, ("resources", i)) for i, r in enumerate(spec.resources)),
        )
    )


def _load_folder(
    folder: Path, cache: Store | None = None, legacy_records: bool = False
) -> Result[SpecSource]:
    server_path = folder / SERVER_FILE
    if not server_path.is_file():
        return Result(
            None,
            (
                diagnostic(
                    "SPEC_NOT_FOUND", f"a spec folder needs a {SERVER_FILE}", Span(display_path(folder))
                ),
            ),
        )
    item_paths = [
        path
        for path in sorted(folder.iterdir())
        if path.name != SERVER_FILE and path.suffix in YAML_SUFFIXES and path.is_file()
    ]
    # Counted and measured before any file is read: a folder of 40,000 tool files is refused
    # in the time it takes to list it.
    if len(item_paths) > MAX_TOOLS:
        return Result(None, (_too_many(len(item_paths), Span(display_path(folder))),))
    total = sum(path.stat().st_size for path in [server_path, *item_paths])
    refused = too_large(
        total, Span(display_path(folder)), f"the {len(item_paths) + 1} files of the spec hold"
    )
    if refused is not None:
        return Result(None, (refused,))
    head = _load_file(server_path, cache, legacy_records)
    diagnostics: list[Diagnostic] = list(head.diagnostics)
    tools: list[ToolSource] = list(head.value.tools) if head.value else []
    collections: list[CollectionSource] = list(head.value.collections) if head.value else []
    prompts: list[PromptSource] = list(head.value.prompts) if head.value else []
    resources: list[ResourceSource] = list(head.value.resources) if head.value else []
    files = list(head.value.files) if head.value else []
    for item_path in item_paths:
        loaded, file_id = _read(item_path, cache)
        files.append(file_id)
        if loaded.value is None:
            diagnostics.extend(loaded.diagnostics)
            continue
        doc = _renamed_to_collections(loaded.value) if legacy_records else loaded.value
        kind = _item_kind(doc)
        if kind is None:
            diagnostics.extend(_none_declared(doc))
        elif kind == "collection":
            parsed_collection = parse_document(doc, CollectionFile)
            diagnostics.extend(parsed_collection.diagnostics)
            if parsed_collection.value is not None:
                collections.append(CollectionSource(doc, parsed_collection.value.collection, ("collection",)))
        elif kind == "prompt":
            parsed_prompt = parse_document(doc, PromptFile)
            diagnostics.extend(parsed_prompt.diagnostics)
            if parsed_prompt.value is not None:
                prompts.append(PromptSource(doc, parsed_prompt.value.prompt, ("prompt",)))
        elif kind == "resource":
            renamed = renamed_records(doc)
            parsed_resource = Result(None, tuple(renamed)) if renamed else parse_document(doc, ResourceFile)
            diagnostics.extend(parsed_resource.diagnostics)
            if parsed_resource.value is not None:
                resources.append(ResourceSource(doc, parsed_resource.value.resource, ("resource",)))
        else:
            parsed = parse_document(doc, ToolFile)
            diagnostics.extend(parsed.diagnostics)
            if parsed.value is not None:
                tools.append(ToolSource(doc, parsed.value.tool, ("tool",)))
    if len(tools) > MAX_TOOLS:  # tools written in server.yaml count too
        diagnostics.append(_too_many(len(tools), Span(display_path(folder))))
    if head.value is None or diagnostics:
        return Result(None, tuple(diagnostics))
    return Result(
        SpecSource(
            head.value.server_doc,
            head.value.server,
            tuple(tools),
            tuple(files),
            tuple(collections),
            tuple(prompts),
            tuple(resources),
        )
    )


def _item_kind(doc: SourceDoc) -> str | None:
    """Which item a file beside server.yaml declares: the first of `tool:`, `collection:`,
    `prompt:`, `resource:` its top level names (a file naming `tool:` is a tool file, whose
    errors then name `tool:`); None when it names none of them. A file that is not a mapping is
    read as a tool file, which reports it."""
    if not isinstance(doc.data, dict):
        return "tool"
    return next((key for key in FOLDER_ITEM_KEYS if key in doc.data), None)


def _none_declared(doc: SourceDoc) -> list[Diagnostic]:
    """What is wrong with a file that declares no tool, collection, prompt or resource."""
    parsed = parse_document(doc, FolderItemFile)
    found = list(parsed.diagnostics)
    hints = {f"did you mean '{key}'?" for key in FOLDER_ITEM_KEYS}
    suggested = any(d.hint in hints for d in found)
    if parsed.value is not None or not suggested:
        found.append(
            diagnostic(
                "SPEC_KEY_MISSING",
                "a file beside server.yaml declares one tool ('tool:'), collection ('collection:'), "
                "prompt ('prompt:') or resource ('resource:')",
                doc.span(()),
            )
        )
    return found


# Keys only a collection of records has: an MCP resource entry holding one is a spec written
# before declared records were renamed `collections:`.
_RECORDS_ONLY_KEYS = ("key", "fields")
RENAMED_MESSAGES = {
    "collections": "declared records are now `collections:` (rename the key); "
    "`resources:` now declares MCP resources",
    "collection": "a file of declared records now says `collection:` (rename the key); "
    "`resource:` now declares an MCP resource",
}


def renamed_records(doc: SourceDoc) -> list[Diagnostic]:
    """SPEC_KEY_RENAMED for each entry of a server file's `resources:`, or a folder file's
    `resource:`, that has the shape of a collection of records (a `key` or `fields`): checked
    before the models, so the one clear error is not buried under the MCP resource model's."""
    data = doc.data
    if not isinstance(data, dict):
        return []
    found: list[Diagnostic] = []
    entries = data.get("resources")
    if isinstance(entries, list):
        for i, entry in enumerate(entries):
            if _records_shaped(entry):
                found.append(_renamed(doc, ("resources", i), "collections"))
    if _records_shaped(data.get("resource")) and "tool" not in data and "collection" not in data:
        found.append(_renamed(doc, ("resource",), "collection"))
    return found


def _renamed_to_collections(doc: SourceDoc) -> SourceDoc:
    """`doc` with records declared under the old keys moved to the new ones, positions kept: a
    server file whose `resources:` entries all have the records shape, a folder file whose
    `resource:` has it."""
    data = doc.data
    if not isinstance(data, dict):
        return doc
    entries = data.get("resources")
    if isinstance(entries, list) and entries and all(_records_shaped(e) for e in entries):
        old, new = "resources", "collections"
    elif _records_shaped(data.get("resource")):
        old, new = "resource", "collection"
    else:
        return doc
    if new in data:
        return doc  # both keys: reported as written

    def moved(spans: dict[NodePath, Span]) -> dict[NodePath, Span]:
        return {((new, *path[1:]) if path[:1] == (old,) else path): span for path, span in spans.items()}

    return replace(
        doc,
        data={(new if key == old else key): value for key, value in data.items()},
        value_spans=moved(doc.value_spans),
        key_spans=moved(doc.key_spans),
    )


def _records_shaped(entry: object) -> bool:
    return isinstance(entry, dict) and any(key in entry for key in _RECORDS_ONLY_KEYS)


def _renamed(doc: SourceDoc, path: NodePath, new_key: str) -> Diagnostic:
    old_key = str(path[0])
    return diagnostic(
        "SPEC_KEY_RENAMED",
        RENAMED_MESSAGES[new_key],
        doc.span(path, key=old_key == "resource"),
        f"rename '{old_key}' to '{new_key}'",
    )


def _too_many(count: int, span: Span) -> Diagnostic:
    return diagnostic(
        "TOOLS_TOO_MANY",
        f"the server declares {count} tools, over the limit of {MAX_TOOLS}",
        span,
        "models choose better among fewer tools: split the server, or merge tools that differ by a parameter",
    )

"""Find spec sources and parse them: a server is one YAML file, or a folder holding
`server.yaml` beside one YAML file per tool or resource."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostic, Result, Span
from ..limits import MAX_TOOLS
from ..rules import diagnostic
from .discover import SERVER_FILE, YAML_SUFFIXES, display_path
from .discover import discover_specs as discover_specs  # where callers have found it
from .models import FolderItemFile, Resource, ResourceFile, ServerFile, Tool, ToolFile
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
class ResourceSource:
    doc: SourceDoc
    resource: Resource
    base: NodePath  # where the resource mapping sits in its document


@dataclass(frozen=True)
class PromptItem:  # stand-in until RENAME part A: one declared prompt and where it sits
    doc: SourceDoc
    prompt: Any
    base: NodePath


@dataclass(frozen=True)
class SpecSource:
    server_doc: SourceDoc
    server: ServerFile
    tools: tuple[ToolSource, ...]
    files: tuple[tuple[str, str], ...]  # (display path, sha256) of every file read
    resources: tuple[ResourceSource, ...] = ()


def load_spec(path: Path, cache: Store | None = None) -> Result[SpecSource]:
    """The spec at `path`; a `cache` keeps each file's parsed YAML (source.py)."""
    if path.is_dir():
        return _load_folder(path, cache)
    if path.is_file():
        return _load_file(path, cache)
    return Result(
        None, (diagnostic("SPEC_NOT_FOUND", "no spec file or folder here", Span(display_path(path))),)
    )


def _read(path: Path, cache: Store | None) -> tuple[Result[SourceDoc], tuple[str, str]]:
    display = display_path(path)
    loaded = load_yaml(path, display, cache)  # refuses an oversized file before reading it
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if loaded.value is not None else ""
    return loaded, (display, digest)


def _load_file(path: Path, cache: Store | None = None) -> Result[SpecSource]:
    loaded, file_id = _read(path, cache)
    if loaded.value is None:
        return Result(None, loaded.diagnostics)
    parsed = parse_document(loaded.value, ServerFile)
    if parsed.value is None:
        return Result(None, parsed.diagnostics)
    tools = tuple(ToolSource(loaded.value, tool, ("tools", i)) for i, tool in enumerate(parsed.value.tools))
    if len(tools) > MAX_TOOLS:
        return Result(None, (_too_many(len(tools), loaded.value.span(("tools", MAX_TOOLS))),))
    resources = tuple(
        ResourceSource(loaded.value, resource, ("resources", i))
        for i, resource in enumerate(parsed.value.resources)
    )
    source = SpecSource(loaded.value, parsed.value, tools, (file_id,), resources)
    object.__setattr__(
        source,
        "prompts",
        tuple(PromptItem(loaded.value, p, ("prompts", i)) for i, p in enumerate(parsed.value.prompts)),
    )
    return Result(source)


def _load_folder(folder: Path, cache: Store | None = None) -> Result[SpecSource]:
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
    head = _load_file(server_path, cache)
    diagnostics: list[Diagnostic] = list(head.diagnostics)
    tools: list[ToolSource] = list(head.value.tools) if head.value else []
    resources: list[ResourceSource] = list(head.value.resources) if head.value else []
    files = list(head.value.files) if head.value else []
    for item_path in item_paths:
        loaded, file_id = _read(item_path, cache)
        files.append(file_id)
        if loaded.value is None:
            diagnostics.extend(loaded.diagnostics)
            continue
        if _holds_neither(loaded.value):
            diagnostics.extend(_neither(loaded.value))
            continue
        if _holds_resource(loaded.value):
            parsed_resource = parse_document(loaded.value, ResourceFile)
            diagnostics.extend(parsed_resource.diagnostics)
            if parsed_resource.value is not None:
                resources.append(ResourceSource(loaded.value, parsed_resource.value.resource, ("resource",)))
            continue
        parsed = parse_document(loaded.value, ToolFile)
        diagnostics.extend(parsed.diagnostics)
        if parsed.value is not None:
            tools.append(ToolSource(loaded.value, parsed.value.tool, ("tool",)))
    if len(tools) > MAX_TOOLS:  # tools written in server.yaml count too
        diagnostics.append(_too_many(len(tools), Span(display_path(folder))))
    if head.value is None or diagnostics:
        return Result(None, tuple(diagnostics))
    source = SpecSource(
        head.value.server_doc, head.value.server, tuple(tools), tuple(files), tuple(resources)
    )
    object.__setattr__(source, "prompts", getattr(head.value, "prompts", ()))
    return Result(source)


def _holds_neither(doc: SourceDoc) -> bool:
    return isinstance(doc.data, dict) and "tool" not in doc.data and "resource" not in doc.data


def _neither(doc: SourceDoc) -> list[Diagnostic]:
    """What is wrong with a file that declares neither a tool nor a resource."""
    parsed = parse_document(doc, FolderItemFile)
    found = list(parsed.diagnostics)
    suggested = any(d.hint in ("did you mean 'tool'?", "did you mean 'resource'?") for d in found)
    if parsed.value is not None or not suggested:
        found.append(
            diagnostic(
                "SPEC_KEY_MISSING",
                "a file beside server.yaml declares one tool ('tool:') or one resource ('resource:')",
                doc.span(()),
            )
        )
    return found


def _holds_resource(doc: SourceDoc) -> bool:
    """A file beside server.yaml is a resource file when its top level says `resource:`;
    anything else is read as a tool file, whose errors then name `tool:`."""
    return isinstance(doc.data, dict) and "resource" in doc.data and "tool" not in doc.data


def _too_many(count: int, span: Span) -> Diagnostic:
    return diagnostic(
        "TOOLS_TOO_MANY",
        f"the server declares {count} tools, over the limit of {MAX_TOOLS}",
        span,
        "models choose better among fewer tools: split the server, or merge tools that differ by a parameter",
    )

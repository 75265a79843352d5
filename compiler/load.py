"""Find spec sources and parse them: a server is one YAML file, or a folder holding
`server.yaml` beside one YAML file per tool."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from .diagnostics import Diagnostic, Result, Span
from .parse import parse_document
from .rules import diagnostic
from .source import NodePath, SourceDoc, load_yaml
from .spec import ServerFile, Tool, ToolFile

SERVER_FILE = "server.yaml"
YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class ToolSource:
    doc: SourceDoc
    tool: Tool
    base: NodePath  # where the tool mapping sits in its document


@dataclass(frozen=True)
class SpecSource:
    server_doc: SourceDoc
    server: ServerFile
    tools: tuple[ToolSource, ...]
    files: tuple[tuple[str, str], ...]  # (display path, sha256) of every file read


def display_path(path: Path) -> str:
    """Paths relative to the working directory when under it, so messages stay short."""
    try:
        return (
            os.path.relpath(path.resolve(), Path.cwd())
            if path.resolve().is_relative_to(Path.cwd())
            else str(path)
        )
    except ValueError:
        return str(path)


def discover_specs(specs_dir: Path) -> list[Path]:
    if not specs_dir.is_dir():
        return []
    found = []
    for entry in sorted(specs_dir.iterdir()):
        if (entry.is_dir() and (entry / SERVER_FILE).is_file()) or (
            entry.is_file() and entry.suffix in YAML_SUFFIXES
        ):
            found.append(entry)
    return found


def load_spec(path: Path) -> Result[SpecSource]:
    if path.is_dir():
        return _load_folder(path)
    if path.is_file():
        return _load_file(path)
    return Result(
        None, (diagnostic("SPEC_NOT_FOUND", "no spec file or folder here", Span(display_path(path))),)
    )


def _read(path: Path) -> tuple[Result[SourceDoc], tuple[str, str]]:
    display = display_path(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return load_yaml(path, display), (display, digest)


def _load_file(path: Path) -> Result[SpecSource]:
    loaded, file_id = _read(path)
    if loaded.value is None:
        return Result(None, loaded.diagnostics)
    parsed = parse_document(loaded.value, ServerFile)
    if parsed.value is None:
        return Result(None, parsed.diagnostics)
    tools = tuple(ToolSource(loaded.value, tool, ("tools", i)) for i, tool in enumerate(parsed.value.tools))
    return Result(SpecSource(loaded.value, parsed.value, tools, (file_id,)))


def _load_folder(folder: Path) -> Result[SpecSource]:
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
    head = _load_file(server_path)
    diagnostics: list[Diagnostic] = list(head.diagnostics)
    tools: list[ToolSource] = list(head.value.tools) if head.value else []
    files = list(head.value.files) if head.value else []
    for tool_path in sorted(folder.iterdir()):
        if tool_path.name == SERVER_FILE or tool_path.suffix not in YAML_SUFFIXES or not tool_path.is_file():
            continue
        loaded, file_id = _read(tool_path)
        files.append(file_id)
        if loaded.value is None:
            diagnostics.extend(loaded.diagnostics)
            continue
        parsed = parse_document(loaded.value, ToolFile)
        diagnostics.extend(parsed.diagnostics)
        if parsed.value is not None:
            tools.append(ToolSource(loaded.value, parsed.value.tool, ("tool",)))
    if head.value is None or diagnostics:
        return Result(None, tuple(diagnostics))
    return Result(SpecSource(head.value.server_doc, head.value.server, tuple(tools), tuple(files)))

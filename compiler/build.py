"""Compile specs and put the result on disk, or compare it with what is there (`--check`)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from .diagnostics import Diagnostic, Span, has_errors, sort_diagnostics
from .emit.server import GENERATED_DIR, emit_server, header_lines
from .files import leftover_temp_files, remove_staging, replace_tree, write_text_atomic
from .ir import ServerIR
from .lint.linter import lint_server
from .lower.server import compile_spec
from .review.changelog import build_changelog, changelog_files, check_version, load_releases, render_markdown
from .rules import diagnostic
from .spec.load import discover_specs, display_path
from .wire import wire_from_ir


@dataclass(frozen=True)
class BuildOutput:
    servers: tuple[ServerIR, ...]
    files: dict[str, str]
    diagnostics: tuple[Diagnostic, ...]


def build(
    project: Path, spec_paths: Iterable[Path] = (), settings: Mapping[str, str] | None = None
) -> BuildOutput:
    """Compile the given specs (default: every spec under specs/) into generated files.
    `settings` are values given on the command line (`--set NAME=VALUE`): a database setting's
    value is the database the build checks SQL statements against."""
    _importable(project)
    paths = spec_files(project, spec_paths)
    servers: list[ServerIR] = []
    files: dict[str, str] = {}
    diagnostics: list[Diagnostic] = []
    owners: dict[str, Path] = {}
    for path in paths:
        result = compile_spec(path, build_settings=settings)
        diagnostics.extend(result.diagnostics)
        server = result.value
        if server is None:
            continue
        if server.name in owners:
            diagnostics.append(
                diagnostic(
                    "SERVER_NAME_DUPLICATE",
                    f"server '{server.name}' is also defined by {display_path(owners[server.name])}",
                    Span(display_path(path)),
                )
            )
            continue
        owners[server.name] = path
        releases, problems = load_releases(project, server.name)
        current = wire_from_ir(server, display_path(path))
        problems += check_version(server, current, releases)
        diagnostics.extend(problems)
        if has_errors(problems):
            continue
        changelog = build_changelog(server, current, releases)
        servers.append(server)
        named = _named_from_project(server, project)
        files.update(
            emit_server(
                named,
                score=lint_server(current).score,
                changelog_markdown=render_markdown(changelog, heading="##"),
            )
        )
        files.update(changelog_files(changelog, header_lines(named)))
    return BuildOutput(tuple(servers), files, tuple(sort_diagnostics(diagnostics)))


def spec_files(project: Path, spec_paths: Iterable[Path] = ()) -> list[Path]:
    return list(spec_paths) or discover_specs(project / "specs")


def unknown_settings(project: Path, spec_paths: Iterable[Path], names: Iterable[str]) -> list[str]:
    """The names, among `names`, that no spec of the build declares (itself or by implication)."""
    from .lower.server import POSTGRES_SETTINGS, SQL_SETTINGS
    from .spec.load import load_spec

    known: set[str] = set()
    for path in spec_files(project, spec_paths):
        loaded = load_spec(path).value
        if loaded is None:
            continue
        server = loaded.server.server
        known.update(server.settings)
        if server.postgres is not None:
            known.update(POSTGRES_SETTINGS)
        elif server.duckdb is not None:
            known.update(SQL_SETTINGS)
    return [name for name in names if name not in known]


def stale_files(project: Path, output: BuildOutput) -> list[str]:
    """Generated files that differ from what the specs produce, are missing, or are left over."""
    stale = []
    for relative, text in sorted(output.files.items()):
        target = project / relative
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            stale.append(relative)
    stale.extend(_leftovers(project, output))
    return stale


def write_files(project: Path, output: BuildOutput) -> list[str]:
    """Put the build on disk crash-safely and return what changed: each server's generated
    folder is replaced as a whole when any of its files changed (see files.py), every other file
    (the changelogs) is written atomically on its own."""
    stale = stale_files(project, output)
    for server in output.servers:
        folder = f"{GENERATED_DIR}/{server.name}/"
        remove_staging(project / folder.rstrip("/"))
        if any(relative.startswith(folder) for relative in stale):
            tree = {r[len(folder) :]: text for r, text in output.files.items() if r.startswith(folder)}
            replace_tree(project / folder.rstrip("/"), tree)
    for relative in stale:
        if relative in output.files and not relative.startswith(f"{GENERATED_DIR}/"):
            write_text_atomic(project / relative, output.files[relative])
    for path in interrupted_writes(project, output):
        path.unlink(missing_ok=True)
    return stale


def _leftovers(project: Path, output: BuildOutput) -> list[str]:
    """Files under generated/<server>/ of a built server that the build no longer produces."""
    leftovers = []
    for server in output.servers:
        folder = project / GENERATED_DIR / server.name
        if not folder.is_dir():
            continue
        # Only generated/ is lynxc's alone; schema-changelog/ also holds the released baselines.
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(project).as_posix()
            if path.is_file() and "__pycache__" not in path.parts and relative not in output.files:
                leftovers.append(relative)
    return leftovers


def interrupted_writes(project: Path, output: BuildOutput) -> list[Path]:
    """Temporary files a killed `build` or `release` left beside the changelogs and baselines
    (a generated folder is swapped in whole, and its staging removed, by write_files)."""
    folders = {(project / r).parent for r in output.files if not r.startswith(f"{GENERATED_DIR}/")}
    return [path for folder in sorted(folders) for path in leftover_temp_files(folder)]


def _named_from_project(server: ServerIR, project: Path) -> ServerIR:
    """The server with its spec files named relative to the project, as the generated headers
    record them. The compiler names files relative to where the command runs, so messages stay
    clickable; a header must not, or `lynxc --project DIR build --check` run from elsewhere
    would call every file stale. A spec outside the project keeps the name it was given."""
    root = project.resolve()

    def rebase(name: str) -> str:
        path = Path(name).resolve()
        return path.relative_to(root).as_posix() if path.is_relative_to(root) else name

    def rebased(span: Span) -> Span:
        return replace(span, file=rebase(span.file))

    return replace(
        server,
        spec_files=tuple(replace(spec, path=rebase(spec.path)) for spec in server.spec_files),
        tools=tuple(replace(tool, span=rebased(tool.span)) for tool in server.tools),
        resources=tuple(replace(resource, span=rebased(resource.span)) for resource in server.resources),
    )


def _importable(project: Path) -> None:
    """Custom backends (`package.module:function`) are imported relative to the project root."""
    root = str(project.resolve())
    if root not in sys.path:
        sys.path.insert(0, root)

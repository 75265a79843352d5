"""Compile specs and put the result on disk, or compare it with what is there (`--check`).

With a cache (cache.py), each server's build records what it read (depfile.py): when none of
it changed, the next build takes the server's files and diagnostics from the cache without
compiling, or importing the compiler's heavy parts (pydantic spec models, the code generator,
DuckDB, jinja2). A server compiled again still reuses, from the same cache, the models of
every tool whose schemas did not change (emit/models.py)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cache import Store, cache_dir, diagnostic_from_payload, diagnostic_payload
from .depfile import BUILD_INPUT_EVENT, Recorder, unchanged
from .diagnostics import Diagnostic, Span, has_errors, sort_diagnostics
from .files import GENERATED_DIR, leftover_temp_files, remove_staging, replace_tree, write_text_atomic
from .fingerprint import compiler_fingerprint, package_roots
from .rules import diagnostic
from .spec.discover import discover_specs, display_path

if TYPE_CHECKING:
    from .ir import ServerIR

_SERVER_ENTRY = "server"


@dataclass(frozen=True)
class BuildOutput:
    """What a build produced. `names` are the servers built, in order; `servers` their IRs,
    except in a build with a cache, where it is empty (a reused server is never compiled)."""

    servers: tuple[ServerIR, ...]
    files: dict[str, str]
    diagnostics: tuple[Diagnostic, ...]
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.names and self.servers:
            object.__setattr__(self, "names", tuple(server.name for server in self.servers))


@dataclass
class _ServerBuild:
    """One spec's part of a build: its compile diagnostics, then (once compiled) its name, the
    release checks' diagnostics and its files (none when those failed)."""

    compiled: list[Diagnostic]
    name: str | None = None
    released: list[Diagnostic] = field(default_factory=list)
    files: dict[str, str] | None = None
    server: ServerIR | None = None


def open_cache(project: Path) -> Store:
    """The project's build cache (`.lynxc-cache/`, or `LYNXC_CACHE_DIR`)."""
    return Store(cache_dir(project), compiler_fingerprint())


def build(
    project: Path,
    spec_paths: Iterable[Path] = (),
    settings: Mapping[str, str] | None = None,
    *,
    cache: Store | None = None,
) -> BuildOutput:
    """Compile the given specs (default: every spec under specs/) into generated files.
    `settings` are values given on the command line (`--set NAME=VALUE`): a database setting's
    value is the database the build checks SQL statements against. Such a build never uses
    `cache`: a live database cannot be hashed. A build that uses a cache hands out no IRs
    (`servers` is empty): `names` says what it built."""
    _importable(project)
    paths = spec_files(project, spec_paths)
    if settings:
        cache = None
    if cache is not None:
        # Made first: a build that lists the project folder (Python's imports do) then sees it
        # there, as the next build will.
        with contextlib.suppress(OSError):
            cache.root.mkdir(parents=True, exist_ok=True)
    servers: list[ServerIR] = []
    names: list[str] = []
    files: dict[str, str] = {}
    diagnostics: list[Diagnostic] = []
    owners: dict[str, Path] = {}
    for path in paths:
        part = _server_build(project, path, settings, cache)
        diagnostics.extend(part.compiled)
        if part.name is None:
            continue
        if part.name in owners:
            diagnostics.append(
                diagnostic(
                    "SERVER_NAME_DUPLICATE",
                    f"server '{part.name}' is also defined by {display_path(owners[part.name])}",
                    Span(display_path(path)),
                )
            )
            continue
        owners[part.name] = path
        diagnostics.extend(part.released)
        if part.files is None:
            continue
        names.append(part.name)
        if part.server is not None and cache is None:
            servers.append(part.server)
        files.update(part.files)
    return BuildOutput(tuple(servers), files, tuple(sort_diagnostics(diagnostics)), tuple(names))


def _server_build(
    project: Path, path: Path, settings: Mapping[str, str] | None, cache: Store | None
) -> _ServerBuild:
    """One spec's build: from the cache when everything it read last time is unchanged."""
    if cache is None:
        return _compile_server(project, path, settings, None)
    key = {
        "spec": os.path.abspath(path),
        "given": str(path),
        "project": os.path.abspath(project),
        "cwd": os.getcwd(),  # messages name files relative to it
    }
    reused = cache.get(_SERVER_ENTRY, key, _reused)
    if reused is not None:
        return reused
    kept = [str(project), str(path if path.is_dir() else path.parent)]
    listed = str(path) if path.is_dir() else None
    with Recorder(kept, [*map(str, package_roots()), str(cache.root)], listed) as seen:
        part = _compile_server(project, path, settings, cache)
    # Only a clean build is kept: an error may come from a file that is missing, which no
    # recorded read would notice appearing (and a failing build is being edited anyway).
    if part.files is not None and not has_errors([*part.compiled, *part.released]) and seen.still_valid():
        cache.put(
            _SERVER_ENTRY,
            key,
            {
                "inputs": seen.inputs,
                "name": part.name,
                "compiled": [diagnostic_payload(d) for d in part.compiled],
                "released": [diagnostic_payload(d) for d in part.released],
                "files": part.files,
            },
        )
    return part


def _reused(entry: Any) -> _ServerBuild | None:
    """The server's build kept in `entry`, if every input it read still holds the same."""
    try:
        if not unchanged(entry["inputs"]):
            return None
        files = entry["files"]
        if not isinstance(entry["name"], str) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in files.items()
        ):
            return None
        return _ServerBuild(
            compiled=[diagnostic_from_payload(d) for d in entry["compiled"]],
            name=entry["name"],
            released=[diagnostic_from_payload(d) for d in entry["released"]],
            files=dict(files),
        )
    except (KeyError, TypeError, ValueError, AttributeError):  # not what put() writes: a miss
        return None


def _compile_server(
    project: Path, path: Path, settings: Mapping[str, str] | None, cache: Store | None
) -> _ServerBuild:
    # Imported here: a build that reuses every server never loads the compiler proper.
    from .emit.server import emit_server, header_lines
    from .lint.linter import lint_server
    from .lower.server import compile_spec
    from .review.changelog import (
        CHANGELOG_DIR,
        RELEASES_FILE,
        build_changelog,
        changelog_files,
        check_version,
        load_releases,
        render_markdown,
    )
    from .wire import wire_from_ir

    result = compile_spec(path, build_settings=settings, cache=cache)
    part = _ServerBuild(list(result.diagnostics))
    server = result.value
    if server is None:
        return part
    part.name, part.server = server.name, server
    # Whether the server has releases decides its output, even when it has none (then nothing
    # is read: load_releases only asks whether the index is there).
    sys.audit(BUILD_INPUT_EVENT, str(project / CHANGELOG_DIR / server.name / RELEASES_FILE))
    releases, problems = load_releases(project, server.name)
    current = wire_from_ir(server, display_path(path))
    problems += check_version(server, current, releases)
    part.released = problems
    if has_errors(problems):
        return part
    changelog = build_changelog(server, current, releases)
    named = _named_from_project(server, project)
    part.files = {
        **emit_server(
            named,
            score=lint_server(current).score,
            changelog_markdown=render_markdown(changelog, heading="##"),
            cache=cache,
        ),
        **changelog_files(changelog, header_lines(named)),
    }
    return part


def report_diagnostics(diagnostics: Iterable[Diagnostic], verb: str, consequence: str) -> bool:
    """Print every diagnostic to stderr, then, when any is an error, `lynxc VERB: N error(s);
    CONSEQUENCE`. Whether there was an error."""
    diagnostics = list(diagnostics)
    for diag in diagnostics:
        print(diag.render(), file=sys.stderr)
    errors = sum(d.severity == "error" for d in diagnostics)
    if errors:
        print(f"lynxc {verb}: {errors} error(s); {consequence}", file=sys.stderr)
    return bool(errors)


def spec_files(project: Path, spec_paths: Iterable[Path] = ()) -> list[Path]:
    return list(spec_paths) or discover_specs(project / "specs")


def unknown_settings(project: Path, spec_paths: Iterable[Path], names: Iterable[str]) -> list[str]:
    """The names, among `names`, that no spec of the build declares (itself or by implication)."""
    names = list(names)
    if not names:  # nothing to look up: no spec is parsed
        return []
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
    for name in output.names:
        folder = f"{GENERATED_DIR}/{name}/"
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
    for name in output.names:
        folder = project / GENERATED_DIR / name
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
        collections=tuple(replace(c, span=rebased(c.span)) for c in server.collections),
        prompts=tuple(
            replace(
                p, span=rebased(p.span), argument_spans=tuple((a, rebased(s)) for a, s in p.argument_spans)
            )
            for p in server.prompts
        ),
        mcp_resources=tuple(replace(r, span=rebased(r.span)) for r in server.mcp_resources),
    )


def _importable(project: Path) -> None:
    """Custom backends (`package.module:function`) are imported relative to the project root."""
    root = str(project.resolve())
    if root not in sys.path:
        sys.path.insert(0, root)

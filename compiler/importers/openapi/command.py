"""`lynxc import openapi`: import, write the folder spec, print what was imported and skipped,
then lint the new spec and print its score."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TextIO

from .errors import OpenAPIError
from .importer import ImportResult, import_document
from .writer import SpecExists, render_files, write_spec

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def run_import(
    project: Path,
    source: str,
    name: str,
    *,
    tags: tuple[str, ...] = (),
    operations: tuple[str, ...] = (),
    force: bool = False,
    out: TextIO,
    err: TextIO,
) -> int:
    try:
        result = import_document(source, name, tags=tags, operations=operations)
    except ValueError as problem:  # the name given
        print(f"lynxc import openapi: --name {problem}", file=err)
        return EXIT_USAGE
    except OpenAPIError as problem:
        print(f"lynxc import openapi: {problem}", file=err)
        return EXIT_FAILED
    if not result.tools:
        _summary(result, out)
        print(f"lynxc import openapi: {source}: no operation could be imported; nothing written", file=err)
        return EXIT_FAILED
    header = f"Imported by `lynxc import openapi {source} --name {name}`; edit freely."
    try:
        target = write_spec(project / "specs", name, render_files(result, header), force=force)
    except SpecExists as problem:
        print(f"lynxc import openapi: {problem}", file=err)
        return EXIT_USAGE
    except OSError as problem:
        print(f"lynxc import openapi: cannot write specs/{name}: {problem.strerror}", file=err)
        return EXIT_FAILED
    _summary(result, out)
    print(f"wrote {target} ({len(result.tools) + 1} files)", file=out)
    return lint_report(target, out, err)


def _summary(result: ImportResult, out: TextIO) -> None:
    print(f"{len(result.imported)} operation(s) imported, {len(result.skipped)} skipped", file=out)
    for line in result.imported:
        print(f"  imported {line}", file=out)
    for skipped in result.skipped:
        print(f"  skipped {skipped.operation}: {skipped.reason}", file=out)
    for note in result.notes:
        print(f"  note {note}", file=out)


def lint_report(spec: Path, out: TextIO, err: TextIO) -> int:
    """Lint the written spec as `lynxc lint --score` would and print its findings and score."""
    from ...diagnostics import has_errors
    from ...inputs import DiffInputError, load_side
    from ...lint.linter import lint_server

    try:
        side = load_side(str(spec), spec.parent.parent)
    except DiffInputError as problem:
        print(f"lynxc import openapi: lint: {problem}", file=err)
        return EXIT_FAILED
    if has_errors(side.diagnostics):
        for diag in side.diagnostics:
            print(diag.render(), file=err)
        print(f"lynxc import openapi: {spec} does not compile; not linted", file=err)
        return EXIT_FAILED
    for result in (lint_server(server) for server in side.servers.values()):
        counts = Counter(finding.severity for finding in result.findings)
        found = (
            ", ".join(f"{counts[s]} {s}(s)" for s in ("error", "warning", "info") if counts[s])
            or "no findings"
        )
        print(f"lint: {len(result.server.tools)} tools, {found}", file=out)
        print(
            f"lint score {result.score.total:.2f} ({result.score.tier}); "
            f"`lynxc lint --score {spec}` says where it falls short",
            file=out,
        )
    return EXIT_OK

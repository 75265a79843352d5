"""`lynxc`: the command line. Each verb imports what it needs when it runs, so `lynxc serve`
starts without loading the compiler's heavier parts."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the runtime's lynx backend loads only when `lynxc index` runs
    from lynxc.runtime.backends.lynx.sources import Source

    from .build import BuildOutput
    from .ir import ServerIR

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_BROKEN_PIPE = 128 + 13  # what a shell reports for a writer stopped by SIGPIPE


def main(argv: list[str] | None = None) -> None:
    try:
        try:
            status = _run(argv)
        except SystemExit as done:  # --help and usage errors: their output is flushed below too
            status = done.code
        sys.stdout.flush()  # a closed pipe is reported here, not in the interpreter's last flush
    except BrokenPipeError:
        # The reader went away (`lynxc tools X | head`): stop quietly, as Unix tools do. Later
        # writes (the interpreter's own flush at exit) go to /dev/null instead of failing again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = EXIT_BROKEN_PIPE
    sys.exit(status)


def _add_engine_arguments(parser: argparse.ArgumentParser, engine_help: str) -> None:
    """`--engine local|ray` and `--address`, as `index` and `load` take them."""
    parser.add_argument("--engine", choices=("local", "ray"), default="local", help=engine_help)
    parser.add_argument(
        "--address",
        help="the Ray cluster to join (as `ray start` prints it; default: RAY_ADDRESS, else a local Ray)",
    )


def _run(argv: list[str] | None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help()
        return EXIT_USAGE
    return args.run(args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lynxc",
        description="A declarative compiler for MCP servers: YAML specs in, typed MCP servers out.",
    )
    parser.add_argument(
        "--project",
        type=Path,
        default=Path("."),
        help="the project folder holding specs/ and generated/ (default .)",
    )
    verbs = parser.add_subparsers(title="commands", metavar="COMMAND")

    init = verbs.add_parser("init", help="scaffold a server spec with one documented tool and its backend")
    init.add_argument("name", help="server name: lowercase letters, digits and dashes")
    init.set_defaults(run=_init)

    build = verbs.add_parser("build", help="compile specs into generated/<server>/")
    build.add_argument(
        "specs", nargs="*", type=Path, metavar="SPEC", help="spec files or folders (default: specs/*)"
    )
    build.add_argument("--check", action="store_true", help="write nothing; exit 1 naming stale files")
    build.add_argument(
        "--no-cache",
        action="store_true",
        help="compile everything and write no cache (the cache, .lynxc-cache/, is safe to delete)",
    )
    build.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting's value for the build: a database setting (a PostgreSQL DSN) names the "
        "database SQL statements are checked against; repeatable",
    )
    build.set_defaults(run=_build)

    serve = verbs.add_parser("serve", help="serve a generated server over stdio or Streamable HTTP")
    serve.add_argument("server", help="server name (generated/<server>/) or a generated folder")
    from lynxc.runtime.cli import add_serve_arguments

    add_serve_arguments(serve)
    serve.set_defaults(run=_serve)

    dev = verbs.add_parser(
        "dev", help="watch the project, rebuild on save and keep serving (sessions survive rebuilds)"
    )
    from .dev.arguments import add_dev_arguments

    add_dev_arguments(dev)
    dev.set_defaults(run=_dev)

    tools = verbs.add_parser("tools", help="print the exact tools/list JSON of a generated server")
    tools.add_argument("server")
    tools.set_defaults(run=_tools)

    schema = verbs.add_parser("schema", help="print the JSON Schema of the spec format, for editors")
    schema.set_defaults(run=_schema)

    config = verbs.add_parser("config", help="print an mcpServers entry for an MCP client (Claude Desktop)")
    config.add_argument("server")
    config.set_defaults(run=_config)

    diff = verbs.add_parser(
        "diff",
        help="review schema changes between two versions of servers",
        description=(
            "Compare BASE with HEAD, judge every changed field (of tools, records, prompts and MCP "
            "resources), and exit by --fail-on. Each side is a spec file or folder, a folder of specs, a "
            "generated folder or tools.json, a saved tools/list JSON (with `prompts`, `resources` and "
            "`resourceTemplates` beside `tools` to compare those too), "
            "git:REF[:PATH] (the specs at a git ref of this project) or release:[SERVER[@VERSION]] (released "
            "baselines). A breaking change is allowed (reported; --fail-on counts it as a warning) when "
            "HEAD's version bumps major (minor below 1.0) over the release it follows, or BASE's version, "
            "or HEAD's spec acknowledges it. Exit codes: 0 nothing at or above the --fail-on level, "
            "1 something is, 2 an input could not be read."
        ),
    )
    diff.add_argument(
        "base",
        nargs="?",
        default=None,
        help="what the change starts from (default: release: once a server has a release, else git:HEAD)",
    )
    diff.add_argument("head", nargs="?", default=None, help="what it ends at (default: the project's specs/)")
    diff.add_argument("--format", choices=("text", "markdown", "json", "github"), default="text")
    diff.add_argument(
        "--max-chars",
        type=_max_chars,
        metavar="N",
        help="markdown: keep the summary under N characters (default 60000; a GitHub comment holds 65536)",
    )
    diff.add_argument(
        "--report",
        metavar="PATH",
        help="also write the full review, every finding, as markdown to PATH (the summary names it)",
    )
    diff.add_argument(
        "--fail-on",
        choices=("breaking", "warning", "any", "never"),
        default="breaking",
        help="default breaking",
    )
    diff.set_defaults(run=_diff)

    index = verbs.add_parser(
        "index",
        help="build or update the search index of a server with sources (lynx-mcp)",
        description=(
            "Index each source of SERVER (or only --source NAME) into its LanceDB table, incrementally by "
            "content hash: changed files are re-chunked, deleted ones removed. Settings as for serve."
        ),
    )
    index.add_argument("server")
    index.add_argument("--source", help="index only this source")
    index.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE")
    _add_engine_arguments(
        index, "local: this process; ray: chunk and embed in Ray workers, commit their fragments together"
    )
    index.set_defaults(run=_index)

    load = verbs.add_parser(
        "load",
        help="load records from files into a collection of a records server (all or nothing)",
        description=(
            "Validate every row of the FILEs (.jsonl, .ndjson, .json, .csv or .parquet, each optionally "
            ".gz) against COLLECTION's declaration, then upsert them by key into the store under the "
            "server's data_dir: changed records get a new revision, unchanged ones stay as they are. "
            "With any bad row nothing is written. Settings as for serve. Exit codes: 0 loaded, 1 the "
            "rows were refused or another load is running, 2 bad arguments or an unreadable file."
        ),
    )
    load.add_argument("server", help="server name (generated/<server>/) or a generated folder")
    load.add_argument(
        "collection",
        metavar="COLLECTION",
        help="the collection to load (its name in the spec), or NAME=FILE to load several collections, "
        "parents before children",
    )
    load.add_argument("files", nargs="*", metavar="FILE", help="files of records (or more NAME=FILE)")
    load.add_argument(
        "--embed",
        choices=["now", "later"],
        default="now",
        help="later: write the records without vectors (searchable by text at once); "
        "`lynxc embed` fills them",
    )
    load.add_argument(
        "--delete-missing", action="store_true", help="remove the records whose key is in none of the files"
    )
    load.add_argument(
        "--ignore-extra",
        action="store_true",
        help="skip columns (top-level keys) the collection does not declare instead of refusing the rows",
    )
    _add_engine_arguments(
        load, "ray: read, validate and embed the files on a Ray cluster's workers; the commit stays one"
    )
    load.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE")
    load.set_defaults(run=_load)

    embed = verbs.add_parser(
        "embed",
        help="embed the records a `lynxc load --embed later` left without vectors (all or nothing)",
        description=(
            "Fill the vectors of the records of COLLECTIONs (default: every collection with meaning fields) "
            "that have none, with the embedder each was loaded with; commits like a load (one pointer "
            "move, under the load lock). Exit codes as for load."
        ),
    )
    embed.add_argument("server", help="server name (generated/<server>/) or a generated folder")
    embed.add_argument(
        "collections", nargs="*", metavar="COLLECTION", help="collections to embed (default: all)"
    )
    embed.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUE")
    embed.set_defaults(run=_embed)

    test = verbs.add_parser(
        "test",
        help="build, serve and run the spec examples of servers (and fuzz their tools) through an MCP client",
        description=(
            "Build the servers (in memory: generated/ is left alone), run each spec's test fixture, "
            "serve each build with `lynxc serve --transport stdio` and run its tools' examples "
            "through the MCP client; with --fuzz N, also call each local read-only tool with N "
            "argument sets drawn from its inputSchema and with near-misses of it. Exit codes: 0 all "
            "passed, 1 something failed, 2 a usage error."
        ),
    )
    from .testing.command import add_arguments as add_test_arguments

    add_test_arguments(test)
    test.set_defaults(run=_test)

    lint = verbs.add_parser(
        "lint",
        help="check tool definitions and score them TDQS-style",
        description=(
            "Lint the tool definitions of specs (default: every spec in specs/) or of saved tools/list "
            "JSON, so servers lynxc did not build can be checked too. Exit codes: 0 nothing at or above "
            "the --fail-on severity, 1 something is, 2 an input could not be read."
        ),
    )
    lint.add_argument(
        "inputs", nargs="*", metavar="INPUT", help="spec files or folders, tools.json, tools/list JSON"
    )
    lint.add_argument("--format", choices=("text", "json", "github", "sarif"), default="text")
    lint.add_argument(
        "--fail-on", choices=("error", "warning", "never"), default="error", help="default error"
    )
    lint.add_argument("--score", action="store_true", help="show the score of every tool by dimension")
    lint.set_defaults(run=_lint)

    release = verbs.add_parser(
        "release",
        help="record a server's current schema as the baseline of its version",
        description=(
            "Snapshot the exact tools/list of SERVER's spec as schema-changelog/SERVER/<version>.json, "
            "add it to releases.json with its date, and rebuild so CHANGELOG.md shows it."
        ),
    )
    release.add_argument("server", help="server name (as in its spec)")
    release.add_argument("--date", help="release date, YYYY-MM-DD (default: today, UTC)")
    release.set_defaults(run=_release)

    keys = verbs.add_parser(
        "keys",
        help="add, list or revoke a server's API keys (kept hashed in a keys file)",
        description="Make, list and revoke API keys: kept as SHA-256 hashes in a keys file that a "
        "server checks callers against.",
    )
    from .keys import add_keys_arguments

    add_keys_arguments(keys)
    keys.set_defaults(run=_keys)

    imports = verbs.add_parser("import", help="write a spec from a foreign API description (openapi)")
    kinds = imports.add_subparsers(title="formats", metavar="FORMAT")
    openapi = kinds.add_parser(
        "openapi",
        help="an OpenAPI 3.0/3.1 or Swagger 2.0 document -> specs/NAME/ with one HTTP tool per operation",
        description=(
            "Import SOURCE (a file or an http(s) URL) into specs/NAME/: server.yaml and one tool file per "
            "operation; what cannot be mapped is skipped and listed. Then lint the new spec and print its "
            "score. Exit codes: 0 imported, 1 the document cannot be imported, 2 a usage error."
        ),
    )
    openapi.add_argument("source", help="the document: a file or an http(s) URL")
    openapi.add_argument("--name", required=True, help="server name: lowercase letters, digits and dashes")
    openapi.add_argument(
        "--tag", action="append", default=[], help="only operations with this tag; repeatable"
    )
    openapi.add_argument(
        "--operation",
        action="append",
        default=[],
        metavar="ID",
        help="only this operationId (or tool name); repeatable",
    )
    openapi.add_argument("--force", action="store_true", help="replace specs/NAME/ if it exists")
    openapi.set_defaults(run=_import_openapi)

    docs = verbs.add_parser(
        "docs",
        help="write a static documentation site of the servers (default: site/)",
        description=(
            "Build the servers' specs and write a static HTML site: an index with a tool search, one "
            "page per server (tools, parameters, output schemas, examples, lint scores, declared data, "
            "prompts, resources, settings) and its changelog. The site is swapped in whole; a folder "
            "not written by `lynxc docs` is never replaced. Exit codes: 0 written, 1 the specs do not "
            "build (the old site is left as it was), 2 a usage error."
        ),
    )
    docs.add_argument("servers", nargs="*", metavar="SERVER", help="only these servers (default: all)")
    docs.add_argument(
        "--out", type=Path, metavar="DIR", help="where the site goes (default: site/ in the project)"
    )
    docs.set_defaults(run=_docs)

    rules = verbs.add_parser("rules", help="list the rule catalogue")
    rules.set_defaults(run=_rules)
    return parser


def _import_openapi(args: argparse.Namespace) -> int:
    from .importers.openapi.command import run_import

    return run_import(
        args.project,
        args.source,
        args.name,
        tags=tuple(args.tag),
        operations=tuple(args.operation),
        force=args.force,
        out=sys.stdout,
        err=sys.stderr,
    )


def _test(args: argparse.Namespace) -> int:
    from .testing.command import run

    return run(args)


def _build(args: argparse.Namespace) -> int:
    from .build import (
        build,
        interrupted_writes,
        open_cache,
        report_diagnostics,
        stale_files,
        unknown_settings,
        write_files,
    )

    settings: dict[str, str] = {}
    for item in args.set:
        name, equals, value = item.partition("=")
        if not equals or not name:
            print(f"lynxc build: --set takes NAME=VALUE, got {item.split('=')[0]!r}", file=sys.stderr)
            return EXIT_USAGE
        settings[name.strip()] = value
    unknown = unknown_settings(args.project, args.specs, settings)
    if unknown:
        print(
            f"lynxc build: --set {unknown[0]}: no spec of this build declares a setting named '{unknown[0]}'",
            file=sys.stderr,
        )
        return EXIT_USAGE
    cache = None if args.no_cache else open_cache(args.project)
    output = build(args.project, args.specs, settings, cache=cache)
    if report_diagnostics(output.diagnostics, "build", "nothing written"):
        return EXIT_FAILED
    if not output.names:
        print("lynxc build: no specs found (looked in specs/)", file=sys.stderr)
        return EXIT_FAILED
    if args.check:
        stale = stale_files(args.project, output)
        for relative in stale:
            print(
                f"{relative}: error GENERATED_STALE: out of date with its spec (run `lynxc build`)",
                file=sys.stderr,
            )
        leftovers = interrupted_writes(args.project, output)
        for path in leftovers:
            print(
                f"{path.relative_to(args.project).as_posix()}: error GENERATED_STALE: a temporary file of a "
                "write that was interrupted (run `lynxc build`, which removes it)",
                file=sys.stderr,
            )
        if stale or leftovers:
            return EXIT_FAILED
        print(f"lynxc build --check: {len(output.files)} generated files are up to date")
        return EXIT_OK
    changed = write_files(args.project, output)
    names = ", ".join(output.names)
    print(
        f"lynxc build: {names}: {len(changed)} file(s) written, {len(output.files) - len(changed)} unchanged"
    )
    return EXIT_OK


FAIL_LEVELS = {
    "breaking": ("breaking",),
    "warning": ("breaking", "warning"),
    "any": ("breaking", "warning", "info"),
}


def _max_chars(text: str) -> int:
    """--max-chars: a whole number large enough for a summary's headings and closing line."""
    from .review.render_markdown import MIN_MAX_CHARS

    if not text.isdigit() or int(text) < MIN_MAX_CHARS:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least {MIN_MAX_CHARS}, got {text!r}")
    return int(text)


def _diff(args: argparse.Namespace) -> int:
    from .diagnostics import has_errors
    from .files import write_text_atomic
    from .inputs import DiffInputError, default_base, load_side
    from .review.compare import review
    from .review.render import FORMATS
    from .review.render_markdown import DEFAULT_MAX_CHARS, render_markdown, render_report
    from .review.versions import judge_project_versions

    head = args.head if args.head is not None else str(args.project / "specs")
    base = args.base if args.base is not None else default_base(args.project)
    try:
        sides = [load_side(arg, args.project) for arg in (base, head)]
    except DiffInputError as err:
        print(f"lynxc diff: {err}", file=sys.stderr)
        return EXIT_USAGE
    for side in sides:
        for diag in side.diagnostics:
            print(diag.render(), file=sys.stderr)
    if any(has_errors(side.diagnostics) for side in sides):
        print("lynxc diff: a spec does not compile; nothing compared", file=sys.stderr)
        return EXIT_USAGE
    reviews = judge_project_versions(review(*sides), args.project)
    if args.report:
        try:
            write_text_atomic(Path(args.report), render_report(reviews))
        except OSError as err:
            print(
                f"lynxc diff: cannot write the report {args.report}: {err.strerror or err}", file=sys.stderr
            )
            return EXIT_USAGE
    if args.format == "markdown":
        sys.stdout.write(render_markdown(reviews, args.max_chars or DEFAULT_MAX_CHARS, args.report))
    else:
        sys.stdout.write(FORMATS[args.format](reviews))
    failing = FAIL_LEVELS.get(args.fail_on, ())
    return EXIT_FAILED if any(f.gate_level in failing for r in reviews for f in r.findings) else EXIT_OK


def _index(args: argparse.Namespace) -> int:
    from lynxc.runtime.errors import ToolError
    from lynxc.runtime.settings import SettingsError, unknown_environment
    from lynxc.runtime.startup_checks import startup_settings

    definition = _definition(args)
    if definition is None:
        return EXIT_USAGE
    for warning in unknown_environment(definition.settings_schema):
        print(f"lynxc index: warning: {warning}", file=sys.stderr)
    try:  # the checks `serve` makes: writing with another embedder would corrupt the index
        settings = startup_settings(definition, args.settings, os.getcwd(), deferred=True)
    except SettingsError as err:
        for problem in err.problems:
            print(f"lynxc index: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if "sources" not in settings or "index_dir" not in settings:
        print(f"lynxc index: {definition.name} has no sources to index", file=sys.stderr)
        return EXIT_USAGE
    from lynxc.runtime.backends.lynx.lease import LEASE_SECONDS, IndexBusy, LeaseLost, writer_lock
    from lynxc.runtime.backends.lynx.location import location_from_settings
    from lynxc.runtime.backends.lynx.sources import sources_from_settings

    try:
        sources = sources_from_settings(settings)
    except ToolError as err:
        print(f"lynxc index: {err}", file=sys.stderr)
        return EXIT_USAGE
    missing = [
        s
        for s in sources.values()
        if (not args.source or s.name == args.source) and not os.path.isdir(s.root)
    ]
    if missing:  # never index a missing folder: every file of it would count as removed
        for source in missing:
            print(
                f"lynxc index: source {source.name!r}: root {source.root!r} is not a folder", file=sys.stderr
            )
        return EXIT_USAGE
    if args.source and args.source not in sources:
        print(
            f"lynxc index: unknown source {args.source!r} (sources: {', '.join(sorted(sources))})",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if args.address and args.engine != "ray":
        print("lynxc index: --address names a Ray cluster: use it with --engine ray", file=sys.stderr)
        return EXIT_USAGE
    location = location_from_settings(settings)
    try:
        with writer_lock(location, settings.get("index_lease_seconds", LEASE_SECONDS)) as lease:
            if lease is not None and lease.took_over:
                held = lease.took_over
                print(
                    f"lynxc index: took over the expired writer lease of pid {held.get('pid', '?')} "
                    f"on host {held.get('host', '?')}",
                    file=sys.stderr,
                )
            _index_sources(sources, args, settings, lease.check if lease else None)
    except (IndexBusy, LeaseLost) as err:
        print(f"\nlynxc index: {location.redact(str(err))}", file=sys.stderr)
        return EXIT_FAILED
    except _IndexUnavailable as err:
        print(f"\nlynxc index: {location.redact(str(err))}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as err:
        # A store gone away or refusing mid-run: LanceDB and pylance raise RuntimeError, OSError or
        # pyarrow's errors for it, carrying Rust dumps and request URLs.
        from lynxc.runtime.backends.lynx.location import describe_error

        cause = describe_error(err)
        message = f"indexing into {location.uri!r} failed: {cause}; the index holds its last commit"
        print(f"\nlynxc index: {location.redact(message)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


class _IndexUnavailable(Exception):
    """The index or the Ray cluster cannot be reached: said in one line, not a traceback."""


def _index_sources(
    sources: Mapping[str, Source],
    args: argparse.Namespace,
    settings: Mapping[str, Any],
    guard: Callable[[], None] | None,
) -> None:
    from lynxc.runtime.backends.lynx.indexer import index_source
    from lynxc.runtime.backends.lynx.location import describe_error, location_from_settings
    from lynxc.runtime.backends.lynx.store import ANN_MIN_ROWS, Store
    from lynxc.runtime.backends.retrieval.embedders import get_embedder

    only = args.source
    try:
        store = Store(location_from_settings(settings))
    except Exception as err:  # an object store that refuses or cannot be reached
        raise _IndexUnavailable(
            f"cannot open the index {settings['index_dir']!r}: {describe_error(err)}"
        ) from None
    if guard is not None:
        store.guard = guard
    if args.engine == "ray":
        from lynxc.runtime.backends.lynx.distributed import RayUnavailable, index_with_ray

        try:
            reports = index_with_ray(sources, only, store, settings, args.address, _progress_bar)
        except RayUnavailable as err:
            raise _IndexUnavailable(str(err)) from None
        for report in reports:
            _print_report(report)
        return
    embedder = get_embedder(settings.get("embedder", "minilm"))
    for name, source in sources.items():
        if only and name != only:
            continue
        ann_min_rows = settings.get("ann_min_rows", ANN_MIN_ROWS)
        _print_report(index_source(source, store, embedder, _progress_bar(name), ann_min_rows))


def _progress_bar(name: str) -> Callable[[int, int, str], None]:
    def bar(done: int, total: int, stage: str) -> None:
        filled = int(30 * done / max(total, 1))
        line = f"[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} files"
        if stage == "indices":
            line += ", updating the search indices"
        print(f"\r{name}: {line}", end="", file=sys.stderr)

    return bar


def _print_report(report: Any) -> None:
    print(
        f"\r{report.source}: {report.files} files, {report.changed} (re)indexed into {report.chunks} chunks, "
        f"{report.removed} removed{' ' * 40}",
        file=sys.stderr,
    )


def _load(args: argparse.Namespace) -> int:
    from lynxc.runtime.settings import SettingsError, unknown_environment

    definition = _definition(args)
    if definition is None:
        return EXIT_USAGE
    from .load_plan import PlanError, dependency_order, targets

    resources = definition.records()
    try:
        plan = dict(targets(args.collection, args.files))
        order = _known_collections(definition, "load", list(plan))
        if order is None:
            return EXIT_USAGE
        order = dependency_order(
            [(name, plan[name]) for name in order],
            {r.name: [p.resource for p in r.parents] for r in resources.items},
        )
    except PlanError as err:
        print(f"lynxc load: {err}", file=sys.stderr)
        return EXIT_USAGE
    for warning in unknown_environment(definition.settings_schema):
        print(f"lynxc load: warning: {warning}", file=sys.stderr)
    try:
        settings = _load_settings(definition, args.settings)
    except SettingsError as err:
        for problem in err.problems:
            print(f"lynxc load: {problem}", file=sys.stderr)
        return EXIT_USAGE
    return _run_load(definition, args, settings, [(name, [str(f) for f in plan[name]]) for name in order])


def _known_collections(definition: Any, verb: str, asked: list[str]) -> list[str] | None:
    """`asked`, when the server declares each of them; else None, having said which it lacks."""
    from .suggest import did_you_mean

    names = [r.name for r in definition.records().items]
    if not names:
        print(f"lynxc {verb}: {definition.name} declares no collections", file=sys.stderr)
        return None
    for name in asked:
        if name not in names:
            hint = did_you_mean(name, names)
            print(
                f"lynxc {verb}: {definition.name} has no collection {name!r}"
                f" ({hint + ' ' if hint else ''}collections: {', '.join(sorted(names))})",
                file=sys.stderr,
            )
            return None
    return asked


def _embed(args: argparse.Namespace) -> int:
    from lynxc.runtime.backends.records.loader import embed_missing
    from lynxc.runtime.backends.records.store import LoadBusy, StoreError
    from lynxc.runtime.settings import SettingsError

    definition = _definition(args)
    if definition is None:
        return EXIT_USAGE
    every = [r.name for r in definition.records().items if r.meaning]
    names = _known_collections(definition, "embed", args.collections or every)
    if names is None:
        return EXIT_USAGE
    try:
        settings = _load_settings(definition, args.settings)
    except SettingsError as err:
        for problem in err.problems:
            print(f"lynxc embed: {problem}", file=sys.stderr)
        return EXIT_USAGE
    for name in names:
        try:
            report = embed_missing(definition, name, settings=settings, progress=_bar(name))
        except (LoadBusy, StoreError) as err:
            print(f"\r{' ' * 80}\rlynxc embed: {err}", file=sys.stderr)
            return EXIT_FAILED
        print(f"\r{' ' * 80}\r", end="", file=sys.stderr)
        print(
            f"{name}: {report.embedded_now} embedded; {report.embedded} of {report.records} records have "
            f"vectors in {report.table} (version {report.version}), {report.seconds:.1f} s"
        )
    return EXIT_OK


def _bar(resource: str) -> Callable[[str, int, int | None], None]:
    def bar(stage: str, done: int, total: int | None) -> None:
        if stage == "index":
            line = "updating the search indices"
        elif total is None:
            line = f"{done} rows validated"
        else:
            filled = int(30 * done / max(total, 1))
            noun = "embedded" if stage == "embed" else "written"
            line = f"[{'#' * filled}{'.' * (30 - filled)}] {done}/{total} records {noun}"
        print(f"\r{resource}: {line:<60}", end="", file=sys.stderr)

    return bar


def _load_settings(definition: Any, assignments: list[str]) -> dict[str, Any]:
    """The server's settings, paths made absolute. Not the serve-time backend checks: a load is
    what brings a store in line with the settings (another embedder re-embeds everything)."""
    from lynxc.runtime.setting_paths import resolve_paths
    from lynxc.runtime.settings import SettingsError, collect_settings, parse_assignments

    schema = definition.settings_schema
    values, problems = collect_settings(schema, parse_assignments(assignments))
    values, path_problems = resolve_paths(schema, values, os.getcwd())
    problems += path_problems
    if not problems and "data_dir" not in values:
        problems.append(f"{definition.name} has no data_dir setting: rebuild it with `lynxc build`")
    if problems:
        raise SettingsError(problems)
    return values


def _run_load(
    definition: Any, args: argparse.Namespace, settings: Mapping[str, Any], plan: list[tuple[str, list[str]]]
) -> int:
    """Load `plan` ([(collection, files)], parents first): one collection as before, several in one
    commit (load_many)."""
    from lynxc.runtime.backends.records.loader import LoadRejected, load, load_many
    from lynxc.runtime.backends.records.rows import FileError
    from lynxc.runtime.backends.records.store import LoadBusy, StoreError
    from lynxc.runtime.definition import DefinitionError

    shown = [False]

    def progress_for(resource: str) -> Callable[[str, int, int | None], None]:
        bar = _bar(resource)

        def shown_bar(stage: str, done: int, total: int | None) -> None:
            shown[0] = True
            bar(stage, done, total)

        return shown_bar

    def clear() -> None:
        if shown[0]:
            width = max(len(name) for name, _ in plan) + 62
            print(f"\r{' ' * width}\r", end="", file=sys.stderr)

    options: dict[str, Any] = {
        "delete_missing": args.delete_missing,
        "ignore_extra": args.ignore_extra,
        "embed": args.embed,
    }
    if args.address and args.engine != "ray":
        print("lynxc load: --address names a Ray cluster: use it with --engine ray", file=sys.stderr)
        return EXIT_USAGE
    failures: tuple[type[Exception], ...] = (LoadBusy, StoreError)
    engine = None
    if args.engine == "ray":
        from lynxc.runtime.backends.raycluster import RayUnavailable
        from lynxc.runtime.backends.records.distributed import RayEngine, RayLoadFailed

        failures += (RayUnavailable, RayLoadFailed)
        engine = options["engine"] = RayEngine(definition, args.address, None)
    try:
        if engine is not None:
            engine.connect()
        if len(plan) == 1:
            name, files = plan[0]
            reports = [
                load(definition, name, files, settings=settings, progress=progress_for(name), **options)
            ]
        else:
            reports = load_many(definition, plan, settings=settings, progress_for=progress_for, **options)
    except LoadRejected as err:
        clear()
        for line in err.lines():
            print(line, file=sys.stderr)
        print(f"lynxc load: {err}", file=sys.stderr)
        return EXIT_FAILED
    except FileError as err:
        clear()
        print(f"lynxc load: {err}; nothing loaded", file=sys.stderr)
        return EXIT_USAGE
    except DefinitionError as err:
        clear()
        print(f"lynxc load: {err}", file=sys.stderr)
        return EXIT_USAGE
    except failures as err:
        clear()
        print(f"lynxc load: {err}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        if engine is not None:
            engine.close()
    clear()
    for report in reports:
        generation = ", a new table generation" if report.new_generation else ""
        print(
            f"{report.resource}: {report.inserted} inserted, {report.updated} updated, {report.unchanged} "
            f"unchanged, {report.deleted} deleted; {report.records} records in {report.table} "
            f"(version {report.version}{generation}), {report.seconds:.1f} s"
        )
        if report.embedded is not None and report.embedded < report.records:
            print(
                f"{report.resource}: {report.embedded} of {report.records} records have vectors; searchable "
                f"by text now, by meaning once `lynxc embed {definition.name} {report.resource}` has run"
            )
    return EXIT_OK


def _lint(args: argparse.Namespace) -> int:
    from .diagnostics import has_errors
    from .inputs import DiffInputError, load_side
    from .lint.linter import lint_server
    from .lint.render import FORMATS

    inputs = args.inputs or [str(args.project / "specs")]
    servers = []
    try:
        for arg in inputs:
            side = load_side(arg, args.project)
            for diag in side.diagnostics:
                print(diag.render(), file=sys.stderr)
            if has_errors(side.diagnostics):
                print(f"lynxc lint: {arg} does not compile; nothing linted", file=sys.stderr)
                return EXIT_USAGE
            servers += side.servers.values()
    except DiffInputError as err:
        print(f"lynxc lint: {err}", file=sys.stderr)
        return EXIT_USAGE
    results = [lint_server(server) for server in servers]
    sys.stdout.write(FORMATS[args.format](results, score=args.score))
    failing = {"error": ("error",), "warning": ("error", "warning")}.get(args.fail_on, ())
    return EXIT_FAILED if any(f.severity in failing for r in results for f in r.findings) else EXIT_OK


def _release(args: argparse.Namespace) -> int:
    import datetime

    from .build import build, write_files
    from .diagnostics import has_errors
    from .review.changelog import load_releases, write_release
    from .wire import wire_from_ir

    date = args.date or datetime.datetime.now(datetime.UTC).date().isoformat()
    try:
        datetime.date.fromisoformat(date)
    except ValueError:
        print(f"lynxc release: --date {date!r} is not YYYY-MM-DD", file=sys.stderr)
        return EXIT_USAGE
    output = build(args.project)
    server = next((s for s in output.servers if s.name == args.server), None)
    for diag in output.diagnostics:
        print(diag.render(), file=sys.stderr)
    if server is None or has_errors(output.diagnostics):
        reason = (
            "the specs do not build" if has_errors(output.diagnostics) else f"no spec defines {args.server!r}"
        )
        print(f"lynxc release: {reason}; nothing released", file=sys.stderr)
        return EXIT_FAILED
    releases, _ = load_releases(args.project, server.name)  # the build reported any problem
    recorded = next((r for r in releases if r.version == server.version), None)
    if recorded is not None:
        return _finish_release(args.project, output, server, recorded.date)
    try:
        baseline = write_release(args.project, server, wire_from_ir(server, "").tools, date)
    except ValueError as err:  # another release recorded it since the build read the baselines
        print(f"lynxc release: {err}", file=sys.stderr)
        return EXIT_FAILED
    # A kill from here until the files are written leaves the release recorded and the changelog
    # stale: the next `lynxc release` (or `lynxc build`) finishes it, as _finish_release says.
    write_files(args.project, build(args.project))
    print(f"lynxc release: {server.name} {server.version} ({date}) recorded in {baseline}")
    return EXIT_OK


def _finish_release(project: Path, output: BuildOutput, server: ServerIR, date: str) -> int:
    """`release` of a version already recorded: finish it when a kill stopped it before the
    generated files were written, else say what a new release needs."""
    from .build import write_files

    name = f"{server.name} {server.version}"
    if write_files(project, output):
        print(f"lynxc release: {name} ({date}) was recorded, but not yet its generated files; now written")
        return EXIT_OK
    spec = server.version_span.file
    print(
        f"lynxc release: {name} is already released ({date}); for a new release, raise server.version "
        f"in {spec}, then run `lynxc release {server.name}` again",
        file=sys.stderr,
    )
    return EXIT_FAILED


def _definition(args: argparse.Namespace):
    from lynxc.runtime.definition import DefinitionError, load_definition

    folder = Path(args.server)
    if not (folder / "server.py").is_file():
        folder = args.project / "generated" / args.server
        if not folder.exists() and os.sep not in args.server:
            print(f"lynxc: {_unknown_server(args)}", file=sys.stderr)
            return None
    try:
        return load_definition(folder)
    except DefinitionError as err:
        print(f"lynxc: {err}", file=sys.stderr)
        return None


def _unknown_server(args: argparse.Namespace) -> str:
    """What to say for a server name with no generated folder: the close name of a built server
    (a typo), or the build a spec still waits for, or which servers there are."""
    from .suggest import did_you_mean

    generated = args.project / "generated"
    built = sorted(p.name for p in generated.glob("*") if (p / "server.py").is_file())
    said = f"no generated server {args.server!r} in {generated}"
    hint = did_you_mean(args.server, built)
    if hint:
        return f"{said}: {hint}"
    specs = args.project / "specs"
    if (specs / args.server).is_dir() or any(
        (specs / f"{args.server}{s}").is_file() for s in (".yaml", ".yml")
    ):
        return f"{said}: its spec is not built yet (run `{_command(args, 'build')}`)"
    known = f" (built: {', '.join(built)})" if built else ""
    return f"{said}{known}; a server is built from its spec in specs/ by `{_command(args, 'build')}`"


def _command(args: argparse.Namespace, *words: str) -> str:
    """A lynxc command line as the user should type it next: with the --project they gave."""
    project = [] if args.project == Path(".") else ["--project", str(args.project)]
    return shlex.join(["lynxc", *project, *words])


def _serve(args: argparse.Namespace) -> int:
    from lynxc.runtime.cli import run_serve

    definition = _definition(args)
    if definition is None:
        return EXIT_USAGE
    root = str(args.project.resolve())
    if root not in sys.path:
        sys.path.insert(0, root)  # custom backends import relative to the project
    return run_serve(definition, args)


def _dev(args: argparse.Namespace) -> int:
    from .dev.command import run_dev

    return run_dev(args)


def _tools(args: argparse.Namespace) -> int:
    definition = _definition(args)
    if definition is None:
        return EXIT_USAGE
    print(json.dumps(definition.tools_payload(), indent=2, ensure_ascii=False))
    return EXIT_OK


def _config(args: argparse.Namespace) -> int:
    from lynxc.runtime.redact import redact
    from lynxc.runtime.setting_paths import resolve_paths
    from lynxc.runtime.settings import env_name, placeholder

    definition = _definition(args)
    if definition is None:
        return EXIT_USAGE
    command = shutil.which("lynxc") or sys.argv[0]
    schema = definition.settings_schema
    defaults = {name: node["default"] for name, node in schema.items() if "default" in node}
    # An MCP client starts the server in a directory of its own: pin relative path defaults here.
    defaults, _ = resolve_paths(schema, defaults, os.getcwd())
    env = {}
    for name, node in schema.items():
        if name not in defaults:
            env[env_name(name)] = placeholder(node)  # never null: that reads as a value to fill in
        elif node.get("type") == "string":
            # A default URL with a password (it belongs in the environment, not the spec) is
            # printed without it: the client's config gets the real one from its owner.
            env[env_name(name)] = redact(defaults[name])
            if env[env_name(name)] != defaults[name]:
                print(
                    f"lynxc config: the default of setting {name!r} holds a password: shown as ***, "
                    f"put the real one in {env_name(name)}",
                    file=sys.stderr,
                )
        else:
            env[env_name(name)] = json.dumps(defaults[name])
    entry = {
        "command": str(Path(command).resolve()),
        "args": ["--project", str(args.project.resolve()), "serve", definition.name],
    }
    if env:
        entry["env"] = env
    print(json.dumps({"mcpServers": {definition.name: entry}}, indent=2))
    return EXIT_OK


def _schema(args: argparse.Namespace) -> int:
    from .spec.models import SpecFile

    schema = SpecFile.model_json_schema(by_alias=True)
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "lynxc spec v1", **schema}
    print(json.dumps(schema, indent=2))
    return EXIT_OK


def _keys(args: argparse.Namespace) -> int:
    from .keys import run_keys

    return run_keys(args)


def _docs(args: argparse.Namespace) -> int:
    from .build import build, report_diagnostics
    from .docs.site import DocsUsageError, check_out, out_folder, select, site_files, spec_paths, write_site

    out = out_folder(args.project, args.out)
    try:
        check_out(out)
        output = build(args.project, spec_paths(args.project, args.servers))
        if report_diagnostics(output.diagnostics, "docs", "the site is left as it was"):
            return EXIT_FAILED
        if not output.names:
            print("lynxc docs: no specs found (looked in specs/)", file=sys.stderr)
            return EXIT_FAILED
        servers = select(output.servers, args.servers)
        files = site_files(args.project, servers)
        write_site(out, files)
    except DocsUsageError as err:
        print(f"lynxc docs: {err}", file=sys.stderr)
        return EXIT_USAGE
    print(f"lynxc docs: {len(servers)} server(s), {len(files)} files written to {out}")
    return EXIT_OK


def _rules(args: argparse.Namespace) -> int:
    from .rules import RULES

    width = max(len(rule_id) for rule_id in RULES)
    kinds = max(len(rule.category) for rule in RULES.values())
    for rule in RULES.values():
        print(f"{rule.id:<{width}}  {rule.severity:<7}  {rule.category:<{kinds}}  {rule.purpose}")
    return EXIT_OK


def _init(args: argparse.Namespace) -> int:
    from .scaffold import STORES_NOTE, scaffold

    existed = {path for path in (args.project / ".gitignore",) if path.exists()}
    try:
        written = scaffold(args.project, args.name)
    except ValueError as err:
        print(f"lynxc init: {err}", file=sys.stderr)
        return EXIT_USAGE
    for path in written:
        print(f"{'updated' if path in existed else 'created'} {path}")
    print(STORES_NOTE)
    print(f"next: {_command(args, 'build')} && {_command(args, 'serve', args.name)}")
    return EXIT_OK

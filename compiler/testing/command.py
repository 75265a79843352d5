"""`lynxc test [SERVER...]`: build in memory and serve each server from a temporary copy of
its generated files (the project's generated/ is neither written nor read: `lynxc build` and
`build --check` own it), prepare each server's fixture, run its examples and, with --fuzz N,
fuzz its tools; report as text, GitHub annotations and JUnit XML. Exit 0 all passed, 1
something failed, 2 a usage error."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the parser is built by every lynxc command: the runner loads when `test` runs
    from ..ir import ServerIR
    from .runner import CaseResult

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_SEED = 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "servers", nargs="*", metavar="SERVER", help="server names or spec paths (default: every spec)"
    )
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting's value for the build and the servers, over the spec's test settings "
        "(a database DSN, say); repeatable",
    )
    parser.add_argument(
        "-k",
        dest="keyword",
        metavar="SUBSTR",
        help="only the cases whose id (SERVER::TOOL::NAME) contains SUBSTR",
    )
    parser.add_argument(
        "--format", choices=("text", "github"), default="text", help="github: also ::error annotations"
    )
    parser.add_argument(
        "--junit-xml", type=Path, metavar="PATH", help="also write a JUnit XML report to PATH"
    )
    parser.add_argument(
        "--fuzz",
        type=_count,
        default=0,
        metavar="N",
        help="also call each local read-only tool with N drawn argument sets and its near-misses",
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, metavar="S", help=f"the fuzz seed (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--fuzz-side-effects",
        action="store_true",
        help="fuzz tools that may write too (readOnlyHint not true); never ones with openWorldHint",
    )


def run(args: argparse.Namespace) -> int:
    from ..build import build, report_diagnostics, unknown_settings
    from ..files import write_text_atomic
    from .report import case_line, github_annotations, junit_xml, write_text
    from .runner import FuzzOptions, Plan, run_servers

    project: Path = args.project
    overrides: dict[str, str] = {}
    for item in args.settings:
        name, equals, value = item.partition("=")
        if not equals or not name:
            return _usage(f"--set takes NAME=VALUE, got {item.split('=')[0]!r}")
        overrides[name.strip()] = value
    specs, problem = _spec_paths(project, args.servers)
    if problem is not None:
        return _usage(problem)
    unknown = unknown_settings(project, specs, overrides)
    if unknown:
        return _usage(f"--set {unknown[0]}: no server of this run declares a setting named '{unknown[0]}'")
    started = time.monotonic()
    output = build(project, specs, overrides)
    if report_diagnostics(output.diagnostics, "test", "the build failed; nothing run"):
        return EXIT_FAILED
    if not output.servers:
        return _usage("no specs found (looked in specs/)")
    runnable, skipped = _needing_settings(output.servers, overrides)
    results: list[CaseResult] = list(skipped)
    for result in skipped:
        print(case_line(result), flush=True)
    fuzz = FuzzOptions(args.fuzz, args.seed, args.fuzz_side_effects)
    plan = Plan(project, overrides, args.keyword, fuzz, output.files)
    results += run_servers(plan, runnable, lambda result: print(case_line(result), flush=True))
    seconds = time.monotonic() - started
    if not results:
        matching = f" match -k {args.keyword}" if args.keyword else ""
        print(f"lynxc test: no examples{matching} (add examples: to a tool)")
    write_text(sys.stdout, results, seconds)
    if args.format == "github":
        for line in github_annotations(results):
            print(line)
    if args.junit_xml is not None:
        write_text_atomic(args.junit_xml, junit_xml(results, seconds))
    return EXIT_FAILED if any(not r.passed for r in results) else EXIT_OK


def _needing_settings(
    servers: tuple[ServerIR, ...], overrides: dict[str, str]
) -> tuple[list[ServerIR], list[CaseResult]]:
    """Servers whose every setting without a default has a value (the fixture's, --set, or a
    LYNXC_ variable), and a skipped case for each of the others, naming what it needs."""
    from lynxc.runtime.settings import env_name

    from .runner import CaseResult

    runnable, skipped = [], []
    for server in servers:
        given = set(overrides) | set(server.test_fixture.settings if server.test_fixture else {})
        missing = [
            s.name
            for s in server.settings
            if "default" not in json.loads(s.schema_json)
            and s.name not in given
            and env_name(s.name) not in os.environ
        ]
        if missing and (server.examples or server.tools):
            needs = ", ".join(f"--set {name}=..." for name in missing)
            skipped.append(CaseResult(server.name, "(server)", "start", None, skipped=f"needs {needs}"))
        else:
            runnable.append(server)
    return runnable, skipped


def _spec_paths(project: Path, names: list[str]) -> tuple[list[Path], str | None]:
    from ..spec.load import YAML_SUFFIXES, discover_specs

    specs_dir = project / "specs"
    paths = []
    for name in names:
        candidates = [
            specs_dir / name,
            *(specs_dir / f"{name}{suffix}" for suffix in YAML_SUFFIXES),
            Path(name),
        ]
        found = next((c for c in candidates if c.exists()), None)
        if found is None:
            known = ", ".join(p.stem for p in discover_specs(specs_dir)) or "none"
            return [], f"no server or spec named {name!r} (servers: {known})"
        paths.append(found)
    return paths, None


def _usage(message: str) -> int:
    print(f"lynxc test: {message}", file=sys.stderr)
    return EXIT_USAGE


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value

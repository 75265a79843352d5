"""Incremental builds: what `lynxc build` costs when little or nothing changed, side by side
with a clean build and with `lynxc --help` (the floor: starting Python and lynxc).

A temporary project holds one DuckDB SQL server of N tools (the form of specs/countries-sql:
a folder, one YAML file per tool, a view over a small generated JSON Lines sample). Each figure
is the median wall time of a `lynxc` process over the repetitions:

- `--help`; a clean build (`--no-cache`); a no-change build; `build --check`;
- one tool edited (its description and its SQL statement change), then built;
- the bundled project's no-change build and `build --check` (a copy of this repository's
  specs/, schema-changelog/ and generated/; not at smoke size).

    python bench/incremental_build.py [--tools 50] [--repeat 5] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from smoke import parse_args_with_smoke  # bench/ is the script's folder, first on sys.path

ROOT = Path(__file__).resolve().parent.parent
LYNXC = [sys.executable, "-c", "from lynxc.compiler.cli import main; main()"]

SERVER = """\
lynxc: 1
server:
  name: wide-sql
  version: 0.1.0
  title: A wide SQL server
  instructions: Read-only facts about generated items, one DuckDB statement per tool.
  settings:
    items_file:
      type: string
      format: file-path
      default: specs/wide-sql/data/items.jsonl
      description: The items as JSON Lines, one item per line.
  duckdb:
    views:
      items:
        reader: read_json
        setting: items_file
        options: {format: newline_delimited}
        sample: data/items.jsonl
"""

TOOL = """\
lynxc: 1
tool:
  name: {name}
  title: Items of group {index}
  annotations: {{readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false}}
  description:
    purpose: >-
      List the items of group {index} whose score is at least a minimum, revision {revision}.
    usage: >-
      Use it to browse group {index}; every other tool of this server reads another group.
    behaviour: Read-only. Sorted by score, highest first.
    returns: rows of id, name and score, with row_count and truncated.
  parameters:
    min_score:
      {{type: integer, minimum: 0, maximum: 1000, default: 0, description: "The least score a row may have."}}
  backend:
    sql: |
      SELECT id, name, score + {revision} AS score FROM items
      WHERE grp = {index} AND score >= $min_score
      ORDER BY score DESC, id
"""


def make_project(root: Path, tools: int) -> Path:
    """A project folder with specs/wide-sql/ of `tools` tools over a small sample."""
    spec = root / "specs" / "wide-sql"
    (spec / "data").mkdir(parents=True)
    (spec / "server.yaml").write_text(SERVER)
    rows = [{"id": i, "name": f"item {i}", "grp": i % tools, "score": (i * 37) % 1000} for i in range(200)]
    (spec / "data" / "items.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    for index in range(tools):
        edit_tool(root, index, revision=0)
    return root


def edit_tool(root: Path, index: int, revision: int) -> None:
    name = f"group_{index:03d}"
    text = TOOL.format(name=name, index=index, revision=revision)
    (root / "specs" / "wide-sql" / f"{name}.yaml").write_text(text)


def touch_tool(root: Path, index: int, revision: int) -> None:
    """Rewrite a tool's file with only a comment changed: same spec, new bytes."""
    path = root / "specs" / "wide-sql" / f"group_{index:03d}.yaml"
    text = path.read_text().split("\n# touched", 1)[0]
    path.write_text(f"{text}\n# touched {revision}\n")


def timed(args: list[str], cwd: Path, before=None) -> float:  # type: ignore[no-untyped-def]
    if before is not None:
        before()
    start = time.perf_counter()
    done = subprocess.run([*LYNXC, *args], cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 2):  # `--help` alone exits 0; a usage error 2
        raise SystemExit(f"lynxc {' '.join(args)} failed in {cwd}:\n{done.stderr}")
    return seconds


def median(args: list[str], cwd: Path, repeat: int, before=None) -> float:  # type: ignore[no-untyped-def]
    return statistics.median(timed(args, cwd, before) for _ in range(repeat))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    args = parse_args_with_smoke(parser, tools=4, repeat=1)
    with tempfile.TemporaryDirectory(prefix="lynxc-incremental-") as tmp:
        project = make_project(Path(tmp), args.tools)
        env_cache = os.environ.pop("LYNXC_CACHE_DIR", None)  # each project keeps its own cache
        try:
            helped = median(["--help"], project, args.repeat)
            clean = median(["build", "--no-cache"], project, args.repeat)
            timed(["build"], project)  # fills the cache
            no_change = median(["build"], project, args.repeat)
            check = median(["build", "--check"], project, args.repeat)
            revisions = iter(range(1, 10_000))
            edited = median(
                ["build"], project, args.repeat, before=lambda: edit_tool(project, 0, next(revisions))
            )
            # The same file rewritten with a comment only: the server is compiled again, every
            # statement check and model coming from the cache. What an edit costs beyond this is
            # the edited tool's own work.
            touched = median(
                ["build"], project, args.repeat, before=lambda: touch_tool(project, 1, next(revisions))
            )
            shutil.rmtree(project / ".lynxc-cache")
            refill = timed(["build"], project)
            bundled = bundled_check = None
            if not args.smoke:  # a copy of this repository's project, built once to fill its cache
                copy = Path(tmp) / "bundled"
                for folder in ("specs", "schema-changelog", "generated"):
                    shutil.copytree(ROOT / folder, copy / folder)
                timed(["build"], copy)
                bundled = median(["build"], copy, args.repeat)
                bundled_check = median(["build", "--check"], copy, args.repeat)
        finally:
            if env_cache is not None:
                os.environ["LYNXC_CACHE_DIR"] = env_cache
    rows = [
        ("lynxc --help", helped),
        (f"clean build, {args.tools} tools (--no-cache)", clean),
        ("cold cache build (fills it)", refill),
        ("no-change build", no_change),
        ("build --check, no change", check),
        ("a tool file touched (a comment), then build", touched),
        ("one tool edited, then build", edited),
        ("bundled project: no-change build", bundled),
        ("bundled project: build --check", bundled_check),
    ]
    print(f"incremental builds: {args.tools}-tool DuckDB server, median of {args.repeat}")
    for label, seconds in rows:
        if seconds is None:
            print(f"  {label:<44} (not at smoke size)")
        else:
            print(f"  {label:<44} {seconds:8.3f} s   {seconds / clean:6.3f} x clean")
    print(f"  no-change build minus --help: {no_change - helped:+.3f} s (target: within 0.3 s)")
    print(f"  build --check minus --help:   {check - helped:+.3f} s")
    if bundled is not None:
        print(f"  bundled no-change minus --help: {bundled - helped:+.3f} s")
    per_tool = clean / args.tools
    print(
        f"  one-tool edit costs {edited - helped:.3f} s over --help, "
        f"{(edited - helped) / per_tool:.1f} x one tool's share of a clean build "
        f"({per_tool:.3f} s = clean / {args.tools})"
    )
    print(
        f"  of which recompiling the server from its caches (a file touched): {touched - helped:.3f} s; "
        f"the tool's own work: {edited - touched:+.3f} s, {(edited - touched) / per_tool:.1f} x its share"
    )


if __name__ == "__main__":
    main()

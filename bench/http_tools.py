"""What an HTTP tool costs over the request itself (issue 28), and how long an OpenAPI import takes.

1. The same GET to a real REST API on this machine (tests/fixtures/http_api.py), made two ways in
   one run, interleaved call by call so machine noise hits both alike: directly with httpx (one
   kept-alive client), and as an MCP tools/call of a declared HTTP tool, through the SDK's client
   and a `lynxc serve` process over stdio (build, serve, validate arguments, make the request,
   check the answer against the output schema, send it back). Printed: p50/p95 of each, the p50
   added by MCP and lynxc, and the ratio. Target (issue 28): a few ms at p50.
2. `lynxc import openapi` of the largest document of tests/data/openapi/, timed in-process.

    python bench/http_tools.py [--calls 500] [--imports 5] [--smoke]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx
from smoke import parse_args_with_smoke

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lynxc.compiler.cli import main as lynxc  # noqa: E402
from tests.conftest import stdio_client  # noqa: E402
from tests.fixtures.http_api import running_http_api  # noqa: E402

TARGET_MS = 5.0  # "a few ms"
SPEC = """\
lynxc: 1
server:
  name: pets-bench
  version: 1.0.0
  http:
    base_url: {setting: api_url}
tools:
  - name: get_pet
    description: {purpose: Read one pet by its id.}
    annotations: {readOnlyHint: true}
    parameters:
      pet_id: {type: integer, required: true, minimum: 1, description: "The pet's id."}
    backend: {http: {method: GET, path: "/pets/{pet_id}", result: /data}}
    output:
      type: object
      required: [id, name, tag]
      properties: {id: {type: integer}, name: {type: string}, tag: {type: string}}
"""


def built_project(folder: Path) -> Path:
    (folder / "specs").mkdir(parents=True)
    (folder / "specs" / "pets.yaml").write_text(SPEC)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            lynxc(["--project", str(folder), "build"])
    except SystemExit as done:
        if done.code:
            raise SystemExit(f"the bench spec did not build (exit {done.code})") from None
    return folder


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def overhead(project: Path, api_url: str, calls: int) -> tuple[list[float], list[float]]:
    direct: list[float] = []
    through_mcp: list[float] = []
    async with (
        httpx.AsyncClient(base_url=api_url) as http,
        stdio_client("pets-bench", {"api_url": api_url}, project=project) as client,
    ):
        for _ in range(3):  # warm-up: the first call loads the backend and opens the pool
            await client.call_tool("get_pet", {"pet_id": 7})
            await http.get("/pets/7")
        for index in range(calls):
            order = ("direct", "mcp") if index % 2 == 0 else ("mcp", "direct")
            for way in order:
                started = time.perf_counter()
                if way == "direct":
                    answer = await http.get("/pets/7")
                    ok = answer.status_code == 200 and answer.json()["data"]["id"] == 7
                    direct.append(time.perf_counter() - started)
                else:
                    result = await client.call_tool("get_pet", {"pet_id": 7})
                    ok = not result.is_error and result.structured_content["id"] == 7
                    through_mcp.append(time.perf_counter() - started)
                if not ok:
                    raise SystemExit(f"{way} call failed")
    return direct, through_mcp


def import_times(repeats: int, scratch: Path) -> tuple[str, int, list[float]] | None:
    corpus = ROOT / "tests" / "data" / "openapi"
    documents = sorted(corpus.glob("*.yaml"), key=lambda p: p.stat().st_size) if corpus.is_dir() else []
    if not documents:
        return None
    largest = documents[-1]
    times = []
    for attempt in range(repeats):
        project = scratch / f"import-{attempt}"
        (project / "specs").mkdir(parents=True)
        started = time.perf_counter()
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # its report of each operation and the lint
                lynxc(["--project", str(project), "import", "openapi", str(largest), "--name", "imported"])
        except SystemExit as done:
            if done.code not in (0, None):
                raise SystemExit(f"importing {largest.name} failed (exit {done.code})") from None
        times.append(time.perf_counter() - started)
    return largest.name, largest.stat().st_size, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500, help="calls each way (default 500)")
    parser.add_argument("--imports", type=int, default=5, help="imports of the largest document (default 5)")
    args = parse_args_with_smoke(parser, calls=5, imports=1)
    with tempfile.TemporaryDirectory() as scratch, running_http_api() as api:
        project = built_project(Path(scratch) / "bench")
        direct, through_mcp = anyio.run(overhead, project, api.url, args.calls)
        print(f"1. GET /pets/7 on a REST API on this machine, {args.calls} calls each way, interleaved")
        print(f"   {'way':34} {'p50':>9} {'p95':>9}")
        for label, values in (("httpx directly", direct), ("MCP tools/call of the HTTP tool", through_mcp)):
            p50, p95 = percentile(values, 0.5) * 1000, percentile(values, 0.95) * 1000
            print(f"   {label:34} {p50:7.2f} ms {p95:7.2f} ms")
        added = (statistics.median(through_mcp) - statistics.median(direct)) * 1000
        ratio = statistics.median(through_mcp) / statistics.median(direct)
        verdict = "met" if added < TARGET_MS else "NOT met"
        print(f"   added by MCP and lynxc at p50: {added:.2f} ms ({ratio:.2f}x)")
        print(f"   target (issue 28): under {TARGET_MS:g} ms added at p50: {verdict}")
        imported = import_times(args.imports, Path(scratch))
        if imported is None:
            print("2. no OpenAPI corpus in tests/data/openapi: import not timed")
        else:
            name, size, times = imported
            print(
                f"2. lynxc import openapi of the largest document, {name} ({size:,} bytes), import, "
                f"write and lint, {len(times)} run(s): median {statistics.median(times) * 1000:.0f} ms, "
                f"best {min(times) * 1000:.0f} ms"
            )


if __name__ == "__main__":
    main()

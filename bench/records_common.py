"""What the records benchmarks share: a throwaway lynxc project holding one records spec, built
with the real compiler, loaded with the real `lynxc load` and served by the real `lynxc serve`
over stdio; timings, peak memory and nDCG."""

from __future__ import annotations

import gzip
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LYNXC = str(Path(sys.executable).with_name("lynxc"))
CRANFIELD = Path(__file__).resolve().parent / "data" / "cranfield"
FOXNOSE_DATA = ROOT / "specs" / "foxnose-knowledge" / "data"
# Plain-words questions about Python's design, for the PEP texts.
PEP_QUERIES = [
    "pattern matching",
    "async generators",
    "type hints for variables",
    "string formatting with f-strings",
    "dictionary ordering",
    "the global interpreter lock",
    "package metadata version specifiers",
    "unicode identifiers",
    "context managers and the with statement",
    "removing dead batteries from the standard library",
    "exception groups",
    "walrus assignment expressions",
    "wheel binary package format",
    "decorators for functions and methods",
    "garbage collection of cycles",
    "integer division",
    "import hooks and finders",
    "release schedule",
    "steering council election",
    "virtual environments",
]


@dataclass(frozen=True)
class Project:
    """A lynxc project in `root` (specs/ and generated/) whose one server stores in `data_dir`."""

    root: Path
    server: str
    settings: dict[str, Any]

    def command(self, *args: str) -> list[str]:
        return [LYNXC, "--project", str(self.root), *args]

    def setting_args(self) -> list[str]:
        args = []
        for name, value in self.settings.items():
            args += ["--set", f"{name}={json.dumps(value)}"]
        return args


def make_project(root: Path, spec_yaml: str, server: str, settings: dict[str, Any]) -> Project:
    """Write the spec, run `lynxc build`; a compiler error stops the benchmark with its message."""
    (root / "specs").mkdir(parents=True, exist_ok=True)
    (root / "specs" / f"{server}.yaml").write_text(spec_yaml)
    project = Project(root, server, settings)
    done = subprocess.run(project.command("build"), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"lynxc build failed:\n{done.stdout}{done.stderr}")
    return project


@dataclass(frozen=True)
class LoadRun:
    seconds: float
    peak_rss_bytes: int
    output: str


def load(project: Project, resource: str, path: Path) -> LoadRun:
    """`lynxc load SERVER COLLECTION FILE` in a child process: wall time and the child's peak RSS
    (wait4's ru_maxrss, in KiB on Linux)."""
    command = project.command("load", project.server, resource, str(path), *project.setting_args())
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"lynxc load {resource} failed ({process.returncode}):\n{output}")
    return LoadRun(seconds, usage.ru_maxrss * 1024, output)


@asynccontextmanager
async def serve(project: Project) -> AsyncIterator[Any]:
    """An `mcp.Client` on `lynxc serve` over stdio, as tests/conftest.py's stdio_client."""
    from mcp import Client, StdioServerParameters

    command = project.command("serve", project.server, *project.setting_args())
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params) as client:
        yield client


async def call(client: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise SystemExit(f"{tool}({json.dumps(arguments)[:300]}) failed: {result.content[0].text}")
    return result.structured_content


def server_peak_rss(project: Project) -> int:
    """Peak RSS (VmHWM) of this process's `lynxc serve` child, read while it runs, plus that of
    its largest descendant if it has any (a backend worker)."""
    children = _children(os.getpid())
    serving = [pid for pid in children if f"serve\0{project.server}" in _cmdline(pid)]
    if not serving:
        return 0
    peaks = [_vm_hwm(pid) for pid in _descendants(serving[0])]
    return _vm_hwm(serving[0]) + (max(peaks) if peaks else 0)


def server_rss(project: Project) -> int:
    """Resident memory (VmRSS) of this process's `lynxc serve` child now; 0 if none runs."""
    serving = [pid for pid in _children(os.getpid()) if f"serve\0{project.server}" in _cmdline(pid)]
    return _vm_status(serving[0], "VmRSS:") if serving else 0


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _descendants(pid: int) -> list[int]:
    out = []
    for child in _children(pid):
        out += [child, *_descendants(child)]
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""


def _vm_hwm(pid: int) -> int:
    return _vm_status(pid, "VmHWM:")


def _vm_status(pid: int, name: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(name):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def percentiles(times: list[float]) -> tuple[float, float]:
    """(p50, p95) in seconds."""
    ordered = sorted(times)
    return statistics.median(ordered), ordered[round(0.95 * (len(ordered) - 1))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f} ms"


def mib(size: int) -> str:
    return f"{size / 2**20:,.0f} MiB"


def write_jsonl_gz(path: Path, records: Iterable[dict[str, Any]]) -> int:
    count = 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
            count += 1
    return count


def read_jsonl_gz(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


# --- Cranfield ---------------------------------------------------------------------------------


def cranfield() -> tuple[dict[str, dict[str, str]], dict[str, str], dict[str, dict[str, int]]]:
    """corpus {id: {title, text}}, queries {id: text}, qrels {query: {doc: grade 1-4}}."""
    corpus = {
        doc["_id"]: {"title": doc["title"], "text": doc["text"]}
        for doc in read_jsonl_gz(CRANFIELD / "corpus.jsonl.gz")
    }
    queries = {q["_id"]: q["text"] for q in read_jsonl_gz(CRANFIELD / "queries.jsonl.gz")}
    qrels: dict[str, dict[str, int]] = {}
    for line in (CRANFIELD / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        query, doc, score = line.split("\t")
        if int(score) > 0:
            qrels.setdefault(query, {})[doc] = int(score)
    return corpus, queries, qrels


def ndcg_at_10(ranked: list[str], relevant: dict[str, int]) -> float:
    """Graded nDCG@10 with exponential gain, as bench/retrieval_quality.py computes it."""
    dcg = sum((2 ** relevant.get(doc, 0) - 1) / math.log2(i + 2) for i, doc in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def mean_ndcg(runs: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> float:
    judged = [q for q in runs if q in qrels]
    return sum(ndcg_at_10(runs[q], qrels[q]) for q in judged) / len(judged)

"""lynx-mcp beyond one machine, measured in one run: (A) indexing throughput of `lynxc index` with
the local engine against the Ray engine at 1 and 2 workers, on the same corpus, each a fresh
index; (B) search latency over MCP (a real client, streamable HTTP) from a `lynxc serve lynx-mcp`
replica whose index is on S3 (moto's S3 server on 127.0.0.1) against the same index on local
disk, warm (many queries after a warm-up) and cold (the first query after a process start, over
several fresh starts); (C) what the paper design for 100 million chunks needs: bytes per chunk on
disk, and the FTS and ANN (HnswSq) index build times and a serving replica's memory at ~8k chunks
and at a larger size made by replicating the corpus's rows with perturbed vectors.

Corpus: the code-search set of bench/retrieval_sets.py (ten installed packages' sources, ~350
files, ~8k chunks), written to a folder and indexed as one source; its docstring queries are the
search queries. Every number comes from real processes: `lynxc index`, `lynxc serve`, `ray start`
and moto's server, all started here and all stopped on the way out (also on Ctrl-C or an error).

    python bench/distributed.py [--quick] [--parts a,b,c] [--embedders minilm,static]
        [--workers 1,2] [--queries 100] [--cold-starts 5] [--scale-rows 100000]
        [--s3-scale-queries 10] [--out DIR] [--smoke]

`--quick` is a small run (two packages, static embedder for A, 20 queries, 2 cold starts, 20k
scale rows) for checking the script. `--smoke` is smaller still, every part end to end in a minute
or two: one package, the static embedder throughout (B and C too), in A the local engine to a
folder and one Ray worker to S3 only (only the first re-run), 3 queries, one cold start, 2k
scale rows (its largest table, with its HnswSq index, served once: beside S3), fan-out over 2
sources only (one source is a replica like the one beside S3), its outputs in a temporary folder
removed at the end. Outputs (logs, indices, the report as markdown) go to --out, default
/tmp/lynx17/bench.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
import warnings
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from smoke import parse_args_with_smoke  # bench/ is the script's folder, first on sys.path

ROOT = Path(__file__).resolve().parents[1]
LYNXC = str(Path(sys.executable).with_name("lynxc"))
RAY = str(Path(sys.executable).with_name("ray"))
SOURCE = "code"  # the corpus is indexed as one source of this name
ACCESS_KEY = "lynx-bench-access"
SECRET_KEY = "lynx-bench-secret-0f1e2d3c"  # moto accepts any; kept out of command lines (env only)
# What `lynxc index` prints for each source once it is done (compiler/cli.py).
INDEXED = re.compile(r"^(\S+): (\d+) files, (\d+) \(re\)indexed into (\d+) chunks, (\d+) removed")
PROGRESS = re.compile(r"^(\S+): \[[#.]+\] (\d+)/(\d+) files")
QUICK_PACKAGES = ("httpx", "click")
SMOKE_PACKAGES = ("click",)


# --- output ------------------------------------------------------------------------------------


class Report:
    """Lines printed and kept, written as markdown at the end (tmp + rename)."""

    def __init__(self, path: Path):
        self.path = path
        self.lines: list[str] = []

    def __call__(self, line: str = "") -> None:
        print(line, flush=True)
        self.lines.append(line)

    def table(self, header: list[str], rows: list[list[str]]) -> None:
        self("| " + " | ".join(header) + " |")
        self("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
        for row in rows:
            self("| " + " | ".join(row) + " |")
        self()

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text("\n".join(self.lines) + "\n")
        tmp.replace(self.path)


def log(message: str) -> None:
    """Progress of the benchmark itself, on stderr (not part of the report)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- processes ---------------------------------------------------------------------------------


class Processes:
    """Every process this run starts, each in a session of its own (setsid), stopped on the way out,
    newest first, with everything else in its session: Ray's GCS, raylet and workers (which put
    themselves in process groups of their own, but keep the session), a server's children. Only
    sessions started here are touched, never another user's Ray or servers."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen] = []

    def start(self, command: list[str], **options) -> subprocess.Popen:
        process = subprocess.Popen(command, start_new_session=True, **options)
        self.started.append(process)
        return process

    def stop(self, process: subprocess.Popen, grace: float = 10) -> None:
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
            for pid in [process.pid, *session_pids(process.pid)]:
                with suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + wait
            while (process.poll() is None or session_pids(process.pid)) and time.monotonic() < deadline:
                time.sleep(0.1)
            if process.poll() is not None and not session_pids(process.pid):
                break
        if process in self.started:
            self.started.remove(process)

    def close(self) -> None:
        for process in reversed(list(self.started)):
            self.stop(process)


def session_pids(session: int) -> list[int]:
    """The live processes of a session (zombies excluded)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                stat = handle.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session ...: comm may hold spaces, so split after its ')'
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == session and fields[0] != "Z" and int(entry) != os.getpid():
            found.append(int(entry))
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, process: subprocess.Popen, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"{what} exited ({process.returncode}) before listening") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not listen on {port} within {timeout:.0f} s") from None
            time.sleep(0.02)


def machine_cpu_seconds() -> float:
    """CPU time spent by the whole machine so far (user+nice+system+irq+softirq), in seconds."""
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    return (fields[0] + fields[1] + fields[2] + fields[5] + fields[6]) / os.sysconf("SC_CLK_TCK")


def proc_memory_mb(pid: int) -> tuple[float, float]:
    """(current RSS, peak RSS) of a live process, in MB."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    values[line.split(":")[0]] = int(line.split()[1]) / 1024
    except OSError:
        return math.nan, math.nan
    return values.get("VmRSS", math.nan), values.get("VmHWM", math.nan)


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * (len(ordered) - 1)), len(ordered) - 1)]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}" if seconds >= 0.1 else f"{seconds * 1000:.1f}"


# --- the corpus --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Corpus:
    root: Path
    files: int
    chunks: int
    queries: list[str]
    describe: str


def build_corpus(out: Path, packages: tuple[str, ...] | None) -> Corpus:
    """The code-search set's files (docstrings of the judged functions removed, as the set
    defines them) written under out/corpus-*, and its queries; only those of `packages` if given."""
    sys.path.insert(0, str(ROOT / "bench"))
    from retrieval_sets import code_search_set

    from lynxc.runtime.backends.lynx.chunking import chunk_file

    judged = code_search_set()
    files = judged.files
    queries = list(judged.queries.values())
    if packages:
        files = {p: t for p, t in files.items() if p.split("/", 1)[0] in packages}
        keep = {q for q, rel in judged.qrels.items() if next(iter(rel)).split("::")[0] in files}
        queries = [judged.queries[q] for q in judged.queries if q in keep]
    root = out / ("corpus-" + "-".join(packages) if packages else "corpus")
    if root.exists():
        shutil.rmtree(root)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    chunks = sum(len(chunk_file(rel, text, kind="auto")) for rel, text in files.items())
    describe = ", ".join(packages) if packages else judged.describe.split(" of ", 1)[-1]
    return Corpus(root, len(files), chunks, queries, describe)


# --- S3 (moto) ---------------------------------------------------------------------------------


@dataclass
class S3:
    endpoint: str
    process: subprocess.Popen
    log_path: Path

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ALLOW_HTTP": "true",
        }

    def client(self):
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name="us-east-1",
        )

    def new_bucket(self) -> str:
        name = f"lynx-bench-{uuid.uuid4().hex[:8]}"
        self.client().create_bucket(Bucket=name)
        return name

    def upload(self, folder: Path, bucket: str, prefix: str) -> int:
        """A local index folder copied as is (Lance datasets hold relative paths); its bytes."""
        client, total = self.client(), 0
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.name != ".lynxc-index.lock":
                client.upload_file(str(path), bucket, f"{prefix}/{path.relative_to(folder).as_posix()}")
                total += path.stat().st_size
        return total

    def request_lines(self) -> list[str]:
        """moto's request log so far (werkzeug logs one line per request)."""
        try:
            with self.log_path.open(errors="replace") as handle:
                return [line for line in handle if "HTTP/1" in line]
        except OSError:
            return []

    def requests(self) -> int:
        return len(self.request_lines())

    def requests_by_kind(self, since: int) -> Counter:
        """Requests after the first `since`, by what they read: table data, index files, or
        version metadata (listings, manifests, transactions)."""
        kinds: Counter = Counter()
        for line in self.request_lines()[since:]:
            kind = "data" if "/data/" in line else "indices" if "/_indices/" in line else "metadata"
            kinds[kind] += 1
        return kinds

    def range_get_ms(self, bucket: str, key: str, times: int = 15) -> float:
        """Median time of a 4 KB range GET of `key`, as Lance reads a page."""
        client = self.client()
        spent = []
        for _ in range(times):
            start = time.perf_counter()
            client.get_object(Bucket=bucket, Key=key, Range="bytes=0-4095")["Body"].read()
            spent.append(time.perf_counter() - start)
        return statistics.median(spent) * 1000


def start_moto(processes: Processes, out: Path) -> S3:
    port = free_port()
    log_path = out / "moto.log"
    handle = log_path.open("wb")
    process = processes.start(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=handle,
        stderr=subprocess.STDOUT,
    )
    handle.close()
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(endpoint + "/moto-api/", timeout=2).close()
            return S3(endpoint, process, log_path)
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"moto's S3 server did not start on {endpoint}") from None
            time.sleep(0.2)


# --- lynxc index runs --------------------------------------------------------------------------


def settings_args(settings: dict) -> list[str]:
    return [arg for name, value in settings.items() for arg in ("--set", f"{name}={json.dumps(value)}")]


def source_settings(corpus: Corpus, index_dir: str, embedder: str) -> dict:
    return {
        "sources": [{"name": SOURCE, "root": str(corpus.root), "kind": "code"}],
        "index_dir": index_dir,
        "embedder": embedder,
    }


@dataclass
class IndexRun:
    label: str
    seconds: float
    files: int = 0
    changed: int = 0
    chunks: int = 0
    driver_peak_mb: float = math.nan
    machine_cpu: float = math.nan
    lines: list[tuple[float, str]] = field(default_factory=list)
    stages: dict = field(default_factory=dict)  # the stage timer's JSON


# The `lynxc index` process, run through this bootstrap: the CLI unchanged, with the driver's
# stages timed by wrapping the functions that do them (seconds summed over calls, and the first
# call's start since the process started), written as JSON at exit. Wrapping costs a few
# microseconds per call; the functions wrapped are called per batch or per task, not per chunk.
STAGE_TIMER = r"""
import atexit, json, os, sys, time
T0 = float(os.environ["LYNX_BENCH_T0"])
TIMES, FIRST = {}, {}
def _add(key, start):
    TIMES[key] = TIMES.get(key, 0.0) + time.perf_counter() - start
def _first(key):
    FIRST.setdefault(key, time.time() - T0)
def timed(owner, name, key):
    f = getattr(owner, name)
    def wrapper(*a, **k):
        _first(key)
        start = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            _add(key, start)
    setattr(owner, name, wrapper)
def timed_iter(owner, name, key):
    f = getattr(owner, name)
    def wrapper(*a, **k):
        _first(key)
        it = f(*a, **k)
        while True:
            start = time.perf_counter()
            try:
                item = next(it)
            except StopIteration:
                _add(key, start)
                return
            _add(key, start)
            yield item
    setattr(owner, name, wrapper)
from lynxc.runtime.backends.lynx import indexer, store
from lynxc.runtime.backends.retrieval import embedders
timed(indexer, "index_source", "engine")
timed(store.Store, "indexed_hashes", "indexed hashes")
timed(indexer, "_next_batch", "read+chunk")
timed(embedders.Embedder, "embed", "embed")
timed(store.Store, "replace_files", "commits")
timed(store.Store, "finish", "finish")
try:
    from lynxc.runtime.backends.lynx import distributed
except ImportError:
    distributed = None
if distributed is not None:
    timed(distributed, "_index_source", "engine")
    timed(distributed, "_connect", "ray connect")
    timed(distributed, "_start_workers", "workers start")
    timed_iter(distributed, "_run", "waiting on workers")
    timed(distributed, "_commit", "commits")
@atexit.register
def _write():
    TIMES["exit"] = time.time() - T0
    with open(os.environ["LYNX_BENCH_TIMES"], "w") as handle:
        json.dump({"seconds": TIMES, "first": FIRST}, handle)
sys.argv = ["lynxc", *sys.argv[1:]]
from lynxc.compiler.cli import main
main()
"""


def run_index(
    processes: Processes,
    settings: dict,
    label: str,
    log_path: Path,
    env: dict[str, str] | None = None,
    extra: tuple[str, ...] = (),
    timeout: float = 3600,
) -> IndexRun:
    """One `lynxc index lynx-mcp` process: wall time, totals, the driver's peak RSS (wait4), the
    machine's CPU time over the run (Ray workers are not children of the driver), and each
    output line with its time since start (the progress bar's updates included)."""
    arguments = ["--project", str(ROOT), "index", "lynx-mcp", *settings_args(settings), *extra]
    command = [sys.executable, "-c", STAGE_TIMER, *arguments]
    times_path = log_path.with_suffix(".stages.json")
    times_path.unlink(missing_ok=True)
    env = {**(env or os.environ), "LYNX_BENCH_T0": repr(time.time()), "LYNX_BENCH_TIMES": str(times_path)}
    cpu0 = machine_cpu_seconds()
    start = time.perf_counter()
    process = processes.start(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    lines: list[tuple[float, str]] = []

    def read() -> None:
        assert process.stdout is not None
        pending = b""
        while chunk := os.read(process.stdout.fileno(), 65536):
            now = time.perf_counter() - start
            pending += chunk
            *done, pending = re.split(rb"[\r\n]", pending)
            lines.extend((now, part.decode(errors="replace").strip()) for part in done if part.strip())
        if pending.strip():
            lines.append((time.perf_counter() - start, pending.decode(errors="replace").strip()))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + timeout
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            processes.stop(process)
            raise RuntimeError(f"{label}: lynxc index ran over {timeout:.0f} s")
        time.sleep(0.05)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    reader.join(timeout=10)
    processes.stop(process)  # its group: anything it left behind
    run = IndexRun(label, seconds, driver_peak_mb=usage.ru_maxrss / 1024)
    run.machine_cpu = machine_cpu_seconds() - cpu0
    run.lines = lines
    if times_path.exists():
        run.stages = json.loads(times_path.read_text())
    with log_path.open("w") as handle:
        handle.write(" ".join(["lynxc", *arguments]) + "\n")
        handle.writelines(f"{t:8.2f}  {text}\n" for t, text in lines)
    if process.returncode != 0:
        tail = "\n".join(text for _, text in lines[-15:])
        raise RuntimeError(f"{label}: lynxc index failed ({process.returncode}), see {log_path}:\n{tail}")
    for _, text in lines:
        if match := INDEXED.match(text):
            run.files += int(match.group(2))
            run.changed += int(match.group(3))
            run.chunks += int(match.group(4))
    return run


# --- Ray ---------------------------------------------------------------------------------------


@dataclass
class RayCluster:
    address: str
    process: subprocess.Popen
    start_seconds: float
    temp: Path


def start_ray(processes: Processes, out: Path, cpus: int) -> RayCluster:
    """`ray start --head --block` as tests/fixtures/ray_cluster.py starts one: this run's own temp
    folder and ports, in a session of its own (see Processes), without the S3 credentials in its
    environment (the engine hands the workers their storage options). Ready when `ray status`
    answers for its address."""
    port = free_port()
    # short: Ray's unix sockets live there and a socket path is limited to ~100 bytes
    temp = Path(tempfile.mkdtemp(prefix="lxb-", dir="/tmp"))
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    log_path = out / f"ray-head-{cpus}cpu.log"
    handle = log_path.open("wb")
    command = [
        RAY,
        "start",
        "--head",
        "--block",
        f"--port={port}",
        f"--num-cpus={cpus}",
        "--node-ip-address=127.0.0.1",
        f"--temp-dir={temp}",
        f"--object-store-memory={300 * 1024 * 1024}",
        "--include-dashboard=false",
        "--disable-usage-stats",
        f"--dashboard-agent-listen-port={free_port()}",
        f"--node-manager-port={free_port()}",
        f"--object-manager-port={free_port()}",
    ]
    start = time.perf_counter()
    process = processes.start(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
    handle.close()
    address = f"127.0.0.1:{port}"
    # Its GCS listening first (a connect, cheap), then `ray status` (a Python process each) until
    # the head's node has registered its CPUs.
    wait_port(port, process, 120, "ray start")
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"ray start exited ({process.returncode}), see {log_path}")
        done = subprocess.run(
            [RAY, "status", f"--address={address}"], capture_output=True, text=True, timeout=60, env=env
        )
        if done.returncode == 0 and "CPU" in done.stdout:
            return RayCluster(address, process, time.perf_counter() - start, temp)
        if time.monotonic() > deadline:
            raise RuntimeError(f"the Ray cluster did not come up within 120 s, see {log_path}")
        time.sleep(0.5)


# --- part A: indexing throughput ---------------------------------------------------------------


def part_a(
    processes: Processes,
    report: Report,
    corpus: Corpus,
    out: Path,
    embedders: list[str],
    workers: list[int],
    s3: S3 | None,
    each_once: bool = False,
) -> dict[str, Path]:
    """Returns the local-engine index folder per embedder (part B and C reuse them). With
    `each_once` (a smoke run) only the first and the last configuration run: the local engine to
    a folder and, with S3, Ray to S3, so each engine and each target still runs; only the first
    is re-run."""
    from lynxc.runtime.backends.lynx.distributed import WORKERS_ENV

    work = out / "index-runs"
    work.mkdir(parents=True, exist_ok=True)
    folders: dict[str, Path] = {}
    rows: list[list[str]] = []
    stages: list[list[str]] = []
    bucket = s3.new_bucket() if s3 else None
    cluster: RayCluster | None = None
    try:
        for embedder in embedders:
            configs: list[tuple[str, str, int]] = [("local", "folder", 0)]
            configs += [("ray", "folder", n) for n in workers]
            if s3 and embedder == "static":  # S3 targets where cheap: the static embedder
                configs += [("local", "s3", 0), ("ray", "s3", max(workers))]
            if each_once:
                configs = [configs[0], configs[-1]]
            base: dict[str, IndexRun] = {}
            for engine, target, n in configs:
                label = f"{engine}{f'-{n}w' if n else ''}-{target}-{embedder}"
                if target == "folder":
                    folder = work / label
                    if folder.exists():
                        shutil.rmtree(folder)
                    index_dir = str(folder)
                else:
                    index_dir = f"s3://{bucket}/{label}"
                settings = source_settings(corpus, index_dir, embedder)
                env = s3.env() if s3 and target == "s3" else dict(os.environ)
                extra: tuple[str, ...] = ()
                if engine == "ray":
                    if cluster is None:
                        log(f"A: starting a Ray head with {max(workers)} CPUs")
                        cluster = start_ray(processes, out, max(workers))
                    env[WORKERS_ENV] = str(n)
                    extra = ("--engine", "ray", "--address", cluster.address)
                log(f"A: {label}: indexing {corpus.files} files")
                run = run_index(processes, settings, label, work / f"{label}.log", env, extra)
                again = None
                # A smoke run re-runs the first configuration only: the re-run's path (nothing to
                # do) is the same for every engine and target, and each costs a process start.
                if not each_once or (engine, target, n) == configs[0]:
                    log(f"A: {label}: {run.seconds:.1f} s; re-run (nothing to do)")
                    again = run_index(
                        processes, settings, label + " again", work / f"{label}-again.log", env, extra
                    )
                add_row(rows, stages, engine, target, n, embedder, run, again, base)
                if engine == "local" and target == "folder":
                    folders[embedder] = Path(index_dir)
    finally:
        if cluster:
            processes.stop(cluster.process)
            shutil.rmtree(cluster.temp, ignore_errors=True)
    report("## A. Indexing throughput: `lynxc index lynx-mcp`, local engine against Ray")
    report()
    report(
        f"Corpus: {corpus.files} files, {corpus.chunks} chunks ({corpus.describe}), one source; each run a "
        "fresh index, then a re-run that finds nothing to do. The Ray runs use one local cluster "
        f"(`ray start --head --num-cpus={max(workers)}`, started once before them: "
        f"{cluster.start_seconds if cluster else math.nan:.1f} s), workers set by {WORKERS_ENV}; "
        "speedup is against the local engine on the same target. Machine CPU-s: all CPU time the "
        "machine spent during the run (Ray workers are not children of `lynxc index`), and its share "
        "of the cores' capacity over the run. The local engine's ONNX Runtime session uses two "
        "threads (embedders.py); in a Ray worker Ray sets OMP_NUM_THREADS to the worker's CPUs (1) "
        "and ONNX Runtime follows it (measured apart: a plain process with OMP_NUM_THREADS=1 embeds "
        "on 1.0 core, without it on 2.0), so one worker embeds on one core."
    )
    report()
    report.table(
        [
            "engine",
            "target",
            "embedder",
            "files",
            "chunks",
            "wall s",
            "files/s",
            "chunks/s",
            "speedup vs local",
            "machine CPU-s (of 2 cores)",
            "CPU-ms/chunk",
            "driver peak RSS MB",
            "re-run s (re-indexed)",
        ],
        rows,
    )
    report(
        "Where the time goes: seconds of the `lynxc index` process (the driver) per stage, timed by "
        "wrapping the functions that do them (bench/distributed.py STAGE_TIMER); with Ray, reading, "
        "chunking, embedding and fragment writes happen in the workers while the driver waits:"
    )
    report()
    report.table(["run", *STAGES], stages)
    return folders


def add_row(
    rows: list[list[str]],
    stages: list[list[str]],
    engine: str,
    target: str,
    n: int,
    embedder: str,
    run: IndexRun,
    again: IndexRun | None,
    base: dict[str, IndexRun],
) -> None:
    """The run's line in the throughput table and in the stages table."""
    if engine == "local":
        base[target] = run
    speedup = f"{base[target].seconds / run.seconds:.2f}x" if target in base else "-"
    utilisation = run.machine_cpu / (run.seconds * (os.cpu_count() or 1))
    rows.append(
        [
            engine_label(engine, n),
            "S3 (moto)" if target == "s3" else "local folder",
            embedder,
            f"{run.files}",
            f"{run.chunks}",
            f"{run.seconds:.1f}",
            f"{run.files / run.seconds:.1f}",
            f"{run.chunks / run.seconds:.0f}",
            speedup,
            f"{run.machine_cpu:.0f} ({utilisation:.0%})",
            f"{run.machine_cpu / max(run.chunks, 1) * 1000:.1f}",
            f"{run.driver_peak_mb:.0f}",
            f"{again.seconds:.1f} ({again.changed})" if again else "-",
        ]
    )
    stages.append([run.label, *stage_cells(run)])


STAGES = (
    "start-up (imports, settings, lease, open index)",
    "Ray connect",
    "Ray workers start (model loaded once each)",
    "list + hash files, read indexed hashes",
    "read + chunk",
    "embed",
    "waiting on workers (read, chunk, embed, write fragments)",
    "commits",
    "finish (compact, FTS/ANN indices)",
    "exit",
)


def stage_cells(run: IndexRun) -> list[str]:
    """The driver's time per stage (the stage timer's figures), in seconds; they add up to the wall
    time but for the process's own start and end around the timer (a few tenths)."""
    seconds, first = run.stages.get("seconds", {}), run.stages.get("first", {})
    if "engine" not in seconds:
        return ["?"] * len(STAGES)
    ray = seconds.get("ray connect", 0.0) + seconds.get("workers start", 0.0)
    inside = sum(
        seconds.get(k, 0.0) for k in ("read+chunk", "embed", "waiting on workers", "commits", "finish")
    )
    values = {
        STAGES[0]: first["engine"] - ray,
        STAGES[1]: seconds.get("ray connect"),
        STAGES[2]: seconds.get("workers start"),
        STAGES[3]: seconds["engine"] - inside,
        STAGES[4]: seconds.get("read+chunk"),
        STAGES[5]: seconds.get("embed"),
        STAGES[6]: seconds.get("waiting on workers"),
        STAGES[7]: seconds.get("commits"),
        STAGES[8]: seconds.get("finish"),
        STAGES[9]: run.seconds - first["engine"] - seconds["engine"],
    }
    return ["-" if v is None else f"{v:.1f}" for v in values.values()]


def engine_label(engine: str, workers: int) -> str:
    return f"{engine} ({workers} worker{'s' if workers > 1 else ''})" if workers else engine


# --- part B: search latency over MCP -----------------------------------------------------------


@dataclass
class Server:
    label: str
    process: subprocess.Popen
    url: str
    listen_seconds: float


def start_server(processes: Processes, label: str, settings: dict, env: dict[str, str], out: Path) -> Server:
    port = free_port()
    command = [
        LYNXC,
        "--project",
        str(ROOT),
        "serve",
        "lynx-mcp",
        "--transport",
        "http",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *settings_args(settings),
    ]
    handle = (out / f"serve-{label}.log").open("ab")
    start = time.perf_counter()
    process = processes.start(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
    handle.close()
    wait_port(port, process, 120, f"lynxc serve ({label})")
    return Server(label, process, f"http://127.0.0.1:{port}/mcp", time.perf_counter() - start)


async def timed_search(client, query: str) -> float:
    start = time.perf_counter()
    result = await client.call_tool("search", {"query": query})
    elapsed = time.perf_counter() - start
    if result.is_error:
        raise RuntimeError(f"search {query!r} failed: {result.content[0].text[:300]}")
    return elapsed


async def warm_latencies(
    servers: list[Server], queries: list[str], warmup: list[str]
) -> dict[str, list[float]]:
    """The same queries against each server, alternating between them query by query (machine
    noise hits all alike), after a warm-up."""
    from contextlib import AsyncExitStack

    from mcp import Client

    times: dict[str, list[float]] = {s.label: [] for s in servers}
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(Client(s.url)) for s in servers]
        for query in warmup:
            for client in clients:
                await timed_search(client, query)
        for query in queries:
            for server, client in zip(servers, clients, strict=True):
                times[server.label].append(await timed_search(client, query))
    return times


async def first_search(url: str, query: str) -> tuple[float, float, float]:
    """(connect+initialize, first search, second search) seconds on a fresh server."""
    from mcp import Client

    start = time.perf_counter()
    async with Client(url) as client:
        connected = time.perf_counter() - start
        first = await timed_search(client, query)
        second = await timed_search(client, query + " again")
    return connected, first, second


@dataclass
class Warm:
    times: dict[str, list[float]]
    memory: dict[str, tuple[float, float]]  # label -> (RSS, peak RSS) MB after the searches
    requests: Counter  # S3 requests by kind during the searches (warm-up included)
    searches: int  # searches per server, warm-up included


def warm_phase(
    processes: Processes,
    out: Path,
    targets: list[tuple[str, dict, dict]],
    asked: list[str],
    warmup: list[str],
    s3: S3 | None,
) -> Warm:
    """One server per target, all up at once, the same searches alternating between them."""
    servers = [start_server(processes, label, settings, env, out) for label, settings, env in targets]
    mark = s3.requests() if s3 else 0
    try:
        times = asyncio.run(warm_latencies(servers, asked, warmup))
        memory = {s.label: proc_memory_mb(s.process.pid) for s in servers}
    finally:
        for server in servers:
            processes.stop(server.process)
    return Warm(times, memory, s3.requests_by_kind(mark) if s3 else Counter(), len(asked) + len(warmup))


def latency_header(ratio: str = "p50 vs local") -> list[str]:
    return ["index", "searches", "p50 ms", "p95 ms", "max ms", ratio, "server RSS / peak MB"]


def latency_rows(warm: Warm, base: str | None, note: str = "") -> list[list[str]]:
    rows = []
    for label, values in warm.times.items():
        rss, peak = warm.memory[label]
        rows.append(
            [
                label + note,
                str(len(values)),
                ms(statistics.median(values)),
                ms(pct(values, 0.95)),
                ms(max(values)),
                f"{statistics.median(values) / statistics.median(warm.times[base]):.2f}x" if base else "-",
                f"{rss:.0f} / {peak:.0f}",
            ]
        )
    return rows


def requests_line(warm: Warm) -> str:
    total = sum(warm.requests.values())
    kinds = ", ".join(f"{kind} {count / warm.searches:.1f}" for kind, count in sorted(warm.requests.items()))
    return (
        f"S3 requests per warm search (moto's request log): {total / warm.searches:.1f} ({kinds}; "
        f"{total} for {warm.searches} searches)."
    )


def part_b(
    processes: Processes,
    report: Report,
    corpus: Corpus,
    out: Path,
    folder: Path,
    embedder: str,
    s3: S3,
    queries: int,
    cold_starts: int,
    extra_targets: list[tuple[str, dict, dict]] = (),
) -> None:
    bucket = s3.new_bucket()
    log(f"B: copying the {embedder} index ({du(folder) / 1e6:.0f} MB) to s3://{bucket}/index")
    start = time.perf_counter()
    uploaded = s3.upload(folder, bucket, "index")
    upload_seconds = time.perf_counter() - start
    targets = [
        ("local disk", source_settings(corpus, str(folder), embedder), dict(os.environ)),
        ("S3 (moto)", source_settings(corpus, f"s3://{bucket}/index", embedder), s3.env()),
        *extra_targets,
    ]
    asked = [corpus.queries[i % len(corpus.queries)] for i in range(queries)]
    warmup = ["warm up the model", "open a connection", "parse a header", "read the configuration", "retry"]
    log(f"B: warm: {len(targets)} servers, {len(warmup)} warm-up + {len(asked)} queries each")
    warm = warm_phase(processes, out, targets, asked, warmup, s3)
    lance = folder / f"source_{SOURCE}.lance"
    largest = max((lance / "data").iterdir(), key=lambda f: f.stat().st_size)
    probe = s3.client()
    probe.put_object(Bucket=bucket, Key="probe-100k", Body=os.urandom(100_000))
    small_ms = s3.range_get_ms(bucket, "probe-100k")
    large_ms = s3.range_get_ms(bucket, f"index/source_{SOURCE}.lance/data/{largest.name}")
    log(f"B: cold: {cold_starts} fresh starts per target")
    cold: dict[str, list[tuple[float, float, float, float, float]]] = {label: [] for label, _, _ in targets}
    for i in range(cold_starts):
        for label, settings, env in targets:  # alternating targets, a different query each start
            query = corpus.queries[(i * 7 + 3) % len(corpus.queries)]
            before = s3.requests()
            server = start_server(processes, f"cold-{label}", settings, env, out)
            try:
                connected, first, second = asyncio.run(first_search(server.url, query))
            finally:
                processes.stop(server.process)
            cold[label].append((server.listen_seconds, connected, first, second, s3.requests() - before))
    report("## B. Search latency over MCP: a replica reading S3 (moto) against the same index on local disk")
    report()
    report(
        f"`lynxc serve lynx-mcp --transport http` (default settings: hybrid, top_k 10, embedder {embedder}), "
        f"MCP client `mcp.Client` over streamable HTTP on 127.0.0.1. Index: {corpus.chunks} chunks, "
        f"{du(folder) / 1e6:.1f} MB on disk, copied as is to S3 ({uploaded / 1e6:.1f} MB in "
        f"{upload_seconds:.1f} s). Queries: the code-search set's docstring queries."
    )
    report()
    report(
        f"Warm: one server per target, {len(warmup)} warm-up searches, then {len(asked)} searches, "
        "alternating between the servers query by query:"
    )
    report()
    report.table(latency_header(), latency_rows(warm, "local disk"))
    report(requests_line(warm))
    report()
    report(
        f"moto's 4 KB range GET (boto3, median of 15): {small_ms:.1f} ms from a 0.1 MB object, "
        f"{large_ms:.1f} ms from the index's largest data file ({largest.stat().st_size / 1e6:.1f} MB): "
        "moto's cost grows with the object's size (it handles the whole object per request), "
        "S3's does not (typically 10-30 ms to first byte, flat)."
    )
    report()
    report(
        f"Cold: {cold_starts} fresh server processes per target, alternating; each answers one search "
        "(a different query each start) and a second one:"
    )
    report()
    rows = []
    for label, runs in cold.items():
        listen = [r[0] for r in runs]
        first = [r[2] for r in runs]
        second = [r[3] for r in runs]
        total = [r[0] + r[1] + r[2] for r in runs]
        rows.append(
            [
                label,
                str(len(runs)),
                f"{statistics.median(listen):.2f}",
                ms(statistics.median(first)),
                ms(max(first)),
                ms(statistics.median(second)),
                f"{statistics.median(total):.2f}",
                f"{statistics.median([r[4] for r in runs]):.0f}",
            ]
        )
    report.table(
        [
            "index",
            "starts",
            "start → listening s (median)",
            "first search p50 ms",
            "first search max ms",
            "second search p50 ms",
            "start → first result s",
            "S3 requests per start",
        ],
        rows,
    )


# --- part C: bytes per chunk, index build times, scale -----------------------------------------


def scale_build(args: list[str]) -> None:
    """Child mode (`--_scale SRC DEST ROWS`): a table of ROWS rows made from the source index's
    rows (copies with their own ids and paths, vectors perturbed and renormalised), then the
    steps of Store.finish timed one by one with its exact configurations. Prints JSON."""
    import lancedb
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from lancedb.index import FTS, HnswSq

    from lynxc.runtime.backends.lynx.store import KEEP_OLD_VERSIONS, TABLE_PREFIX

    source, dest, rows = args[0], Path(args[1]), int(args[2])
    base = lancedb.connect(source).open_table(TABLE_PREFIX + SOURCE).to_arrow()
    if dest.exists():
        shutil.rmtree(dest)
    db = lancedb.connect(str(dest))
    rng = np.random.default_rng(17)
    vectors = base["vector"].combine_chunks()
    dimension = vectors.type.list_size
    flat = vectors.values.to_numpy().reshape(-1, dimension)
    start = time.perf_counter()
    table = None
    copies = math.ceil(rows / base.num_rows)
    for k in range(copies):
        part = base.slice(0, min(base.num_rows, rows - k * base.num_rows))
        if k:
            for column in ("id", "path"):
                part = part.set_column(
                    part.schema.get_field_index(column),
                    column,
                    pc.binary_join_element_wise(f"r{k}", part[column], "/"),
                )
            noisy = flat[: part.num_rows] + rng.normal(0, 0.01, (part.num_rows, dimension)).astype(np.float32)
            noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
            array = pa.FixedSizeListArray.from_arrays(pa.array(noisy.reshape(-1), pa.float32()), dimension)
            part = part.set_column(part.schema.get_field_index("vector"), "vector", array)
        if table is None:
            table = db.create_table(TABLE_PREFIX + SOURCE, part)
        else:
            table.add(part)
    write = time.perf_counter() - start
    steps = {"write": write}
    start = time.perf_counter()
    table.optimize(cleanup_older_than=KEEP_OLD_VERSIONS)
    steps["compact"] = time.perf_counter() - start
    data_bytes = du(dest)
    sizes = {}
    for name, column, config in (
        ("fts", "search_text", FTS(stem=True, remove_stop_words=True)),
        ("ann", "vector", HnswSq(distance_type="cosine")),
    ):
        before = du(dest / f"{TABLE_PREFIX}{SOURCE}.lance" / "_indices")
        start = time.perf_counter()
        table.create_index(column, config=config)
        steps[name] = time.perf_counter() - start
        sizes[name] = du(dest / f"{TABLE_PREFIX}{SOURCE}.lance" / "_indices") - before
    # steady state: old versions (the batches before compaction) cleaned up, as an hour later
    from datetime import timedelta

    with warnings.catch_warnings():  # "removes every version except the latest": wanted here
        warnings.simplefilter("ignore")
        table.optimize(cleanup_older_than=timedelta(0))
    total = du(dest)
    print(
        json.dumps(
            {
                "rows": table.count_rows(),
                "steps": steps,
                "data_bytes_before_cleanup": data_bytes,
                "index_bytes": sizes,
                "total_bytes": total,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def steady_size(folder: Path, scratch: Path) -> dict[str, int]:
    """Bytes on disk of an index once its old versions are gone (a copy cleaned up), by part."""
    import lancedb

    from lynxc.runtime.backends.lynx.store import TABLE_PREFIX

    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(folder, scratch)
    from datetime import timedelta

    table = lancedb.connect(str(scratch)).open_table(TABLE_PREFIX + SOURCE)
    with warnings.catch_warnings():  # "removes every version except the latest": a copy, wanted
        warnings.simplefilter("ignore")
        table.optimize(cleanup_older_than=timedelta(0))
    lance = scratch / f"{TABLE_PREFIX}{SOURCE}.lance"
    sizes = {
        "total": du(scratch),
        "data": du(lance / "data"),
        "indices": du(lance / "_indices"),
        "rows": table.count_rows(),
        "as written": du(folder),
    }
    shutil.rmtree(scratch)
    return sizes


def part_c(
    processes: Processes,
    report: Report,
    corpus: Corpus,
    out: Path,
    folders: dict[str, Path],
    scale_rows: int,
    s3: S3 | None,
    queries: int,
    s3_queries: int,
    fan_outs: list[int],
    smoke: bool = False,
) -> None:
    report("## C. Figures for the 100-million-chunk design")
    report()
    rows = []
    for embedder, folder in folders.items():
        sizes = steady_size(folder, out / "steady-copy")
        n = sizes["rows"]
        rows.append(
            [
                f"{embedder} ({n} chunks)",
                f"{sizes['as written'] / 1e6:.1f}",
                f"{sizes['total'] / 1e6:.1f}",
                f"{sizes['total'] / n:.0f}",
                f"{sizes['data'] / n:.0f}",
                f"{sizes['indices'] / n:.0f}",
            ]
        )
    report("Bytes on disk per chunk (the corpus's index; old versions are kept an hour, so right after a run")
    report("the folder also holds the pre-compaction batches):")
    report()
    report.table(
        [
            "index",
            "MB as written",
            "MB steady (old versions gone)",
            "bytes/chunk",
            "data bytes/chunk",
            "indices bytes/chunk",
        ],
        rows,
    )
    if not scale_rows or not folders:
        return
    from lynxc.runtime.backends.lynx.store import ANN_MIN_ROWS

    embedder = "minilm" if "minilm" in folders else next(iter(folders))
    source = folders[embedder]
    results = []
    for rows_wanted in sorted({len_rows(source), min(20_000, scale_rows), scale_rows}):
        dest = out / f"scale-{rows_wanted}"
        log(f"C: building a {rows_wanted}-row table and its indices")
        done = subprocess.run(
            [sys.executable, __file__, "--_scale", str(source), str(dest), str(rows_wanted)],
            capture_output=True,
            text=True,
            timeout=7200,
        )
        if done.returncode != 0:
            raise RuntimeError(f"scale build failed:\n{done.stderr[-2000:]}")
        results.append((dest, json.loads(done.stdout.strip().splitlines()[-1])))
    table_rows = []
    for _, r in results:
        n = r["rows"]
        table_rows.append(
            [
                str(n),
                f"{r['steps']['write']:.1f}",
                f"{r['steps']['compact']:.1f}",
                f"{r['steps']['fts']:.1f}",
                f"{r['steps']['ann']:.1f}",
                f"{r['index_bytes']['fts'] / n:.0f}",
                f"{r['index_bytes']['ann'] / n:.0f}",
                f"{r['total_bytes'] / n:.0f}",
                f"{r['peak_rss_mb']:.0f}",
            ]
        )
    report(
        f"Index build by size: the corpus's {embedder} rows, and copies of them (own ids and paths, "
        "vectors perturbed by N(0, 0.01) per dimension and renormalised) up to the larger sizes; the steps "
        "of Store.finish with its configurations (FTS stem+stop words; HnswSq cosine, LanceDB defaults), "
        "in one process. HnswSq is built at every size here (the product builds it from "
        f"{ANN_MIN_ROWS} rows):"
    )
    report()
    report.table(
        [
            "rows",
            "write s",
            "compact s",
            "FTS build s",
            "HnswSq build s",
            "FTS bytes/chunk",
            "HnswSq bytes/chunk",
            "total bytes/chunk",
            "builder peak RSS MB",
        ],
        table_rows,
    )
    # Replicas over the larger tables (with their ANN index): the largest on local disk with the
    # usual number of searches; the smallest with an ANN index on S3 too, with few searches
    # (moto's reads of a large object are slow, see part B), beside the same table on local disk.
    # A smoke run's tables are below the product's ANN_MIN_ROWS: its largest counts as indexed
    # (scale_build gives every table its HnswSq index), and being also the smallest so, it is
    # served once, beside S3, not a second time alone.
    ann_rows = min(ANN_MIN_ROWS, scale_rows) if smoke else ANN_MIN_ROWS
    by_rows = {r["rows"]: dest for dest, r in results}
    largest = max(by_rows)
    indexed = [n for n in by_rows if n >= ann_rows]
    asked = [corpus.queries[i % len(corpus.queries)] for i in range(queries)]
    warmup = ["warm up the model", "open a connection", "parse a header"]
    rows = []
    if not (smoke and s3 and s3_queries and indexed and min(indexed) == largest):
        log(f"C: a replica over the {largest}-row table, {len(asked)} searches")
        local_target = (
            f"local disk, {largest} rows",
            source_settings(corpus, str(by_rows[largest]), embedder),
            dict(os.environ),
        )
        rows += latency_rows(warm_phase(processes, out, [local_target], asked, warmup, None), None)
    report(
        f"Replicas over the larger tables (HnswSq index from {ann_rows} rows), warm, hybrid searches "
        "over MCP as in part B:"
    )
    report()
    if s3 and s3_queries and indexed:
        n = min(indexed)
        bucket = s3.new_bucket()
        log(f"C: copying the {n}-row index to S3; {s3_queries} searches over S3 and local disk")
        s3.upload(by_rows[n], bucket, "scale")
        targets = [
            (f"S3 (moto), {n} rows", source_settings(corpus, f"s3://{bucket}/scale", embedder), s3.env()),
            (f"local disk, {n} rows", source_settings(corpus, str(by_rows[n]), embedder), dict(os.environ)),
        ]
        small = warm_phase(processes, out, targets, asked[:s3_queries], warmup[:1], s3)
        rows += latency_rows(small, f"local disk, {n} rows")
    report.table(latency_header(), rows)
    if s3 and s3_queries and indexed:
        report(requests_line(small))
        report()
    if indexed:
        fan_out(processes, report, corpus, out, by_rows[min(indexed)], embedder, fan_outs, min(queries, 50))


def fan_out(
    processes: Processes,
    report: Report,
    corpus: Corpus,
    out: Path,
    table_dir: Path,
    embedder: str,
    counts: list[int],
    queries: int,
) -> None:
    """Query fan-out: one replica over K sources (K tables, each a hard-linked copy of one table
    with its indices; Lance never rewrites a file in place), a search over all of them."""
    targets = []
    for k in counts:
        folder = out / f"fan-out-{k}"
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir()
        names = [f"{SOURCE}_{i + 1}" for i in range(k)]
        for name in names:
            shutil.copytree(
                table_dir / f"source_{SOURCE}.lance", folder / f"source_{name}.lance", copy_function=os.link
            )
        settings = {
            "sources": [{"name": name, "root": str(corpus.root), "kind": "code"} for name in names],
            "index_dir": str(folder),
            "embedder": embedder,
        }
        targets.append((f"{k} source{'s' if k > 1 else ''}", settings, dict(os.environ)))
    rows = len_rows(table_dir)
    asked = [corpus.queries[(i * 3 + 1) % len(corpus.queries)] for i in range(queries)]
    log(f"C: fan-out over {', '.join(map(str, counts))} sources of {rows} rows, {len(asked)} searches")
    warm = warm_phase(processes, out, targets, asked, ["warm up the model", "parse a header"], None)
    report(
        f"Query fan-out: one replica, K sources of {rows} rows each (HnswSq and FTS; hard-linked copies of "
        "one table), each search over all K (the tool's default), the K tables queried concurrently, "
        "local disk, searches alternating between the replicas:"
    )
    report()
    base = targets[0][0] if counts[0] == 1 else None  # a smoke run has no 1-source replica
    report.table(latency_header("p50 vs 1 source"), latency_rows(warm, base))
    for k in counts:
        shutil.rmtree(out / f"fan-out-{k}")


def len_rows(folder: Path) -> int:
    import lancedb

    from lynxc.runtime.backends.lynx.store import TABLE_PREFIX

    return lancedb.connect(str(folder)).open_table(TABLE_PREFIX + SOURCE).count_rows()


# --- main --------------------------------------------------------------------------------------


def versions() -> str:
    found = []
    for name in ("ray", "lance-ray", "lancedb", "pylance", "moto", "onnxruntime", "mcp"):
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            found.append(f"{name} -")
    return ", ".join(found)


def machine() -> str:
    model = ""
    with suppress(OSError, StopIteration), open("/proc/cpuinfo") as handle:
        model = next(line.split(":", 1)[1].strip() for line in handle if line.startswith("model name"))
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load = os.getloadavg()
    return (
        f"nproc {os.cpu_count()} ({model}), {memory:.0f} GB RAM, load average at start "
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )


@contextmanager
def signals_as_exit() -> Iterator[None]:
    """SIGTERM and SIGHUP end the run as Ctrl-C does: through the `finally` that stops processes."""

    def stop(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--_scale":
        scale_build(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small run, to check the script")
    parser.add_argument("--parts", default="a,b,c", help="which parts to run (a,b,c)")
    parser.add_argument("--embedders", help="part A's embedders (default minilm,static; quick: static)")
    parser.add_argument("--workers", default="1,2", help="Ray worker counts (default 1,2)")
    parser.add_argument("--queries", type=int, help="warm searches per server (default 100; quick 20)")
    parser.add_argument("--cold-starts", type=int, help="fresh starts per target (default 5; quick 2)")
    parser.add_argument("--scale-rows", type=int, help="part C's large table (default 100000; quick 20000)")
    parser.add_argument(
        "--s3-scale-queries", type=int, help="part C's searches over S3 at 20k rows (default 10; quick 3)"
    )
    parser.add_argument("--out", default="/tmp/lynx17/bench", help="outputs folder")
    args = parse_args_with_smoke(
        parser,
        embedders="static",
        workers="1",
        queries=3,
        cold_starts=1,
        scale_rows=2_000,
        s3_scale_queries=1,
        out=None,
    )
    quick = args.quick or args.smoke
    parts = set(args.parts.split(","))
    embedders = (args.embedders or ("static" if quick else "minilm,static")).split(",")
    workers = [int(n) for n in args.workers.split(",")]
    queries = args.queries or (20 if quick else 100)
    cold_starts = args.cold_starts or (2 if quick else 5)
    s3_scale_queries = args.s3_scale_queries if args.s3_scale_queries is not None else (3 if quick else 10)
    scale_rows = args.scale_rows if args.scale_rows is not None else (20_000 if quick else 100_000)
    packages = SMOKE_PACKAGES if args.smoke else QUICK_PACKAGES if quick else None
    # B and C serve minilm (the default embedder); a smoke run serves what A built with static
    serve_embedder = "static" if args.smoke else "minilm"
    out = Path(args.out or tempfile.mkdtemp(prefix="distributed-smoke-"))
    out.mkdir(parents=True, exist_ok=True)
    report = Report(out / ("distributed-quick.md" if quick else "distributed.md"))
    processes = Processes()
    started = time.perf_counter()
    with signals_as_exit():
        try:
            report(f"# lynx-mcp beyond one machine: bench/distributed.py{' --quick' if quick else ''}")
            report()
            report(f"Command: `{' '.join([Path(sys.executable).name, *sys.argv])}`  ")
            report(f"Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  ")
            report(f"Machine: {machine()}  ")
            report(f"Versions: {versions()}  ")
            log("building the corpus")
            corpus = build_corpus(out, packages)
            report(f"Corpus: {corpus.files} files, {corpus.chunks} chunks, {len(corpus.queries)} queries")
            report()
            log("starting moto's S3 server")
            s3 = start_moto(processes, out)
            folders: dict[str, Path] = {}
            if "a" in parts:
                folders = part_a(processes, report, corpus, out, embedders, workers, s3, args.smoke)
            if serve_embedder not in folders and ("b" in parts or "c" in parts):
                folder = out / "index-runs" / f"local-folder-{serve_embedder}"
                if not (folder / f"source_{SOURCE}.lance").exists():
                    log(f"B: building the {serve_embedder} index the searches need")
                    if folder.exists():
                        shutil.rmtree(folder)
                    run_index(
                        processes,
                        source_settings(corpus, str(folder), serve_embedder),
                        "index for B",
                        out / f"index-{serve_embedder}.log",
                    )
                folders[serve_embedder] = folder
            if "b" in parts:
                part_b(
                    processes,
                    report,
                    corpus,
                    out,
                    folders[serve_embedder],
                    serve_embedder,
                    s3,
                    queries,
                    cold_starts,
                )
            if "c" in parts:
                part_c(
                    processes,
                    report,
                    corpus,
                    out,
                    folders,
                    scale_rows,
                    s3,
                    queries,
                    s3_scale_queries,
                    [2] if args.smoke else [1, 4] if quick else [1, 4, 16],
                    args.smoke,
                )
            report(f"Total bench time: {(time.perf_counter() - started) / 60:.1f} min")
        finally:
            processes.close()
            report.save()
            if args.out is None:  # a smoke run's own temporary folder
                shutil.rmtree(out, ignore_errors=True)
    log(f"report written to {report.path}" if out.exists() else f"{out} removed (smoke run)")


if __name__ == "__main__":
    main()

"""Declared records past one machine, measured in one run: `lynxc load` of the same records with
the local engine against `--engine ray` with 1 and 2 workers (each into a fresh store), for the
static embedder on a generated set (the PEPs copied under new numbers) and for minilm on the PEPs;
records/s, the driver's CPU-seconds per record, and the time of each stage of the driver (read +
validate + embed, then write, then the indices) read off its progress lines. Then a paper design
for 100 million records derived from those figures (printed, and in bench/records_distributed.md).

Every number comes from real processes: `lynxc load`, and `ray start --head` (one node with as many
CPUs as the most workers asked, as bench/distributed.py starts it), stopped on the way out.

    python bench/records_distributed.py [--records 20000] [--workers 1,2] [--embedders static,minilm]
        [--out DIR] [--smoke]

`--smoke` loads 300 generated records with the static embedder, locally and with one Ray worker
of a Ray the driver starts in its own process (`--address local`: no `ray start`, so it runs in
the normal suite's smoke test; RAY_AUTH_MODE=disabled, see main), and prints the same tables and
design from those figures.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from distributed import Processes, start_ray  # bench/ is the script's folder, first on sys.path
from smoke import parse_args_with_smoke

ROOT = Path(__file__).resolve().parents[1]
LYNXC = str(Path(sys.executable).with_name("lynxc"))
SERVER = "foxnose-knowledge"
PEPS = ROOT / "specs" / SERVER / "data" / "peps.jsonl.gz"
REPORTED = re.compile(r"^(\S+): (\d+) inserted, (\d+) updated, (\d+) unchanged")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass
class Run:
    label: str
    records: int = 0
    seconds: float = 0.0
    cpu: float = 0.0  # the driver process's user + system CPU
    rss_mb: float = 0.0  # the driver's peak resident memory
    store_bytes: int = 0  # the store's size on disk after the load
    stages: dict[str, float] = field(default_factory=dict)  # stage -> seconds in it

    @property
    def rate(self) -> float:
        return self.records / self.seconds if self.seconds else 0.0


def generated(path: Path, count: int) -> Path:
    """`count` PEP records: the PEPs, then copies under numbers 10000 * k + n, in one JSON Lines
    file. Their bodies (the meaning text) are the PEPs', so embedding cost per record is real."""
    with gzip.open(PEPS, "rt") as handle:
        peps = [json.loads(line) for line in handle]
    with path.open("w") as out:
        for i in range(count):
            row = dict(peps[i % len(peps)])
            row["number"] += 10_000 * (i // len(peps))
            row["requires"] = []  # no references to numbers that are not there
            row["replaces"] = []
            row["superseded_by"] = []
            out.write(json.dumps(row) + "\n")
    return path


def stage_of(text: str) -> str | None:
    if "rows validated" in text or "records embedded" in text:
        return "read+validate+embed"
    if "records written" in text:
        return "write"
    if "updating the search indices" in text:
        return "index"
    return None


def load(label: str, files: list[str], data_dir: Path, embedder: str, extra: list[str], env: dict) -> Run:
    """One `lynxc load` process: its wall time, its CPU (rusage of the child) and its stages."""
    command = [LYNXC, "--project", str(ROOT), "load", SERVER, "peps", *files]
    command += ["--set", f"data_dir={data_dir}", "--set", f"embedder={embedder}", *extra]
    run = Run(label)
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    current, since = "start", start
    err_lines: list[str] = []

    def read_stderr() -> None:
        nonlocal current, since
        buffer = b""
        while chunk := process.stderr.read1(4096):
            buffer += chunk
            *parts, buffer = re.split(rb"[\r\n]", buffer)
            for part in parts:
                text = part.decode(errors="replace")
                err_lines.append(text)
                stage = stage_of(text)
                if stage and stage != current:
                    now = time.perf_counter()
                    run.stages[current] = run.stages.get(current, 0.0) + now - since
                    current, since = stage, now

    reader = threading.Thread(target=read_stderr)
    reader.start()
    _, status, usage = os.wait4(process.pid, 0)
    reader.join()
    end = time.perf_counter()
    run.stages[current] = run.stages.get(current, 0.0) + end - since
    run.seconds = end - start
    run.cpu = usage.ru_utime + usage.ru_stime
    run.rss_mb = usage.ru_maxrss / 1024
    run.store_bytes = sum(p.stat().st_size for p in data_dir.rglob("*") if p.is_file())
    out = process.stdout.read().decode()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{label}: lynxc load exited {process.returncode}: {err_lines[-5:]}")
    match = REPORTED.match(out.strip())
    run.records = int(match.group(2)) + int(match.group(3)) + int(match.group(4)) if match else 0
    log(f"{label}: {run.records} records in {run.seconds:.1f} s ({run.rate:.0f} records/s)")
    return run


def table(runs: list[Run]) -> list[str]:
    base = runs[0]
    lines = [
        "| engine | records | seconds | records/s | vs local | driver CPU ms/record | "
        "read+validate+embed s | write s | index s | driver peak MB | store bytes/record |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        stage = run.stages
        lines.append(
            f"| {run.label} | {run.records} | {run.seconds:.1f} | {run.rate:.0f} | "
            f"{run.rate / base.rate:.2f}x | {1000 * run.cpu / max(run.records, 1):.2f} | "
            f"{stage.get('read+validate+embed', 0):.1f} | {stage.get('write', 0):.1f} | "
            f"{stage.get('index', 0):.1f} | {run.rss_mb:.0f} | {run.store_bytes / max(run.records, 1):,.0f} |"
        )
    return lines


def design(static: list[Run], minilm: list[Run] | None, input_bytes: float) -> list[str]:
    """The 100M-record paper design, every number derived from the measured runs (`input_bytes`:
    the static set's input bytes per record)."""
    target = 100_000_000
    local = static[0]
    ray = [r for r in static if r.label.startswith("ray")]
    best = max(ray, key=lambda r: r.rate) if ray else local
    workers = int(best.label.split()[1]) if ray else 1
    per_worker = best.stages.get("read+validate+embed", best.seconds) or best.seconds
    worker_rate = best.records / per_worker / workers  # records/s one worker parses and embeds
    commit_rate = best.records / max(best.stages.get("write", 0.0), 1e-9)
    index_rate = best.records / max(best.stages.get("index", 0.0), 1e-9)
    lines = [
        f"Measured (static embedder, {best.records} records, {best.label}): one worker reads, "
        f"validates and embeds {worker_rate:,.0f} records/s; the driver writes "
        f"{commit_rate:,.0f} records/s into Lance and builds the indices at {index_rate:,.0f} records/s.",
    ]
    if minilm:
        m = max((r for r in minilm if r.label.startswith("ray")), key=lambda r: r.rate, default=minilm[0])
        m_workers = int(m.label.split()[1]) if m.label.startswith("ray") else 1
        m_rate = m.records / (m.stages.get("read+validate+embed", m.seconds) or m.seconds) / m_workers
        lines.append(f"With minilm one worker embeds {m_rate:,.1f} records/s (PEP bodies, 2,000 characters).")
    else:
        m_rate = None
    hours = 3600.0
    terabytes = best.store_bytes / max(best.records, 1) * target / 1e12
    for name, rate in (("static", worker_rate), ("minilm", m_rate)):
        if not rate:
            continue
        for budget in (1, 4):
            need = target / (rate * budget * hours)
            lines.append(
                f"- {name}: parsing + embedding 100M records in {budget} h needs {need:,.0f} worker CPUs"
            )
    single_commit = target / commit_rate / hours
    single_index = target / index_rate / hours
    lines += [
        f"- One driver committing 100M records at the measured write rate: {single_commit:,.1f} h, "
        f"and {single_index:,.1f} h of index builds: the single committer breaks first, not the workers.",
        "- So the design: partition the resource into S shards (Lance tables `<resource>-<n>.s<k>`, by "
        "hash of the key), each written by its own committer from the workers' spill batches (Lance "
        "fragments written by the workers and committed per shard, as lynx-mcp's index does), ONE "
        "pointer move naming every shard's version (CURRENT.json is still one PUT).",
        f"- Shards needed to commit 100M in 1 h at the measured rate: {target / commit_rate / hours:,.0f}; "
        f"in 4 h: {target / commit_rate / hours / 4:,.0f}.",
        f"- Commit waves: the driver's all-or-nothing needs the spill of the whole load (100M x "
        f"{input_bytes:,.0f} B of input per record = {input_bytes * target / 1e12:,.2f} TB): too big for one "
        "machine's temporary folder, so workers write uncommitted fragments to the store (object storage), "
        "each shard commits its wave of fragments, and the pointer moves once, naming every shard's version.",
        f"- Storage: {best.store_bytes / max(best.records, 1):,.0f} bytes per record in the store (Lance "
        f"data, vectors, FTS and scalar indices, old versions) -> {terabytes:,.2f} TB "
        "for 100M on object storage; the driver's spill holds the same rows again on its local disk.",
        f"- Memory: the driver peaked at {best.rss_mb:,.0f} MB for {best.records:,} records; it holds every "
        "key and hash of the load (two strings per record, ~80 B) for the compare: 100M x 80 B = 8 GB, so "
        "at this size the compare moves to the shards too. A worker holds one block (<= 4 MB of input) "
        "and its batch with vectors, and its embedder.",
        "- What breaks first, in order: the single driver's compare (keys + hashes in memory), its spill "
        "on local disk, its commit rate, then the FTS index build (one index per table: per shard it "
        "builds in parallel); the object store's request rate is far from it (one PUT per fragment).",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000, help="generated records (static)")
    parser.add_argument("--workers", default="1,2", help="Ray workers to compare, comma-separated")
    parser.add_argument("--embedders", default="static,minilm")
    parser.add_argument("--out", help="keep the stores and the report here")
    args = parse_args_with_smoke(parser, records=300, workers="1", embedders="static")
    workers = [int(w) for w in args.workers.split(",")]
    embedders = args.embedders.split(",")
    out = Path(args.out or tempfile.mkdtemp(prefix="records-distributed-"))
    out.mkdir(parents=True, exist_ok=True)
    processes = Processes()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("RAY_ADDRESS", None)
    report: list[str] = []
    try:
        if args.smoke:
            address = "local"  # a Ray of the driver's own: no cluster to start
            # Without it, Ray 2.60 makes a new local Ray generate ~/.ray/auth_token, which then
            # breaks every cluster `ray start` brings up on this machine (the slow tests' ones).
            env["RAY_AUTH_MODE"] = "disabled"
        else:
            cluster = start_ray(processes, out, max(workers))
            address = cluster.address
            log(f"ray cluster at {address} ({max(workers)} CPUs), up in {cluster.start_seconds:.1f} s")
        results: dict[str, list[Run]] = {}
        input_bytes = 0
        for embedder in embedders:
            if embedder == "static":
                files = [str(generated(out / "generated.jsonl", args.records))]
                input_bytes = Path(files[0]).stat().st_size
            else:
                files = [str(PEPS)]
                input_bytes = input_bytes if "static" in results else PEPS.stat().st_size
            runs = [load("local", files, out / f"{embedder}-local", embedder, [], env)]
            for count in workers:
                runs.append(
                    load(
                        f"ray {count} worker{'s' if count > 1 else ''}",
                        files,
                        out / f"{embedder}-ray{count}",
                        embedder,
                        ["--engine", "ray", "--address", address],
                        {**env, "LYNXC_RAY_WORKERS": str(count)},
                    )
                )
            results[embedder] = runs
            report += [f"## {embedder}: `lynxc load` local vs Ray ({runs[0].records} records)", ""]
            report += [*table(runs), ""]
        report += ["## Paper design: 100 million records, from the figures above", ""]
        static = results.get("static") or next(iter(results.values()))
        report += design(static, results.get("minilm"), input_bytes / max(static[0].records, 1))
        cpus = os.cpu_count()
        load_avg = os.getloadavg()[0]
        report += ["", f"Machine: {cpus} CPUs, load average {load_avg:.1f} when the run ended."]
        print("\n".join(report))
        (out / "report.md").write_text("\n".join(report) + "\n")
    finally:
        processes.close()
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)
    rusage = resource.getrusage(resource.RUSAGE_CHILDREN)
    log(f"children's CPU: {rusage.ru_utime + rusage.ru_stime:.1f} s")


if __name__ == "__main__":
    main()

"""`lynxc index lynx-mcp --engine ray` on a local Ray cluster (a head and a second node on this
machine, tests/fixtures/ray_cluster.py) against moto's S3 server: the same index as the local
engine, incremental, the model loaded once per worker, a failed worker's output never visible,
the writer lease, and a one-line error when the cluster cannot be reached."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lynxc.runtime.backends.lynx.indexer import index_source, plan
from lynxc.runtime.backends.lynx.lease import LEASE_PATH, LeaseLost
from lynxc.runtime.backends.lynx.location import IndexLocation
from lynxc.runtime.backends.lynx.ranking import search
from lynxc.runtime.backends.lynx.reader import IndexReader
from lynxc.runtime.backends.lynx.sources import Source
from lynxc.runtime.backends.lynx.store import TABLE_PREFIX, Store
from lynxc.runtime.backends.retrieval.embedders import get_embedder
from tests.conftest import ROOT, lynxc_command, settings_args
from tests.fixtures.ray_cluster import RayCluster, ray_cluster, worker_pids  # noqa: F401
from tests.fixtures.s3 import SECRET_KEY, S3Server, boto_client, object_key, s3_server  # noqa: F401

# A Ray cluster takes minutes of CPU: the `slow` group, which .ci/run runs after the README's command.
pytestmark = pytest.mark.slow

RUN_TIMEOUT = 240  # a bound on each `lynxc index`, not a measurement
WORDS = [
    "camera",
    "zoom",
    "socket",
    "parse",
    "config",
    "render",
    "page",
    "cache",
    "retry",
    "token",
    "index",
    "merge",
    "shard",
    "lease",
    "commit",
]
QUERIES = [
    "keep the camera zoom within limits",
    "parse config",
    "retry the socket connection",
    "merge shard commit",
    "render a page from the cache",
]


@dataclass(frozen=True)
class Lab:
    s3: S3Server
    cluster: RayCluster


@pytest.fixture
def lab(s3_server: S3Server, ray_cluster: RayCluster) -> Lab:  # noqa: F811
    return Lab(s3_server, ray_cluster)


def module(i: int) -> str:
    """A small Python module, different for each i: a class with two methods and a function."""
    a, b, c = WORDS[i % 15], WORDS[(i * 7 + 3) % 15], WORDS[(i * 11 + 5) % 15]
    return (
        f'"""Module {i}: {a} and {b}."""\n\n\nclass {a.title()}{b.title()}{i}:\n'
        f"    def {c}_{a}(self, value):\n"
        f'        """{c.title()} the {a} of {b} {i}."""\n'
        f"        return value * {i}\n\n"
        f"    def {b}_{c}(self):\n"
        f'        return "{a} {b} {c}"\n\n\n'
        f"def {a}_{c}_{i}(items):\n"
        f'    """Apply {c} to every {a} ({b})."""\n'
        f"    return [x for x in items if x]\n"
    )


def make_tree(root: Path, modules: range) -> None:
    """Generated modules, real code and docs of this repository, and chunkless files."""
    for i in modules:
        path = root / f"pkg{i % 7}" / f"mod_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(module(i))
    backends = ROOT / "runtime" / "backends"
    for source in ("lynx/fusion.py", "lynx/globs.py", "object_store/lease.py", "lynx/sources.py"):
        name = source.split("/")[1]
        (root / "real" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "real" / name).write_bytes((backends / source).read_bytes())
    (root / "docs").mkdir(exist_ok=True)
    (root / "docs" / "guide.md").write_text(
        "# Guide\n\n## Zoom\nThe camera zoom is clamped to a range.\n\n## Network\nSockets retry.\n"
    )
    (root / "docs" / "empty.md").write_text("")
    (root / "real" / "blob.bin").write_bytes(b"\x00\x01binary\x00" * 10)


def settings_for(root: Path, index_dir: str, embedder: str = "static") -> dict[str, Any]:
    return {
        "sources": [{"name": "code", "root": str(root), "kind": "code"}],
        "index_dir": index_dir,
        "embedder": embedder,
    }


def index_command(settings: dict[str, Any], engine: str, address: str | None = None) -> list[str]:
    command = lynxc_command("index", "lynx-mcp", "--engine", engine, *settings_args(settings))
    return command + (["--address", address] if address else [])


def run_index(
    s3: S3Server, settings: dict[str, Any], engine: str, address: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        index_command(settings, engine, address),
        env={**s3.env(), **env},
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert SECRET_KEY not in done.stdout + done.stderr
    return done


def summary(done: subprocess.CompletedProcess[str]) -> str:
    """The report line of source `code`, as `lynxc index` prints it last."""
    assert done.returncode == 0, done.stderr
    return done.stderr.replace("\r", "\n").strip().splitlines()[-1].strip()


def store_at(s3: S3Server, index_dir: str) -> Store:
    return Store(IndexLocation.of(index_dir, s3.storage_options()))


def contents(store: Store) -> tuple[list[tuple[Any, ...]], np.ndarray, dict[str, str]]:
    """Every row of the table in id order (vectors apart) and the chunkless files' records."""
    table = store.table("code").to_arrow().sort_by("id")
    columns = [c for c in table.column_names if c != "vector"]
    rows = list(zip(*(table[c].to_pylist() for c in columns), strict=True))
    return rows, np.array(table["vector"].to_pylist(), dtype=np.float32), store._records("code")


def assert_same_index(left: Store, right: Store) -> None:
    rows_left, vectors_left, records_left = contents(left)
    rows_right, vectors_right, records_right = contents(right)
    assert rows_left == rows_right
    assert np.allclose(vectors_left, vectors_right, atol=1e-6)
    assert records_left == records_right


def answers(s3: S3Server, index_dir: str, embedder_name: str = "static") -> list[list[tuple[Any, ...]]]:
    """Each query's top 10 in each mode, as a server searches (IndexReader and ranking.search)."""
    embedder = get_embedder(embedder_name)

    async def run() -> list[list[tuple[Any, ...]]]:
        reader = IndexReader(IndexLocation.of(index_dir, s3.storage_options()))
        found = []
        for query in QUERIES:
            vector = embedder.embed([query])[0]
            for mode in ("sparse", "dense", "hybrid"):
                hits = await search(reader, ["code"], query, vector, mode, 10)
                found.append([(h.path, h.start_line, h.end_line, h.symbol, h.score) for h in hits])
        return found

    return asyncio.run(run())


def assert_same_answers(left: list[list[tuple[Any, ...]]], right: list[list[tuple[Any, ...]]]) -> None:
    assert len(left) == len(right) == 3 * len(QUERIES)
    for hits_left, hits_right in zip(left, right, strict=True):
        assert hits_left, "every query finds something"
        assert [h[:4] for h in hits_left] == [h[:4] for h in hits_right]
        assert [h[4] for h in hits_left] == pytest.approx([h[4] for h in hits_right], abs=1e-5)


def test_ray_builds_the_local_index_and_updates_it_incrementally(tmp_path: Path, lab: Lab) -> None:
    s3, cluster = lab.s3, lab.cluster
    root = tmp_path / "code"
    make_tree(root, range(40))
    bucket = s3.new_bucket()
    ray_dir, local_dir = f"s3://{bucket}/ray", f"s3://{bucket}/local"
    # The cluster from RAY_ADDRESS, given to this process only; the credentials from the environment.
    built = run_index(s3, settings_for(root, ray_dir), "ray", RAY_ADDRESS=cluster.address)
    assert summary(built).startswith("code: 47 files, 47 (re)indexed into ")
    assert summary(run_index(s3, settings_for(root, local_dir), "local")) == summary(built)
    assert_same_index(store_at(s3, ray_dir), store_at(s3, local_dir))
    assert_same_answers(answers(s3, ray_dir), answers(s3, local_dir))

    again = run_index(s3, settings_for(root, ray_dir), "ray", cluster.address)
    assert summary(again) == "code: 47 files, 0 (re)indexed into 0 chunks, 0 removed"
    (root / "pkg1" / "mod_1.py").write_text(module(1) + "\n\ndef added_later():\n    return 1\n")
    (root / "pkg0" / "mod_7.py").unlink()
    (root / "pkg3" / "mod_99.py").write_text(module(99))
    (root / "docs" / "empty.md").unlink()  # a chunkless file's record goes too
    changed = run_index(s3, settings_for(root, ray_dir), "ray", cluster.address)
    assert re.fullmatch(r"code: 46 files, 2 \(re\)indexed into \d+ chunks, 2 removed", summary(changed))
    assert summary(run_index(s3, settings_for(root, local_dir), "local")) == summary(changed)
    # A fresh build by the local engine, in this process (its report is not compared: no CLI run).
    fresh = store_at(s3, f"s3://{bucket}/fresh")
    index_source(Source("code", str(root), "code"), fresh, get_embedder("static"))
    assert_same_index(store_at(s3, ray_dir), fresh)
    # The same answers as the local engine after the same updates. (Not quite a fresh build's:
    # BM25's statistics keep the replaced rows until the full-text index is rebuilt, either engine.)
    assert_same_answers(answers(s3, ray_dir), answers(s3, local_dir))
    # The credentials reached the workers as arguments: not in the cluster's logs.
    for path in Path(cluster.temp_dir).rglob("*"):
        if path.is_file() and not path.is_socket():
            with open(path, "rb") as handle:
                assert SECRET_KEY.encode() not in handle.read(), path


def test_minilm_vectors_are_the_local_engines(tmp_path: Path, lab: Lab) -> None:
    s3, cluster = lab.s3, lab.cluster
    root = tmp_path / "code"
    make_tree(root, range(0))
    bucket = s3.new_bucket()
    ray_dir, local_dir = f"s3://{bucket}/ray", f"s3://{bucket}/local"
    built = run_index(s3, settings_for(root, ray_dir, "minilm"), "ray", cluster.address)
    assert summary(built) == summary(run_index(s3, settings_for(root, local_dir, "minilm"), "local"))
    assert_same_index(store_at(s3, ray_dir), store_at(s3, local_dir))
    assert_same_answers(answers(s3, ray_dir, "minilm"), answers(s3, local_dir, "minilm"))


def test_workers_load_the_model_once_and_their_number_is_set(tmp_path: Path, lab: Lab) -> None:
    s3, cluster = lab.s3, lab.cluster
    from lynxc.runtime.backends.lynx.distributed import index_with_ray

    root = tmp_path / "code"
    make_tree(root, range(40))
    # The credentials from settings this time (this process has no AWS_* environment).
    settings = {**settings_for(root, f"s3://{s3.new_bucket()}/idx"), "index_storage": {}}
    settings["index_storage"] = s3.storage_options()
    store = store_at(s3, settings["index_dir"])
    sources = {"code": Source("code", str(root), "code")}
    seen: list[tuple[int, int, str]] = []

    def progress_for(name: str):
        assert name == "code"
        return lambda done, total, stage: seen.append((done, total, stage))

    (report,) = index_with_ray(sources, None, store, settings, cluster.address, progress_for)
    assert (report.files, report.changed, report.commits) == (47, 47, 1) and report.chunks > 47
    assert len(report.workers) == cluster.cpus < report.tasks  # one worker per CPU, more tasks
    assert set(report.workers.values()) == {1}  # each loaded the model once, whatever its tasks
    assert seen[-1] == (47, 47, "indices") and [s[0] for s in seen[:-1]] == sorted(s[0] for s in seen[:-1])

    for i in range(40):
        (root / f"pkg{i % 7}" / f"mod_{i}.py").write_text(module(i + 100))
    one = {**settings, "ray_workers": 1}
    (report,) = index_with_ray(sources, "code", store, one, cluster.address, progress_for)
    assert (report.changed, len(report.workers), set(report.workers.values())) == (40, 1, {1})
    assert report.tasks > 1


def test_a_driver_that_loses_its_lease_mid_run_commits_nothing_after(
    tmp_path: Path, lab: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lynxc.runtime.backends.lynx import distributed

    s3, cluster = lab.s3, lab.cluster
    root = tmp_path / "code"
    make_tree(root, range(40))
    settings = {**settings_for(root, f"s3://{s3.new_bucket()}/idx"), "index_storage": s3.storage_options()}
    store = store_at(s3, settings["index_dir"])
    source = Source("code", str(root), "code")
    index_source(source, store, get_embedder("static"))  # the table exists: a Ray run only commits
    for i in range(40):
        (root / f"pkg{i % 7}" / f"mod_{i}.py").write_text(module(i + 100))
    monkeypatch.setattr(distributed, "WAVE_FILES", 10)  # 40 changed files: about four waves
    before = versions(s3, settings["index_dir"])

    def lost_after_a_commit() -> None:
        """The lease's check, as if its renewal failed once the first wave was committed."""
        if versions(s3, settings["index_dir"]) > before:
            raise LeaseLost("lease lost")

    store.guard = lost_after_a_commit
    progress = lambda name: lambda done, total, stage: None  # noqa: E731
    with pytest.raises(LeaseLost):
        distributed.index_with_ray({"code": source}, None, store, settings, cluster.address, progress)
    # The first wave's commit, and nothing after it: no later wave, no compaction or index of finish.
    assert versions(s3, settings["index_dir"]) == before + 1

    store = store_at(s3, settings["index_dir"])  # the next run, holding its lease, finishes the rest
    (report,) = distributed.index_with_ray({"code": source}, None, store, settings, cluster.address, progress)
    assert 0 < report.changed <= 40 - distributed.WAVE_FILES and report.commits >= 2
    assert len(set(chunk_ids(store))) == len(chunk_ids(store)) and report.removed == 0


def versions(s3: S3Server, index_dir: str) -> int:
    """The table's versions, counted from its manifests in the store (apart from the code under test)."""
    bucket, prefix = object_key(index_dir, f"{TABLE_PREFIX}code.lance/_versions/")
    found = boto_client(s3.storage_options()).list_objects_v2(Bucket=bucket, Prefix=prefix)
    assert not found.get("IsTruncated")
    return found.get("KeyCount", 0)


def chunk_ids(store: Store) -> list[str]:
    return store.table("code").to_arrow()["id"].to_pylist()


def test_a_failed_worker_commits_nothing_and_the_next_run_finishes_holding_the_lease(
    tmp_path: Path, lab: Lab
) -> None:

    s3, cluster = lab.s3, lab.cluster
    root = tmp_path / "code"
    make_tree(root, range(20))
    bucket = s3.new_bucket()
    settings = settings_for(root, f"s3://{bucket}/idx")
    store = store_at(s3, settings["index_dir"])
    source = Source("code", str(root), "code")
    # The index before the failed run, built in this process (the engines build the same index:
    # test_ray_builds_the_local_index_and_updates_it_incrementally).
    index_source(source, store, get_embedder("static"))
    before = contents(store)
    versions = len(store.table("code").list_versions())
    make_tree(root, range(20, 420))  # one wave of tasks, each taking a while

    running = start_index(s3, settings, cluster.address)
    try:
        killed = None
        deadline = time.monotonic() + RUN_TIMEOUT
        pids, listed = [], 0.0
        while killed is None and running.poll() is None and time.monotonic() < deadline:
            if time.monotonic() - listed > 0.2:  # the cluster's processes, listed again for new ones
                pids, listed = cluster.pids(), time.monotonic()
            busy = worker_pids(pids, "ray::IndexWorker.run")  # their titles, looked at every 10 ms
            if busy:
                os.kill(busy[0], signal.SIGKILL)  # a worker lost mid-task
                killed = busy[0]
            time.sleep(0.01)
        _, stderr = running.communicate(timeout=RUN_TIMEOUT)
    finally:
        stop(running)
    assert killed is not None, f"no worker was seen running a task: {stderr}"
    assert running.returncode == 1, stderr
    message = stderr.replace("\r", "\n").strip().splitlines()[-1]
    assert message.startswith("lynxc index: a Ray index worker failed on 'code'"), stderr
    assert "Traceback" not in stderr and SECRET_KEY not in stderr
    # Nothing of the failed run is visible: not a version, not a row, not a record.
    assert len(store.table("code").list_versions()) == versions
    after = contents(store)
    assert after[0] == before[0] and np.array_equal(after[1], before[1]) and after[2] == before[2]

    # The next run finishes. While it runs, the lease names its driver; paused there (SIGSTOP: it
    # can neither finish nor release its lease meanwhile), a second writer is refused.
    client = boto_client(s3.storage_options())
    lease_bucket, lease_key = object_key(settings["index_dir"], LEASE_PATH)
    running = start_index(s3, settings, cluster.address)
    try:
        holder, deadline = None, time.monotonic() + RUN_TIMEOUT
        while holder is None:
            assert running.poll() is None, "the Ray run ended before its lease was seen"
            assert time.monotonic() < deadline, "no lease within the time limit"
            try:
                holder = json.loads(client.get_object(Bucket=lease_bucket, Key=lease_key)["Body"].read())
            except client.exceptions.NoSuchKey:
                time.sleep(0.05)
        assert holder["pid"] == running.pid  # the Ray run's driver holds the lease
        os.kill(running.pid, signal.SIGSTOP)
        try:
            second = run_index(s3, settings, "local")
        finally:
            os.kill(running.pid, signal.SIGCONT)
        _, stderr = running.communicate(timeout=RUN_TIMEOUT)
    finally:
        stop(running)
    assert second.returncode == 1, second.stderr
    assert f"(pid {running.pid} on host {holder['host']}) holds the writer lease" in second.stderr
    assert running.returncode == 0, stderr
    assert (
        stderr.strip().splitlines()[-1].strip()
        == "code: 427 files, 400 (re)indexed into 2000 chunks, 0 removed"
    )
    # Every file committed: the plan a next run of either engine starts from (indexer.plan) has
    # nothing to do. (A Ray run that finds nothing to do and says so: the first test.)
    assert plan(source, store_at(s3, settings["index_dir"])) == (427, [], [])


def start_index(s3: S3Server, settings: dict[str, Any], address: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        index_command(settings, "ray", address), env=s3.env(), stderr=subprocess.PIPE, text=True
    )


def stop(process: subprocess.Popen[str]) -> None:
    """Kill the process unless it has ended (a test failed or timed out), and wait for it: no Ray
    driver is left behind."""
    if process.poll() is None:
        process.kill()
    process.wait()


def test_an_unreachable_cluster_is_one_line_and_exit_1(tmp_path: Path, s3_server: S3Server) -> None:  # noqa: F811
    # Not `lab`: no cluster is needed, so this test is not queued behind the cluster's tests
    # on their one worker (tests/fixtures/parallel.py).
    s3 = s3_server
    root = tmp_path / "code"
    make_tree(root, range(2))
    settings = settings_for(root, f"s3://{s3.new_bucket()}/idx")
    for address in ("127.0.0.1:1", "not-an-address"):  # nothing listens on port 1
        done = run_index(s3, settings, "ray", address)
        assert done.returncode == 1
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert lines[0].startswith("lynxc index: ") and address in lines[0]

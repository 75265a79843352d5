"""`lynxc load --engine ray` on a local two-node Ray cluster (tests/fixtures/ray_cluster.py), into a
local folder and into moto's S3 server (tests/fixtures/s3.py): the Ray load writes what the local
load writes, record for record and vector for vector; a worker killed mid-load leaves the previous
version; a store on S3 is served by the real generated server and guarded by a writer lease; an
unreachable cluster is one line.
Real `lynxc load` processes throughout."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import ROOT, lynxc_command, settings_args, stdio_client
from tests.fixtures.ray_cluster import RayCluster, ray_cluster, worker_pids  # noqa: F401
from tests.fixtures.s3 import SECRET_KEY, S3Server, boto_client, object_key, s3_server  # noqa: F401

pytestmark = pytest.mark.slow

SERVER = "foxnose-knowledge"
DATA = ROOT / "specs" / SERVER / "data"
RUN_TIMEOUT = 300  # a bound on each `lynxc load`, not a measurement
COMPARED = ("_key", "_hash", "_data", "_revision", "_text")


def load_command(settings: dict[str, Any], resource: str, files: list[str], *extra: str) -> list[str]:
    return lynxc_command("load", SERVER, resource, *files, *settings_args(settings), *extra)


def run_load(
    s3: S3Server, settings: dict[str, Any], resource: str, files: list[str], *extra: str
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        load_command(settings, resource, files, *extra),
        env=s3.env(),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
    )
    assert SECRET_KEY not in done.stdout + done.stderr
    return done


def settings_for(data_dir: str) -> dict[str, Any]:
    return {"data_dir": data_dir, "embedder": "static"}


def contents(s3: S3Server, data_dir: str, resource: str) -> tuple[dict[str, Any], list[tuple], np.ndarray]:
    """The pointer's entry for `resource`, its pointed rows by key (the compared columns) and
    their vectors, read with LanceDB apart from the code under test."""
    import lancedb

    options = s3.storage_options() if data_dir.startswith("s3://") else None
    if options:
        bucket, key = object_key(data_dir, "CURRENT.json")
        pointer = json.loads(boto_client(options).get_object(Bucket=bucket, Key=key)["Body"].read())
    else:
        pointer = json.loads((Path(data_dir) / "CURRENT.json").read_text())
    state = pointer["resources"][resource]
    db = lancedb.connect(data_dir.rstrip("/") + "/lance", storage_options=options)
    table = db.open_table(state["table"])
    table.checkout(state["version"])
    rows = table.to_arrow().sort_by("_key")
    columns = [c for c in COMPARED if c in rows.column_names]
    records = list(zip(*(rows[c].to_pylist() for c in columns), strict=True))
    vectors = (
        np.array(rows["_vector"].to_pylist(), dtype=np.float32) if "_vector" in rows.column_names else None
    )
    return state, records, vectors


def assert_same_store(s3: S3Server, left: str, right: str, resource: str) -> None:
    state_left, records_left, vectors_left = contents(s3, left, resource)
    state_right, records_right, vectors_right = contents(s3, right, resource)
    assert records_left == records_right
    assert vectors_left is not None and np.array_equal(vectors_left, vectors_right)
    for name in ("records", "locales", "embedder", "dimension", "declaration_sha256"):
        assert state_left[name] == state_right[name]


def report(done: subprocess.CompletedProcess[str]) -> str:
    """`lynxc load`'s report line, without the time it took."""
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().rsplit(", ", 1)[0]


def test_the_ray_load_writes_the_local_loads_records_on_a_folder_and_on_s3(
    tmp_path: Path,
    s3_server: S3Server,  # noqa: F811
    ray_cluster: RayCluster,  # noqa: F811
) -> None:
    s3, cluster = s3_server, ray_cluster
    peps = str(DATA / "peps.jsonl.gz")
    local = settings_for(str(tmp_path / "local"))
    on_folder = settings_for(str(tmp_path / "ray"))
    on_s3 = settings_for(f"s3://{s3.new_bucket()}/store")
    first = report(run_load(s3, local, "peps", [peps]))
    for settings in (on_folder, on_s3):
        done = run_load(s3, settings, "peps", [peps], "--engine", "ray", "--address", cluster.address)
        assert report(done) == first.replace(str(tmp_path / "local"), settings["data_dir"])
        assert_same_store(s3, local["data_dir"], settings["data_dir"], "peps")

    # A second load: some records changed, some new, some absent (kept): the same revisions.
    with gzip.open(peps, "rt") as handle:
        rows = [json.loads(line) for line in handle]
    for row in rows[:20]:
        row["title"] += " (revised)"
    changed = tmp_path / "peps.jsonl"
    changed.write_text("".join(json.dumps(r) + "\n" for r in rows[:700]))
    again = report(run_load(s3, local, "peps", [str(changed)]))
    assert again.startswith("peps: 0 inserted, 20 updated, 680 unchanged, 0 deleted; 736 records")
    done = run_load(s3, on_s3, "peps", [str(changed)], "--engine", "ray", "--address", cluster.address)
    assert report(done) == again
    assert_same_store(s3, local["data_dir"], on_s3["data_dir"], "peps")

    # Bad rows: the same problem lines as the local load's (file:line: message), nothing written.
    bad = tmp_path / "bad.jsonl"
    lines = changed.read_text().splitlines()
    lines[3] = lines[3].replace('"status":"', '"status":"Bogus').replace('"status": "', '"status": "Bogus')
    lines[500] = "{not json"
    lines.insert(600, json.dumps({**json.loads(lines[1]), "colour": "red"}))
    bad.write_text("\n".join(lines) + "\n")
    refused_local = run_load(s3, local, "peps", [str(bad)])
    refused_ray = run_load(s3, on_s3, "peps", [str(bad)], "--engine", "ray", "--address", cluster.address)
    assert refused_local.returncode == refused_ray.returncode == 1
    problems = [line for line in refused_local.stderr.splitlines() if line.startswith(str(bad))]
    assert len(problems) >= 3 and any(":4: status" in p for p in problems), refused_local.stderr
    assert sorted(problems) == sorted(p for p in refused_ray.stderr.splitlines() if p.startswith(str(bad)))
    assert "Traceback" not in refused_ray.stderr
    assert_same_store(s3, local["data_dir"], on_s3["data_dir"], "peps")


def test_a_killed_worker_leaves_the_previous_version_and_the_next_load_succeeds(
    tmp_path: Path,
    s3_server: S3Server,  # noqa: F811
    ray_cluster: RayCluster,  # noqa: F811
) -> None:
    s3, cluster = s3_server, ray_cluster
    settings = settings_for(f"s3://{s3.new_bucket()}/store")
    sections = str(DATA / "sections.jsonl.gz")
    some = tmp_path / "some.jsonl"
    with gzip.open(sections, "rt") as handle:
        some.write_text("".join(line for _, line in zip(range(500), handle, strict=False)))
    assert run_load(s3, settings, "peps", [str(DATA / "peps.jsonl.gz")]).returncode == 0
    assert run_load(s3, settings, "sections", [str(some)]).returncode == 0
    before = contents(s3, settings["data_dir"], "sections")
    client = boto_client(s3.storage_options())
    bucket, pointer_key = object_key(settings["data_dir"], "CURRENT.json")
    pointer = client.get_object(Bucket=bucket, Key=pointer_key)["Body"].read()

    command = load_command(settings, "sections", [sections], "--engine", "ray", "--address", cluster.address)
    running = subprocess.Popen(
        command, env=s3.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        killed = None
        deadline = time.monotonic() + RUN_TIMEOUT
        pids, listed = [], 0.0
        while killed is None and running.poll() is None and time.monotonic() < deadline:
            if time.monotonic() - listed > 0.2:
                pids, listed = cluster.pids(), time.monotonic()
            busy = worker_pids(pids, "ray::LoadWorker.run")
            if busy:
                os.kill(busy[0], signal.SIGKILL)  # a worker lost mid-block
                killed = busy[0]
            time.sleep(0.01)
        _, stderr = running.communicate(timeout=RUN_TIMEOUT)
    finally:
        if running.poll() is None:
            running.kill()
        running.wait()
    assert killed is not None, f"no worker was seen running a block: {stderr}"
    assert running.returncode == 1, stderr
    message = stderr.replace("\r", "\n").strip().splitlines()[-1]
    assert message.startswith("lynxc load: a Ray load worker failed on "), stderr
    assert message.endswith("nothing loaded, the store keeps its previous version"), stderr
    assert "Traceback" not in stderr and SECRET_KEY not in stderr
    # Nothing of it is visible: the same pointer, byte for byte, and the same records.
    assert client.get_object(Bucket=bucket, Key=pointer_key)["Body"].read() == pointer
    after = contents(s3, settings["data_dir"], "sections")
    assert after[0] == before[0] and after[1] == before[1] and np.array_equal(after[2], before[2])

    # The next load succeeds: its lease was released (or taken over), the table restored.
    done = run_load(s3, settings, "sections", [sections], "--engine", "ray", "--address", cluster.address)
    assert report(done).startswith("sections: 6490 inserted, 0 updated, 500 unchanged, 0 deleted; 6990")


@pytest.mark.anyio
async def test_a_store_on_s3_is_served(tmp_path: Path, s3_server: S3Server) -> None:  # noqa: F811
    s3 = s3_server
    data_dir = f"s3://{s3.new_bucket()}/store"
    settings = settings_for(data_dir)
    for resource in ("peps", "countries"):
        assert run_load(s3, settings, resource, [str(DATA / f"{resource}.jsonl.gz")]).returncode == 0
    # Reached through the settings alone: the server's environment has no credentials.
    serve_settings = {**settings, "data_storage": s3.storage_options()}
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("AWS_")}
    try:
        async with stdio_client(SERVER, serve_settings) as client:
            listed = await client.call_tool("discover_resources", {})
            found = await client.call_tool(
                "search_records",
                {"resource_id": "peps", "query": "assignment expressions", "search_type": "text"},
            )
            queried = await client.call_tool(
                "query_records",
                {
                    "resource_id": "countries",
                    "filters": [
                        {"field": "landlocked", "value": True},
                        {"field": "region", "value": "Africa"},
                    ],
                    "sort": [{"field": "area", "order": "desc"}],
                    "limit": 3,
                },
            )
    finally:
        os.environ.update(saved)
    for result in (listed, found, queried):
        assert not result.is_error, result.content[0].text
        assert SECRET_KEY not in json.dumps(result.structured_content)
    counts = {r["resource_id"]: r["record_count"] for r in listed.structured_content["resources"]}
    assert counts["peps"] == 736 and counts["countries"] == 250
    assert 572 in [i["data"]["number"] for i in found.structured_content["items"]]
    assert [i["id"] for i in queried.structured_content["items"]] == ["TCD", "NER", "MLI"]


def test_an_unreachable_cluster_is_one_line_and_exit_1(tmp_path: Path, s3_server: S3Server) -> None:  # noqa: F811
    settings = settings_for(str(tmp_path / "store"))
    peps = str(DATA / "peps.jsonl.gz")
    for address in ("127.0.0.1:1", "not-an-address"):  # nothing listens on port 1
        done = run_load(s3_server, settings, "peps", [peps], "--engine", "ray", "--address", address)
        assert done.returncode == 1
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
        assert lines[0].startswith("lynxc load: ") and address in lines[0]
    assert not (tmp_path / "store" / "CURRENT.json").exists()


def test_a_second_load_of_a_store_on_s3_is_refused_while_the_first_holds_the_lease(
    tmp_path: Path,
    s3_server: S3Server,  # noqa: F811
) -> None:
    s3 = s3_server
    settings = settings_for(f"s3://{s3.new_bucket()}/store")
    countries = [str(DATA / "countries.jsonl.gz")]
    first = subprocess.Popen(
        load_command(settings, "countries", countries),
        env={**s3.env(), "LYNXC_TEST_PAUSE_AT": "validated"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert first.stderr is not None and first.stdin is not None
        seen = ""
        while "paused at validated" not in seen:  # the first load holds the lease, paused
            char = first.stderr.read(1)
            assert char, f"the first load ended before its pause: {seen}"
            seen += char
        second = run_load(s3, settings, "countries", countries)
        first.stdin.write("\n")
        first.stdin.flush()
        stdout, stderr = first.communicate(timeout=RUN_TIMEOUT)
    finally:
        if first.poll() is None:
            first.kill()
        first.wait()
    assert second.returncode == 1, second.stderr
    line = second.stderr.strip().splitlines()[-1]
    assert line.startswith(f"lynxc load: another `lynxc load` (pid {first.pid} on host "), line
    assert "holds the writer lease of s3://" in line and "Traceback" not in second.stderr
    assert first.returncode == 0, stderr
    assert stdout.startswith("countries: 250 inserted")
    # The lease is gone with the first load: the next one takes it.
    assert report(run_load(s3, settings, "countries", countries)).startswith("countries: 0 inserted")


def test_the_ray_engine_loads_parents_and_children_in_one_command_and_embeds_later(
    tmp_path: Path,
    s3_server: S3Server,  # noqa: F811
    ray_cluster: RayCluster,  # noqa: F811
) -> None:
    """`NAME=FILE` pairs and `--embed later` with the Ray engine, then `lynxc embed`: the store of
    one eager local load of both resources, record for record and vector for vector."""
    s3, cluster = s3_server, ray_cluster
    with gzip.open(DATA / "sections.jsonl.gz", "rt") as handle:
        sections = [line for line in handle if json.loads(line)["pep"] in (8, 20, 343)]
    some_sections = tmp_path / "sections.jsonl"
    some_sections.write_text("".join(sections))
    pairs = [f"sections={some_sections}", f"peps={DATA / 'peps.jsonl.gz'}"]  # the child first
    local, on_folder = settings_for(str(tmp_path / "local")), settings_for(str(tmp_path / "ray"))

    def lynxc(*args: str, settings: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        command = lynxc_command(*args, *settings_args(settings))
        done = subprocess.run(command, env=s3.env(), capture_output=True, text=True, timeout=RUN_TIMEOUT)
        assert done.returncode == 0, done.stderr
        return done

    lynxc("load", SERVER, *pairs, settings=local)
    later = lynxc(
        "load",
        SERVER,
        *pairs,
        "--engine",
        "ray",
        "--address",
        cluster.address,
        "--embed",
        "later",
        settings=on_folder,
    )
    assert f"lynxc embed {SERVER} peps" in later.stdout
    lynxc("embed", SERVER, settings=on_folder)
    for resource in ("peps", "sections"):
        assert_same_store(s3, local["data_dir"], on_folder["data_dir"], resource)

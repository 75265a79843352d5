"""lynx-mcp with its index on object storage, against moto's real S3 server on 127.0.0.1: every
guarantee of the local index (incremental, one commit per batch, readers during writes, kill -9),
one writer by the lease, and credentials that never show, through the real `lynxc index` and
`lynxc serve` processes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import boto3
import pytest
from mcp import Client

from lynxc.runtime.backends.lynx import indexer
from lynxc.runtime.backends.lynx.filters import Filters
from lynxc.runtime.backends.lynx.indexer import index_source
from lynxc.runtime.backends.lynx.lease import LEASE_PATH
from lynxc.runtime.backends.lynx.location import IndexLocation
from lynxc.runtime.backends.lynx.ranking import Hit, search
from lynxc.runtime.backends.lynx.reader import IndexReader
from lynxc.runtime.backends.lynx.sources import Source
from lynxc.runtime.backends.lynx.store import TABLE_PREFIX, Store
from lynxc.runtime.backends.retrieval.embedders import get_embedder
from tests.conftest import ROOT, free_port, lynxc_command, settings_args, stdio_client
from tests.fixtures.s3 import SECRET_KEY, S3Server, boto_client, object_key, s3_server, start_moto  # noqa: F401
from tests.runtime.backends.test_lynx_index import FILES, make_tree

TIMEOUT = 120  # any one `lynxc` run; they take seconds


# --- helpers shared with test_lynx_replicas.py ------------------------------------------------


def lynx_settings(root: Path, index_dir: str, **more: Any) -> dict[str, Any]:
    return {
        "sources": [{"name": "code", "root": str(root), "kind": "code"}],
        "index_dir": index_dir,
        "embedder": "static",
        **more,
    }


def index_command(settings: Mapping[str, Any]) -> list[str]:
    return lynxc_command("index", "lynx-mcp", *settings_args(dict(settings)))


def run_index(
    settings: Mapping[str, Any], env: Mapping[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        index_command(settings), env=dict(env), cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT
    )


def run_indexes(runs: list[tuple[Mapping[str, Any], Mapping[str, str]]]) -> list[tuple[int, str]]:
    """Several `lynxc index` runs at once (settings, env): their (exit code, stderr)."""
    started = [
        subprocess.Popen(index_command(settings), env=dict(env), stderr=subprocess.PIPE, text=True)
        for settings, env in runs
    ]
    try:
        errors = [process.communicate(timeout=TIMEOUT)[1] for process in started]
        return [(process.returncode, stderr) for process, stderr in zip(started, errors, strict=True)]
    finally:
        for process in started:
            process.kill()
            process.wait()


def no_aws_env() -> dict[str, str]:
    """This environment without any AWS_* variable: credentials only from settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}


@contextmanager
def serving(replicas: list[tuple[Mapping[str, Any], Mapping[str, str], Path]]) -> Iterator[list[str]]:
    """`lynxc serve lynx-mcp --transport http` processes, one per (settings, env, folder), started
    at once; each runs in its folder, which is also its HOME (nothing shared on disk), its stderr
    in `folder/serve.log`. Yields their MCP URLs once they all listen; stops them afterwards.

    A port is chosen before the server binds it (free_port), so another process may take it in
    between: a server counts as started only once it holds the listening socket itself, and one
    that could not bind its port is started again on another."""
    everything: list[subprocess.Popen[bytes]] = []  # every process started, stopped at the end

    def start(settings: Mapping[str, Any], env: Mapping[str, str], folder: Path) -> tuple[int, Any, Path]:
        port = free_port()
        command = lynxc_command("serve", "lynx-mcp", "--transport", "http", "--port", str(port))
        with open(folder / "serve.log", "wb") as log:
            process = subprocess.Popen(
                command + settings_args(dict(settings)),
                env={**env, "HOME": str(folder)},
                cwd=folder,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        everything.append(process)
        return port, process, folder

    try:
        servers = [start(*replica) for replica in replicas]
        deadline = time.monotonic() + 90
        for i, replica in enumerate(replicas):
            for attempt in range(3):
                port, process, folder = servers[i]
                while not _listens(process.pid, port):
                    if process.poll() is not None or time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
                else:
                    break  # it listens
                log = (folder / "serve.log").read_text()
                if process.poll() is None or "address already in use" not in log.lower() or attempt == 2:
                    raise RuntimeError(f"lynxc serve did not start: {log}")
                servers[i] = start(*replica)  # its port was taken: another one
        yield [f"http://127.0.0.1:{port}/mcp" for port, _, _ in servers]
    finally:
        for process in everything:
            process.terminate()
        for process in everything:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _listens(pid: int, port: int) -> bool:
    """Whether process `pid` holds a TCP socket listening on `port` (from Linux's /proc): the
    server answering there is the one started, not another process that took the port first."""
    sockets = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as handle:
            for line in handle.readlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                    sockets.add(f"socket:[{fields[9]}]")
    if not sockets:
        return False
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{pid}/fd/{fd}") in sockets:
                    return True
    return False


@contextmanager
def served(settings: Mapping[str, Any], env: Mapping[str, str], folder: Path) -> Iterator[str]:
    with serving([(settings, env, folder)]) as urls:
        yield urls[0]


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.structured_content


def chunk_ids(location: IndexLocation) -> list[str]:
    table = Store(location).table("code")
    return table.to_arrow()["id"].to_pylist() if table is not None else []


def find(location: IndexLocation, query: str, top_k: int = 5, filters: Filters | None = None) -> list[Hit]:
    """One search of source `code`, the way a server runs it, by a new reader."""
    vector = get_embedder("static").embed([query])[0]
    reader = IndexReader(location)
    return asyncio.run(search(reader, ["code"], query, vector, "hybrid", top_k, filters or Filters()))


def handler(i: int) -> str:
    """A file of one chunk."""
    return f"def handler_{i}():\n    return {i}\n"


def handlers(root: Path, numbers: range) -> None:
    make_tree(root, {f"m{i:04}.py": handler(i) for i in numbers})


def one_line_error(stderr: str, uri: str) -> str:
    """The error of a failed run: one line naming the index, no traceback, no secret."""
    assert "Traceback" not in stderr and SECRET_KEY not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and uri in lines[0], stderr
    return lines[0]


def report(stderr: str) -> tuple[int, int, int]:
    """(files, (re)indexed, removed) from `lynxc index`'s report of source code."""
    found = re.search(r"code: (\d+) files, (\d+) \(re\)indexed into \d+ chunks, (\d+) removed", stderr)
    assert found, stderr
    files, changed, removed = found.groups()
    return int(files), int(changed), int(removed)


@pytest.fixture
def bucket(s3_server) -> str:  # noqa: F811
    return s3_server.new_bucket()


@pytest.fixture
def s3_env(s3_server, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:  # noqa: F811
    """The S3 server's environment, in this process too (stdio_client passes os.environ on)."""
    env = s3_server.env()
    for name, value in env.items():
        if name.startswith("AWS_"):
            monkeypatch.setenv(name, value)
    return env


# --- incremental, one commit per batch --------------------------------------------------------


@pytest.mark.anyio
async def test_incremental_indexing_on_s3(tmp_path: Path, bucket: str, s3_env: dict[str, str]) -> None:
    root = tmp_path / "code"
    make_tree(root, {**FILES, "empty.py": ""})
    settings = lynx_settings(root, f"s3://{bucket}/index")
    first = run_index(settings, s3_env)
    assert first.returncode == 0, first.stderr
    assert report(first.stderr) == (6, 6, 0)  # five files with chunks, one without
    assert report(run_index(settings, s3_env).stderr) == (6, 0, 0)
    (root / "app/net.py").write_text("def open_socket(host, port, timeout):\n    return None\n")
    (root / "app/render.py").unlink()
    (root / "app/extra.py").write_text("def brand_new():\n    return 1\n")
    assert report(run_index(settings, s3_env).stderr) == (6, 2, 1)
    async with stdio_client("lynx-mcp", settings) as client:
        listed = (await call(client, "list_sources"))["sources"][0]
        hits = await call(client, "search", query="brand new", top_k=3)
        render = await call(client, "search", query="render page html")
    assert listed["files_indexed"] == 6 and listed["drift"] == {"changed": 0, "added": 0, "removed": 0}
    assert hits["results"][0]["path"] == "app/extra.py"
    assert "app/render.py" not in {h["path"] for h in render["results"]}


def test_one_commit_per_batch_on_s3(
    tmp_path: Path,
    bucket: str,
    s3_server,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "code"
    handlers(root, range(35))
    location = IndexLocation.of(f"s3://{bucket}/index", s3_server.storage_options())
    store = Store(location)
    monkeypatch.setattr(indexer, "BATCH_FILES", 10)
    seen: list[tuple[int, int, int]] = []
    reader = Store(location)  # another connection, as a server's

    def progress(done: int, total: int, stage: str) -> None:
        if stage == "files":  # what a reader sees now
            table = reader.table("code")
            seen.append((done, table.version, table.count_rows()))

    index_source(Source("code", str(root), "code"), store, get_embedder("static"), progress)
    assert [done for done, _, _ in seen] == [10, 20, 30, 35]
    versions = [version for _, version, _ in seen]
    assert versions == list(range(versions[0], versions[0] + 4))  # one version per batch
    assert all(rows == done for done, _, rows in seen)  # each batch whole, none in part
    assert len(set(chunk_ids(location))) == 35


# --- readers during writes --------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_server_keeps_answering_while_lynxc_index_writes_to_s3(
    tmp_path: Path, bucket: str, s3_env: dict[str, str]
) -> None:
    root = tmp_path / "code"
    handlers(root, range(100))
    settings = lynx_settings(root, f"s3://{bucket}/index")
    assert run_index(settings, s3_env).returncode == 0
    # The second run indexes 300 files while the server answers, in two commits of whole batches
    # (indexer.BATCH_FILES = 200, in path order): m0100-m0299, then m0300-m0399. A quarter of them,
    # the last of each batch included, are marked: a search for those (top_k above their number)
    # counts 0, 50 or 75 of them, counts only whole commits give; a commit seen in part, any other.
    marked = [i for i in range(100, 400) if i % 4 == 3]
    make_tree(root, {f"m{i:04}{'_k' if i in marked else ''}.py": handler(i) for i in range(100, 400)})
    newer = {"query": "handler", "path_contains": "_k.py", "top_k": 100}
    commits = {0, len([i for i in marked if i < 300]), len(marked)}
    assert commits == {0, 50, 75}
    async with stdio_client("lynx-mcp", settings) as client:
        writer = subprocess.Popen(index_command(settings), env=s3_env, stderr=subprocess.PIPE, text=True)
        try:
            answers = []
            while writer.poll() is None or len(answers) < 5:
                assert len((await call(client, "search", query="handler", top_k=5))["results"]) == 5
                answers.append(len((await call(client, "search", **newer))["results"]))
            _, stderr = writer.communicate(timeout=TIMEOUT)
        finally:
            writer.kill()
            writer.wait()
        assert writer.returncode == 0, stderr
        assert set(answers) <= commits, answers  # a batch is seen whole or not at all
        after = await call(client, "search", **newer)  # the next search sees the new commits
        listed = (await call(client, "list_sources"))["sources"][0]
    assert len(after["results"]) == len(marked) and listed["files_indexed"] == 400


# --- kill -9 ----------------------------------------------------------------------------------

KILL_SCRIPT = """
import json, os, signal, sys
from lynxc.runtime.backends.lynx import indexer
from lynxc.runtime.backends.lynx.location import IndexLocation
from lynxc.runtime.backends.lynx.sources import Source
from lynxc.runtime.backends.lynx.store import TABLE_PREFIX, Store
from lynxc.runtime.backends.retrieval.embedders import get_embedder
indexer.BATCH_FILES = 10
def die(done, total, stage):
    if done >= 20:
        os.kill(os.getpid(), signal.SIGKILL)  # mid-index, after two committed batches
store = Store(IndexLocation.of(sys.argv[2], json.loads(sys.stdin.read())))
indexer.index_source(Source("code", sys.argv[1], "code"), store, get_embedder("static"), die)
"""


def test_kill_9_of_the_indexer_on_s3_leaves_the_last_commit_readable(
    tmp_path: Path,
    bucket: str,
    s3_server,  # noqa: F811
) -> None:
    root = tmp_path / "code"
    handlers(root, range(50))
    location = IndexLocation.of(f"s3://{bucket}/index", s3_server.storage_options())
    killed = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, str(root), location.uri],
        input=json.dumps(dict(location.options)),  # the credentials, not on a command line
        env={**no_aws_env(), "PYTHONPATH": str(ROOT)},
        text=True,
        timeout=TIMEOUT,
    )
    assert killed.returncode == -9
    store = Store(location)
    assert store.table("code").count_rows() == 20  # the two committed batches, readable
    assert len(find(location, "handler_3")) == 5
    report = index_source(Source("code", str(root), "code"), store, get_embedder("static"))
    assert report.changed == 30
    ids = chunk_ids(location)
    assert len(ids) == len(set(ids)) == 50


BIG = range(1000)  # five batches of `lynxc index`: long enough to kill it, or race it, mid-run


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A corpus of five batches, and the chunk ids of a clean run over it (on local disk: the
    ids are paths, lines and content hashes, whatever the index's place)."""
    base = tmp_path_factory.mktemp("big")
    handlers(base / "code", BIG)
    clean = Store(str(base / "clean"))
    index_source(Source("code", str(base / "code"), "code"), clean, get_embedder("static"))
    return base / "code", sorted(clean.table("code").to_arrow()["id"].to_pylist())


def lease_expiry(s3: S3Server, index_dir: str) -> float:
    """When the lease object of the index says it expires (read with boto3)."""
    bucket, key = object_key(index_dir, LEASE_PATH)
    return json.loads(boto_client(s3.storage_options()).get_object(Bucket=bucket, Key=key)["Body"].read())[
        "expires"
    ]


def test_kill_9_of_lynxc_index_holding_the_lease_then_the_next_run_takes_over(
    big: tuple[Path, list[str]],
    bucket: str,
    s3_env: dict[str, str],
    s3_server: S3Server,  # noqa: F811
) -> None:
    root, clean = big
    settings = lynx_settings(root, f"s3://{bucket}/index", index_lease_seconds=5)
    location = IndexLocation.of(settings["index_dir"])
    writer = subprocess.Popen(index_command(settings), env=s3_env, stderr=subprocess.PIPE)
    try:
        seen, deadline = b"", time.monotonic() + TIMEOUT
        while b"] 200/1000 files" not in seen:  # its first batch is committed
            assert writer.poll() is None and time.monotonic() < deadline, seen
            if select.select([writer.stderr], [], [], 1)[0]:
                seen += os.read(writer.stderr.fileno(), 4096)
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        writer.stderr.close()
    rows = len(chunk_ids(location))
    assert 200 <= rows < 1000 and rows % 200 == 0  # whole batches only
    assert len(find(location, "handler_5")) == 5  # the last commit is readable
    expires = lease_expiry(
        s3_server, settings["index_dir"]
    )  # the dead writer's lease is left behind, until it expires
    time.sleep(max(0.0, expires - time.time()) + 0.5)
    again = run_index(settings, s3_env)
    assert again.returncode == 0, again.stderr
    assert f"lynxc index: took over the expired writer lease of pid {writer.pid} on host" in again.stderr
    assert report(again.stderr) == (1000, 1000 - rows, 0)
    assert sorted(chunk_ids(location)) == clean  # as a clean run: every chunk once


MID_RUN = range(2000)  # ten batches: the run is still writing when its store goes away after the first


def test_a_store_gone_mid_run_is_one_line_and_exit_1(tmp_path: Path) -> None:
    root = tmp_path / "code"
    handlers(root, MID_RUN)
    with start_moto(tmp_path / "moto") as own:  # a server of its own, to kill
        bucket = own.new_bucket()
        index_dir = f"s3://{bucket}/index"
        # The credentials in settings; LanceDB's retry options (the lease takes them too) bound
        # the time the run goes on retrying a store that is gone.
        storage = {**own.storage_options(), "client_max_retries": "1", "client_retry_timeout": "5"}
        settings = lynx_settings(root, index_dir, index_storage=storage)
        client = boto_client(own.storage_options())
        versions = object_key(index_dir, f"{TABLE_PREFIX}code.lance/_versions/")
        writer = subprocess.Popen(
            index_command(settings), env=no_aws_env(), stderr=subprocess.PIPE, text=True
        )
        try:
            deadline = time.monotonic() + TIMEOUT
            # The table's creation is its first version, the first batch's commit its second.
            while client.list_objects_v2(Bucket=versions[0], Prefix=versions[1]).get("KeyCount", 0) < 2:
                assert writer.poll() is None, "lynxc index ended before its first commit was seen"
                assert time.monotonic() < deadline, "no commit within the time limit"
                time.sleep(0.05)
            own.process.kill()  # the store goes away under the running writer
            own.process.wait()
            mid_run = writer.poll() is None
            _, stderr = writer.communicate(timeout=TIMEOUT)
        finally:
            if writer.poll() is None:
                writer.kill()
            writer.wait()
    assert mid_run, f"lynxc index finished before its store went away (a bigger corpus?): {stderr}"
    assert writer.returncode == 1, stderr
    assert "Traceback" not in stderr and SECRET_KEY not in stderr, stderr
    lines = [line for line in re.split(r"[\r\n]", stderr) if line.strip()]
    errors = [line for line in lines if line.startswith("lynxc index:")]
    assert len(errors) == 1 and index_dir in errors[0], stderr
    # Apart from it, only the progress bar.
    assert all(line.startswith("code: [") for line in lines if line != errors[0]), stderr


# --- one writer -------------------------------------------------------------------------------


def test_two_lynxc_index_at_once_one_writes_the_other_is_refused(
    big: tuple[Path, list[str]], bucket: str, s3_env: dict[str, str], tmp_path: Path
) -> None:
    root, clean = big
    settings = lynx_settings(root, f"s3://{bucket}/index")
    folders = [tmp_path / "one", tmp_path / "two"]  # separate working folders: nothing shared
    runs = []
    for folder in folders:
        folder.mkdir()
        command = index_command(settings)
        runs.append(subprocess.Popen(command, env=s3_env, cwd=folder, stderr=subprocess.PIPE, text=True))
    try:
        errors = [run.communicate(timeout=TIMEOUT)[1] for run in runs]
    finally:
        for run in runs:
            run.kill()
            run.wait()
    assert sorted(run.returncode for run in runs) == [0, 1], errors
    winner, loser = (0, 1) if runs[0].returncode == 0 else (1, 0)
    assert report(errors[winner]) == (1000, 1000, 0)
    refusal = one_line_error(errors[loser], settings["index_dir"])
    assert re.fullmatch(
        rf"lynxc index: another `lynxc index` \(pid {runs[winner].pid} on host \S+\) holds the writer "
        rf"lease of {settings['index_dir']} until \d{{4}}-\d\d-\d\d \d\d:\d\d:\d\d UTC, .*",
        refusal,
    ), refusal
    assert sorted(chunk_ids(IndexLocation.of(settings["index_dir"]))) == clean


# --- secrets ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_credentials_only_in_settings_work_and_never_show(
    tmp_path: Path,
    bucket: str,
    s3_server,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [name for name in os.environ if name.startswith("AWS_")]:
        monkeypatch.delenv(name)
    env = no_aws_env()
    root = tmp_path / "code"
    make_tree(root)
    storage = s3_server.storage_options()
    settings = lynx_settings(root, f"s3://{bucket}/index", index_storage=storage)
    missing = lynx_settings(root, "s3://no-such-bucket/index", index_storage=storage)
    # Nothing listens there (port 1 is privileged); LanceDB's retry options (the lease takes them
    # too) bound the wait.
    refused = {
        **storage,
        "endpoint": "http://127.0.0.1:1",
        "client_max_retries": "1",
        "client_retry_timeout": "5",
    }
    done, no_bucket, no_server = run_indexes(
        [(settings, env), (missing, env), ({**settings, "index_storage": refused}, env)]
    )
    assert done[0] == 0 and SECRET_KEY not in done[1], done[1]
    # Errors: one line naming the index, in bounded time, without the secret.
    assert no_bucket[0] != 0 and "NoSuchBucket" in one_line_error(no_bucket[1], "s3://no-such-bucket/index")
    assert no_server[0] != 0 and "cannot connect" in one_line_error(no_server[1], settings["index_dir"])
    shown = [done[1]]
    folder = tmp_path / "serving"
    folder.mkdir()
    with served(settings, env, folder) as url:
        async with Client(url) as client:
            shown.append((await client.list_tools()).model_dump_json())
            for tool, arguments in [
                ("list_sources", {}),
                ("search", {"query": "parse config file"}),
                ("deep_search", {"queries": ["parse config", "settings file"], "return_all_variants": True}),
                ("search", {"query": "x", "source": "nope"}),  # a tool error
            ]:
                result = await client.call_tool(tool, arguments)
                shown.append(result.model_dump_json())
                if tool == "search" and not result.is_error:
                    hits = result.structured_content["results"]
    shown.append((folder / "serve.log").read_text())
    assert {h["path"] for h in hits[:2]} == {"app/config.py", "lib/util.go"}
    assert all(SECRET_KEY not in text for text in shown)


@pytest.fixture
def authenticating_s3(tmp_path: Path) -> Iterator[tuple[str, str, str, subprocess.Popen[bytes]]]:
    """A second moto server, this one checking signatures: (endpoint, key id, secret, process).
    Its first three requests (an IAM user allowed everything, and its key) are unauthenticated."""
    with start_moto(tmp_path / "moto", {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3"}) as server:
        plain = {"endpoint_url": server.endpoint, "region_name": "us-east-1"}
        iam = boto3.client("iam", aws_access_key_id="x", aws_secret_access_key="y", **plain)
        iam.create_user(UserName="lynx")
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        iam.put_user_policy(UserName="lynx", PolicyName="all", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName="lynx")["AccessKey"]
        yield server.endpoint, key["AccessKeyId"], key["SecretAccessKey"], server.process


@pytest.mark.anyio
async def test_a_wrong_secret_and_a_store_gone_away_are_one_line_errors(
    tmp_path: Path, authenticating_s3: tuple[str, str, str, subprocess.Popen[bytes]]
) -> None:
    endpoint, key_id, secret, moto = authenticating_s3
    credentials = {"aws_access_key_id": key_id, "aws_secret_access_key": secret}
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", **credentials).create_bucket(
        Bucket="guarded"
    )
    root = tmp_path / "code"
    make_tree(root)
    storage = {"endpoint": endpoint, "region": "us-east-1", "allow_http": "true", **credentials}
    settings = lynx_settings(root, "s3://guarded/index", index_storage=storage)
    wrong = "wrong-secret-0123456789"
    env = no_aws_env()
    (code, refused), (done, stderr) = run_indexes(
        [({**settings, "index_storage": {**storage, "aws_secret_access_key": wrong}}, env), (settings, env)]
    )
    assert code != 0 and wrong not in refused and secret not in refused
    assert "SignatureDoesNotMatch" in one_line_error(refused, "s3://guarded/index")
    assert done == 0 and secret not in stderr, stderr
    folder = tmp_path / "serving"
    folder.mkdir()
    with served(settings, env, folder) as url:
        async with Client(url) as client:
            assert (await call(client, "search", query="parse config file"))["results"]
            moto.kill()  # the store goes away under a running server
            moto.wait()
            with anyio.fail_after(90):
                gone = await client.call_tool("search", {"query": "parse config file"})
    message = gone.content[0].text
    assert gone.is_error and secret not in message and "\n" not in message
    assert message.startswith("the index 's3://guarded/index' cannot be read: "), message
    assert secret not in (folder / "serve.log").read_text()

"""The writer lease of an object-store index, against moto's real S3 server on 127.0.0.1 (its
conditional writes made atomic, as S3's are: tests/fixtures/moto_s3.py): created once, refused
while live, taken over once expired (by exactly one of several takers), kept alive by renewal,
deleted on release, and a writer that lost it commits nothing more."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from lynxc.runtime.backends.lynx.lease import LEASE_PATH, IndexBusy, Lease, LeaseLost, writer_lock
from lynxc.runtime.backends.lynx.location import IndexLocation
from lynxc.runtime.backends.lynx.store import Row, Store
from tests.fixtures.s3 import SECRET_KEY, boto_client, object_key, s3_server  # noqa: F401

BUSY = r"another `lynxc index` \(pid {pid} on host {host}\) holds the writer lease of {uri} until \d{{4}}-"


@pytest.fixture
def location(s3_server) -> IndexLocation:  # noqa: F811
    return IndexLocation.of(f"s3://{s3_server.new_bucket()}/index", s3_server.storage_options())


def stored(location: IndexLocation) -> dict | None:
    """The lease object as the store holds it (read with boto3, apart from the code under test),
    None without one."""
    client = boto_client(location.options)
    try:
        found = client.get_object(**lease_object(location))
    except client.exceptions.NoSuchKey:
        return None
    return json.loads(found["Body"].read())


def overwrite(location: IndexLocation, data: bytes) -> None:
    """Write the lease object as another writer would, unconditionally."""
    boto_client(location.options).put_object(**lease_object(location), Body=data)


def lease_object(location: IndexLocation) -> dict[str, str]:
    bucket, key = object_key(location.uri, LEASE_PATH)
    return {"Bucket": bucket, "Key": key}


def crashed(lease: Lease) -> None:
    """The lease's holder stops renewing without releasing it, as a killed process does."""
    lease._stop.set()
    assert lease._thread is not None
    lease._thread.join()


def refused(location: IndexLocation | str, lease_seconds: float = 30, match: str | None = None) -> str:
    """The message of a writer refused the lease."""
    with pytest.raises(IndexBusy, match=match) as busy, writer_lock(location, lease_seconds):
        pass
    return str(busy.value)


def wait_expired(lease_seconds: float) -> None:
    time.sleep(lease_seconds + 0.3)


def test_one_holder_the_second_writer_is_refused_and_release_deletes_it(location: IndexLocation) -> None:
    with writer_lock(location, 30) as lease:
        assert lease is not None and lease.took_over is None
        held = stored(location)
        assert held is not None and held["id"] == lease.holder["id"] and held["pid"] == lease.holder["pid"]
        pattern = BUSY.format(pid=held["pid"], host=held["host"], uri=location.uri)
        assert SECRET_KEY not in refused(location, match=pattern)
        lease.check()  # still the holder
    assert stored(location) is None  # released: deleted
    with writer_lock(location, 30) as again:  # and free for the next writer
        assert again is not None and again.took_over is None


def test_an_expired_lease_is_taken_over_and_its_holder_stops_before_its_next_commit(
    location: IndexLocation,
) -> None:
    first = Lease(location, 1)
    first.acquire()
    crashed(first)  # e.g. a process paused longer than its lease
    wait_expired(1)
    with writer_lock(location, 30) as second:
        assert second is not None
        assert second.took_over is not None and second.took_over["id"] == first.holder["id"]
        with pytest.raises(LeaseLost, match="no longer holds the writer lease"):
            first.check()
        # The stale writer wakes up and renews: its conditional write fails, it knows it lost.
        first._stop = threading.Event()
        first._renew_once = threading.Thread(target=first._renew, daemon=True)
        first._renew_once.start()
        first._renew_once.join(timeout=10)
        assert first._lost == "another writer took it over after it expired"
        # Store.guard is the lease's check: the stale writer's next commit does not happen.
        store = Store(location)
        store.guard = first.check
        row = Row("a.py:1-1:h", "a.py", "h", "python", "function", "a", 1, 1, "def a(): pass", "a")
        with pytest.raises(LeaseLost):
            store.replace_files("code", ["a.py"], [row], np.ones((1, 4), dtype=np.float32))
        assert store.table("code") is None  # nothing was written
        first.release()  # the stale writer's release leaves the new holder's lease alone
        assert stored(location)["id"] == second.holder["id"]
        second.check()
    assert stored(location) is None


def test_renewal_keeps_the_lease_past_its_length(location: IndexLocation) -> None:
    with writer_lock(location, 3) as lease:
        assert lease is not None
        time.sleep(7)  # over two lease lengths, renewed every third of one
        lease.check()
        refused(location, 3)


def test_a_writer_that_stopped_renewing_does_not_delete_its_successors_lease(location: IndexLocation) -> None:
    first = Lease(location, 1)
    first.acquire()
    crashed(first)  # its renewals failed (the store was unreachable) until the lease ran out
    wait_expired(1)
    with writer_lock(location, 30) as second:
        assert second is not None and second.took_over is not None
        first.release()  # the first writer gives up: the lease it deletes is no longer its own
        held = stored(location)
        assert held is not None and held["id"] == second.holder["id"]
        refused(location)


def test_of_several_writers_at_once_exactly_one_takes_the_lease(location: IndexLocation) -> None:
    def race(count: int, lease_seconds: float) -> tuple[list[Lease], list[Exception]]:
        leases = [Lease(location, lease_seconds) for _ in range(count)]
        won: list[Lease] = []
        losers: list[Exception] = []
        start = threading.Barrier(count)

        def take(lease: Lease) -> None:
            start.wait()
            try:
                lease.acquire()
                won.append(lease)
            except IndexBusy as err:
                losers.append(err)

        threads = [threading.Thread(target=take, args=(lease,)) for lease in leases]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        return won, losers

    for _ in range(3):  # a few rounds: a race that two could win shows up more often
        won, losers = race(4, 30)  # no lease: conditional creates
        assert len(won) == 1 and len(losers) == 3
        crashed(won[0])  # and its lease expired: as it was, with an expiry in the past
        dead = {**won[0].holder, "expires": time.time() - 1}
        overwrite(location, json.dumps(dead).encode())
        taken, losers = race(4, 30)  # conditional replacements of the same ETag
        assert len(taken) == 1 and len(losers) == 3
        assert taken[0].took_over is not None and taken[0].took_over["id"] == won[0].holder["id"]
        assert stored(location)["id"] == taken[0].holder["id"]
        taken[0].release()
        assert stored(location) is None


def test_an_unreadable_lease_expires_by_its_last_modified(location: IndexLocation) -> None:
    overwrite(location, b"not json {")
    refused(location, match=BUSY.format(pid=r"\?", host=r"\?", uri=location.uri))
    time.sleep(1.3)
    with writer_lock(location, 1) as lease:  # written over a second ago: expired for a 1 s lease
        assert lease is not None and lease.took_over is not None and lease.took_over["host"] == "?"


def test_an_unreachable_store_is_one_line_without_secrets(s3_server) -> None:  # noqa: F811
    options = {**s3_server.storage_options(), "endpoint": "http://127.0.0.1:1"}
    location = IndexLocation.of("s3://nowhere/index", options)
    message = refused(location, match=r"cannot take the writer lease of s3://nowhere/index: ")
    assert SECRET_KEY not in message and "\n" not in message


def test_a_folder_keeps_its_flock(tmp_path: Path) -> None:
    with writer_lock(str(tmp_path)) as held:
        assert held is None  # no lease object: the lock dies with its process
        refused(str(tmp_path), match="another `lynxc index` is writing")
    with writer_lock(str(tmp_path)):
        pass


def test_lances_own_storage_options_are_taken_by_the_lease(s3_server) -> None:  # noqa: F811
    # LanceDB's retry options in index_storage, which object_store's configuration does not know.
    options = {**s3_server.storage_options(), "client_max_retries": "2", "client_retry_timeout": "5"}
    location = IndexLocation.of(f"s3://{s3_server.new_bucket()}/index", options)
    with writer_lock(location, 30) as lease:
        assert lease is not None and stored(location) is not None


def test_the_test_servers_conditional_writes_are_atomic() -> None:
    """The S3 server of these tests runs requests with If-None-Match / If-Match one at a time, as
    S3 makes them atomic (tests/fixtures/moto_s3.py); others run side by side."""
    from tests.fixtures.moto_s3 import AtomicConditionalRequests

    inside, most = 0, 0
    lock = threading.Lock()
    together = threading.Barrier(4, timeout=30)  # the plain requests all meet inside at once

    def app(environ: dict, start_response: object) -> list[bytes]:
        nonlocal inside, most
        if "HTTP_IF_NONE_MATCH" not in environ and "HTTP_IF_MATCH" not in environ:
            together.wait()
            return [b"plain"]
        with lock:
            inside += 1
            most = max(most, inside)
        time.sleep(0.02)  # a check, then a write
        with lock:
            inside -= 1
        return [b"conditional"]

    served = AtomicConditionalRequests(app)
    answers: list[list[bytes]] = []
    for environ in ({"HTTP_IF_NONE_MATCH": "*"}, {"HTTP_IF_MATCH": '"e"'}, {}):
        threads = [
            threading.Thread(target=lambda e=environ: answers.append(list(served(e, None)))) for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert most == 1 and not together.broken
    assert sorted(map(tuple, answers)) == [(b"conditional",)] * 8 + [(b"plain",)] * 4

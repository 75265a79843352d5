"""The writer lease's edges: its own write read back, the safety margin, options only LanceDB knows."""

from __future__ import annotations

import time

import pytest

from lynxc.runtime.backends.lynx.lease import IndexBusy, Lease, LeaseLost, writer_lock
from lynxc.runtime.backends.lynx.location import IndexLocation
from tests.fixtures.s3 import s3_server  # noqa: F401


@pytest.fixture
def location(s3_server) -> IndexLocation:  # noqa: F811
    return IndexLocation.of(f"s3://{s3_server.new_bucket()}/index", s3_server.storage_options())


def test_a_lease_that_names_this_writer_is_kept_not_refused(location: IndexLocation) -> None:
    """A create whose reply was lost and which was retried finds its own lease: it holds it."""
    first = Lease(location, 30)
    first.acquire()
    try:
        again = Lease(location, 30)
        again.holder = first.holder  # the same writer, retrying
        again.acquire()
        again.check()
        stranger = Lease(location, 30)
        with pytest.raises(IndexBusy):
            stranger.acquire()
        again._stop.set()
    finally:
        first.release()


def test_a_lease_unrenewed_for_two_thirds_of_its_length_stops_commits(location: IndexLocation) -> None:
    lease = Lease(location, 30)
    lease.acquire()
    try:
        lease.check()
        lease._deadline = time.monotonic() - 0.001  # as if renewals had failed for 20 of 30 s
        with pytest.raises(LeaseLost, match="went unrenewed too long"):
            lease.check()
    finally:
        lease.release()


def test_options_only_lancedb_knows_do_not_stop_the_lease(location: IndexLocation) -> None:
    options = {
        **location.options,
        "client_max_retries": "1",
        "client_retry_timeout": "not a number",
        "download_retry_count": "3",
        "some_option_object_store_does_not_know": "x",
    }
    with writer_lock(IndexLocation.of(location.uri, options), 30) as lease:
        assert lease is not None
        lease.check()


def test_a_store_that_cannot_be_built_is_a_busy_message_not_a_traceback() -> None:
    with (
        pytest.raises(IndexBusy, match="cannot take the writer lease of foo://b/p"),
        writer_lock("foo://b/p", 30),
    ):
        pass

"""One writer per index: two `lynxc index` runs over the same files would both insert them.

A local index is guarded by `flock` on a file in its folder: the lock dies with its process, so a
killed run never leaves it behind. `flock` does not reach across machines, so an index on an
object store is guarded by a lease: the object `_lynxc/writer-lease.json` under the index URI,
written with the store's conditional writes (create only if absent; replace only if its ETag is
still the one read), which S3, GCS and Azure all honour.

- A writer creates the lease, naming itself and when it expires (`lease_seconds` from now), and
  renews it every third of that; each renewal is conditional on the ETag of its last write.
- A second writer finds the lease and stops at once with a message naming the holder and the
  expiry, unless it has expired: then it replaces it, conditionally, so of several writers
  taking over an expired lease exactly one succeeds.
- A crashed writer stops renewing; its lease expires `lease_seconds` after its last renewal.
- A writer whose renewal failed (another writer took over after a pause longer than the lease)
  or whose lease has gone unrenewed for two thirds of its length makes no further commit:
  `check()` raises `LeaseLost` before every commit (Store calls it), so a stale writer stops at
  its next batch. The last third is the margin for a commit in flight and for clocks.
- A write whose reply was lost and which was retried conflicts with itself; the writer reads the
  lease back and keeps it when it names this writer.

Expiry compares the holder's clock with the taker's, so clocks are assumed to agree to well
under a third of `lease_seconds` (NTP keeps them within milliseconds; the default is 60 s).
LanceDB's own commit conflict handling stays underneath: a commit never overwrites another,
whatever the lease.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from .location import CLIENT_OPTIONS, IndexLocation, describe_error

LEASE_PATH = "_lynxc/writer-lease.json"
LEASE_SECONDS = 60
_ATTEMPTS = 5  # taking an expired lease races other takers; each round trip resolves one


class IndexBusy(Exception):
    """Another `lynxc index` is writing this index."""


class LeaseLost(Exception):
    """This writer's lease ran out or was taken over: it must not commit again."""


class Lease:
    """A held writer lease on an object store, renewed in a background thread."""

    def __init__(self, location: IndexLocation, lease_seconds: float, writer: str = "lynxc index"):
        self.location = location
        self.writer = writer  # the command messages name: `lynxc index`, `lynxc load`
        self.lease_seconds = lease_seconds
        self.holder = {"id": uuid.uuid4().hex, "host": socket.gethostname(), "pid": os.getpid()}
        self.store = _object_store(location, lease_seconds)
        self._etag = ""
        self._expires = 0.0  # wall clock, as written in the lease for other writers
        self._deadline = 0.0  # monotonic: when this writer stops trusting its lease
        self._lost: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.took_over: dict[str, Any] | None = None  # the expired lease this one replaced

    def acquire(self) -> None:
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        for _ in range(_ATTEMPTS):
            try:
                self._write(mode="create")
                break
            except AlreadyExistsError:
                pass
            try:
                meta, current = self._read()
            except FileNotFoundError:  # obstore's "not found" (its NotFoundError is never raised)
                continue  # released between our create and our read: create again
            if current.get("id") == self.holder["id"]:  # our create landed; its reply was lost
                self._adopt(meta, current)
                break
            if current["expires"] > time.time():
                raise IndexBusy(_busy_message(self.location, current, self.writer)) from None
            try:
                self._write(mode={"e_tag": meta["e_tag"]})
                self.took_over = current
                break
            except (PreconditionError, FileNotFoundError):
                continue  # another writer renewed or took it first: read it again
        else:
            raise IndexBusy(
                f"could not take the writer lease of {self.location.uri}: other writers keep taking it"
            )
        self._thread = threading.Thread(target=self._renew, name="lynxc-lease", daemon=True)
        self._thread.start()

    def check(self) -> None:
        """Raise LeaseLost unless this writer holds its lease with at least a third of it to run:
        a healthy lease, renewed every third, always has two thirds left, and the margin covers a
        commit in flight and clocks that disagree by less than a third of the lease."""
        if self._lost is None and time.monotonic() >= self._deadline:
            self._lost = "it went unrenewed too long: the store did not answer, or this process was paused"
        if self._lost is not None:
            raise LeaseLost(
                f"this `{self.writer}` no longer holds the writer lease of {self.location.uri} "
                f"({self._lost}); "
                "it stopped before its next commit, and the index holds only complete commits. Run it again."
            )

    def release(self) -> None:
        import obstore

        self._stop.set()
        if self._thread is not None:
            # A renewal in flight gives up within the store's retry limit (a third of the lease).
            self._thread.join(timeout=self.lease_seconds)
        # Only a lease still ours is deleted: once it ran out unrenewed, another writer may hold it.
        if self._lost is None and time.monotonic() < self._deadline:
            with contextlib.suppress(Exception):  # unreachable now: the lease expires by itself
                obstore.delete(self.store, LEASE_PATH)

    def _read(self) -> tuple[Any, dict[str, Any]]:
        """The lease object's metadata (its e_tag) and its content."""
        import obstore

        found = obstore.get(self.store, LEASE_PATH)
        return found.meta, _parse(bytes(found.bytes()), found.meta, self.lease_seconds)

    def _adopt(self, meta: Any, body: dict[str, Any]) -> None:
        """Take our own lease as read back, when the reply to our write was lost."""
        self._etag = meta["e_tag"] or ""
        self._expires = float(body["expires"])
        self._deadline = time.monotonic() + self.lease_seconds * 2 / 3  # written at most a third ago

    def _write(self, mode: Any) -> None:
        import obstore

        started = time.monotonic()
        expires = time.time() + self.lease_seconds
        body = {
            **self.holder,
            "expires": expires,
            "expires_at": _when(expires),
            "lease_seconds": self.lease_seconds,
        }
        result = obstore.put(self.store, LEASE_PATH, json.dumps(body).encode(), mode=mode)
        # Trusted for two thirds of the lease from before the write: a third is the margin.
        self._etag, self._expires = result["e_tag"] or "", expires
        self._deadline = started + self.lease_seconds * 2 / 3

    def _renew(self) -> None:
        from obstore.exceptions import PreconditionError

        while not self._stop.wait(self.lease_seconds / 3):
            try:
                self._write(mode={"e_tag": self._etag})
            except (PreconditionError, FileNotFoundError):
                try:  # a retried write whose first attempt landed conflicts with itself
                    meta, current = self._read()
                    if current.get("id") == self.holder["id"]:
                        self._adopt(meta, current)
                        continue
                except Exception:
                    pass
                self._lost = "another writer took it over after it expired"
                return
            except Exception:  # the store is unreachable: retry until check() gives up
                if time.monotonic() >= self._deadline:
                    return


@contextmanager
def writer_lock(
    location: IndexLocation | str, lease_seconds: float = LEASE_SECONDS, writer: str = "lynxc index"
) -> Iterator[Lease | None]:
    """Hold the index's one writer slot for the block: flock for a folder, a lease for a URI.
    Yields the lease (None for a folder), whose `check` guards each commit."""
    location = IndexLocation.of(location)
    if not location.remote:
        with _folder_lock(location.uri):
            yield None
        return
    try:
        lease = Lease(location, lease_seconds, writer)
        lease.acquire()
    except IndexBusy:
        raise
    except Exception as err:  # the store refused or is unreachable
        raise IndexBusy(
            location.redact(f"cannot take the writer lease of {location.uri}: {describe_error(err)}")
        ) from None
    try:
        yield lease
    finally:
        lease.release()


@contextmanager
def _folder_lock(directory: str) -> Iterator[None]:
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, ".lynxc-index.lock"), "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise IndexBusy(f"another `lynxc index` is writing {directory}; wait for it to finish") from None
        yield


def _object_store(location: IndexLocation, lease_seconds: float = LEASE_SECONDS) -> Any:
    """An obstore store at the index URI, configured as LanceDB is: settings, then environment.

    Keys LanceDB takes but object_store does not (Lance's own, or a typo LanceDB ignores) are left
    out rather than refused, so a configuration LanceDB accepts also takes the lease. Retries stop
    within a third of the lease: a renewal must not outlast the lease it renews."""
    from obstore.exceptions import UnknownConfigurationKeyError
    from obstore.store import from_url

    options = dict(location.options)
    client = {k: options.pop(k) for k in list(options) if k in CLIENT_OPTIONS}
    # Lance's own retry options mean the same here.
    retry: dict[str, Any] = {"retry_timeout": timedelta(seconds=lease_seconds / 3)}
    with contextlib.suppress(ValueError):
        if "client_max_retries" in options:
            retry["max_retries"] = int(options.pop("client_max_retries"))
        if "client_retry_timeout" in options:
            asked = float(options.pop("client_retry_timeout"))
            retry["retry_timeout"] = timedelta(seconds=min(asked, lease_seconds / 3))
    for _ in range(len(options) + 1):
        try:
            return from_url(
                location.uri, config=options or None, client_options=client or None, retry_config=retry
            )
        except UnknownConfigurationKeyError as err:
            unknown = re.search(r"key: '([^']*)'", str(err))
            if unknown is None or unknown.group(1) not in options:
                raise
            del options[unknown.group(1)]
    raise AssertionError("unreachable: each round drops one key")


def _parse(data: bytes, meta: Any, lease_seconds: float) -> dict[str, Any]:
    """The lease's holder and expiry; one that cannot be read expires a lease after it was written."""
    try:
        body = json.loads(data)
        float(body["expires"])
        return body
    except (ValueError, KeyError, TypeError):
        written = meta["last_modified"].timestamp()
        return {"host": "?", "pid": "?", "expires": written + lease_seconds}


def _busy_message(location: IndexLocation, lease: dict[str, Any], writer: str) -> str:
    return (
        f"another `{writer}` (pid {lease.get('pid', '?')} on host {lease.get('host', '?')}) holds the "
        f"writer lease of {location.uri} until {_when(float(lease['expires']))}, renewing it while it "
        "runs; wait for it to finish (a crashed writer's lease expires by itself at that time)"
    )


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")

"""One writer per index: moved to runtime/backends/object_store/lease.py (the records store's
loads take the same lease); the names lynx-mcp's modules import stay here."""

from ..object_store.lease import (  # noqa: F401
    LEASE_PATH,
    LEASE_SECONDS,
    IndexBusy,
    Lease,
    LeaseLost,
    writer_lock,
)

"""Which records changed between two loads of a collection: what a resource subscription
(runtime/subscriptions.py) notifies about.

Each row carries `_hash`, the sha256 of its canonical data (columns.py), so the records that
changed between two versions of the store are the keys whose hash differs, plus the keys only
one version holds (added or removed). Only the key and hash columns are read.
"""

from __future__ import annotations

from typing import Any

from .columns import HASH, KEY


async def changed_keys(store: Any, old: Any, new: Any) -> set[str]:
    """The keys (as text) of the records that differ between two `ResourceState`s of one
    collection (None: not loaded). A version no longer kept counts as empty: then every record
    of the other one is reported (too many notifications, never a missed one)."""
    before, after = await _hashes(store, old), await _hashes(store, new)
    return {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}


async def _hashes(store: Any, state: Any) -> dict[str, str]:
    from .store import StoreError

    if state is None:
        return {}
    try:
        table = await store.table_at(state.table, state.version)
    except StoreError:
        return {}
    rows = await table.query().select([KEY, HASH]).to_arrow()
    return dict(zip(rows.column(KEY).to_pylist(), rows.column(HASH).to_pylist(), strict=True))

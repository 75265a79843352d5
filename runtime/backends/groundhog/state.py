"""What a groundhog server keeps for its whole life: one fetcher per network policy (a shared
connection pool and per-domain pacing), the key that signs candidate tokens (made at start, so a
restart invalidates every token), and counters since start for `status`."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .candidates import CandidateSigner

if TYPE_CHECKING:
    from .network import Fetcher

STARTED_AT = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
SIGNER = CandidateSigner()
COUNTERS: Counter[str] = Counter()
_fetchers: dict[tuple[Any, ...], Fetcher] = {}
_lock = threading.Lock()


def count(name: str, amount: int = 1) -> None:
    COUNTERS[name] += amount


def count_page(page: Any) -> None:
    """What one page read adds to the counters: its status, its bytes and its threats."""
    COUNTERS[f"pages_{page.status}"] += 1
    COUNTERS["bytes"] += len(page.fetched.body)
    COUNTERS["threats"] += sum(t.seen for t in page.threats)


def fetcher_for(settings: Mapping[str, Any], max_redirects: int = 5) -> Fetcher:
    """The fetcher of these settings: one per distinct network policy in this process."""
    from .network import Fetcher, FetchPolicy

    policy = FetchPolicy(
        allowed_networks=tuple(settings.get("allowed_networks") or ()),
        max_bytes=int(settings.get("max_page_bytes", 5_000_000)),
        timeout_seconds=float(settings.get("fetch_timeout_seconds", 15)),
        user_agent=str(settings.get("user_agent", "lynxc-groundhog/0.1")),
        per_domain_interval=float(settings.get("per_domain_interval_seconds", 5)),
        max_redirects=max_redirects,
    )
    with _lock:
        fetcher = _fetchers.get((policy,))
        if fetcher is None:
            fetcher = _fetchers[(policy,)] = Fetcher(policy)
        return fetcher

"""When to try a request again, and after how long (pure functions).

Only idempotent methods are retried (a POST the API may have acted on is never sent twice), only
on answers that say "later" (429, 502, 503, 504), after 0.5 s, 1 s, 2 s... or the `Retry-After`
the API asked for; a wait that does not fit in the call's remaining deadline is not waited: the
last answer is the call's error.
"""

from __future__ import annotations

import email.utils
import time

RETRY_STATUSES = frozenset({429, 502, 503, 504})
FIRST_BACKOFF_SECONDS = 0.5


def backoff(attempt: int) -> float:
    """The wait before retry number `attempt` (0-based): 0.5 s, 1 s, 2 s..."""
    return FIRST_BACKOFF_SECONDS * 2**attempt


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """A Retry-After header in seconds from now (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None  # an HTTP date is GMT; one without a zone is not an HTTP date
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def retry_wait(status: int, header: str | None, attempt: int, remaining: float) -> float | None:
    """How long to wait before trying again, or None: do not (the answer stands)."""
    if status not in RETRY_STATUSES:
        return None
    wait = retry_after(header)
    if wait is None:
        wait = backoff(attempt)
    return wait if wait < remaining else None

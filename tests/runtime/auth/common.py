"""What the auth tests share: the resource they protect and a clock they move by hand."""

from __future__ import annotations

RESOURCE = "http://127.0.0.1:8000/mcp"


class Clock:
    """A monotonic clock the test moves by hand, for the caches' intervals."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

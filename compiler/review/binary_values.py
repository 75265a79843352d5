"""Binary data a person should never have to scroll through: `data:` URIs (tool icons above
all) in a value are replaced by a placeholder that keeps what a reviewer can use, the media
type, the size and a short hash (so a changed icon still shows as changed):
`data:image/png;base64,… (3.2 KB, sha256 1a2b3c4d)`."""

from __future__ import annotations

import hashlib
import re
from typing import Any

# A URI's payload runs to the first character no URI holds (a quote, space or bracket ends it
# inside JSON text or prose); base64 payloads and long plain ones are replaced.
DATA_URI = re.compile(
    r"data:(?P<head>[\w.+/-]*(?:;[\w.+=-]+)*?)(?P<base64>;base64)?,(?P<payload>[^\s\"'<>()\[\]{}]*)"
)
PLAIN_PAYLOAD_KEPT = 64  # a short plain `data:` URI (`data:,hello`) reads fine as it is


def without_binary(value: Any) -> Any:
    """`value` with every long `data:` URI in its strings replaced by a placeholder."""
    if isinstance(value, str):
        return DATA_URI.sub(_placeholder, value) if "data:" in value else value
    if isinstance(value, list):
        return [without_binary(item) for item in value]
    if isinstance(value, dict):
        return {key: without_binary(item) for key, item in value.items()}
    return value


def _placeholder(match: re.Match[str]) -> str:
    payload = match["payload"]
    if not match["base64"] and len(payload) <= PLAIN_PAYLOAD_KEPT:
        return match[0]
    size = len(payload) * 3 // 4 - payload.count("=") if match["base64"] else len(payload)
    digest = hashlib.sha256(payload.encode()).hexdigest()[:8]
    return f"data:{match['head']}{match['base64'] or ''},… ({_size(size)}, sha256 {digest})"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024 / 1024:.1f} MB"

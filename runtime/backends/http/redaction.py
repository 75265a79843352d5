"""Secrets out of messages: what an API or a token endpoint answers may echo a credential back
(an error page quoting the Authorization header, a token endpoint repeating the client id), and
an excerpt of that answer goes to the caller. Each secret value of the call is masked first."""

from __future__ import annotations

from collections.abc import Iterable

from lynxc.runtime.redact import MASK, redact

EXCERPT_CHARS = 300


def redact_secrets(text: str, secrets: Iterable[str]) -> str:
    """`text` with each secret (longest first, so a secret inside another is masked whole) and
    any URL or DSN password replaced by ***."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return redact(text)


def excerpt(body: bytes, secrets: Iterable[str], limit: int = EXCERPT_CHARS) -> str:
    """The start of a response body as text for a message: secrets masked, then at most `limit`
    characters (masking first, so a cut cannot leave half a secret showing)."""
    text = redact_secrets(body.decode("utf-8", "replace"), secrets).strip()
    text = " ".join(text.split())  # one line: an HTML error page reads as a sentence
    return text if len(text) <= limit else text[: limit - 1] + "…"

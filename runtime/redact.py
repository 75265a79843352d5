"""Passwords out of connection strings, before any of them reaches a message, a log or a config.

A database URL or DSN is a setting's value (credentials never live in a spec), and it is echoed
in many places: an error naming the database that refused a connection, `lynxc config`, the
log line of a server whose database is down. Every such place passes the text through
`redact`, which replaces each password it recognises with `***` and keeps the rest (user, host,
database), so the operator still sees which database was meant:

- URLs: `postgresql://user:secret@host/db` -> `postgresql://user:***@host/db` (any scheme);
- query parameters: `?password=secret&sslmode=require` -> `?password=***&sslmode=require`;
- key=value DSNs: `host=h password=secret` or `password='it''s'` -> `password=***`.

It works on any text (a driver's error message quoting the DSN included), so callers need not
know whether a value is a DSN.
"""

from __future__ import annotations

import logging
import re

MASK = "***"

# scheme://user:password@  (the password runs to the last @ before the host: it may hold @ or :)
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@?#]*:)(?P<secret>[^\s/?#]*)(?=@)")
# password=... in a query string or a key=value DSN; a quoted value may hold spaces and \' or ''
_KEY_PASSWORD = re.compile(
    r"(?P<head>\b(?:password|passwd|pwd|sslpassword)\s*=\s*)"
    r"(?P<secret>'(?:[^'\\]|\\.|'')*'|[^\s&;]*)",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """`text` with every password of a URL or DSN in it replaced by ***."""
    text = _URL_PASSWORD.sub(lambda m: m["head"] + MASK, text)
    return _KEY_PASSWORD.sub(lambda m: m["head"] + MASK, text)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's formatted message (for libraries' loggers)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True

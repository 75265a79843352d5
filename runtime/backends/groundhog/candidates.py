"""Candidates: the links a `research` answer offers, and the signed tokens `follow` hands back.

A token carries its own payload (the link, its label, where it was found, its depth) so the server
remembers nothing between calls; an HMAC-SHA256 under a key made when the signer is built (at server
start) makes it unforgeable, a 30-minute expiry makes it short-lived, and a restart, which makes a
new key, makes every earlier token useless. The format is compact and URL-safe:

    base64url(JSON payload with "exp", keys sorted) "." base64url(HMAC-SHA256 of the first part)

without padding. `verify` never raises on what a client sends: anything that is not a token this
signer made is `invalid_token`; a token it made whose time is up is `expired` (the signature is
checked first, so a forged token is never reported as merely expired).

`links_in_markdown` finds the links of extracted Markdown: inline links `[label](url "title")`,
labels with nested brackets, autolinks `<https://...>` and bare http(s) URLs. Decisions:
- images `![alt](src)` are not links (an image is not a page to read) and are left out; a linked
  image `[![alt](src)](href)` is a link to href labelled with the alt text;
- links inside code (fenced blocks and `code spans`) are left out: code is not an invitation;
- only http and https survive resolution against the page's URL (relative links resolved), so
  javascript:, mailto:, data:, ftp: and the like are dropped, as are URLs without a host and URLs
  longer than MAX_URL_LENGTH;
- the fragment is removed from the URL returned (it names a place in a page, not a page), and a
  link to the page itself (`#section`, or the page's own URL) is dropped;
- every occurrence is returned in document order with its offsets (start, end: the whole `[..](..)`
  construct, or the bare URL); deduplication is the caller's, with `canonical_link`;
- an empty label falls back to the URL.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import hashlib
import hmac
import html
import json
import math
import os
import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_plus, urljoin, urlsplit, urlunsplit

DEFAULT_TTL_SECONDS = 1800.0
MAX_TOKEN_LENGTH = 4096  # longer strings are refused before any decoding
MAX_URL_LENGTH = 2048
MAX_TITLE_LENGTH = 1000  # a link title longer than this is not a title (bounds the scan for its end)
MIN_KEY_BYTES = 16
TRACKING_PARAMETERS = frozenset(
    {"fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "mc_cid", "mc_eid", "igshid"}
)  # plus every utm_* parameter
DEFAULT_PORTS = {"http": "80", "https": "443"}

_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class CandidateSigner:
    def __init__(
        self,
        key: bytes | None = None,
        ttl_seconds: float = DEFAULT_TTL_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        # A fresh key per signer: tokens do not outlive the process that made them.
        key = os.urandom(32) if key is None else key
        if not isinstance(key, bytes) or len(key) < MIN_KEY_BYTES:
            raise ValueError(f"a candidate signing key must be at least {MIN_KEY_BYTES} bytes")
        if not (isinstance(ttl_seconds, int | float) and math.isfinite(ttl_seconds) and ttl_seconds > 0):
            raise ValueError("ttl_seconds must be a positive number of seconds")
        self._key = key
        self.ttl_seconds = float(ttl_seconds)
        self._clock = clock

    def sign(self, payload: dict[str, Any]) -> str:
        """A token for `payload` (JSON-serialisable, without an "exp" key of its own)."""
        if "exp" in payload:
            raise ValueError('a candidate payload must not carry "exp": the signer sets it')
        body = {**payload, "exp": math.floor(self._clock() + self.ttl_seconds)}
        data = json.dumps(body, separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False)
        head = _b64encode(data.encode("utf-8"))
        token = f"{head}.{self._mac(head)}"
        if len(token) > MAX_TOKEN_LENGTH:
            raise ValueError(f"a candidate token would be {len(token)} characters, over {MAX_TOKEN_LENGTH}")
        return token

    def verify(self, token: str) -> tuple[str, dict[str, Any] | None]:
        """("ok", the payload as signed) | ("expired", None) | ("invalid_token", None)."""
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH:
            return "invalid_token", None
        head, dot, mac = token.partition(".")
        # Both parts are checked against the alphabet first, so compare_digest sees ASCII only and
        # nothing but a token this key signed is ever decoded.
        if not dot or not _BASE64URL.fullmatch(head) or not _BASE64URL.fullmatch(mac):
            return "invalid_token", None
        if not hmac.compare_digest(self._mac(head), mac):
            return "invalid_token", None
        try:
            body = json.loads(_b64decode(head).decode("utf-8"))
        except (ValueError, RecursionError):
            return "invalid_token", None
        expires = body.get("exp") if isinstance(body, dict) else None
        if isinstance(expires, bool) or not isinstance(expires, int | float) or not math.isfinite(expires):
            return "invalid_token", None
        if self._clock() > expires:
            return "expired", None
        del body["exp"]
        return "ok", body

    def _mac(self, head: str) -> str:
        return _b64encode(hmac.new(self._key, head.encode("ascii"), hashlib.sha256).digest())


# --- links in Markdown ---------------------------------------------------------------------------

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*$", re.MULTILINE)
_BACKTICKS = re.compile(r"`+")
_BRACKETS = re.compile(r"[\[\]]|\n[ \t]*\n")
# A destination: no spaces or control characters, backslash escapes, parentheses nested one level
# deep (Wikipedia's "Lynx_(genus)"); at most twice the longest URL kept, so a scan is bounded.
_DESTINATION = re.compile(
    rf"(?:[^\s()\\\x00-\x1f]|\\.|\((?:[^\s()\\\x00-\x1f]|\\.)*\)){{0,{2 * MAX_URL_LENGTH}}}"
)
_BARE_URL = re.compile(r"(?<![\w/@.:+-])https?://[^\s<>\"'`\\]+", re.IGNORECASE)
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_LABEL_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LABEL_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_SPACES = re.compile(r"\s+")
_TRAILING = ".,;:!?*_~'\""
_PAIRS = {")": "(", "]": "[", "}": "{"}


def links_in_markdown(markdown: str, base_url: str) -> list[tuple[str, str, int, int]]:
    """(absolute url, label, start, end) of each link of `markdown`, in document order."""
    if not isinstance(markdown, str) or not markdown:
        return []
    code = _Spans(_code_spans(markdown))
    found: list[tuple[str, str, int, int]] = []
    taken: list[tuple[int, int]] = []  # links and images, so their URLs are not found again as bare
    closers = _matching_brackets(markdown, code)
    reached = 0
    for opening in sorted(closers):
        if opening < reached:
            continue  # inside a link or image already read (a linked image's inner image)
        closing = closers[opening]
        parsed = _destination(markdown, closing + 1)
        if parsed is None:
            continue
        destination, end = parsed
        image = opening > 0 and markdown[opening - 1] == "!" and not _escaped(markdown, opening - 1)
        start = opening - 1 if image else opening
        taken.append((start, end))
        reached = end
        if image:
            continue
        url = _resolve(destination, base_url)
        if url is not None:
            found.append((url, _label(markdown[opening + 1 : closing]) or url, start, end))
    links = _Spans(taken)
    for match in _BARE_URL.finditer(markdown):
        start = match.start()
        if start in code or start in links:
            continue
        raw = _trim_url(match.group())
        url = _resolve(raw, base_url)
        if url is not None:
            found.append((url, raw, start, start + len(raw)))
    found.sort(key=lambda link: link[2])
    return found


class _Spans:
    """Sorted, non-overlapping [start, end) spans with a fast membership test for a position."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self._spans = sorted(spans)
        self._starts = [start for start, _ in self._spans]

    def __contains__(self, position: int) -> bool:
        index = bisect.bisect_right(self._starts, position) - 1
        return index >= 0 and position < self._spans[index][1]


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Fenced code blocks (to their closing fence, or the end) and inline code spans outside them."""
    fences: list[tuple[int, int]] = []
    position = 0
    while (opened := _FENCE_OPEN.search(text, position)) is not None:
        marker = opened.group(1)
        closing = re.compile(rf"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$", re.MULTILINE)
        closed = closing.search(text, opened.end())
        end = closed.end() if closed else len(text)
        fences.append((opened.start(), end))
        position = max(end, opened.end() + 1)
    in_fence = _Spans(fences)
    runs = [
        (m.start(), m.end())
        for m in _BACKTICKS.finditer(text)
        if m.start() not in in_fence and not _escaped(text, m.start())
    ]
    # A run of n backticks opens a code span closed by the next run of exactly n.
    following: list[int | None] = [None] * len(runs)
    last_of_length: dict[int, int] = {}
    for index in range(len(runs) - 1, -1, -1):
        length = runs[index][1] - runs[index][0]
        following[index] = last_of_length.get(length)
        last_of_length[length] = index
    spans = list(fences)
    index = 0
    while index < len(runs):
        partner = following[index]
        if partner is None:
            index += 1
            continue
        spans.append((runs[index][0], runs[partner][1]))
        index = partner + 1
    return spans


def _escaped(text: str, position: int) -> bool:
    backslashes = 0
    while position - backslashes - 1 >= 0 and text[position - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _matching_brackets(text: str, code: _Spans) -> dict[int, int]:
    """Opening bracket -> its closing bracket, nesting respected, never across a blank line."""
    closers: dict[int, int] = {}
    stack: list[int] = []
    for match in _BRACKETS.finditer(text):
        position = match.start()
        token = match.group()
        if token not in "[]":
            stack.clear()  # a blank line ends the paragraph, and any link text with it
        elif position in code or _escaped(text, position):
            continue
        elif token == "[":
            stack.append(position)
        elif stack:
            closers[stack.pop()] = position
    return closers


def _destination(text: str, position: int) -> tuple[str, int] | None:
    """The destination of `(url "title")` starting at `position`, and the offset after `)`.

    Every scan is bounded (destination and title lengths), so a page of unclosed `[a](` stays linear."""
    size = len(text)
    if position >= size or text[position] != "(":
        return None
    index = _skip_spaces(text, position + 1)
    if index < size and text[index] == "<":
        closing = text.find(">", index + 1, index + 2 + MAX_URL_LENGTH)
        if closing < 0 or "\n" in text[index + 1 : closing]:
            return None
        destination = text[index + 1 : closing]
        index = closing + 1
    else:
        found = _DESTINATION.match(text, index)
        destination = found.group() if found else ""
        index += len(destination)
    index = _skip_spaces(text, index)
    if index < size and text[index] in "\"'(":
        closer = ")" if text[index] == "(" else text[index]
        closing = text.find(closer, index + 1, index + 1 + MAX_TITLE_LENGTH)
        while closing > 0 and _escaped(text, closing):
            closing = text.find(closer, closing + 1, index + 1 + MAX_TITLE_LENGTH)
        if closing < 0:
            return None
        index = _skip_spaces(text, closing + 1)
    if index >= size or text[index] != ")":
        return None
    return destination, index + 1


def _skip_spaces(text: str, index: int) -> int:
    newlines = 0
    while index < len(text) and text[index] in " \t\n":
        newlines += text[index] == "\n"
        if newlines > 1:
            break
        index += 1
    return index


def _label(inner: str) -> str:
    text = _LABEL_IMAGE.sub(lambda m: m.group(1), inner)
    text = _LABEL_LINK.sub(lambda m: m.group(1), text)
    text = _ESCAPED.sub(r"\1", text)
    text = text.replace("`", "").replace("**", "").replace("__", "").replace("*", "")
    return _SPACES.sub(" ", html.unescape(text)).strip()


def _trim_url(raw: str) -> str:
    """A bare URL without the punctuation that ends its sentence or closes its parenthesis."""
    balance = {closer: raw.count(closer) - raw.count(opener) for closer, opener in _PAIRS.items()}
    end = len(raw)
    while end:
        last = raw[end - 1]
        if last in _TRAILING:
            end -= 1
        elif last in _PAIRS and balance[last] > 0:
            balance[last] -= 1
            end -= 1
        else:
            break
    return raw[:end]


def _resolve(destination: str, base_url: str) -> str | None:
    destination = html.unescape(_ESCAPED.sub(r"\1", destination)).strip()
    if not destination or destination.startswith("#") or len(destination) > MAX_URL_LENGTH:
        return None
    try:
        parts = urlsplit(urljoin(base_url or "", destination.replace(" ", "%20")))
        host = parts.hostname
    except ValueError:  # e.g. a malformed IPv6 literal
        return None
    if parts.scheme.lower() not in ("http", "https") or not host:
        return None
    url = urlunsplit(parts._replace(fragment=""))
    if len(url) > MAX_URL_LENGTH:
        return None
    try:
        here = urlunsplit(urlsplit(base_url or "")._replace(fragment=""))
    except ValueError:
        here = ""
    return None if url == here else url


# --- canonical form ------------------------------------------------------------------------------

_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def canonical_link(url: str) -> str:
    """The form two variants of one link share, for deduplication (never for fetching).

    Lower-case scheme and host (an internationalised host in its ASCII form, a trailing dot
    dropped); the default port dropped; the fragment dropped; utm_* and the click identifiers of
    TRACKING_PARAMETERS dropped from the query, the other parameters kept in their order; percent
    escapes in upper case, unreserved characters decoded; an empty path is "/" and any other path
    loses its trailing slash. "www." is kept: it may be another host. Never raises.
    """
    if not isinstance(url, str):
        return ""
    text = url.strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    scheme = parts.scheme.lower()
    path = _percent(parts.path)
    if path == "":
        path = "/" if parts.netloc else ""
    elif path != "/" and path.endswith("/"):
        path = path.rstrip("/") or "/"
    query = "&".join(pair for pair in _percent(parts.query).split("&") if pair and not _tracking(pair))
    return urlunsplit((scheme, _netloc(parts.netloc, scheme), path, query, ""))


def _netloc(netloc: str, scheme: str) -> str:
    userinfo, at, hostport = netloc.rpartition("@")
    if hostport.startswith("["):  # an IPv6 literal
        closing = hostport.find("]")
        host, rest = (hostport[: closing + 1], hostport[closing + 1 :]) if closing >= 0 else (hostport, "")
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port = hostport.partition(":")
    host = host.lower().rstrip(".")
    if not host.isascii():
        with contextlib.suppress(UnicodeError):  # not a valid IDNA name: compared as written
            host = host.encode("idna").decode("ascii")
    if port.isdigit():
        port = str(int(port))
    if port == DEFAULT_PORTS.get(scheme):
        port = ""
    return f"{userinfo}{at}{host}{':' + port if port else ''}"


def _percent(text: str) -> str:
    def normal(match: re.Match[str]) -> str:
        char = chr(int(match.group()[1:], 16))
        return char if char in _UNRESERVED else match.group().upper()

    return _PERCENT.sub(normal, text)


def _tracking(pair: str) -> bool:
    name = unquote_plus(pair.partition("=")[0]).lower()
    return name.startswith("utm_") or name in TRACKING_PARAMETERS

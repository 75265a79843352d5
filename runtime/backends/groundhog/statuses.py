"""What one HTTP answer is, as a page status: ok, a bot challenge, or why not.

When no answer came, network.py says why: timeout (the request's time or the call's deadline ran
out), dns_error (the host name has no address), connection_error (the connection failed: refused,
reset, TLS, a broken protocol), redirect_error (too many redirects, a loop among them, or a
Location that is no URL); a URL or address the fetcher refuses is blocked. unknown is left for
what fits none of these (an HTTP status outside the ones below, a corrupt compressed body).

HTTP statuses: 2xx with a readable body ok, with an empty (or blank) body empty; 404/410
not_found; 429 rate_limited; 401/403/407/451 blocked; 5xx server_error; any other unknown. A 2xx
whose media type is outside READABLE_TYPES is unsupported_content; a body over the cap once
decoded is too_large. A 2xx without a Content-Type is sniffed (PDF magic, HTML markup) and
unsupported_content otherwise.

A challenge page wins over the status. Cloudflare's `cf-mitigated: challenge` header is one on
any status. On 403 and 503, the statuses challenges are served with, so is a page whose title
starts like an interstitial's ("Just a moment", "Attention required", ...) or that holds a
captcha marker. On any other status (a 200 above all) a page is a challenge only with both an
interstitial's exact title ("Just a moment...", "Attention Required! | Cloudflare",
"DDoS-Guard") and a challenge's machinery in its body (Cloudflare's challenge-platform script,
a captcha widget or form): an article titled "Just a moment: on waiting" is an article.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from html import unescape
from http import HTTPStatus
from typing import TYPE_CHECKING

from .bodies import sniff_media_type

if TYPE_CHECKING:
    import httpx

STATUSES = (
    "ok",
    "challenge",
    "blocked",
    "rate_limited",
    "not_found",
    "server_error",
    "unsupported_content",
    "empty",
    "too_large",
    "timeout",
    "dns_error",
    "connection_error",
    "redirect_error",
    "unknown",
)
READABLE_TYPES = frozenset(
    {"text/html", "application/xhtml+xml", "text/plain", "text/markdown", "application/pdf"}
)
# What an error or challenge page is read up to, to recognise a challenge in it.
SNIFF_BYTES = 256 * 1024
# The statuses interstitials are served with: the looser rule applies there.
CHALLENGE_STATUSES = frozenset({403, 503})

_TITLE = re.compile(rb"<title[^>]*>(.*?)</title", re.IGNORECASE | re.DOTALL)
# On 403/503: a title starting like an interstitial's.
CHALLENGE_TITLES = (
    "just a moment",
    "attention required",
    "checking your browser",
    "verifying you are human",
    "ddos-guard",
    "security check",
)
# Anywhere else: the interstitials' exact titles (compared lower case, spaces collapsed).
INTERSTITIAL_TITLES = frozenset(
    {
        "just a moment...",
        "just a moment…",
        "attention required! | cloudflare",
        "please wait... | cloudflare",
        "ddos-guard",
        "vercel security checkpoint",
    }
)
# A challenge's machinery: what a page about challenges does not embed.
CHALLENGE_MARKERS = (
    b"cf-challenge",
    b"challenge-platform",
    b"/cdn-cgi/challenge",
    b"cf_chl_opt",
    b"cf-turnstile",
    b"g-recaptcha",
    b"h-captcha",
    b"hcaptcha.com",
    b"captcha-delivery.com",
    b"px-captcha",
    b"/.well-known/ddos-guard/",
)
_CAPTCHA_FORM = re.compile(rb"<form\b[^>]*captcha", re.IGNORECASE)
# On 403/503 the word alone will do.
CAPTCHA_MARKERS = (*CHALLENGE_MARKERS, b"captcha")


@dataclass(frozen=True)
class Hop:
    """One request's answer: a redirect to follow (location set) or the page classified."""

    http_status: int
    location: str | None = None
    status: str = "unknown"
    content_type: str | None = None
    charset: str | None = None
    body: bytes = b""
    error: str | None = None


def _title(head: bytes) -> str | None:
    found = _TITLE.search(head)
    if found is None:
        return None
    return " ".join(unescape(found.group(1).decode("utf-8", "replace")).split())


def _marker(lowered: bytes, markers: tuple[bytes, ...]) -> str | None:
    for marker in markers:
        if marker in lowered:
            return marker.decode()
    if _CAPTCHA_FORM.search(lowered):
        return "captcha form"
    return None


def challenge_reason(http_status: int, headers: httpx.Headers | Mapping[str, str], body: bytes) -> str | None:
    """Why this answer is a bot challenge rather than the page, or None (see the module docstring)."""
    if str(headers.get("cf-mitigated", "")).strip().lower() == "challenge":
        return "challenge page (cf-mitigated: challenge)"
    head = body[:SNIFF_BYTES]
    lowered = head.lower()
    title = _title(head)
    if http_status in CHALLENGE_STATUSES:
        if title is not None and title.lower().startswith(CHALLENGE_TITLES):
            return f"challenge page (title {title[:80]!r})"
        marker = _marker(lowered, CAPTCHA_MARKERS)
        if marker is not None:
            return f"challenge page (captcha marker {marker!r} on HTTP {http_status})"
        return None
    if title is None or title.lower() not in INTERSTITIAL_TITLES:
        return None
    marker = _marker(lowered, CHALLENGE_MARKERS)
    if marker is None:
        return None
    return f"challenge page (title {title[:80]!r} with {marker!r})"


def reason(http_status: int) -> str:
    """'HTTP 404 Not Found'; just 'HTTP 599' for a code without a standard phrase."""
    try:
        return f"HTTP {http_status} {HTTPStatus(http_status).phrase}"
    except ValueError:
        return f"HTTP {http_status}"


def status_for(http_status: int, retry_after: str | None = None) -> tuple[str, str]:
    """The page status and error of a non-2xx, non-redirect answer that is no challenge."""
    error = reason(http_status)
    if retry_after and http_status in (429, 503):
        error += f" (Retry-After: {retry_after[:40]})"
    if http_status in (404, 410):
        return "not_found", error
    if http_status == 429:
        return "rate_limited", error
    if http_status in (401, 403, 407, 451):
        return "blocked", error
    if 500 <= http_status <= 599:
        return "server_error", error
    return "unknown", error


def unreadable(
    code: int, kind: str, charset: str | None, media_types: frozenset[str] = READABLE_TYPES
) -> Hop:
    """A 2xx of a media type not read: unsupported_content, its body left unread."""
    return Hop(
        code,
        status="unsupported_content",
        content_type=kind,
        charset=charset,
        error=f"media type {kind} is not read (only {', '.join(sorted(media_types))})",
    )


def classify(
    code: int,
    headers: httpx.Headers | Mapping[str, str],
    kind: str | None,
    charset: str | None,
    body: bytes,
    too_large: bool,
    max_bytes: int,
) -> Hop:
    """A non-redirect answer, its body read (up to the cap, or SNIFF_BYTES when not 2xx)."""
    why = challenge_reason(code, headers, body)
    if why is not None:
        return Hop(code, status="challenge", content_type=kind, charset=charset, body=body, error=why)
    if not 200 <= code <= 299:
        status, error = status_for(code, headers.get("retry-after"))
        return Hop(code, status=status, content_type=kind, charset=charset, error=error)
    if too_large:
        return Hop(
            code,
            status="too_large",
            content_type=kind,
            charset=charset,
            error=f"body larger than {max_bytes} bytes (decoded)",
        )
    if not body.strip():
        return Hop(
            code,
            status="empty",
            content_type=kind,
            charset=charset,
            error=f"{reason(code)} with an empty body",
        )
    if kind is None:
        kind = sniff_media_type(body)
        if kind is None:
            return Hop(
                code,
                status="unsupported_content",
                error="no Content-Type, and the body is neither HTML nor PDF",
            )
    return Hop(code, status="ok", content_type=kind, charset=charset, body=body)

"""Which URLs a resource server may trust for its issuer's documents. Apart from `discovery` so
that the compiler can check an issuer written in a spec without importing an HTTP client."""

from __future__ import annotations

from urllib.parse import urlsplit


def is_trusted_transport(url: str) -> bool:
    """HTTPS, or plain HTTP to this machine only: keys or metadata read over plain HTTP from
    elsewhere could be swapped on the way, and with them every token this server accepts."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return bool(parts.hostname)
    return parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")


def require_trusted_transport(url: str, what: str) -> None:
    if not is_trusted_transport(url):
        raise ValueError(f"{what} must be an https:// URL (plain http only to this machine), not {url!r}")

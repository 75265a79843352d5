"""Reading an authorization server's published documents: its metadata and its keys.

Both come over the network from a server the deployment trusts but does not control, so every
read has a deadline and a size cap: a slow or huge answer costs a bounded wait and is refused,
never held in memory whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from .refusals import AuthRefused

DEFAULT_HTTP_TIMEOUT = 5.0
# JWKS and metadata documents are a few KB; 256 KiB leaves room for a large key set.
DEFAULT_MAX_DOCUMENT_BYTES = 256 * 1024


@dataclass(frozen=True)
class Fetcher:
    """Gets JSON objects over HTTP(S) with a deadline and a size cap."""

    client: httpx.AsyncClient
    max_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES

    async def get_json(self, url: str) -> dict[str, Any]:
        return await self._read("GET", url)

    async def post_form(self, url: str, data: dict[str, str], auth: httpx.Auth | None) -> dict[str, Any]:
        return await self._read("POST", url, data=data, auth=auth)

    async def _read(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        try:
            async with self.client.stream(
                method, url, headers={"accept": "application/json"}, **kwargs
            ) as got:
                if got.status_code != 200:
                    raise AuthRefused(f"{url} answered HTTP {got.status_code}", "temporarily_unavailable")
                body = bytearray()
                async for chunk in got.aiter_bytes():
                    body += chunk
                    if len(body) > self.max_bytes:
                        raise AuthRefused(
                            f"{url} sent more than {self.max_bytes} bytes", "temporarily_unavailable"
                        )
        except httpx.HTTPError as error:
            raise AuthRefused(
                f"{url} could not be read ({type(error).__name__})", "temporarily_unavailable"
            ) from None
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            raise AuthRefused(f"{url} did not send JSON", "temporarily_unavailable") from None
        if not isinstance(document, dict):
            raise AuthRefused(f"{url} did not send a JSON object", "temporarily_unavailable")
        return document


def new_client(timeout: float = DEFAULT_HTTP_TIMEOUT) -> httpx.AsyncClient:
    # No redirects: a metadata or key URL that moves elsewhere is a configuration to fix, not a
    # hop to follow (a redirect could point key discovery at a server the deployment never named).
    return httpx.AsyncClient(timeout=httpx.Timeout(timeout), follow_redirects=False)


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be: RFC 8414 §3.1 first (the well-known segment goes
    between the host and the issuer's path), then OpenID Connect Discovery (appended to it)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    rfc8414 = urlunsplit(
        (parts.scheme, parts.netloc, f"/.well-known/oauth-authorization-server{path}", "", "")
    )
    openid = urlunsplit((parts.scheme, parts.netloc, f"{path}/.well-known/openid-configuration", "", ""))
    return [rfc8414, openid]


async def discover_metadata(fetcher: Fetcher, issuer: str) -> dict[str, Any]:
    """The issuer's metadata, whose `issuer` must be exactly the one configured (RFC 8414 §3.3):
    otherwise a server could publish metadata, and keys, in another issuer's name."""
    failures: list[str] = []
    for url in metadata_urls(issuer):
        try:
            metadata = await fetcher.get_json(url)
        except AuthRefused as refused:
            failures.append(refused.reason)
            continue
        if metadata.get("issuer") != issuer:
            raise AuthRefused(
                f"metadata at {url} names issuer {str(metadata.get('issuer'))[:200]!r}, not {issuer!r}",
                "temporarily_unavailable",
            )
        return metadata
    raise AuthRefused(
        f"no metadata found for issuer {issuer}: " + "; ".join(failures), "temporarily_unavailable"
    )

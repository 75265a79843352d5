"""Web search behind one interface: a self-hosted SearXNG (its JSON API) or the Brave Search API.

Every request goes through the fetcher's `get_json`, with the fetcher's timeouts, byte cap and user
agent. The provider's URL is the operator's setting (searxng_url, brave_url), never a page's, so it is
asked for as trusted: a SearXNG on 127.0.0.1 is reached without opening loopback to every page through
`allowed_networks`. A provider that fails is a `SearchError` naming the provider and its HTTP status,
never an empty success: an agent told "no hits" stops looking, an agent told "the provider answered
503" tries again or says so. No provider configured is an error naming the settings to set.

Hits come back best first, at most `limit`, deduplicated by `canonical_link` (the fragment and
tracking parameters do not make a second hit); only http and https links are kept, since a hit is
meant for `read_url`. A link `read_url` would refuse (malformed, such as "http://[bad/x", or with
credentials) is skipped, never an error: one odd result does not fail the search. Pass `counters` to
learn how many distinct links were skipped ("search_hits_malformed"). The caller clamps `limit` (1-25
for the `search` tool); paging here reaches whatever it is given, within what the provider serves.

Scores: SearXNG's own `score` (its rank fusion across engines, not bounded to 1) when present;
otherwise, and always for Brave, which gives none, `1 / (1 + rank)` with rank counted from 0 across
pages, so the first hit scores 1.0, the second 0.5, and scores only decrease.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from .addresses import refuse_url
from .candidates import canonical_link

NO_PROVIDER = (
    "no search provider is configured: set searxng_url (a SearXNG instance) "
    "or brave_api_key (the Brave Search API)"
)
BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
BRAVE_MAX_COUNT = 20  # Brave's `count` is at most 20 per request
BRAVE_MAX_OFFSET = 9  # Brave's `offset` counts pages of `count` results, 0-9
SEARXNG_MAX_PAGES = 10
BODY_EXCERPT = 200  # characters of a failing provider's body quoted in the error
MALFORMED_COUNTER = "search_hits_malformed"

_BRAVE_MARKUP = re.compile(r"</?(?:strong|b|em|i)\s*>", re.IGNORECASE)
_SPACES = re.compile(r"\s+")
_AGO = re.compile(r"^(\d{1,4})\s+(minute|hour|day|week)s?\s+ago$", re.IGNORECASE)


class FetcherLike(Protocol):
    # The groundhog Fetcher; its optional `deadline` keyword is passed only when a caller gives one.
    async def get_json(
        self, url: str, *, params: dict, headers: dict, trusted: bool = False
    ) -> tuple[int, Any]: ...


@dataclass(frozen=True)
class Hit:
    title: str
    url: str
    snippet: str
    engine: str
    score: float
    published: str | None  # YYYY-MM-DD, an ISO 8601 date-time, or None when the provider gives no date


class SearchError(Exception):
    """The search could not be answered: no provider configured, or the provider failed."""


def provider_name(settings: Mapping[str, Any]) -> str:
    if _setting(settings, "searxng_url"):
        return "searxng"
    if _setting(settings, "brave_api_key"):
        return "brave"
    return "none"


async def search_web(
    fetcher: FetcherLike,
    settings: Mapping[str, Any],
    query: str,
    limit: int,
    *,
    deadline: float | None = None,
    counters: MutableMapping[str, int] | None = None,
) -> tuple[str, list[Hit]]:
    """(the provider that answered, its hits best first, at most `limit`).

    `deadline` (a time.monotonic() value) bounds every provider request, for `research`.
    `counters`, when given, gains the number of hits skipped for a malformed link under
    MALFORMED_COUNTER (only when there were some)."""
    name = provider_name(settings)
    collected = _Collector(limit)
    if name == "searxng":
        await _searxng(fetcher, _setting(settings, "searxng_url"), query, collected, deadline)
    elif name == "brave":
        endpoint = _setting(settings, "brave_url") or BRAVE_URL
        key = _setting(settings, "brave_api_key")
        await _brave(fetcher, endpoint, key, query, collected, deadline)
    else:
        raise SearchError(NO_PROVIDER)
    if counters is not None and collected.malformed:
        counters[MALFORMED_COUNTER] = counters.get(MALFORMED_COUNTER, 0) + collected.malformed
    return name, collected.hits


# --- SearXNG -------------------------------------------------------------------------------------


def searxng_endpoint(base: str) -> str:
    """The /search endpoint of a SearXNG instance, whether the setting names its root or /search
    (a query in the setting, such as an access token for a proxy in front of it, is kept)."""
    try:
        parts = urlsplit(base)
    except ValueError:
        return base  # the fetcher refuses it, with the reason
    path = parts.path.rstrip("/")
    path = path if path.endswith("/search") else path + "/search"
    return urlunsplit(parts._replace(path=path, fragment=""))


async def _searxng(
    fetcher: FetcherLike, base: str, query: str, collected: _Collector, deadline: float | None
) -> None:
    endpoint = searxng_endpoint(base)
    where = f"searxng at {shown_url(base)}"
    # A SearXNG page holds about 10-20 merged results; a few pages reach any limit the tools ask for.
    max_pages = min(SEARXNG_MAX_PAGES, math.ceil(collected.limit / 10) + 1)
    for pageno in range(1, max_pages + 1):
        params = {"q": query, "format": "json", "pageno": pageno}
        try:
            payload = await _get(fetcher, where, endpoint, params, {"Accept": "application/json"}, deadline)
        except SearchError:
            # A later page failing leaves the hits already read standing: they are real answers,
            # only fewer than asked. The first page failing is the provider failing.
            if pageno == 1:
                raise
            break
        results = payload.get("results")
        if not isinstance(results, list):
            if pageno == 1:
                raise SearchError(f"{where} answered without a results list: {_excerpt(payload)}")
            break
        if pageno == 1 and not results:
            _raise_if_engines_failed(where, payload)
        added = 0
        for result in results:
            if isinstance(result, dict):
                added += collected.add(_searxng_hit(result, collected.rank))
        if collected.full or added == 0:
            break


def _searxng_hit(result: Mapping[str, Any], rank: int) -> Hit | None:
    url = result.get("url")
    if not isinstance(url, str):
        return None
    engine = result.get("engine")
    if not isinstance(engine, str) or not engine:
        engines = result.get("engines")
        engine = engines[0] if isinstance(engines, list) and engines and isinstance(engines[0], str) else ""
    score = result.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        score = 1.0 / (1 + rank)
    return Hit(
        title=_text(result.get("title")),
        url=url.strip(),
        snippet=_text(result.get("content")),
        engine=engine or "searxng",
        score=float(score),
        published=normalise_published(result.get("publishedDate")),
    )


def shown_url(url: str) -> str:
    """The instance's URL for an error message: without credentials or a query, which may be secret."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, host, parts.path, "", "")).rstrip("/")
    except ValueError:
        return "(searxng_url)"


def _raise_if_engines_failed(where: str, payload: Mapping[str, Any]) -> None:
    """SearXNG answers 200 with no results when every engine failed; that is a failure, not 'none'."""
    failed = payload.get("unresponsive_engines")
    if not isinstance(failed, list) or not failed:
        return
    names = []
    for entry in failed[:5]:
        if isinstance(entry, list | tuple) and entry:
            names.append(" ".join(str(part) for part in entry[:2]))
        else:
            names.append(str(entry))
    raise SearchError(f"{where} returned no results and its engines failed: {'; '.join(names)}")


# --- Brave ---------------------------------------------------------------------------------------


async def _brave(
    fetcher: FetcherLike, endpoint: str, key: str, query: str, collected: _Collector, deadline: float | None
) -> None:
    where = "brave"
    headers = {"X-Subscription-Token": key, "Accept": "application/json"}
    count = max(1, min(collected.limit, BRAVE_MAX_COUNT))
    for offset in range(BRAVE_MAX_OFFSET + 1):
        params = {"q": query, "count": count, "offset": offset}
        try:
            payload = await _get(fetcher, where, endpoint, params, headers, deadline)
        except SearchError:
            if offset == 0:
                raise
            break
        web = payload.get("web")
        # Brave leaves `web` out when nothing matched.
        results = web.get("results") if isinstance(web, dict) else []
        if not isinstance(results, list):
            if offset == 0:
                raise SearchError(f"{where} answered without web.results: {_excerpt(payload)}")
            break
        for result in results:
            if isinstance(result, dict):
                collected.add(_brave_hit(result, collected.rank))
        about = payload.get("query")
        more = about.get("more_results_available") if isinstance(about, dict) else None
        if collected.full or len(results) < count or more is False:
            break


def _brave_hit(result: Mapping[str, Any], rank: int) -> Hit | None:
    url = result.get("url")
    if not isinstance(url, str):
        return None
    published = normalise_published(result.get("page_age"))
    if published is None:
        published = normalise_published(result.get("age"))
    return Hit(
        title=_unmark(result.get("title")),
        url=url.strip(),
        snippet=_unmark(result.get("description")),
        engine="brave",
        score=1.0 / (1 + rank),
        published=published,
    )


def _unmark(value: Any) -> str:
    """Brave's text with its highlighting tags removed and HTML entities decoded."""
    return html.unescape(_BRAVE_MARKUP.sub("", _text(value)))


# --- shared --------------------------------------------------------------------------------------


class _Collector:
    """Hits in provider order, at most `limit`, one per canonical link, http(s) only, each link one
    `read_url` accepts (the others counted in `malformed`)."""

    def __init__(self, limit: int) -> None:
        self.limit = max(0, limit)
        self.hits: list[Hit] = []
        self.rank = 0  # results seen so far, the rank of the next one
        self._seen: set[str] = set()
        self._malformed: set[str] = set()  # a link repeated on a later page is counted once

    @property
    def malformed(self) -> int:
        return len(self._malformed)

    @property
    def full(self) -> bool:
        return len(self.hits) >= self.limit

    def add(self, hit: Hit | None) -> int:
        self.rank += 1
        if hit is None or self.full:
            return 0
        try:
            scheme = urlsplit(hit.url).scheme.lower()
        except ValueError:  # "http://[bad/x": an unbalanced bracket
            scheme = "malformed"
        if scheme not in ("http", "https", "malformed"):
            return 0  # magnet:, ftp: ...: not a page, not a fault either
        if scheme == "malformed" or refuse_url(hit.url) is not None:
            self._malformed.add(hit.url)
            return 0
        key = canonical_link(hit.url)
        if key in self._seen:
            return 0
        self._seen.add(key)
        self.hits.append(hit)
        return 1


async def _get(
    fetcher: FetcherLike,
    where: str,
    url: str,
    params: dict[str, Any],
    headers: dict[str, str],
    deadline: float | None,
) -> dict[str, Any]:
    extra = {} if deadline is None else {"deadline": deadline}
    try:
        # The URL is built from the operator's setting: any address it names may be reached.
        status, payload = await fetcher.get_json(url, params=params, headers=headers, trusted=True, **extra)
    except Exception as err:  # the fetcher's network and decoding failures, reported as the provider's
        detail = str(err) or type(err).__name__
        status = getattr(err, "http_status", None)
        if not isinstance(status, int):
            raise SearchError(f"{where} request failed: {detail}") from None
        # The groundhog fetcher raises for a non-2xx answer, its message naming the status already.
        answered = "failed" if f"HTTP {status}" in detail else f"answered HTTP {status}"
        raise SearchError(f"{where} {answered}{_hint(where, status)}: {detail}") from None
    if not 200 <= status < 300:
        raise SearchError(f"{where} answered HTTP {status}{_hint(where, status)}: {_excerpt(payload)}")
    if not isinstance(payload, dict):
        raise SearchError(f"{where} answered HTTP {status} without a JSON object: {_excerpt(payload)}")
    return payload


def _hint(where: str, status: int) -> str:
    # SearXNG refuses format=json with 403 unless its settings.yml lists json among search.formats.
    if where.startswith("searxng") and status == 403:
        return " (is json listed in search.formats of its settings.yml?)"
    return ""


def _excerpt(payload: Any) -> str:
    """A short, one-line rendering of a provider's answer for an error message."""
    if isinstance(payload, dict):
        error = payload.get("error")
        if isinstance(error, dict) and isinstance(error.get("detail"), str):
            payload = error["detail"]  # Brave's ErrorResponse
    if isinstance(payload, bytes):
        payload = payload.decode("utf-8", "replace")
    if not isinstance(payload, str):
        try:
            payload = json.dumps(payload, ensure_ascii=False, default=str)
        except ValueError:
            payload = repr(payload)
    text = _SPACES.sub(" ", payload).strip() or "(empty body)"
    return text if len(text) <= BODY_EXCERPT else text[: BODY_EXCERPT - 1] + "…"


def _text(value: Any) -> str:
    return _SPACES.sub(" ", value).strip() if isinstance(value, str) else ""


def _setting(settings: Mapping[str, Any], name: str) -> str:
    value = settings.get(name)
    return value.strip() if isinstance(value, str) else ""


def normalise_published(value: Any, *, now: datetime | None = None) -> str | None:
    """A provider's date as YYYY-MM-DD or an ISO 8601 date-time (UTC with Z when it had a zone).

    Accepts ISO forms ("2024-03-01", "2024-03-01T10:00:00", "...+02:00", "...Z", a space for the T),
    "March 1, 2024" / "1 Mar 2024", and Brave's relative "3 days ago" (minutes, hours, days, weeks:
    turned into the date, since the time is approximate). Anything else is None: no date rather than
    a wrong one.
    """
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > 64:
        return None
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return date.fromisoformat(text).isoformat()
        except ValueError:
            return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        moment = None
    if moment is not None:
        if moment.tzinfo is None:
            return moment.isoformat()
        return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
    for pattern in ("%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%d %b %Y"):
        try:
            return datetime.strptime(text, pattern).date().isoformat()
        except ValueError:
            continue
    ago = _AGO.match(text)
    if ago:
        amount, unit = int(ago.group(1)), ago.group(2).lower()
        moment = (now or datetime.now(UTC)) - timedelta(**{unit + "s": amount})
        return moment.date().isoformat()
    return None

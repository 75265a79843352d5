"""search.py against the local test web server (127.0.0.1) speaking SearXNG's and Brave's JSON: the
requests each provider receives, the hits it maps to, paging, deduplication, malformed links
skipped, the provider's URL asked for as trusted, and every failure being an error with the
provider's status rather than an empty success."""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import FrozenInstanceError, dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from lynxc.runtime.backends.groundhog.search import (
    NO_PROVIDER,
    Hit,
    SearchError,
    normalise_published,
    provider_name,
    search_web,
    searxng_endpoint,
)
from tests.runtime.backends.groundhog.webserver import Request, Response, WebServer, searx_result

pytestmark = pytest.mark.anyio

Answer = Callable[[dict[str, str]], tuple[int, Any]]


@dataclass
class LocalServer:
    """Provider endpoints on the shared test WebServer, with each request's parameters (the last
    value of each) and headers."""

    web: WebServer

    @property
    def base(self) -> str:
        return self.web.url("").rstrip("/")

    def json(self, path: str, answer: Answer) -> None:
        def route(request: Request) -> Response:
            status, payload = answer(_params(request))
            return Response(status, [("Content-Type", "application/json")], json.dumps(payload).encode())

        self.web.route(path, route)

    def raw(self, path: str, status: int, content_type: str, body: bytes, delay: float = 0.0) -> None:
        self.web.route(path, lambda _: Response(status, [("Content-Type", content_type)], body, delay=delay))

    def sent(self, path: str) -> list[tuple[dict[str, str], dict[str, str]]]:
        return [(_params(request), request.headers) for request in self.web.requests_to(path)]


def _params(request: Request) -> dict[str, str]:
    return {name: values[-1] for name, values in request.query.items()}


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with WebServer() as web:
        yield LocalServer(web)


class LocalFetcher:
    """The contract's `get_json` (status, decoded JSON or the text when it is not JSON) on httpx;
    the real Fetcher adds the network policy, tested in its own module and at the end here."""

    def __init__(self, timeout: float = 2.0) -> None:
        self.client = httpx.AsyncClient(timeout=timeout, trust_env=False)
        self.trusted: list[bool] = []  # each request's `trusted`

    async def get_json(
        self, url: str, *, params: dict, headers: dict, trusted: bool = False
    ) -> tuple[int, Any]:
        self.trusted.append(trusted)
        response = await self.client.get(url, params=params, headers=headers)
        try:
            return response.status_code, response.json()
        except ValueError:
            return response.status_code, response.text


async def run(
    settings: dict[str, Any],
    query: str = "lynx",
    limit: int = 10,
    timeout: float = 2.0,
    counters: dict[str, int] | None = None,
):
    fetcher = LocalFetcher(timeout)
    try:
        return await search_web(fetcher, settings, query, limit, counters=counters)
    finally:
        await fetcher.client.aclose()
        # The provider's URL is the operator's setting: every request to it is trusted.
        assert all(fetcher.trusted)


def searxng_result(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "url": f"https://site{n}.example/page",
        "title": f"Title {n}",
        "content": f"Snippet {n}",
        "engine": "duckduckgo",
        "engines": ["duckduckgo", "bing"],
        "score": 10.0 / n,
        "publishedDate": None,
        **extra,
    }


def searxng_pages(total: int, per_page: int = 10) -> Callable[[dict[str, str]], tuple[int, Any]]:
    def answer(params: dict[str, str]) -> tuple[int, Any]:
        page = int(params.get("pageno", "1"))
        first = (page - 1) * per_page + 1
        numbers = range(first, min(first + per_page, total + 1))
        return 200, {"query": params["q"], "results": [searxng_result(n) for n in numbers]}

    return answer


def brave_result(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "title": f"<strong>Lynx</strong> {n}",
        "url": f"https://b{n}.example/",
        "description": f"The <strong>lynx</strong> &amp; its prey, result {n}",
        **extra,
    }


def brave_pages(total: int, key: str = "secret-key") -> Callable[[dict[str, str]], tuple[int, Any]]:
    def answer(params: dict[str, str]) -> tuple[int, Any]:
        count, offset = int(params["count"]), int(params["offset"])
        first = offset * count + 1
        numbers = list(range(first, min(first + count, total + 1)))
        more = first + count <= total
        return 200, {
            "type": "search",
            "query": {"original": params["q"], "more_results_available": more},
            "web": {"type": "search", "results": [brave_result(n) for n in numbers]},
        }

    return answer


# --- choosing the provider -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "name"),
    [
        ({}, "none"),
        ({"searxng_url": None, "brave_api_key": None}, "none"),
        ({"searxng_url": "  ", "brave_api_key": ""}, "none"),
        ({"searxng_url": "http://127.0.0.1:8888"}, "searxng"),
        ({"brave_api_key": "k"}, "brave"),
        ({"searxng_url": "http://127.0.0.1:8888", "brave_api_key": "k"}, "searxng"),
    ],
)
def test_provider_name(settings: dict[str, Any], name: str) -> None:
    assert provider_name(settings) == name


async def test_no_provider_is_an_error_naming_the_settings() -> None:
    with pytest.raises(SearchError) as raised:
        await run({"searxng_url": None, "brave_api_key": "   "})
    assert str(raised.value) == NO_PROVIDER
    assert "searxng_url" in NO_PROVIDER and "brave_api_key" in NO_PROVIDER


def test_searxng_endpoint_accepts_the_root_or_the_search_path() -> None:
    assert searxng_endpoint("http://h:8888") == "http://h:8888/search"
    assert searxng_endpoint("http://h:8888/") == "http://h:8888/search"
    assert searxng_endpoint("http://h/searx/search") == "http://h/searx/search"
    assert searxng_endpoint("http://h/searx/?token=t") == "http://h/searx/search?token=t"


def test_hits_are_frozen() -> None:
    hit = Hit("t", "https://a.example/", "s", "e", 1.0, None)
    with pytest.raises(FrozenInstanceError):
        hit.title = "u"  # type: ignore[misc]


# --- SearXNG -----------------------------------------------------------------------------------------


async def test_searxng_request_and_hit_mapping(server: LocalServer) -> None:
    results = [
        searxng_result(1, publishedDate="2024-03-01T10:20:30"),
        searxng_result(2, engine=None, publishedDate="2024-03-02"),  # engine from engines[0]
        searxng_result(3, url="https://site1.example/page#comments"),  # a variant of 1: dropped
        searxng_result(4, url="magnet:?xt=urn:btih:abc"),  # not for read_url: dropped
        searxng_result(5, score=None, title="  Spaced \n  title ", content=None),
        searxng_result(6, url="https://SITE1.example/page?utm_source=x"),  # variant of 1 again
    ]
    server.json("/search", lambda params: (200, {"query": params["q"], "results": results}))
    name, hits = await run({"searxng_url": server.base}, query="the lynx", limit=10)
    assert name == "searxng"
    assert [h.url for h in hits] == [
        "https://site1.example/page",
        "https://site2.example/page",
        "https://site5.example/page",
    ]
    first, second, fifth = hits
    assert first == Hit(
        "Title 1", "https://site1.example/page", "Snippet 1", "duckduckgo", 10.0, "2024-03-01T10:20:30"
    )
    assert second.engine == "duckduckgo" and second.published == "2024-03-02" and second.score == 5.0
    # No score from the provider: 1 / (1 + rank), rank counted over every result read (0-based).
    assert fifth.score == pytest.approx(1 / 5)
    assert fifth.title == "Spaced title" and fifth.snippet == ""
    (params, headers), *later = server.sent("/search")
    assert params == {"q": "the lynx", "format": "json", "pageno": "1"}
    assert [p["pageno"] for p, _ in later] == ["2"]  # fewer than the limit: page 2 asked, nothing new
    assert headers["accept"] == "application/json"


MALFORMED = [
    "http://[bad/x",  # an unbalanced IPv6 bracket: urlsplit raises
    "https://[::1/x",
    "http://user:pw@example.com/",  # read_url refuses credentials
    "http://example.com:99999/",
    "http:///no-host",
]


async def test_searxng_malformed_links_are_skipped_and_counted(server: LocalServer) -> None:
    results = [searxng_result(1)]
    results += [searxng_result(10 + n, url=url) for n, url in enumerate(MALFORMED)]
    results += [searxng_result(4, url="magnet:?xt=urn:btih:abc"), searxng_result(2)]
    server.json("/search", lambda params: (200, {"results": results}))
    counters: dict[str, int] = {"searches": 3}
    name, hits = await run({"searxng_url": server.base}, counters=counters)
    assert (name, [h.url for h in hits]) == (
        "searxng",
        ["https://site1.example/page", "https://site2.example/page"],
    )
    # A non-web link (magnet:) is no fault of the provider's: dropped, not counted.
    assert counters == {"searches": 3, "search_hits_malformed": len(MALFORMED)}
    assert hits[1].score == 5.0  # the provider's own score, untouched by the skipped ones
    _, again = await run({"searxng_url": server.base})  # no counters: skipped all the same
    assert again == hits


async def test_brave_malformed_links_are_skipped_and_counted(server: LocalServer) -> None:
    results = [brave_result(1, url="http://[bad/x"), brave_result(2), brave_result(3, url="https://[::1/")]
    server.json("/brave", lambda params: (200, {"web": {"results": results}}))
    counters: dict[str, int] = {}
    _, hits = await run(brave_settings(server), counters=counters)
    assert [h.url for h in hits] == ["https://b2.example/"] and hits[0].score == 0.5
    assert counters == {"search_hits_malformed": 2}
    counters = {}
    server.json("/brave", lambda params: (200, {"web": {"results": [brave_result(2)]}}))
    await run(brave_settings(server), counters=counters)
    assert counters == {}  # nothing skipped, nothing added


async def test_searxng_base_url_with_a_trailing_slash_or_the_search_path(server: LocalServer) -> None:
    server.json("/search", searxng_pages(3))
    for base in (server.base + "/", server.base + "/search"):
        _, hits = await run({"searxng_url": base})
        assert len(hits) == 3


async def test_searxng_pages_until_the_limit(server: LocalServer) -> None:
    server.json("/search", searxng_pages(100, per_page=10))
    _, hits = await run({"searxng_url": server.base}, limit=25)
    assert [h.title for h in hits] == [f"Title {n}" for n in range(1, 26)]
    assert [params["pageno"] for params, _ in server.sent("/search")] == ["1", "2", "3"]


async def test_searxng_stops_when_a_page_brings_nothing_new(server: LocalServer) -> None:
    # Some instances answer every page with the same results: paging must not loop on them.
    server.json("/search", lambda params: (200, {"results": [searxng_result(1), searxng_result(2)]}))
    _, hits = await run({"searxng_url": server.base}, limit=25)
    assert len(hits) == 2
    assert len(server.sent("/search")) == 2


async def test_searxng_takes_a_limit_above_25_from_research(server: LocalServer) -> None:
    server.json("/search", searxng_pages(100, per_page=10))
    _, hits = await run({"searxng_url": server.base}, limit=30)
    assert len(hits) == 30


async def test_searxng_no_result_is_an_empty_list(server: LocalServer) -> None:
    server.json("/search", lambda params: (200, {"results": [], "unresponsive_engines": []}))
    assert await run({"searxng_url": server.base}) == ("searxng", [])


async def test_searxng_engines_all_failing_is_an_error(server: LocalServer) -> None:
    failing = [["google", "timeout"], ["bing", "CAPTCHA"]]
    server.json("/search", lambda params: (200, {"results": [], "unresponsive_engines": failing}))
    with pytest.raises(SearchError, match=r"no results and its engines failed: google timeout; bing CAPTCHA"):
        await run({"searxng_url": server.base})


async def test_searxng_json_format_disabled(server: LocalServer) -> None:
    server.raw("/search", 403, "text/html", b"<html><body>Forbidden</body></html>")
    with pytest.raises(SearchError) as raised:
        await run({"searxng_url": server.base})
    message = str(raised.value)
    assert message.startswith(f"searxng at {server.base} answered HTTP 403")
    assert "search.formats" in message and "Forbidden" in message


async def test_searxng_server_error_quotes_a_short_body(server: LocalServer) -> None:
    server.raw("/search", 503, "text/plain", b"overloaded\n" + b"x" * 5000)
    with pytest.raises(SearchError) as raised:
        await run({"searxng_url": server.base})
    message = str(raised.value)
    assert "HTTP 503: overloaded x" in message
    assert len(message) < 300 and message.endswith("…")


async def test_searxng_bad_json_is_an_error(server: LocalServer) -> None:
    server.raw("/search", 200, "application/json", b"<html>not json</html>")
    with pytest.raises(SearchError, match=r"answered HTTP 200 without a JSON object: <html>not json</html>"):
        await run({"searxng_url": server.base})


async def test_searxng_json_without_results_is_an_error(server: LocalServer) -> None:
    server.json("/search", lambda params: (200, {"error": "nope"}))
    with pytest.raises(SearchError, match="without a results list"):
        await run({"searxng_url": server.base})


async def test_searxng_timeout_is_an_error(server: LocalServer) -> None:
    server.raw("/search", 200, "application/json", b'{"results": []}', delay=1.5)
    with pytest.raises(SearchError, match=rf"^searxng at {server.base} request failed: "):
        await run({"searxng_url": server.base}, timeout=0.3)


async def test_searxng_unreachable_is_an_error() -> None:
    with pytest.raises(SearchError, match=r"^searxng at http://127.0.0.1:9 request failed"):
        await run({"searxng_url": "http://127.0.0.1:9"})


async def test_searxng_credentials_are_not_shown_in_errors(server: LocalServer) -> None:
    server.raw("/search", 500, "text/plain", b"boom")
    with_secret = server.base.replace("http://", "http://admin:hunter2@") + "/?token=abc"
    with pytest.raises(SearchError) as raised:
        await run({"searxng_url": with_secret})
    assert str(raised.value).startswith(f"searxng at {server.base} answered HTTP 500: boom")
    assert "hunter2" not in str(raised.value) and "abc" not in str(raised.value)


async def test_searxng_later_page_failing_keeps_the_hits_read(server: LocalServer) -> None:
    pages = searxng_pages(100)

    def answer(params: dict[str, str]) -> tuple[int, Any]:
        return pages(params) if params["pageno"] == "1" else (502, {"error": "bad gateway"})

    server.json("/search", answer)
    _, hits = await run({"searxng_url": server.base}, limit=25)
    assert len(hits) == 10


# --- Brave -------------------------------------------------------------------------------------------


def brave_settings(server: LocalServer, key: str = "secret-key") -> dict[str, Any]:
    return {"searxng_url": None, "brave_api_key": key, "brave_url": server.base + "/brave"}


async def test_brave_request_and_hit_mapping(server: LocalServer) -> None:
    results = [
        brave_result(1, page_age="2024-05-06T07:08:09"),
        brave_result(2, age="March 1, 2024"),
        brave_result(3, url="https://b1.example/#frag"),  # variant of 1
        brave_result(4, age="3 days ago", page_age="not a date"),
    ]
    server.json("/brave", lambda params: (200, {"type": "search", "web": {"results": results}}))
    name, hits = await run(brave_settings(server), query="lynx habitat", limit=10)
    assert name == "brave"
    assert hits[0] == Hit(
        "Lynx 1", "https://b1.example/", "The lynx & its prey, result 1", "brave", 1.0, "2024-05-06T07:08:09"
    )
    assert [h.url for h in hits] == ["https://b1.example/", "https://b2.example/", "https://b4.example/"]
    assert hits[1].published == "2024-03-01"
    assert hits[1].score == 0.5 and hits[2].score == 0.25  # 1 / (1 + rank): rank 3, the variant counted
    assert hits[2].published is not None and len(hits[2].published) == 10
    [(params, headers)] = server.sent("/brave")
    assert params == {"q": "lynx habitat", "count": "10", "offset": "0"}
    assert headers["x-subscription-token"] == "secret-key"
    assert headers["accept"] == "application/json"


async def test_brave_pages_with_offset_in_pages_of_count(server: LocalServer) -> None:
    server.json("/brave", brave_pages(100))
    _, hits = await run(brave_settings(server), limit=25)
    assert [h.url for h in hits] == [f"https://b{n}.example/" for n in range(1, 26)]
    sent = [(p["count"], p["offset"]) for p, _ in server.sent("/brave")]
    assert sent == [("20", "0"), ("20", "1")]
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and scores[0] == 1.0


async def test_brave_stops_when_no_more_results(server: LocalServer) -> None:
    server.json("/brave", brave_pages(22))
    _, hits = await run(brave_settings(server), limit=25)
    assert len(hits) == 22
    assert len(server.sent("/brave")) == 2


async def test_brave_nothing_matched_is_an_empty_list(server: LocalServer) -> None:
    server.json("/brave", lambda params: (200, {"type": "search", "query": {"original": params["q"]}}))
    assert await run(brave_settings(server)) == ("brave", [])


async def test_brave_rejected_key_names_the_status_not_the_key(server: LocalServer) -> None:
    error = {
        "type": "ErrorResponse",
        "error": {"code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "The token is invalid."},
    }
    server.json("/brave", lambda params: (401, error))
    with pytest.raises(SearchError) as raised:
        await run(brave_settings(server, key="wrong-key-123"))
    assert str(raised.value) == "brave answered HTTP 401: The token is invalid."
    assert "wrong-key-123" not in str(raised.value)


async def test_brave_rate_limited(server: LocalServer) -> None:
    server.raw("/brave", 429, "application/json", b"")
    with pytest.raises(SearchError, match=r"^brave answered HTTP 429: \(empty body\)$"):
        await run(brave_settings(server))


async def test_brave_not_used_when_searxng_is_set(server: LocalServer) -> None:
    server.json("/search", searxng_pages(2))
    server.json("/brave", brave_pages(2))
    settings = brave_settings(server) | {"searxng_url": server.base}
    name, hits = await run(settings)
    assert name == "searxng" and len(hits) == 2
    assert server.sent("/brave") == []


# --- dates -------------------------------------------------------------------------------------------

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "published"),
    [
        (None, None),
        ("", None),
        (12345, None),
        ("2024-03-01", "2024-03-01"),
        ("2024-02-30", None),
        ("2024-03-01T10:00:00", "2024-03-01T10:00:00"),
        ("2024-03-01 10:00:00", "2024-03-01T10:00:00"),
        ("2024-03-01T10:00:00Z", "2024-03-01T10:00:00Z"),
        ("2024-03-01T12:00:00+02:00", "2024-03-01T10:00:00Z"),
        ("March 1, 2024", "2024-03-01"),
        ("Mar 1, 2024", "2024-03-01"),
        ("1 March 2024", "2024-03-01"),
        ("3 days ago", "2024-06-12"),
        ("1 week ago", "2024-06-08"),
        ("5 hours ago", "2024-06-15"),
        ("2 months ago", None),  # too vague to turn into a date
        ("yesterday-ish", None),
        ("9" * 100, None),
    ],
)
def test_normalise_published(value: Any, published: str | None) -> None:
    assert normalise_published(value, now=NOW) == published


# --- through the real fetcher, once network.py exists --------------------------------------------


async def test_through_the_groundhog_fetcher(server: LocalServer) -> None:
    network = importlib.import_module("lynxc.runtime.backends.groundhog.network")
    fetcher = network.Fetcher(network.FetchPolicy(allowed_networks=("127.0.0.1/32",), timeout_seconds=5))
    server.json("/search", searxng_pages(30))
    server.json("/brave", brave_pages(3))
    try:
        name, hits = await search_web(fetcher, {"searxng_url": server.base}, "lynx", 25)
        assert name == "searxng" and len(hits) == 25
        name, hits = await search_web(
            fetcher, brave_settings(server), "lynx", 10, deadline=time.monotonic() + 5
        )
        assert name == "brave" and len(hits) == 3
        [(_, headers)] = server.sent("/brave")
        assert headers["x-subscription-token"] == "secret-key"

        server.raw("/search", 403, "text/html", b"Forbidden")
        with pytest.raises(SearchError) as raised:
            await search_web(fetcher, {"searxng_url": server.base}, "lynx", 10)
        assert str(raised.value).startswith(
            f"searxng at {server.base} failed (is json listed in search.formats"
        )
        assert "HTTP 403" in str(raised.value) and "Forbidden" in str(raised.value)

        server.raw("/search", 200, "application/json", b"<html>")
        with pytest.raises(SearchError, match=r"HTTP 200.*not JSON"):
            await search_web(fetcher, {"searxng_url": server.base}, "lynx", 10)

        server.raw("/brave", 401, "application/json", b'{"type": "ErrorResponse"}')
        with pytest.raises(SearchError, match=r"^brave failed: HTTP 401") as raised:
            await search_web(fetcher, brave_settings(server, key="key-xyz"), "lynx", 10)
        assert "key-xyz" not in str(raised.value)
    finally:
        await fetcher.aclose()


async def test_the_webserver_searxng_endpoint_through_the_groundhog_fetcher(server: LocalServer) -> None:
    network = importlib.import_module("lynxc.runtime.backends.groundhog.network")
    fetcher = network.Fetcher(network.FetchPolicy(allowed_networks=("127.0.0.1/32",)))
    server.web.searxng(
        lambda query: [
            searx_result(
                "https://a.example/1", f"{query} one", "first", score=3.0, published="2024-01-02T03:04:05"
            ),
            searx_result("https://a.example/1#again", "dup", score=2.0),
            searx_result("https://b.example/2", f"{query} two", "second", engine="wikipedia", score=1.5),
        ]
    )
    try:
        name, hits = await search_web(fetcher, {"searxng_url": server.base + "/"}, "lynx", 10)
    finally:
        await fetcher.aclose()
    assert name == "searxng"
    assert hits == [
        Hit("lynx one", "https://a.example/1", "first", "test", 3.0, "2024-01-02T03:04:05"),
        Hit("lynx two", "https://b.example/2", "second", "wikipedia", 1.5, None),
    ]


async def test_a_local_provider_needs_no_allowed_networks_pages_there_stay_refused(
    server: LocalServer,
) -> None:
    """The documented SearXNG on 127.0.0.1 with allowed_networks=[]: the provider's URL is the
    operator's, so it is reached; a page on the same address is still refused."""
    network = importlib.import_module("lynxc.runtime.backends.groundhog.network")
    fetcher = network.Fetcher(network.FetchPolicy(allowed_networks=()))
    server.json("/search", searxng_pages(3))
    server.json("/brave", brave_pages(2))
    server.raw("/page", 200, "text/html", b"<html><body>local</body></html>")
    try:
        name, hits = await search_web(fetcher, {"searxng_url": server.base}, "lynx", 10)
        assert name == "searxng" and len(hits) == 3
        name, hits = await search_web(fetcher, brave_settings(server), "lynx", 10)
        assert name == "brave" and len(hits) == 2
        page = await fetcher.fetch(server.base + "/page")
        assert (page.status, page.error) == ("blocked", "refused: 127.0.0.1 is a loopback address")
    finally:
        await fetcher.aclose()
    assert len(server.sent("/search")) == 2 and len(server.sent("/brave")) == 1
    assert server.web.requests_to("/page") == []


async def test_malformed_links_through_the_groundhog_fetcher(server: LocalServer) -> None:
    network = importlib.import_module("lynxc.runtime.backends.groundhog.network")
    fetcher = network.Fetcher(network.FetchPolicy())
    server.web.searxng(
        lambda query: [searx_result("http://[bad/x", "bad"), searx_result("https://a.example/", "a")]
    )
    counters: dict[str, int] = {}
    try:
        _, hits = await search_web(fetcher, {"searxng_url": server.base}, "lynx", 10, counters=counters)
    finally:
        await fetcher.aclose()
    assert [h.url for h in hits] == ["https://a.example/"] and counters == {"search_hits_malformed": 1}

"""The four groundhog backends: `search`, `read_url`, `research` (research.py does the work) and
`status`. This module stays light to import (`lynxc build` reads the declarations): httpx,
trafilatura and lxml load inside the calls."""

from __future__ import annotations

import time
from typing import Any

from lynxc.runtime.backend import backend
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

from . import state
from .results import budget, clamp, provenance_of, threat_dicts

NETWORK_SETTINGS = {
    "allowed_networks",
    "max_page_bytes",
    "fetch_timeout_seconds",
    "per_domain_interval_seconds",
    "user_agent",
}
SEARCH_SETTINGS = {"searxng_url", "brave_api_key", "brave_url"}
SECRET_SETTINGS = {"brave_api_key"}
URL_SETTINGS = {"searxng_url", "brave_url"}  # shown without credentials or query: they may hold a key
MAX_SEARCH_RESULTS = 25


@backend(params={"query", "limit"}, caps={"max_results"}, settings=SEARCH_SETTINGS | NETWORK_SETTINGS)
async def search(params: Any, ctx: ToolContext) -> dict[str, Any]:
    from .search import SearchError, search_web

    limit = clamp(params.limit, 1, ctx.caps.get("max_results", MAX_SEARCH_RESULTS))
    state.count("searches")
    try:
        name, hits = await search_web(
            state.fetcher_for(ctx.settings), ctx.settings, params.query, limit, counters=state.COUNTERS
        )
    except SearchError as err:
        state.count("search_failures")
        raise ToolError(str(err)) from None
    return {
        "query": params.query,
        "backend": name,
        "hits": [
            {
                "title": h.title,
                "url": h.url,
                "snippet": h.snippet,
                "engine": h.engine,
                "score": h.score,
                "published": h.published,
            }
            for h in hits[:limit]
        ],
    }


@backend(
    params={"url", "format", "max_tokens", "query", "include_hidden"},
    caps={"max_redirects"},
    settings=NETWORK_SETTINGS | {"max_tokens"},
)
async def read_url(params: Any, ctx: ToolContext) -> dict[str, Any]:
    from .network import refuse_url
    from .page import read_page
    from .passages import split_passages
    from .rank import fit_budget, rank_passages
    from .tokens import count_tokens, cut_to_tokens

    problem = refuse_url(params.url)
    if problem is not None:
        raise ToolError(f"url: {problem}")
    deadline = time.monotonic() + float(ctx.settings.get("fetch_timeout_seconds", 15)) * 2
    page = await read_page(
        state.fetcher_for(ctx.settings, ctx.caps.get("max_redirects", 5)),
        params.url,
        format=params.format,
        include_hidden=params.include_hidden,
        deadline=deadline,
    )
    fetched = page.fetched
    state.count_page(page)
    if fetched.error and fetched.error.startswith("refused"):
        raise ToolError(f"url: {fetched.error}")
    max_tokens = budget(params.max_tokens, ctx.settings)
    content, truncated, matches, set_aside = page.content, False, [], 0
    if params.query and page.content:
        ranked = [
            (p, s) for p, s in rank_passages(params.query, split_passages(page.content, prefix="p")) if s > 0
        ]
        if ranked:
            kept, truncated, set_aside = fit_budget(ranked, max_tokens)
            in_order = sorted(kept, key=lambda item: item[0].start)
            content = "\n\n".join(p.text for p, _, _ in in_order)  # a clamped passage comes cut
            matches = [
                {
                    "id": p.id,
                    "heading": p.heading,
                    "offset": p.start,
                    "end": p.end,
                    "score": score,
                    "clamped": clamped,
                }
                for p, score, clamped in kept
            ]
    if not matches and count_tokens(content) > max_tokens:
        content, truncated = cut_to_tokens(content, max_tokens), True
    truncated = truncated or page.incomplete is not None  # the page itself was read in part
    status, error = page.status, page.error or fetched.error
    if status == "ok" and not page.content.strip():
        status, error = "empty", "no readable text on the page"
    return {
        "markdown": content,
        "title": page.extracted.title if page.extracted else "",
        "url": params.url,
        "final_url": fetched.final_url,
        "fetched_at": fetched.fetched_at,
        "status": status,
        "error": error,
        "http_status": fetched.http_status,
        "truncated": truncated,
        "threats": threat_dicts(page.threats),
        "matches": matches,
        "set_aside": set_aside,
        "provenance": provenance_of(page),
    }


@backend(
    params={
        "query",
        "max_sources",
        "max_tokens",
        "include_domains",
        "exclude_domains",
        "published_after",
        "aim",
        "follow",
    },
    caps={"max_sources"},
    settings=NETWORK_SETTINGS | SEARCH_SETTINGS | {"max_tokens", "research_deadline_seconds"},
)
async def research(params: Any, ctx: ToolContext) -> dict[str, Any]:
    from .research import run_research

    state.count("research_calls")
    return await run_research(params, ctx)


@backend(
    params=set(), settings=SEARCH_SETTINGS | NETWORK_SETTINGS | {"max_tokens", "research_deadline_seconds"}
)
async def status(params: Any, ctx: ToolContext) -> dict[str, Any]:
    from .search import provider_name, shown_url

    provider = provider_name(ctx.settings)
    shown = {
        name: ("set" if value else "not set")
        if name in SECRET_SETTINGS
        else shown_url(value)
        if name in URL_SETTINGS and value
        else value
        for name, value in sorted(ctx.settings.items())
    }
    return {
        "provider": provider,
        "hint": None
        if provider != "none"
        else "set searxng_url to a SearXNG instance, or brave_api_key to a Brave Search API key",
        "settings": shown,
        "counters": dict(sorted(state.COUNTERS.items())),
        "started_at": state.STARTED_AT,
    }

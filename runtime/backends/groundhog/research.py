"""`research`: search, read several pages concurrently, rank their passages against the query
and fit them into the token budget, with a receipt that counts every hit, filter and omission.

The steps, each counted in the receipt:
1. hits: the provider's hits for the query (or the links `follow` names by their signed tokens);
2. filters, in order: excluded domains, outside `include_domains`, one page per domain (unless
   `include_domains`), hits known to be published before `published_after`; the rest beyond
   `max_sources` are left unread;
3. reads: every chosen page at once, under the per-domain pacing of the fetcher and one overall
   deadline; a page that fails is a source with its status and error, never a failed call;
   after reading, a page dated before `published_after` is filtered (an undated one is kept and
   counted) and a page whose content repeats an earlier one is a duplicate;
4. passages: every usable page split into passages, all ranked together by BM25 against the
   query, fitted into `max_tokens` best first (the best always admitted, cut if alone it is
   over), each wrapped in a fence the page cannot forge (a marker drawn at random per call);
5. candidates: the links inside the admitted passages, each with a token this server signs so a
   later call can read it through `follow` without searching again.

Receipt counters the original has and this server never needs: `links_straddled` (links are
found inside a passage, so none crosses two), `sources_omitted` (every source is listed) and
`metadata_compacted` (provenance is never shortened); they are always 0 or empty.
"""

from __future__ import annotations

import secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio

from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

from . import state
from .extract import parse_day
from .results import budget, clamp, provenance_of, threat_dicts

MAX_SOURCES = 10
MAX_CANDIDATES = 20
THREATS_PER_SOURCE = 20  # excerpts listed per source; the rest are counted in the receipt
SEARCH_DEPTH = 3  # hits asked per page to read: room for the filters


@dataclass
class Chosen:
    url: str
    depth: int = 0
    via: dict[str, Any] | None = None
    follow_index: int | None = None  # its entry in `followed`, for a followed candidate


@dataclass
class Receipt:
    counts: Counter[str] = field(default_factory=Counter)
    hits_by_domain: Counter[str] = field(default_factory=Counter)


def domain_of(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower()
    return host[4:] if host.startswith("www.") else host


def on_domains(domain: str, domains: list[str]) -> bool:
    return any(domain == d or domain.endswith("." + d) for d in domains)


async def run_research(params: Any, ctx: ToolContext) -> dict[str, Any]:
    from .search import SearchError, provider_name, search_web

    settings = ctx.settings
    max_sources = clamp(params.max_sources, 1, ctx.caps.get("max_sources", MAX_SOURCES))
    include = [d.lower().removeprefix("www.") for d in params.include_domains or []]
    exclude = [d.lower().removeprefix("www.") for d in params.exclude_domains or []]
    after = parse_day(params.published_after)
    receipt = Receipt()
    notes: list[str] = []
    fetcher = state.fetcher_for(settings)
    deadline = time.monotonic() + float(settings.get("research_deadline_seconds", 60))

    followed: list[dict[str, Any]] = []
    backend_name = provider_name(settings)
    executed_query: str | None = None
    if params.follow:
        hits = _followed_hits(params.follow, followed)
        backend_name = "follow"
        max_sources = clamp(max(max_sources, len(hits)), 1, ctx.caps.get("max_sources", MAX_SOURCES))
    else:
        executed_query = params.query
        state.count("searches")
        try:
            backend_name, found = await search_web(
                fetcher,
                settings,
                params.query,
                max_sources * SEARCH_DEPTH,
                deadline=deadline,
                counters=state.COUNTERS,
            )
        except SearchError as err:
            state.count("search_failures")
            raise ToolError(str(err)) from None
        hits = [(Chosen(h.url), h.published) for h in found]
    receipt.counts["hits"] = len(hits)

    chosen: list[Chosen] = []
    seen_domains: set[str] = set()
    filtered_sources: list[dict[str, Any]] = []
    for hit, published in hits:
        domain = domain_of(hit.url)
        receipt.hits_by_domain[domain] += 1
        reason = None
        if on_domains(domain, exclude):
            reason, counter = "excluded_domain", "hits_excluded"
        elif include and not on_domains(domain, include):
            reason, counter = "outside_domains", "hits_outside_domains"
        elif after is not None and (day := parse_day(published)) is not None and day < after:
            reason, counter = "published_before", "hits_before_date"
        elif not include and domain in seen_domains:
            reason, counter = None, "hits_same_domain"
        elif len(chosen) >= max_sources:
            reason, counter = None, "hits_unread"
        else:
            chosen.append(hit)
            seen_domains.add(domain)
            continue
        receipt.counts[counter] += 1
        _outcome(
            followed,
            hit,
            "filtered" if reason else "same_domain_limit" if counter == "hits_same_domain" else "failed",
        )
        if reason is not None:
            filtered_sources.append(_source(hit, None, filtered=reason))

    pages: list[Any] = [None] * len(chosen)

    async def read(index: int, hit: Chosen) -> None:
        from .page import read_page

        pages[index] = await read_page(
            fetcher, hit.url, format="markdown", include_hidden=False, deadline=deadline
        )

    async with anyio.create_task_group() as group:
        for index, hit in enumerate(chosen):
            group.start_soon(read, index, hit)

    sources: list[dict[str, Any]] = []
    usable: list[tuple[Chosen, Any]] = []
    hashes: set[str] = set()
    for hit, page in zip(chosen, pages, strict=True):
        if page is None:
            receipt.counts["failed"] += 1
            sources.append(_source(hit, None, timed_out=True))
            _outcome(followed, hit, "failed")
            continue
        state.count_page(page)
        if page.status != "ok":
            receipt.counts["failed"] += 1
            sources.append(_source(hit, page))
            _outcome(followed, hit, "failed")
            continue
        if not page.content.strip():
            receipt.counts["not_content"] += 1
            sources.append(_source(hit, page))
            _outcome(followed, hit, "not_content")
            continue
        published = parse_day(page.extracted.provenance.published)
        if after is not None and published is None:
            receipt.counts["unknown_dates"] += 1
        digest = provenance_of(page)["content_hash"]
        reason = (
            "published_before"
            if after is not None and published is not None and published < after
            else "duplicate"
            if digest in hashes
            else None
        )
        if reason is not None:
            receipt.counts["filtered"] += 1
            sources.append(_source(hit, page, filtered=reason))
            _outcome(followed, hit, "duplicate" if reason == "duplicate" else "filtered")
            continue
        hashes.add(digest)
        receipt.counts["usable"] += 1
        sources.append(_source(hit, page))
        usable.append((hit, page))
        _outcome(followed, hit, "read")
    sources += filtered_sources
    receipt.counts["threat_excerpts_omitted"] = sum(
        max(0, len(page.threats) - THREATS_PER_SOURCE) for page in pages if page is not None
    )
    for entry in followed:  # a followed link that was never read (the deadline passed)
        if entry["outcome"] == "pending":
            entry["outcome"] = "failed"

    passages, truncated, candidates = _passages(
        params.query, usable, budget(params.max_tokens, settings), receipt
    )
    if receipt.counts["failed"]:
        notes.append(f"{receipt.counts['failed']} of {len(chosen)} pages could not be read: see sources")
    if after is not None and receipt.counts["unknown_dates"]:
        notes.append(f"{receipt.counts['unknown_dates']} pages have no date and were kept")
    if not usable:
        notes.append("no page could be used: try other words, fewer filters or more sources")
    notes += [f"{hit.url}: {page.incomplete}" for hit, page in usable if page.incomplete]
    threat_total = sum(s["threat_total"] for s in sources)
    omitted_safety = (
        {
            "sources": sum(1 for s in sources if s["threat_total"]),
            "threat_total": threat_total,
            "notices": ["hidden text was stripped from the pages before ranking; see each source's threats"],
        }
        if threat_total
        else None
    )
    return {
        "query": params.query,
        "backend": backend_name,
        "passages": passages,
        "sources": sources,
        "candidates": candidates,
        "followed": followed,
        "truncated": truncated,
        "notes": notes,
        "omitted_safety": omitted_safety,
        "receipt": _receipt(params, receipt, executed_query, include, exclude),
    }


def _followed_hits(follow: list[Any], followed: list[dict[str, Any]]) -> list[tuple[Chosen, str | None]]:
    hits = []
    tokens: set[str] = set()
    for pick in follow:
        verdict, payload = state.SIGNER.verify(pick.token)
        if payload is None:
            followed.append({"url": None, "why": pick.why, "outcome": verdict})
            continue
        if pick.token in tokens:
            followed.append({"url": payload["url"], "why": pick.why, "outcome": "duplicate"})
            continue
        tokens.add(pick.token)
        via = {
            "parent_source_url": payload["parent_source_url"],
            "parent_passage_id": payload["parent_passage_id"],
            "label": payload["label"],
            "why": pick.why,
            "candidate": pick.token,
        }
        followed.append({"url": payload["url"], "why": pick.why, "outcome": "pending"})
        hits.append((Chosen(payload["url"], int(payload.get("depth", 1)), via, len(followed) - 1), None))
    return hits


def _outcome(followed: list[dict[str, Any]], hit: Chosen, outcome: str) -> None:
    """Settle the outcome of a followed candidate, once."""
    if hit.follow_index is not None and followed[hit.follow_index]["outcome"] == "pending":
        followed[hit.follow_index]["outcome"] = outcome


def _source(
    hit: Chosen, page: Any, *, filtered: str | None = None, timed_out: bool = False
) -> dict[str, Any]:
    threats = page.threats if page is not None else []
    status, error = "ok", None
    if timed_out:
        status, error = "timeout", "the research deadline passed before the page was read"
    elif page is not None and page.status != "ok":
        error = page.error or page.fetched.error or ""
        status = (
            "timeout" if page.status == "timeout" else "blocked" if error.startswith("refused") else "error"
        )
    shown = threats[:THREATS_PER_SOURCE]
    return {
        "url": hit.url,
        "title": page.extracted.title if page is not None and page.extracted else "",
        "status": status,
        "page_status": page.status if page is not None else None,
        "threats": threat_dicts(shown),
        "provenance": provenance_of(page) if page is not None and page.extracted else None,
        "error": error,
        "filtered": filtered,
        "depth": hit.depth,
        "discovered_via": hit.via,
        "threat_total": sum(t.seen for t in threats),
        "threat_counts": dict(Counter(t.type for t in threats)),
    }


def _passages(
    query: str, usable: list[tuple[Chosen, Any]], max_tokens: int, receipt: Receipt
) -> tuple[list[dict[str, Any]], bool, list[dict[str, Any]]]:
    from .candidates import canonical_link, links_in_markdown
    from .passages import split_passages
    from .rank import fit_budget, rank_passages

    owners: dict[str, tuple[Chosen, Any]] = {}
    everything = []
    for index, (hit, page) in enumerate(usable):
        for passage in split_passages(page.content, prefix=f"s{index + 1}"):
            owners[passage.id] = (hit, page)
            everything.append(passage)
    ranked = rank_passages(query, everything)
    kept, truncated, set_aside = fit_budget(ranked, max_tokens) if ranked else ([], False, 0)
    receipt.counts["set_aside"] = set_aside
    receipt.counts["passages_omitted"] = set_aside
    receipt.counts["clamped"] = int(any(clamped for _, _, clamped in kept))
    fence = "page-" + secrets.token_hex(4)
    passages, candidates, seen_links = [], [], set()
    for passage, score, clamped in kept:
        hit, page = owners[passage.id]
        passages.append(
            {
                "id": passage.id,
                "text": f"<{fence}>\n{passage.text}\n</{fence}>",
                "source_url": hit.url,  # as in sources: the URL searched or followed
                "heading": passage.heading,
                "score": score,
                "start": passage.start,
                "end": passage.end,
                "clamped": clamped,
                "fence": fence,
            }
        )
        for url, label, _, _ in links_in_markdown(passage.text, page.fetched.final_url):
            receipt.counts["links_examined"] += 1
            key = canonical_link(url)
            if key in seen_links:
                receipt.counts["link_variants_dropped"] += 1
                continue
            seen_links.add(key)
            if len(candidates) >= MAX_CANDIDATES:
                receipt.counts["links_over_limit"] += 1
                receipt.counts["candidates_omitted"] += 1
                continue
            payload = {
                "url": url,
                "label": label[:200],
                "parent_source_url": hit.url,
                "parent_passage_id": passage.id,
                "depth": hit.depth + 1,
            }
            try:
                token = state.SIGNER.sign(payload)
            except ValueError:  # a token over its size limit (a very long page URL): not offered
                receipt.counts["candidates_omitted"] += 1
                continue
            candidates.append(
                {
                    "token": token,
                    "url": url,
                    "domain": domain_of(url),
                    "kind": "link",
                    "label": label[:200],
                    "parent_source_url": hit.url,
                    "parent_passage_id": passage.id,
                    "depth": hit.depth + 1,
                    "relation": "same_domain"
                    if domain_of(url) == domain_of(page.fetched.final_url)
                    else "cited",
                    "flags": [],
                }
            )
    return passages, truncated, candidates


def _receipt(
    params: Any, receipt: Receipt, executed_query: str | None, include: list[str], exclude: list[str]
) -> dict[str, Any]:
    c = receipt.counts
    return {
        "executed_query": executed_query,
        "aim": params.aim,
        "include_domains": include,
        "exclude_domains": exclude,
        "published_after": after.isoformat() if (after := parse_day(params.published_after)) else None,
        "hits": c["hits"],
        "hits_by_domain": dict(sorted(receipt.hits_by_domain.items())),
        "hits_excluded": c["hits_excluded"],
        "hits_outside_domains": c["hits_outside_domains"],
        "hits_before_date": c["hits_before_date"],
        "hits_same_domain": c["hits_same_domain"],
        "hits_unread": c["hits_unread"],
        "failed": c["failed"],
        "not_content": c["not_content"],
        "filtered": c["filtered"],
        "usable": c["usable"],
        "outside_domains": c["hits_outside_domains"],
        "unknown_dates": c["unknown_dates"] if params.published_after is not None else None,
        "omitted": c["hits_unread"] + c["hits_same_domain"],
        "set_aside": c["set_aside"],
        "clamped": bool(c["clamped"]),
        "candidates_omitted": c["candidates_omitted"],
        "links_examined": c["links_examined"],
        "links_over_limit": c["links_over_limit"],
        "links_straddled": 0,
        "link_variants_dropped": c["link_variants_dropped"],
        "include_domains_count": len(include),
        "exclude_domains_count": len(exclude),
        "passages_omitted": c["passages_omitted"],
        "threat_excerpts_omitted": c["threat_excerpts_omitted"],
        "sources_omitted": 0,
        "metadata_compacted": [],
    }

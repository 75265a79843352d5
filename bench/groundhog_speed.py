"""groundhog's speed on a local web server: `read_url` and `research` over MCP (the real `lynxc
serve groundhog` over stdio, called with an MCP client), and where the time goes, stage by stage,
timed in this process with the functions the server runs. Offline: nothing leaves 127.0.0.1.

The web: tests/runtime/backends/groundhog/webserver.py's WebServer, run in a child process (so
its Python threads never share a GIL with the timed client), serving the 181 real article pages
of bench/data/article-extraction-benchmark/ at /articles/<page id>.html, gzipped on the wire as
stored (Content-Encoding: gzip, text/html; charset=utf-8), and a SearXNG JSON route that answers
any query with 10 of those pages, drawn by a hash of the query (other queries, other pages). Its
connections get TCP_NODELAY, as production servers set it (see web_server).
Server settings: searxng_url the local route, allowed_networks ["127.0.0.1/32"],
per_domain_interval_seconds 0; the rest at their defaults (max_tokens 20000).

Measured, after warm-up calls on other pages (the server's first calls import trafilatura and
lxml):
- MCP: p50/p95/mean of `call_tool` for `read_url` (markdown, no query) on --reads different
  pages, `read_url` with a query (words of the page's URL slug) on the same pages, and `research`
  (max_sources 10, include_domains ["127.0.0.1"] so all 10 come from the one local host) for
  --researches queries; the mean size of the answers' JSON; the serving process's peak RSS.
- Stages, per page, on the same pages, right after each MCP call (so load on the machine hits
  both alike), as page.py's _parse and read_url run them: fetch (`Fetcher.fetch` with the
  server's policy, from `state.fetcher_for`), strip (`extract.decode_body` +
  `hidden.strip_hidden`), extract (`extract.extract_page`, markdown), payloads (invisible
  characters of title and author, `payloads.find_payloads`) and split+rank
  (`passages.split_passages` + `rank.rank_passages` + `rank.fit_budget`, only with a query).
  MCP overhead (JSON-RPC over stdio, argument and output validation, the worker thread,
  provenance hashing, the answer's serialisation): the MCP p50 minus the sum of the stages'
  p50s, and, robust to the stages' long tails, the median over the pages of the MCP call minus
  that page's own stages.
- Stages per `research` call, the same queries: the SearXNG search (`search.search_web`), the
  10 fetches run at once (wall time, as the server runs them), the parse steps above for the 10
  pages one after another (the server runs them in worker threads, which share one GIL), and
  split+rank+fit over all their passages together.

    python bench/groundhog_speed.py [--reads 60] [--researches 15] [--warmup 3] [--smoke]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import multiprocessing
import random
import re
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from records_common import (  # bench/ is the script's folder, first on sys.path
    ROOT,
    Project,
    mib,
    percentiles,
    serve,
    server_peak_rss,
)
from smoke import parse_args_with_smoke

SERVER = "groundhog"
DATA = Path(__file__).resolve().parent / "data" / "article-extraction-benchmark"
SEARCH_RESULTS = 10  # pages the SearXNG route answers per query
MAX_SOURCES = 10
RESEARCH = f"research ({MAX_SOURCES} sources)"  # the name of its MCP timings
_SLUG_WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass(frozen=True)
class Article:
    page_id: str
    path: str  # on the local web server
    query: str  # words of the original URL's slug (or of the article's first sentence)


def articles() -> list[Article]:
    """The benchmark's pages in file name order (the ids are hashes: an arbitrary mix of sites)."""
    truth = json.loads((DATA / "ground-truth.json").read_text(encoding="utf-8"))
    found = []
    for file in sorted((DATA / "html").glob("*.html.gz")):
        page_id = file.name.removesuffix(".html.gz")
        found.append(Article(page_id, f"/articles/{page_id}.html", query_for(truth[page_id])))
    return found


def query_for(truth: dict[str, str]) -> str:
    """A query a reader of the page might type: the words of the URL's longest path segment (news
    URLs carry the headline), else the first words of the article."""
    segments = truth["url"].split("?")[0].split("/")[3:]
    words = _SLUG_WORD.findall(max(segments, key=len, default="").replace("-", " "))
    if len(words) < 3:
        words = _SLUG_WORD.findall(truth["articleBody"])
    return " ".join(words[:8]).lower()


def search_results(query: str, pages: int) -> list[int]:
    """Indexes (of `pages`) of the SEARCH_RESULTS pages the SearXNG route answers for `query`."""
    seed = int.from_bytes(hashlib.sha256(query.encode()).digest()[:8], "big")
    return random.Random(seed).sample(range(pages), SEARCH_RESULTS)


# --- the web server, in a child process ----------------------------------------------------------


def web_server(conn: Any) -> None:
    """Serve the pages and the SearXNG route; send the port, then run until told to stop."""
    sys.path.insert(0, str(ROOT))  # `tests` is a package of the checkout, not of the install
    from tests.runtime.backends.groundhog.webserver import Response, WebServer, searx_result

    pages = articles()
    web = WebServer()  # with TCP_NODELAY, as production servers set it
    for page in pages:
        body = (DATA / "html" / f"{page.page_id}.html.gz").read_bytes()
        headers = [("Content-Type", "text/html; charset=utf-8"), ("Content-Encoding", "gzip")]
        web.route(page.path, lambda _, body=body, headers=headers: Response(200, headers, body))
    web.searxng(
        lambda query: [
            searx_result(web.url(pages[i].path), pages[i].query, f"about {query}")
            for i in search_results(query, len(pages))
        ]
    )
    conn.send(web.port)
    with contextlib.suppress(EOFError):  # EOF: the parent is gone
        conn.recv()
    web.close()


# --- timing --------------------------------------------------------------------------------------


@dataclass
class Timings:
    """Seconds per call or per page, by name, in measuring order."""

    times: dict[str, list[float]] = field(default_factory=dict)
    sizes: dict[str, list[int]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def add(self, name: str, seconds: float) -> None:
        self.times.setdefault(name, []).append(seconds)


async def timed(run: Callable[[], Awaitable[Any]]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = await run()
    return result, time.perf_counter() - start


def clocked(run: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = run()
    return result, time.perf_counter() - start


async def mcp_call(client: Any, timings: Timings | None, name: str, tool: str, args: dict[str, Any]) -> Any:
    """One timed call_tool; `timings` None for a warm-up call. An error stops the benchmark."""
    result, seconds = await timed(lambda: client.call_tool(tool, args))
    if result.is_error:
        raise SystemExit(f"{tool}({json.dumps(args)[:300]}) failed: {result.content[0].text}")
    answer = result.structured_content
    if timings is not None:
        timings.add(name, seconds)
        timings.sizes.setdefault(name, []).append(len(json.dumps(answer)))
        if tool == "read_url" and answer["status"] != "ok":
            timings.problems.append(f"{name} {args['url']}: {answer['status']}")
        if tool == "research" and answer["receipt"]["usable"] != MAX_SOURCES:
            timings.problems.append(f"{name} {args['query']!r}: {answer['receipt']['usable']} usable")
    return answer


def parse_stages(fetched: Any) -> tuple[str, dict[str, float]]:
    """page.py's _parse for an HTML page, its steps timed apart: the content and the seconds of
    strip (decode_body + strip_hidden), extract (extract_page) and payloads (invisible
    characters of the title and author, find_payloads)."""
    from lynxc.runtime.backends.groundhog.extract import decode_body, extract_page
    from lynxc.runtime.backends.groundhog.hidden import strip_hidden, strip_invisible_characters
    from lynxc.runtime.backends.groundhog.payloads import find_payloads

    kind = fetched.content_type or "text/html"
    html, strip = clocked(lambda: decode_body(fetched.body, media_type=kind, charset=fetched.charset))
    (stripped, _), seconds = clocked(lambda: strip_hidden(html))
    extracted, extract = clocked(
        lambda: extract_page(
            stripped, url=fetched.final_url, media_type=kind, format="markdown", charset=fetched.charset
        )
    )
    _, payloads = clocked(
        lambda: (
            strip_invisible_characters(extracted.title),
            strip_invisible_characters(extracted.provenance.author or ""),
            find_payloads(extracted.markdown, html),
        )
    )
    return extracted.markdown, {"strip": strip + seconds, "extract": extract, "payloads": payloads}


def split_rank_fit(query: str, contents: list[str], max_tokens: int = 20000) -> Any:
    """read_url's (one page) and research's (all pages together) passages for a query."""
    from lynxc.runtime.backends.groundhog.passages import split_passages
    from lynxc.runtime.backends.groundhog.rank import fit_budget, rank_passages

    passages = [p for i, text in enumerate(contents) for p in split_passages(text, prefix=f"s{i + 1}")]
    ranked = [(p, s) for p, s in rank_passages(query, passages) if s > 0]
    return fit_budget(ranked, max_tokens) if ranked else None


async def page_stages(fetcher: Any, url: str, query: str, timings: Timings | None) -> None:
    """The stages of read_url for one page, each timed on its own."""
    fetched, fetch = await timed(lambda: fetcher.fetch(url))
    if fetched.status != "ok":
        raise SystemExit(f"fetch {url}: {fetched.status} {fetched.error}")
    content, parse = parse_stages(fetched)
    _, rank = clocked(lambda: split_rank_fit(query, [content]))
    if timings is not None:
        for name, seconds in {"fetch": fetch, **parse, "split+rank": rank}.items():
            timings.add(name, seconds)
        timings.sizes.setdefault("page", []).append(len(fetched.body))


async def research_stages(
    fetcher: Any, settings: dict[str, Any], query: str, timings: Timings | None
) -> None:
    """The stages of one research call (research.py), each timed on its own."""
    from lynxc.runtime.backends.groundhog.research import SEARCH_DEPTH
    from lynxc.runtime.backends.groundhog.search import search_web

    (_, hits), search = await timed(lambda: search_web(fetcher, settings, query, MAX_SOURCES * SEARCH_DEPTH))
    urls = [hit.url for hit in hits[:MAX_SOURCES]]
    fetched: list[Any] = [None] * len(urls)

    async def fetch_all() -> None:
        async def one(index: int, url: str) -> None:
            fetched[index] = await fetcher.fetch(url)

        async with anyio.create_task_group() as group:
            for index, url in enumerate(urls):
                group.start_soon(one, index, url)

    _, fetch = await timed(fetch_all)
    parse: dict[str, float] = {}
    contents = []
    for page in fetched:
        if page.status != "ok":
            raise SystemExit(f"fetch {page.url}: {page.status} {page.error}")
        content, seconds = parse_stages(page)
        contents.append(content)
        for name, spent in seconds.items():
            parse[name] = parse.get(name, 0.0) + spent
    _, rank = clocked(lambda: split_rank_fit(query, contents))
    if timings is not None:
        timings.add("search", search)
        timings.add(f"fetch {len(urls)} (at once)", fetch)
        for name, seconds in parse.items():
            timings.add(f"{name} {len(urls)}", seconds)
        timings.add("split+rank all", rank)


async def measure(
    port: int, pages: list[Article], reads: int, researches: int, warmup: int
) -> tuple[Timings, Timings, Timings, int]:
    """(MCP timings, per-page stage timings, per-research stage timings, server peak RSS)."""
    from lynxc.runtime.backends.groundhog import state

    base = f"http://127.0.0.1:{port}"
    settings = {
        "searxng_url": base + "/",
        "allowed_networks": ["127.0.0.1/32"],
        "per_domain_interval_seconds": 0,
    }
    project = Project(ROOT, SERVER, settings)
    fetcher = state.fetcher_for(settings)  # the policy the server builds from the same settings
    mcp, stages, research = Timings(), Timings(), Timings()
    measured = pages[:reads]
    warm = pages[-warmup:] if warmup else []
    # research queries: those of pages not read above, so the server sees new words
    queries = [page.query for page in pages[reads : reads + warmup + researches]]
    try:
        async with serve(project) as client:
            for i, page in enumerate(warm + measured):
                into = mcp if i >= len(warm) else None
                url = base + page.path
                await mcp_call(client, into, "read_url", "read_url", {"url": url})
                await mcp_call(
                    client, into, "read_url + query", "read_url", {"url": url, "query": page.query}
                )
                await page_stages(fetcher, url, page.query, stages if into is not None else None)
            for i, query in enumerate(queries):
                into = mcp if i >= warmup else None
                args = {"query": query, "max_sources": MAX_SOURCES, "include_domains": ["127.0.0.1"]}
                await mcp_call(client, into, RESEARCH, "research", args)
                await research_stages(fetcher, settings, query, research if into is not None else None)
            peak = server_peak_rss(project)
    finally:
        await fetcher.aclose()
    return mcp, stages, research, peak


# --- report --------------------------------------------------------------------------------------


def row(name: str, times: list[float], width: int = 26) -> str:
    p50, p95 = percentiles(times)
    return f"  {name:<{width}} {statistics.fmean(times) * 1000:8.1f} {p50 * 1000:8.1f} {p95 * 1000:8.1f}"


def stage_table(title: str, timings: Timings) -> None:
    """The stages: mean, p50, p95 and share of the summed means."""
    total = sum(statistics.fmean(t) for t in timings.times.values())
    print(f"\n{title}")
    print(f"  {'stage':<26} {'mean ms':>8} {'p50 ms':>8} {'p95 ms':>8} {'share':>6}")
    for name, times in timings.times.items():
        print(f"{row(name, times)} {statistics.fmean(times) / total:6.0%}")
    p50s = sum(percentiles(t)[0] for t in timings.times.values())
    print(f"  {'sum':<26} {total * 1000:8.1f} {p50s * 1000:8.1f}")


def overhead(name: str, call: list[float], stages: Timings, skip: tuple[str, ...] = ()) -> None:
    """The MCP call's p50 minus the sum of the stages' p50s, and the median over the calls of the
    call minus its own stages (the same page or query, timed one after the other): p50s do not
    add up when stages have long tails (strip, extract), paired differences do."""
    kept = [times for stage, times in stages.times.items() if stage not in skip]
    p50, stage_p50s = percentiles(call)[0], sum(percentiles(t)[0] for t in kept)
    paired = statistics.median(c - sum(t[i] for t in kept) for i, c in enumerate(call))
    print(
        f"  {name:<26} {p50 * 1000:7.1f} - {stage_p50s * 1000:7.1f} = {(p50 - stage_p50s) * 1000:6.1f} "
        f"({(p50 - stage_p50s) / p50:3.0%})   {paired * 1000:6.1f} ({paired / p50:3.0%} of the p50)"
    )


def report(mcp: Timings, stages: Timings, research: Timings, peak: int, pages: int) -> None:
    print(f"\nMCP call_tool through `lynxc serve {SERVER}` (stdio):")
    print(f"  {'call':<26} {'mean ms':>8} {'p50 ms':>8} {'p95 ms':>8} {'calls':>6} {'answer KiB':>10}")
    for name, times in mcp.times.items():
        size = statistics.fmean(mcp.sizes[name]) / 1024
        print(f"{row(name, times)} {len(times):6d} {size:10.1f}")
    page_kib = statistics.fmean(stages.sizes["page"]) / 1024
    stage_table(
        f"Stages per page in this process, the same {pages} pages "
        f"(mean HTML {page_kib:.0f} KiB decoded; split+rank only for a query):",
        stages,
    )
    stage_table("Stages per research call in this process, the same queries:", research)
    print("\nMCP overhead (ms): MCP p50 - sum of the stages' p50s | median of (call - its stages)")
    overhead("read_url", mcp.times["read_url"], stages, skip=("split+rank",))
    overhead("read_url + query", mcp.times["read_url + query"], stages)
    overhead(RESEARCH, mcp.times[RESEARCH], research)
    print(f"\npeak RSS of the serving process: {mib(peak)}")
    for problem in mcp.problems:
        print(f"  NOTE: {problem}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=60, help="pages read with read_url (timed)")
    parser.add_argument("--researches", type=int, default=15, help="research calls (timed)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls of each kind first")
    args = parse_args_with_smoke(parser, reads=2, researches=1, warmup=1)
    pages = articles()
    if args.reads + args.warmup * 2 + args.researches > len(pages):
        raise SystemExit(f"--reads + 2 * --warmup + --researches must be at most {len(pages)}")
    parent, child = multiprocessing.get_context("spawn").Pipe()
    web = multiprocessing.get_context("spawn").Process(target=web_server, args=(child,), daemon=True)
    web.start()
    try:
        if not parent.poll(60):
            raise SystemExit("the local web server did not start within 60 s")
        port = parent.recv()
        print("(lines from the server's stderr, such as trafilatura's warnings, pass through)", flush=True)
        start = time.perf_counter()
        mcp, stages, research, peak = anyio.run(
            measure, port, pages, args.reads, args.researches, args.warmup
        )
        print(
            f"{len(pages)} article pages from {DATA.relative_to(ROOT)} on a local web server "
            f"(127.0.0.1:{port}, gzip), {args.warmup} warm-up calls of each kind, "
            f"{time.perf_counter() - start:.0f} s in all"
        )
        report(mcp, stages, research, peak, args.reads)
    finally:
        parent.send("stop")
        web.join(10)


if __name__ == "__main__":
    main()

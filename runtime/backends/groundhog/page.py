"""One page, read: fetched under the network policy with its own linked stylesheets
(stylesheets.py), hidden content found and stripped, the content extracted, invisible characters
found and stripped (from the title and author too), visible attacks reported. Shared by
`read_url` and `research`.

Parsing runs in a worker thread (a large page never stalls the others), at most PARSERS at a
time, and a parser that fails on a page makes that page unreadable, never the call."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import anyio
import anyio.to_thread

from .extract import HTML_TYPES, Extracted, decode_body, extract_page
from .hidden import DETECTION_DEGRADED, Threat, strip_hidden, strip_invisible_characters
from .network import Fetched, Fetcher
from .payloads import find_payloads
from .stylesheets import Link, LinkedSheets, fetch_stylesheets, stylesheet_links

PARSERS = 2  # the machines this runs on have a few cores; more threads only share them
_parsers: anyio.CapacityLimiter | None = None


@dataclass
class Page:
    fetched: Fetched
    extracted: Extracted | None = None  # None unless the page was read
    content: str = ""  # the Markdown (or text) after stripping
    threats: list[Threat] = field(default_factory=list)
    error: str | None = None  # fetched, but no parser could read it

    @property
    def incomplete(self) -> str | None:
        """Why the content stops short of the page (a PDF read in part), or None."""
        return self.extracted.incomplete_reason if self.extracted and self.extracted.incomplete else None

    @property
    def status(self) -> str:
        return "unknown" if self.error else self.fetched.status


async def read_page(
    fetcher: Fetcher, url: str, *, format: str, include_hidden: bool, deadline: float | None = None
) -> Page:
    global _parsers
    fetched = await fetcher.fetch(url, deadline=deadline)
    page = Page(fetched)
    if fetched.status != "ok":
        return page
    if _parsers is None:
        _parsers = anyio.CapacityLimiter(PARSERS)
    try:
        sheets = LinkedSheets()
        if fetched.content_type in HTML_TYPES:
            links = await anyio.to_thread.run_sync(
                _stylesheet_links, fetched, limiter=_parsers, abandon_on_cancel=True
            )
            left = fetcher.policy.max_bytes - len(fetched.body)  # the page's byte budget, shared
            sheets = await fetch_stylesheets(fetcher, links, bytes_left=left, deadline=deadline)
        return await anyio.to_thread.run_sync(
            _parse, page, format, include_hidden, sheets, limiter=_parsers, abandon_on_cancel=True
        )
    except Exception as err:  # a parser's bug on a hostile page: that page is unreadable
        page.error = f"could not be read: {type(err).__name__}: {str(err)[:200]}"
        return page


def _stylesheet_links(fetched: Fetched) -> list[Link]:
    html = decode_body(fetched.body, media_type=fetched.content_type or "text/html", charset=fetched.charset)
    return stylesheet_links(html, fetched.final_url)


def _parse(page: Page, format: str, include_hidden: bool, sheets: LinkedSheets) -> Page:
    fetched = page.fetched
    body: bytes | str = fetched.body
    threats: list[Threat] = []
    html = None
    if fetched.content_type in HTML_TYPES:
        html = decode_body(fetched.body, media_type=fetched.content_type, charset=fetched.charset)
        body, threats = strip_hidden(html, include_hidden=include_hidden, stylesheets=sheets.css)
        if sheets.problems:  # what those sheets hide cannot be found
            more = f" (and {len(sheets.problems) - 1} more)" if len(sheets.problems) > 1 else ""
            reason = f"a linked stylesheet of the page's site was not read: {sheets.problems[0][:300]}{more}"
            threats.append(Threat(DETECTION_DEGRADED, reason, None, ""))
    extracted = extract_page(
        body,
        url=fetched.final_url,
        media_type=fetched.content_type or "text/html",
        format=format,
        charset=fetched.charset,
    )
    content = extracted.markdown if format == "markdown" else extracted.text
    if fetched.content_type not in HTML_TYPES:  # strip_hidden has done this for HTML
        content, found = strip_invisible_characters(content, include_hidden=include_hidden)
        threats += found
    title, in_title = strip_invisible_characters(extracted.title)
    author, in_author = strip_invisible_characters(extracted.provenance.author or "")
    extracted = dataclasses.replace(
        extracted,
        title=title,
        provenance=dataclasses.replace(extracted.provenance, author=author or None),
    )
    threats += in_title + in_author + find_payloads(content, html)
    page.extracted, page.content, page.threats = extracted, content, threats
    return page

"""One page, read: fetched under the network policy, hidden content found and stripped, the
content extracted, invisible characters found and stripped. Shared by `read_url` and
`research`; the parsing runs in a worker thread so one large page never stalls the others."""

from __future__ import annotations

from dataclasses import dataclass, field

import anyio.to_thread

from .extract import Extracted, extract_page
from .hidden import Threat, strip_hidden, strip_invisible_characters
from .network import Fetched, Fetcher
from .payloads import find_payloads

HTML_TYPES = ("text/html", "application/xhtml+xml")


@dataclass
class Page:
    fetched: Fetched
    extracted: Extracted | None = None  # None unless the page was read (status ok)
    content: str = ""  # the Markdown (or text) after stripping
    threats: list[Threat] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.fetched.status


async def read_page(
    fetcher: Fetcher, url: str, *, format: str, include_hidden: bool, deadline: float | None = None
) -> Page:
    fetched = await fetcher.fetch(url, deadline=deadline)
    page = Page(fetched)
    if fetched.status != "ok":
        return page
    return await anyio.to_thread.run_sync(_parse, page, format, include_hidden)


def _parse(page: Page, format: str, include_hidden: bool) -> Page:
    fetched = page.fetched
    body: bytes | str = fetched.body
    threats: list[Threat] = []
    html = None
    if fetched.content_type in HTML_TYPES:
        html = fetched.body.decode(fetched.charset or "utf-8", errors="replace")
        body, threats = strip_hidden(html, include_hidden=include_hidden)
    extracted = extract_page(
        body, url=fetched.final_url, media_type=fetched.content_type or "text/html", format=format
    )
    content = extracted.markdown if format == "markdown" else extracted.text
    if fetched.content_type not in HTML_TYPES:  # strip_hidden has done this for HTML
        content, threats = strip_invisible_characters(content, include_hidden=include_hidden)
    threats += find_payloads(content, html)
    page.extracted, page.content, page.threats = extracted, content, threats
    return page

"""A page's own linked stylesheets, fetched so that what they hide is found (hidden.py reads them).

Which: each `<link rel="stylesheet" href>` a browser applies at load
(hidden_css.is_stylesheet_link), in the page's order, at most MAX_STYLESHEETS, for a screen (not
`media="print"`), whose URL is on the page's own site: the same registrable domain (the public
suffix list's eTLD+1, from the `tld` package, so static.example.co.uk is example.co.uk's and
user.github.io is not github.io's), or the same host when it has none (an address, `localhost`).
Same site rather than same origin because sites serve their CSS from their own subdomains
(static., cdn., assets.), and a sheet there is the site's word as much as one beside the page; not
cross-site, because a shared CDN's sheet is rarely where a page hides text, and each fetch of it
tells a third party what the reader reads.

How: through the page's Fetcher, so every URL and address check holds (allowed_networks, redirects
checked hop by hop); at once, PARALLEL at a time, together within what is left of the page's byte
budget (the policy's max_bytes less the page's body: each sheet an equal share, one over it fetched
again with what the others left) and before the page's deadline; not paced (a browser fetches them
with the page), which MAX_STYLESHEETS bounds. Only text/css is read. A sheet never fails the page.
An answer a browser applies nothing from (an HTTP error, another media type than text/css, an empty
body) is a sheet known to hide nothing: read as empty. One a browser may still get (the fetch timed
out, ran over the budget, was refused by this server's address rules or failed on the network) is
left unread, as a cross-site one is: hidden.py then assumes an unread sheet may set any colour, and
`problems` says what went wrong, for a detection_degraded notice.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from .extract import decode_body
from .hidden import parse_html
from .hidden_css import is_stylesheet_link
from .media import media_screens
from .network import Fetched, Fetcher, Wanted

MAX_STYLESHEETS = 8  # a page's own sheets read at most; real pages link a handful
PARALLEL = 4  # sheets fetched at once: a browser opens about six connections to a host
CSS = "text/css"
# Page statuses of answers a browser takes no style from (errors, challenges, odd statuses): the
# sheet applies nothing. `blocked` is one too when the site said no (401, 403), not this server.
APPLIES_NOTHING = frozenset(
    {"not_found", "server_error", "challenge", "unsupported_content", "empty", "unknown"}
)


@dataclass(frozen=True)
class Link:
    href: str  # as written in the page: how hidden_css finds the sheet's place
    url: str  # absolute


@dataclass
class LinkedSheets:
    css: dict[str, str] = field(default_factory=dict)  # href as written -> the sheet's CSS
    problems: list[str] = field(default_factory=list)  # one line per same-site sheet not read


def stylesheet_links(html: str, page_url: str) -> list[Link]:
    """The page's own linked stylesheets (see the module docstring), in order, at most
    MAX_STYLESHEETS. A `<base href>` moves the URLs as in a browser."""
    if "stylesheet" not in html.lower():
        return []  # nothing to find: no second parse
    doc, _ = parse_html(html)
    if doc is None:
        return []
    base = page_url
    for element in doc.iter("base"):
        if element.get("href"):
            base = urljoin(page_url, element.get("href").strip())
            break
    links: list[Link] = []
    for element in doc.iter("link"):
        if not is_stylesheet_link(element) or not media_screens(element.get("media") or ""):
            continue  # print-only sheets never apply: not worth a request
        href = element.get("href").strip()
        url = urljoin(base, href)
        if urlsplit(url).scheme in ("http", "https") and same_site(url, page_url):
            links.append(Link(href, url))
            if len(links) == MAX_STYLESHEETS:
                break
    return links


def same_site(url: str, page_url: str) -> bool:
    """Whether `url` is on `page_url`'s site: the same registrable domain, or the same host for
    a host that has none (an IP address, a single-label name)."""
    host, page_host = (urlsplit(u).hostname or "" for u in (url, page_url))
    if not host or not page_host:
        return False
    site = _registrable_domain(page_host)
    return host == page_host if site is None else _registrable_domain(host) == site


def _registrable_domain(host: str) -> str | None:
    from tld import get_fld

    host = host.rstrip(".").lower()
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    try:
        return get_fld(host, fix_protocol=True, fail_silently=True)
    except Exception:  # tld's own errors for a name it cannot split: no registrable domain
        return None


def _site_refused(status: str, error: str | None) -> bool:
    """The site refused the sheet (401, 403, 407, 451), as it would a browser; not this server's
    address rules, whose refusals start "refused:"."""
    return status == "blocked" and not (error or "").startswith("refused")


async def fetch_stylesheets(
    fetcher: Fetcher, links: list[Link], *, bytes_left: int, deadline: float | None
) -> LinkedSheets:
    """The linked sheets' CSS, within `bytes_left` in all and before `deadline`: fetched at once
    (at most PARALLEL at a time), each within an equal share of the bytes, so that together they
    stay within them; a sheet over its share is fetched again, alone, with what the others left."""
    import anyio

    links = list({link.href: link for link in reversed(links)}.values())[::-1]  # first of each href
    found = LinkedSheets()
    if not links:
        return found
    if bytes_left < len(links):
        found.problems = [f"{link.url}: not read, the page's byte budget is spent" for link in links]
        return found
    share = bytes_left // len(links)
    fetched: dict[int, Fetched] = {}
    limiter = anyio.CapacityLimiter(PARALLEL)

    async def fetch(number: int) -> None:
        async with limiter:
            fetched[number] = await _fetch_css(fetcher, links[number].url, share, deadline)

    async with anyio.create_task_group() as group:
        for number in range(len(links)):
            group.start_soon(fetch, number)
    left = bytes_left - sum(len(sheet.body) for sheet in fetched.values())
    for number, link in enumerate(links):
        sheet = fetched[number]
        if sheet.status == "too_large" and left > share:
            sheet = await _fetch_css(fetcher, link.url, left, deadline)
            left -= len(sheet.body)
        if sheet.status == "ok" and sheet.content_type == CSS:
            found.css[link.href] = decode_body(sheet.body, media_type=CSS, charset=sheet.charset)
        elif (
            sheet.status in APPLIES_NOTHING
            or sheet.status == "ok"
            or _site_refused(sheet.status, sheet.error)
        ):
            found.css[link.href] = ""  # what a browser makes of it: no rules
        else:
            found.problems.append(f"{link.url}: {sheet.status}: {sheet.error}")
    return found


async def _fetch_css(fetcher: Fetcher, url: str, max_bytes: int, deadline: float | None) -> Fetched:
    wanted = Wanted(media_types=frozenset({CSS}), accept=f"{CSS},*/*;q=0.1", max_bytes=max_bytes, paced=False)
    return await fetcher.fetch(url, deadline=deadline, wanted=wanted)

"""A fetched body as content an agent reads: Markdown (or text), a title and provenance.

- HTML (text/html, application/xhtml+xml), format "markdown": the main article, found by
  trafilatura with its default settings (the same precision/recall trade-off as
  `trafilatura.extract`) and rendered as Markdown: headings (#), lists, tables, code fences,
  emphasis, and links as [text](absolute url) so a reader (and `research`'s candidates) can follow
  them. When trafilatura finds no article (a page of a few words), the page's rendered text
  stands in, so a short page is read rather than reported empty.
- HTML, format "text": the page's rendered text, all of it and not only the article: every text
  node outside <head>, <script>, <style>, <noscript>, <template>, <svg>, <select> and comments;
  whitespace collapsed as a browser does, except inside <pre>; a blank line between blocks
  (p, div, h1-h6, ...) but one line per list item or table row, a line break at <br>, table
  cells side by side. Hidden content is removed before this (hidden.py), not here.
- text/plain and text/markdown: the text as is (line ends made "\\n"); the title is the first
  heading (Markdown) or the first line.
- application/pdf: each page's text under a "## Page N" heading (pypdf), so a passage says which
  page it is from; title, author, dates and language from the PDF's document information.

`markdown` is the content in the asked format; `text` is the same content without Markdown
syntax (passages.markdown_to_text). For format "text" the two are equal, whatever the media type
(a Markdown file or a PDF read as "text" loses its Markdown syntax). Provenance describes
what was returned: `content_hash` is the SHA-256 of `markdown` (UTF-8), `word_count` counts the
whitespace-separated words of `text`.

Bounded: at most MAX_INPUT_BYTES of a body are read (the fetcher caps bodies at 5 MB already);
lxml's parser stops nesting at 255 levels and nothing here recurses over the tree; a page of more
than MAX_ELEMENTS elements skips trafilatura (its rendered text, the metadata it declares), so a
hostile page costs a few seconds at most, never minutes (about 5 s just under the limit). The
work is CPU-bound: callers run it in a worker thread. trafilatura, lxml and pypdf are imported
inside the functions that use them.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass, replace
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

from .passages import markdown_to_text

MAX_INPUT_BYTES = 5_000_000
MAX_ELEMENTS = 100_000  # a long article has a few thousand elements, a large manual tens of thousands
MAX_PDF_PAGES = 500  # a 10,000-page PDF is a book: its first 500 pages are plenty to rank
MAX_TITLE_CHARS = 300
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown"})
PDF_TYPES = frozenset({"application/pdf"})
FORMATS = ("markdown", "text")


@dataclass(frozen=True)
class Provenance:
    content_hash: str  # sha256 hex of the returned content (Extracted.markdown, UTF-8)
    word_count: int
    author: str | None
    published: str | None  # YYYY-MM-DD
    modified: str | None  # YYYY-MM-DD
    canonical: str | None  # absolute URL the page names as its own (link rel=canonical, og:url)
    language: str | None  # as the page declares it (BCP 47, e.g. "en-GB")


@dataclass(frozen=True)
class Extracted:
    title: str
    markdown: str  # the content in the asked format (Markdown, or the rendered text)
    text: str  # the same without Markdown syntax
    provenance: Provenance


def extract_page(body: bytes | str, *, url: str, media_type: str, format: str = "markdown") -> Extracted:
    """The content of a fetched body. Raises ValueError for a format or media type not read here;
    a body with nothing readable gives an Extracted with empty content, never an exception."""
    if format not in FORMATS:
        raise ValueError(f"format: {format!r} is not one of {', '.join(FORMATS)}")
    media_type = media_type.split(";")[0].strip().lower()
    if media_type in HTML_TYPES:
        return _from_html(_capped(body), url, format)
    if media_type in TEXT_TYPES:
        result = _from_text(_decoded(_capped(body)), markdown=media_type != "text/plain")
    elif media_type in PDF_TYPES:
        if isinstance(body, str):
            raise ValueError("a PDF body must be bytes")
        result = _from_pdf(body[:MAX_INPUT_BYTES])
    else:
        raise ValueError(f"media type {media_type!r} is not read (HTML, plain text, Markdown or PDF)")
    if format == "text" and result.markdown != result.text:
        # the text is what is returned: the hash and the content must agree
        hashed = hashlib.sha256(result.text.encode("utf-8", errors="surrogatepass")).hexdigest()
        result = replace(
            result, markdown=result.text, provenance=replace(result.provenance, content_hash=hashed)
        )
    return result


def _capped(body: bytes | str) -> bytes | str:
    return body[:MAX_INPUT_BYTES]


def _decoded(body: bytes | str) -> str:
    if isinstance(body, str):
        return body
    return body.decode("utf-8-sig", errors="replace")


def _result(title: str, markdown: str, text: str, **metadata: Any) -> Extracted:
    provenance = Provenance(
        content_hash=hashlib.sha256(markdown.encode("utf-8", errors="surrogatepass")).hexdigest(),
        word_count=len(text.split()),
        author=metadata.get("author") or None,
        published=metadata.get("published") or None,
        modified=metadata.get("modified") or None,
        canonical=metadata.get("canonical") or None,
        language=metadata.get("language") or None,
    )
    return Extracted(title=_clip(title), markdown=markdown, text=text, provenance=provenance)


def _clip(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= MAX_TITLE_CHARS else title[: MAX_TITLE_CHARS - 1].rstrip() + "…"


# --- HTML -----------------------------------------------------------------------------------


def _from_html(body: bytes | str, url: str, format: str) -> Extracted:
    import trafilatura
    from trafilatura.metadata import extract_metadata
    from trafilatura.utils import load_html

    if isinstance(body, str):
        body = body.replace("\x00", "")  # lxml refuses strings with NUL characters
    tree = load_html(body) if body else None
    if tree is None:
        return _result("", "", "")
    # read-only lookups first: trafilatura's metadata pass may edit the tree it is given
    declared = {
        "canonical": _canonical(tree, url),
        "language": _language(tree),
        "modified": _stated_day(tree, _MODIFIED_KEYS, "dateModified"),
    }
    # trafilatura's extraction and metadata cost ~50 us an element: a page of a few hundred
    # thousand (hostile, or a one-page book) would hold a worker for a minute. Such a page is read
    # as its rendered text, with only the metadata it declares.
    oversized = sum(1 for _ in itertools.islice(tree.iter(), MAX_ELEMENTS + 1)) > MAX_ELEMENTS
    if format == "text" or oversized:
        markdown = text = rendered_text(tree)
    else:
        found = trafilatura.extract(
            tree, url=url, output_format="markdown", include_formatting=True, include_links=True
        )
        markdown = (found or "").strip()
        if not markdown:
            markdown = rendered_text(tree)
        text = markdown_to_text(markdown)
    if oversized:
        title, author = _declared_title(tree), _declared_author(tree)
        published = _stated_day(tree, _PUBLISHED_KEYS, "datePublished")
    else:
        metadata = extract_metadata(tree, default_url=url)
        title, author, published = metadata.title, metadata.author, _day(metadata.date)
    return _result(
        title or _first_heading(markdown) or "",
        markdown,
        text,
        author=author,
        published=published,
        **declared,
    )


def _canonical(tree: Any, url: str) -> str | None:
    """The absolute http(s) URL the page declares as its own: <link rel="canonical">, else og:url."""
    candidates = [
        link.get("href")
        for link in tree.iter("link")
        if "canonical" in (link.get("rel") or "").lower().split()
    ]
    candidates += [
        meta.get("content") for meta in tree.iter("meta") if (meta.get("property") or "").lower() == "og:url"
    ]
    for href in candidates:
        if not href or not href.strip():
            continue
        try:
            absolute = urljoin(url, href.strip())
            scheme = urlsplit(absolute).scheme
        except ValueError:
            continue
        if scheme in ("http", "https"):
            return absolute
    return None


def _language(tree: Any) -> str | None:
    """The language the page declares: <html lang>, else Content-Language, else og:locale."""
    root = tree.getroottree().getroot()
    declared = [root.get("lang"), root.get("{http://www.w3.org/XML/1998/namespace}lang")]
    for meta in tree.iter("meta"):
        key = (meta.get("http-equiv") or meta.get("property") or meta.get("name") or "").lower()
        if key in ("content-language", "og:locale", "language", "dc.language"):
            declared.append(meta.get("content"))
    for value in declared:
        value = (value or "").split(",")[0].strip().replace("_", "-")
        if re.fullmatch(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*", value):
            return value
    return None


_MODIFIED_KEYS = frozenset(
    {
        "article:modified_time",
        "og:updated_time",
        "last-modified",
        "datemodified",
        "dcterms.modified",
        "dc.date.modified",
        "modified",
    }
)
_PUBLISHED_KEYS = frozenset(
    {
        "article:published_time",
        "datepublished",
        "dcterms.created",
        "dc.date",
        "date",
        "pubdate",
        "publish_date",
    }
)


def _stated_day(tree: Any, keys: frozenset[str], json_key: str) -> str | None:
    """A day the page states in a meta tag or a <time> whose property, name, itemprop or
    http-equiv is one of `keys`, or in JSON-LD under `json_key`. Only a stated date: a page that
    states no modification date has none (its publication date is not guessed into one)."""
    for element in tree.iter("meta", "time"):
        key = element.get("property") or element.get("name") or element.get("itemprop") or ""
        key = key or element.get("http-equiv") or ""
        if key.lower() in keys:
            day = _day(element.get("content") or element.get("datetime"))
            if day:
                return day
    pattern = re.compile(rf'"{json_key}"\s*:\s*"([^"]{{4,40}})"')
    for script in tree.iter("script"):
        if "ld+json" in (script.get("type") or "") and script.text:
            match = pattern.search(script.text)
            if match and (day := _day(match.group(1))):
                return day
    return None


def _declared_title(tree: Any) -> str | None:
    for meta in tree.iter("meta"):
        if (meta.get("property") or "").lower() == "og:title" and (meta.get("content") or "").strip():
            return meta.get("content")
    title = next(tree.iter("title"), None)
    return title.text_content() if title is not None else None


def _declared_author(tree: Any) -> str | None:
    for meta in tree.iter("meta"):
        if (meta.get("name") or "").lower() == "author" and (meta.get("content") or "").strip():
            return meta.get("content").strip()
    return None


def _day(value: str | None) -> str | None:
    """YYYY-MM-DD from an ISO 8601 date or an HTTP date, else None."""
    if not value:
        return None
    value = value.strip()
    match = re.match(r"(\d{4})-(\d{2})-(\d{2})", value)
    if match:
        year, month, day = (int(part) for part in match.groups())
        return match.group(0) if 1 <= month <= 12 and 1 <= day <= 31 and year >= 1900 else None
    try:
        return parsedate_to_datetime(value).date().isoformat()
    except (TypeError, ValueError, IndexError):
        return None


_SKIPPED = frozenset(
    {"head", "script", "style", "noscript", "template", "svg", "select", "iframe", "object", "canvas"}
)
_BLOCK_TAGS = """address article aside blockquote body caption center dd details dialog dir div dl dt fieldset
    figcaption figure footer form h1 h2 h3 h4 h5 h6 header hgroup hr html legend li main menu nav ol p
    pre section summary table tbody thead tfoot tr ul"""
_BLOCKS = frozenset(_BLOCK_TAGS.split())
_CELLS = frozenset({"td", "th"})
_LINES = frozenset({"li", "tr", "dt", "dd"})
_LINE_BREAK = "\x00"  # marks a <br> until whitespace is collapsed (NULs are removed from the input)


def rendered_text(tree: Any) -> str:
    """The text a browser shows for `tree` (see the module docstring), walked without recursion."""
    blocks: list[tuple[str, bool, bool]] = []  # (text, preformatted, a list item or table row)
    current: list[str] = []
    open_blocks: list[str] = []  # the block elements around the walk, innermost last
    pre_depth = 0

    def flush() -> None:
        if current:
            tight = bool(open_blocks) and open_blocks[-1] in _LINES
            blocks.append(("".join(current), pre_depth > 0, tight))
            current.clear()

    def add(text: str | None) -> None:
        if text:
            current.append(text.replace("\x00", ""))

    stack: list[tuple[Any, bool]] = [(tree, False)]
    while stack:
        element, closing = stack.pop()
        tag = element.tag.rsplit("}", 1)[-1].lower() if isinstance(element.tag, str) else None
        if closing:
            if tag in _BLOCKS:
                flush()
                open_blocks.pop()
            if tag == "pre":
                pre_depth -= 1
            add(element.tail)
            continue
        if tag is None or tag in _SKIPPED:  # comments, processing instructions, invisible subtrees
            if element is not tree:
                add(element.tail)
            continue
        if tag in _BLOCKS:
            flush()
            open_blocks.append(tag)
        if tag == "pre":
            pre_depth += 1
        elif tag == "br":
            current.append(_LINE_BREAK)
        elif tag in _CELLS and current and element.getprevious() is not None:
            current.append(" ")
        add(element.text)
        stack.append((element, True))
        stack.extend((child, False) for child in reversed(element))
    flush()
    out: list[str] = []
    previous_tight = False
    for text, preformatted, tight in blocks:
        if preformatted:
            text = text.replace(_LINE_BREAK, "\n").strip("\n").rstrip()
        else:
            lines = re.sub(r"[^\S\x00]+", " ", text).split(_LINE_BREAK)
            text = "\n".join(line.strip() for line in lines).strip()
        if text.strip():
            # list items and table rows one to a line; other blocks a blank line apart
            out.append(("\n" if tight and previous_tight else "\n\n") if out else "")
            out.append(text)
            previous_tight = tight
    return "".join(out)


def _first_heading(markdown: str) -> str | None:
    for line in markdown.split("\n"):
        if match := re.match(r" {0,3}#{1,6}[ \t]+(.+)", line):
            return markdown_to_text(match.group(1).rstrip("# \t")).strip() or None
    return None


# --- plain text, Markdown ---------------------------------------------------------------------


def _from_text(content: str, *, markdown: bool) -> Extracted:
    content = content.replace("\r\n", "\n").replace("\r", "\n")
    text = markdown_to_text(content) if markdown else content
    title = (_first_heading(content) if markdown else None) or next(
        (line.strip() for line in text.split("\n") if line.strip()), ""
    )
    return _result(title, content, text)


# --- PDF --------------------------------------------------------------------------------------


def _from_pdf(body: bytes) -> Extracted:
    import io
    import logging

    try:
        from pypdf import PdfReader
    except ImportError as error:  # pragma: no cover - pypdf is a dependency
        raise ValueError("PDF is not read: pypdf is not installed") from error

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed PDFs are common and not ours
    try:
        reader = PdfReader(io.BytesIO(body), strict=False)
        pages = list(reader.pages[:MAX_PDF_PAGES])
    except Exception:  # pypdf raises many kinds of errors on a broken file: it is simply unreadable
        return _result("", "", "")
    sections = []
    for number, page in enumerate(pages, 1):
        try:
            page_text = page.extract_text() or ""
        except Exception:  # one broken page does not hide the others
            page_text = ""
        page_text = "\n".join(line.rstrip() for line in page_text.replace("\x00", "").splitlines()).strip()
        if page_text:
            sections.append(f"## Page {number}\n\n{page_text}")
    markdown = "\n\n".join(sections)
    info = _pdf_info(reader)
    text = markdown_to_text(markdown)
    first_line = next((line.strip() for line in text.split("\n")[1:] if line.strip()), "")
    return _result(info.pop("title", None) or first_line, markdown, text, **info)


def _pdf_info(reader: Any) -> dict[str, str | None]:
    info: dict[str, str | None] = {}
    try:
        metadata = reader.metadata or {}
        info["title"] = str(metadata.get("/Title") or "").strip() or None
        info["author"] = str(metadata.get("/Author") or "").strip() or None
        info["published"] = _pdf_day(metadata.get("/CreationDate"))
        info["modified"] = _pdf_day(metadata.get("/ModDate"))
    except Exception:  # a damaged information dictionary: no metadata
        pass
    try:
        language = reader.trailer["/Root"].get("/Lang")
        info["language"] = str(language).strip() or None if language else None
    except Exception:
        pass
    return info


def _pdf_day(value: Any) -> str | None:
    """YYYY-MM-DD from a PDF date ("D:20210304101500+01'00'")."""
    match = re.match(r"(?:D:)?(\d{4})(\d{2})(\d{2})", str(value or ""))
    return _day("-".join(match.groups())) if match else None

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

Bytes are decoded by `decode_body`, as a browser does: a byte order mark, else the HTTP charset,
else (HTML) a <meta> charset in the first 4 KB, else UTF-8; a charset Python does not know is
skipped, never an error.

`markdown` is the content in the asked format; `text` is the same content without Markdown
syntax (passages.markdown_to_text). For format "text" the two are equal, whatever the media type
(a Markdown file or a PDF read as "text" loses its Markdown syntax). Provenance describes
what was returned: `content_hash` is the SHA-256 of `markdown` (UTF-8), `word_count` counts the
whitespace-separated words of `text`. The title and the author are single-line strings of at most
MAX_TITLE_CHARS characters, otherwise as the page states them: invisible characters (zero-width,
bidi controls, tag characters) are the caller's to find and strip, as in the content.

Bounded: at most MAX_INPUT_BYTES of a body are read (the fetcher caps bodies at 5 MB already);
lxml's parser stops nesting at 255 levels and nothing here recurses over the tree; a page of more
than MAX_ELEMENTS elements skips trafilatura (its rendered text, the metadata it declares), so a
hostile page costs a few seconds at most, never minutes (about 5 s just under the limit). The
HTML work is CPU-bound: callers run it in a worker thread. A PDF is different: pypdf can spend
minutes and hundreds of MB on a crafted file of a few KB, and a thread cannot be stopped, so a PDF
is read in a child process (see `_from_pdf`) that is killed after `timeout` seconds, stops after
`max_chars` characters and may use at most PDF_MEMORY_BYTES; what it read by then is returned,
flagged `incomplete`. trafilatura, lxml and pypdf are imported inside the functions that use them
(pypdf only in the child process).
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import itertools
import json
import logging
import math
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from datetime import date, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

from .passages import markdown_to_text

MAX_INPUT_BYTES = 5_000_000
MAX_ELEMENTS = 100_000  # a long article has a few thousand elements, a large manual tens of thousands
MAX_PDF_PAGES = 500  # a 10,000-page PDF is a book: its first 500 pages are plenty to rank
MAX_TITLE_CHARS = 300  # the title's and the author's limit
PDF_TIMEOUT_SECONDS = 10.0  # an ordinary PDF of a hundred pages reads in a second or two
MAX_PDF_CHARS = 2_000_000  # ~500k tokens: far more than any budget ranks, less than a crafted page yields
PDF_MEMORY_BYTES = 1 << 30  # the reader process's address space (Python and pypdf take ~150 MB of it)
MAX_PDF_PROCESSES = 4  # readers at once: `research` may fetch many PDFs together
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown"})
PDF_TYPES = frozenset({"application/pdf"})
FORMATS = ("markdown", "text")


@dataclass(frozen=True)
class Provenance:
    content_hash: str  # sha256 hex of the returned content (Extracted.markdown, UTF-8)
    word_count: int
    author: str | None  # one line, at most MAX_TITLE_CHARS
    published: str | None  # YYYY-MM-DD
    modified: str | None  # YYYY-MM-DD
    canonical: str | None  # absolute URL the page names as its own (link rel=canonical, og:url)
    language: str | None  # as the page declares it (BCP 47, e.g. "en-GB")


@dataclass(frozen=True)
class Extracted:
    title: str  # one line, at most MAX_TITLE_CHARS
    markdown: str  # the content in the asked format (Markdown, or the rendered text)
    text: str  # the same without Markdown syntax
    provenance: Provenance
    # Only part of the body was read: a PDF whose reader ran out of time, characters, pages or
    # memory, or a body over MAX_INPUT_BYTES. The content is what was read; the reason says why,
    # in words a reader can be shown ("PDF reading stopped after 10 s: 3 of 12 pages read").
    incomplete: bool = False
    incomplete_reason: str | None = None


def extract_page(
    body: bytes | str,
    *,
    url: str,
    media_type: str,
    format: str = "markdown",
    charset: str | None = None,
    timeout: float = PDF_TIMEOUT_SECONDS,
    max_chars: int = MAX_PDF_CHARS,
) -> Extracted:
    """The content of a fetched body. Raises ValueError for a format or media type not read here;
    a body with nothing readable gives an Extracted with empty content, never an exception.

    `charset` is the HTTP Content-Type's charset (a `charset=` parameter of `media_type` serves
    when it is None); bytes are decoded by `decode_body`. `timeout` (wall-clock seconds) and
    `max_chars` bound a PDF's reading (see the module docstring); they do not apply to HTML or
    text, which MAX_INPUT_BYTES and MAX_ELEMENTS bound."""
    if format not in FORMATS:
        raise ValueError(f"format: {format!r} is not one of {', '.join(FORMATS)}")
    media_type, _, parameters = media_type.partition(";")
    media_type = media_type.strip().lower()
    charset = charset or _parameter(parameters, "charset")
    over = len(body) > MAX_INPUT_BYTES
    body = body[:MAX_INPUT_BYTES]
    if media_type in HTML_TYPES:
        result = _from_html(decode_body(body, media_type=media_type, charset=charset), url, format)
    elif media_type in TEXT_TYPES:
        text = decode_body(body, media_type=media_type, charset=charset)
        result = _from_text(text, markdown=media_type != "text/plain")
    elif media_type in PDF_TYPES:
        if isinstance(body, str):
            raise ValueError("a PDF body must be bytes")
        result = _from_pdf(body, timeout=timeout, max_chars=max_chars)
    else:
        raise ValueError(f"media type {media_type!r} is not read (HTML, plain text, Markdown or PDF)")
    if format == "text" and result.markdown != result.text:
        # the text is what is returned: the hash and the content must agree
        hashed = hashlib.sha256(result.text.encode("utf-8", errors="surrogatepass")).hexdigest()
        result = replace(
            result, markdown=result.text, provenance=replace(result.provenance, content_hash=hashed)
        )
    if over and not result.incomplete:
        unit = "characters" if isinstance(body, str) else "bytes"
        reason = f"only the first {MAX_INPUT_BYTES:,} {unit} of the body were read"
        result = replace(result, incomplete=True, incomplete_reason=reason)
    return result


def _parameter(parameters: str, name: str) -> str | None:
    """A Content-Type parameter's value ("; charset=UTF-8" -> "UTF-8"), quotes removed."""
    for parameter in parameters.split(";"):
        key, _, value = parameter.partition("=")
        if key.strip().lower() == name:
            return value.strip().strip("\"'").strip() or None
    return None


# --- bytes to text ----------------------------------------------------------------------------

_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
# Python codecs that decode bytes but are no web page's charset: escapes, transforms, UTF-7 (an
# old way to smuggle markup past filters, which browsers refuse for the same reason).
_NOT_CHARSETS = frozenset(
    {"utf-7", "unicode-escape", "raw-unicode-escape", "idna", "punycode", "undefined", "charmap"}
)
# Labels browsers read as a superset (the WHATWG Encoding Standard): a page labelled ISO-8859-1 or
# ASCII is in practice windows-1252 (curly quotes at 0x93), GB2312 is GBK, and so on.
_SUPERSETS = {
    "iso8859-1": "cp1252",
    "ascii": "cp1252",
    "iso8859-9": "cp1254",
    "gb2312": "gbk",
    "euc_kr": "cp949",
    "shift_jis": "cp932",
}
_PRESCAN_BYTES = 4096
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_META_CHARSET = re.compile(r"""<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([\w.:-]+)""", re.I)
_XML_ENCODING = re.compile(r"""\s*<\?xml\b[^>]*?\bencoding\s*=\s*["']([\w.:-]+)""", re.I)


def decode_body(body: bytes | str, *, media_type: str, charset: str | None = None) -> str:
    """`body` as text, its encoding found as a browser finds it: a byte order mark (UTF-8,
    UTF-16), else `charset` (the HTTP header's), else, for HTML, a <meta charset> or <meta
    http-equiv="Content-Type" content="...; charset=..."> in the first 4 KB (or an XML
    declaration's encoding), else UTF-8. A name Python does not know ("x-bogus") or that is no
    page charset (UTF-7, "unicode-escape") is skipped as if absent; ISO-8859-1 and ASCII read as
    windows-1252, as browsers do. Bytes invalid in the encoding become U+FFFD. A str is returned
    as is."""
    if isinstance(body, str):
        return body
    for bom, encoding in _BOMS:  # a byte order mark is the surest sign, and outranks a header
        if body.startswith(bom):
            return body[len(bom) :].decode(encoding, errors="replace")
    encoding = _encoding(charset)
    if encoding is None and media_type.split(";")[0].strip().lower() in HTML_TYPES:
        encoding = _declared_encoding(body[:_PRESCAN_BYTES])
    return body.decode(encoding or "utf-8", errors="replace")


def _encoding(label: str | None) -> str | None:
    """The Python codec for a charset label, or None for a label it does not know or refuses."""
    if not label or len(label) > 40:
        return None
    try:
        name = codecs.lookup(label.strip().strip("\"'")).name
        b"<a>".decode(name)  # refuses codecs that are not bytes-to-text (base64, rot13, ...)
    except (LookupError, UnicodeError, ValueError):
        return None
    if name in _NOT_CHARSETS:
        return None
    return _SUPERSETS.get(name, name)


def _declared_encoding(head: bytes) -> str | None:
    """The encoding a page's first bytes declare in a <meta> (else an XML declaration)."""
    text = _COMMENT.sub("", head.decode("latin-1"))  # byte for byte: the markup is ASCII
    for match in itertools.chain(_META_CHARSET.finditer(text), _XML_ENCODING.finditer(text[:200])):
        encoding = _encoding(match.group(1))
        if encoding:
            # a UTF-16 page could not have declared itself in ASCII: the label is wrong (WHATWG)
            return "utf-8" if encoding.startswith(("utf-16", "utf-32")) else encoding
    return None


def _result(
    title: str, markdown: str, text: str, *, incomplete_reason: str | None = None, **metadata: Any
) -> Extracted:
    provenance = Provenance(
        content_hash=hashlib.sha256(markdown.encode("utf-8", errors="surrogatepass")).hexdigest(),
        word_count=len(text.split()),
        author=_clip(metadata.get("author")) or None,
        published=metadata.get("published") or None,
        modified=metadata.get("modified") or None,
        canonical=metadata.get("canonical") or None,
        language=metadata.get("language") or None,
    )
    return Extracted(
        title=_clip(title),
        markdown=markdown,
        text=text,
        provenance=provenance,
        incomplete=incomplete_reason is not None,
        incomplete_reason=incomplete_reason,
    )


def _clip(value: Any) -> str:
    """A plain str on one line (whitespace runs made one space) of at most MAX_TITLE_CHARS
    characters, an ellipsis marking a cut; "" for None. Metadata values may be str subclasses
    (pypdf's TextStringObject) or, from a damaged file, not text at all."""
    if value is None:
        return ""
    value = " ".join(str(value).split())
    return value if len(value) <= MAX_TITLE_CHARS else value[: MAX_TITLE_CHARS - 1].rstrip() + "…"


# --- HTML -----------------------------------------------------------------------------------


_XML_DECLARATION = re.compile(r"\s*<\?xml\b[^>]*>")


def _from_html(body: str, url: str, format: str) -> Extracted:
    import trafilatura
    from trafilatura.metadata import extract_metadata
    from trafilatura.utils import load_html

    # trafilatura warns about ordinary pages (an empty link, a missing attribute): that is no
    # news for the server's log.
    logging.getLogger("trafilatura").setLevel(logging.ERROR)

    body = body.replace("\x00", "")  # lxml refuses strings with NUL characters
    # the text is decoded already: an XML declaration's encoding would make lxml refuse the str
    # (and trafilatura then re-parse it as UTF-8 bytes under the declared encoding)
    body = _XML_DECLARATION.sub("", body, count=1) if body.lstrip().startswith("<?xml") else body
    tree = load_html(body) if body.strip() else None
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
        _clip(title) or _first_heading(markdown) or "",
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


def parse_day(text: str | date | None) -> date | None:
    """The calendar day `text` states, or None: an ISO 8601 date ("2024-03-01"), the date part of
    an ISO 8601 date-time ("2024-03-01T23:30:00-05:00" is 2024-03-01: the day as stated, not
    moved to UTC), or an HTTP / e-mail date ("Fri, 01 Mar 2024 10:00:00 GMT"); whitespace around
    it is ignored. No day rather than a wrong one: an impossible date ("2023-02-30"), a partial
    one ("2024-03"), digits running on ("2024-03-011") or any other text is None. A date passes
    through (a datetime as its date), so a value a model has parsed already is accepted too."""
    if isinstance(text, datetime):
        return text.date()
    if isinstance(text, date):
        return text
    if not isinstance(text, str) or len(text) > 100:
        return None
    text = text.strip()
    if match := _ISO_DAY.match(text):
        try:
            return date(*(int(part) for part in match.groups()))
        except ValueError:
            return None
    try:
        return parsedate_to_datetime(text).date()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?!\d)")


def _day(value: str | None) -> str | None:
    """YYYY-MM-DD from a date a page states (parse_day), else None. Years before 1900 are taken
    for junk: a page's metadata, not a history book's subject."""
    day = parse_day(value)
    return day.isoformat() if day is not None and day.year >= 1900 else None


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

# At most MAX_PDF_PROCESSES readers at once: a caller over the limit waits for a slot, within its
# own timeout.
_PDF_SLOTS = threading.BoundedSemaphore(MAX_PDF_PROCESSES)


def _from_pdf(body: bytes, *, timeout: float, max_chars: int) -> Extracted:
    """A PDF read in a child process (`_pdf_reader_main`): the body on its stdin, one JSON record
    a line on its stdout as it reads ({"info": ...} first, then {"page": n, "text": ...} per page,
    {"end": why} last), so the pages read before a kill are kept. The process is killed
    `timeout` seconds after the call (waiting for a slot included); it limits its own CPU time,
    so it also ends if this process dies first. A new interpreter costs ~0.2 s a PDF: the price
    of a parse that can be stopped."""
    timeout = max(float(timeout), 0.01)
    deadline = time.monotonic() + timeout
    if not _PDF_SLOTS.acquire(timeout=timeout):
        reason = f"PDF not read: {MAX_PDF_PROCESSES} other PDFs were being read for {timeout:g} s"
        return _result("", "", "", incomplete_reason=reason)
    try:
        output, timed_out, status = _run_pdf_reader(body, deadline, max_chars)
    finally:
        _PDF_SLOTS.release()
    records = []
    for line in output.split(b"\n"):
        try:
            record = json.loads(line)
        except ValueError:  # an empty last line, or the one a killed reader was writing
            continue
        if isinstance(record, dict):
            records.append(record)
    return _pdf_extracted(records, timed_out=timed_out, status=status, timeout=timeout, max_chars=max_chars)


def _run_pdf_reader(body: bytes, deadline: float, max_chars: int) -> tuple[bytes, bool, int | None]:
    """(the reader's stdout, whether it was killed for time, its exit status)."""
    cpu_seconds = math.ceil(deadline - time.monotonic()) + 1
    command = [
        sys.executable,
        "-P",  # the working directory is not on the reader's path: a stray pypdf.py there is not run
        "-c",
        f"from {__name__} import _pdf_reader_main; _pdf_reader_main()",
        str(max_chars),
        str(MAX_PDF_PAGES),
        str(cpu_seconds),
    ]
    try:
        # stderr is dropped: pypdf's warnings about a malformed file are not ours to show, and
        # this server's own stderr may be its client's log
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
    except OSError:  # no interpreter to start (a frozen build), or no process left
        return b"", False, None
    try:
        try:
            output, _ = process.communicate(body, timeout=max(deadline - time.monotonic(), 0.01))
            return output, False, process.returncode
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()  # what it wrote before the kill is not lost
            return output, True, process.returncode
    finally:
        if process.poll() is None:  # interrupted: never leave a reader behind
            process.kill()
            process.wait()


def _pdf_extracted(
    records: list[dict[str, Any]], *, timed_out: bool, status: int | None, timeout: float, max_chars: int
) -> Extracted:
    info: dict[str, Any] = {}
    total = 0
    end = None
    sections = []
    last_page = 0
    for record in records:
        if isinstance(record.get("info"), dict):
            info = record["info"]
            total = record.get("pages") if isinstance(record.get("pages"), int) else 0
        elif isinstance(record.get("page"), int) and isinstance(record.get("text"), str):
            last_page = record["page"]
            if record["text"]:
                sections.append(f"## Page {last_page}\n\n{record['text']}")
        elif isinstance(record.get("end"), str):
            end = record["end"]
    read = f"{last_page} of {total} pages read" if total else "no page read"
    if end in ("complete", "unreadable"):
        reason = None
    elif end == "over_chars":
        reason = f"PDF text over {max_chars:,} characters: {read}"
    elif end == "over_pages":
        reason = f"PDF of {total} pages: the first {MAX_PDF_PAGES} read"
    elif timed_out:
        reason = f"PDF reading stopped after {timeout:g} s: {read}"
    elif status is None:
        reason = "PDF not read: the reader process could not be started"
    else:  # out of memory (PDF_MEMORY_BYTES), or a crash
        reason = f"PDF reader failed (exit status {status}): {read}"
    markdown = "\n\n".join(sections)
    text = markdown_to_text(markdown)
    first_line = next((line.strip() for line in text.split("\n")[1:] if line.strip()), "")
    metadata = {
        "author": _pdf_str(info.get("author")),
        "published": _pdf_day(info.get("created")),
        "modified": _pdf_day(info.get("modified")),
        "language": _pdf_str(info.get("language")),
    }
    return _result(
        _clip(_pdf_str(info.get("title"))) or first_line, markdown, text, incomplete_reason=reason, **metadata
    )


def _pdf_str(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _pdf_reader_main() -> None:
    """The PDF reader process: arguments max_chars, max_pages, cpu_seconds; the PDF on stdin;
    JSON records on stdout (see _from_pdf). Each page's text is cut so the total stays within
    max_chars; reading stops there."""
    import io
    import logging

    max_chars, max_pages, cpu_seconds = (int(argument) for argument in sys.argv[1:4])
    _limit_resources(cpu_seconds)
    logging.getLogger("pypdf").setLevel(logging.CRITICAL)  # malformed PDFs are common and not ours
    out = sys.stdout.buffer

    def emit(**record: Any) -> None:
        out.write(json.dumps(record, ensure_ascii=True).encode("ascii") + b"\n")
        out.flush()  # a page written is a page kept, whenever the kill comes

    body = sys.stdin.buffer.read()
    try:
        from pypdf import PdfReader

        reader = PdfReader(io.BytesIO(body), strict=False)
        total = len(reader.pages)
    except Exception:  # pypdf raises many kinds of errors on a broken file: it is simply unreadable
        emit(end="unreadable")
        return
    emit(info=_pdf_info(reader), pages=total)
    used = 0
    for number in range(1, min(total, max_pages) + 1):
        try:
            page_text = reader.pages[number - 1].extract_text() or ""
        except Exception:  # one broken page does not hide the others
            page_text = ""
        page_text = "\n".join(line.rstrip() for line in page_text.replace("\x00", "").splitlines()).strip()
        if used + len(page_text) > max_chars:
            emit(page=number, text=page_text[: max_chars - used].rstrip())
            emit(end="over_chars")
            return
        used += len(page_text)
        emit(page=number, text=page_text)
    emit(end="complete" if total <= max_pages else "over_pages")


def _limit_resources(cpu_seconds: int) -> None:
    """Cap this (reader) process's memory and CPU time, where the platform allows it: a crafted
    PDF then ends in a MemoryError or SIGXCPU, not in the machine's swap."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Windows
        return
    for limit, value in ((resource.RLIMIT_AS, PDF_MEMORY_BYTES), (resource.RLIMIT_CPU, cpu_seconds)):
        try:
            _, hard = resource.getrlimit(limit)
            resource.setrlimit(limit, (value if hard == resource.RLIM_INFINITY else min(value, hard), hard))
        except (ValueError, OSError):  # pragma: no cover - e.g. RLIMIT_AS on macOS
            pass


def _pdf_info(reader: Any) -> dict[str, str | None]:
    """The document information and catalog language as plain strings (the reader's record)."""
    info: dict[str, str | None] = {}
    try:
        metadata = reader.metadata or {}
        for key, name in (("title", "/Title"), ("author", "/Author"), ("created", "/CreationDate")):
            info[key] = _plain(metadata.get(name))
        info["modified"] = _plain(metadata.get("/ModDate"))
    except Exception:  # a damaged information dictionary: no metadata
        pass
    with contextlib.suppress(Exception):  # a damaged catalog: no language
        info["language"] = _plain(reader.trailer["/Root"].get("/Lang"))
    return info


def _plain(value: Any) -> str | None:
    """A metadata value as a bounded plain str, or None."""
    return str(value)[:10_000] if value is not None else None


def _pdf_day(value: Any) -> str | None:
    """YYYY-MM-DD from a PDF date ("D:20210304101500+01'00'")."""
    match = re.match(r"(?:D:)?(\d{4})(\d{2})(\d{2})", value) if isinstance(value, str) else None
    return _day("-".join(match.groups())) if match else None

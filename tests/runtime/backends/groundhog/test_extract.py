"""extract_page on real pages (tests/data/web/articles: five pages of the article-extraction
benchmark) with the real trafilatura, on crafted HTML for the rendered text and the metadata,
on text, Markdown and a PDF built here, and on hostile input."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import re
import threading
import zlib
from collections import Counter
from datetime import date, datetime
from pathlib import Path

import pytest

from lynxc.runtime.backends.groundhog import extract
from lynxc.runtime.backends.groundhog.extract import decode_body, extract_page, parse_day, rendered_text
from lynxc.runtime.backends.groundhog.passages import markdown_to_text

ARTICLES = Path(__file__).parents[3] / "data" / "web" / "articles"
TRUTH = json.loads((ARTICLES / "ground-truth.json").read_text(encoding="utf-8"))


def page(prefix: str) -> tuple[str, str, str]:
    """(html, url, ground-truth article body) of the test page whose id starts with prefix."""
    (page_id,) = [key for key in TRUTH if key.startswith(prefix)]
    html = gzip.decompress((ARTICLES / f"{page_id}.html.gz").read_bytes()).decode("utf-8")
    return html, TRUTH[page_id]["url"], TRUTH[page_id]["articleBody"]


def f1(predicted: str, truth: str) -> float:
    """Token F1 as bench/extraction.py scores it."""

    def words(text: str) -> Counter[str]:
        return Counter(re.findall(r"\w+", markdown_to_text(text).casefold()))

    found, expected = words(predicted), words(truth)
    common = sum((found & expected).values())
    if not common:
        return 0.0
    precision, recall = common / sum(found.values()), common / sum(expected.values())
    return 2 * precision * recall / (precision + recall)


# --- real pages ---------------------------------------------------------------------------


def test_a_blog_post_becomes_markdown_with_headings_and_full_provenance():
    html, url, _ = page("ba07d1e64775")
    result = extract_page(html.encode("utf-8"), url=url, media_type="text/html; charset=UTF-8")
    assert result.title == "Take C.A.R.E. - comwrap auf der DMEXCO 2018"
    assert "\n#### Neues Leitmotto\n" in result.markdown
    assert result.markdown.startswith("Am 12. Bis 13. September startet wieder die DMEXCO 2018 in Köln")
    provenance = result.provenance
    assert provenance.content_hash == hashlib.sha256(result.markdown.encode("utf-8")).hexdigest()
    assert provenance.word_count == len(result.text.split()) > 300
    assert provenance.author == "Moritz Bachmann"
    assert provenance.published == "2018-07-30"
    assert provenance.modified is None  # the page states no modification date: none is guessed
    assert provenance.canonical == "https://blog.comwrap.com/comwrap-auf-der-dmexco-2018"
    assert provenance.language == "en"  # as declared (the text is German: declared, not detected)


def test_nested_headings_and_lists_survive_as_markdown():
    html, url, _ = page("57b4dafd18cf")
    result = extract_page(html, url=url, media_type="text/html")
    assert "\n### Status Quo\n\n#### Analoge Prozesse\n" in result.markdown
    items = [line for line in result.markdown.split("\n") if line.startswith("- ")]
    assert len(items) >= 10
    assert "Status Quo" in result.text and "### " not in result.text and "\n- " not in result.text


def test_a_table_becomes_a_pipe_table_and_a_stated_modified_date_is_read():
    html, url, _ = page("11ea381ad92b")
    result = extract_page(html, url=url, media_type="text/html")
    assert "| 1 | Kyle Busch | 5040 | 5 | 1 | 17 | 27 |" in result.markdown
    assert result.title == "Classificação NASCAR"
    assert (result.provenance.published, result.provenance.modified) == ("2010-10-22", "2019-11-18")
    assert "Kyle Busch 5040" in result.text  # pipes gone in the text


def test_links_are_absolute_and_markdown_escapes_are_undone_in_the_text():
    html, url, _ = page("c4a3637c6696")
    result = extract_page(html, url=url, media_type="text/html")
    assert "[нормативы бега](https://gto-normativy.ru/beg/category/normativy-bega)" in result.markdown
    assert "speedmult \\*х100" in result.markdown
    assert "speedmult *х100" in result.text and "нормативы бега в реальной" in result.text
    assert result.provenance.language == "ru-RU"
    assert result.provenance.author == "Вера"


def test_a_page_without_canonical_or_language_says_so():
    html, url, _ = page("c00962aabe7b")
    result = extract_page(html, url=url, media_type="text/html")
    assert result.title == "Seeking a bigger role for a big rocket"
    assert result.provenance.canonical is None
    assert result.provenance.language is None
    assert result.provenance.published == "2019-11-18"


@pytest.mark.parametrize(
    "prefix", ["ba07d1e64775", "57b4dafd18cf", "c4a3637c6696", "11ea381ad92b", "c00962aabe7b"]
)
def test_markdown_costs_no_f1_against_trafilatura_alone(prefix):
    import trafilatura

    html, url, truth = page(prefix)
    ours = f1(extract_page(html, url=url, media_type="text/html").markdown, truth)
    theirs = f1(trafilatura.extract(html) or "", truth)
    assert ours >= theirs - 0.005
    assert ours > 0.95


def test_text_format_is_the_whole_rendered_page_not_only_the_article():
    html, url, _ = page("ba07d1e64775")
    article = extract_page(html, url=url, media_type="text/html")
    whole = extract_page(html, url=url, media_type="text/html", format="text")
    assert whole.markdown == whole.text
    assert whole.provenance.content_hash == hashlib.sha256(whole.text.encode("utf-8")).hexdigest()
    assert whole.provenance.word_count > article.provenance.word_count
    assert "Neues Leitmotto" in whole.text  # the article is in it
    assert "#" not in whole.text.split("Neues Leitmotto")[0][-5:]  # as text, no Markdown heading
    assert "function(" not in whole.text and "{" not in whole.text  # no script or style bodies
    assert whole.title == article.title


# --- crafted HTML -------------------------------------------------------------------------

CRAFTED = """<!doctype html><html><head><title>Ignored title text</title>
<meta http-equiv="Content-Language" content="fr-CA">
<meta property="og:url" content="/canonical/page">
<script type="application/ld+json">{"@type": "NewsArticle", "dateModified": "2023-07-08T09:10:11Z"}</script>
<style>body { color: red }</style><script>var secret = "script body";</script></head>
<body><nav>Home <a href="/about">About</a></nav>
<!-- a comment is not shown -->
<h1>Heading   one</h1>
<p>Some   spaced
   text<br>after a break</p>
<ul><li>first item</li><li>second <b>bold</b> item</li></ul>
<table><tr><th>Name</th><th>Value</th></tr><tr><td>x</td><td>1</td></tr></table>
<pre>  indented
    code   kept</pre>
<template><p>template text</p></template><noscript>noscript text</noscript>
<div>tail <span>inline</span> text</div><footer>Footer text</footer></body></html>"""


def test_rendered_text_shows_what_a_browser_shows():
    from trafilatura.utils import load_html

    assert rendered_text(load_html(CRAFTED)) == (
        "Home About\n\n"
        "Heading one\n\n"
        "Some spaced text\nafter a break\n\n"
        "first item\nsecond bold item\n"
        "Name Value\nx 1\n\n"
        "  indented\n    code   kept\n\n"
        "tail inline text\n\n"
        "Footer text"
    )


def test_declared_metadata_falls_back_through_its_sources():
    result = extract_page(CRAFTED, url="https://example.org/a/b", media_type="text/html", format="text")
    assert result.provenance.language == "fr-CA"  # Content-Language when <html> has no lang
    assert result.provenance.canonical == "https://example.org/canonical/page"  # og:url, made absolute
    assert result.provenance.modified == "2023-07-08"  # JSON-LD dateModified


def test_a_canonical_that_is_not_http_is_ignored():
    html = '<html><head><link rel="canonical" href="javascript:alert(1)"></head><body><p>x</p></body></html>'
    result = extract_page(html, url="https://example.org/", media_type="text/html")
    assert result.provenance.canonical is None


def test_when_trafilatura_finds_no_article_the_rendered_text_stands_in(monkeypatch):
    import trafilatura

    monkeypatch.setattr(trafilatura, "extract", lambda *args, **kwargs: None)
    result = extract_page(
        "<html><body><p>Only a line.</p></body></html>", url="https://a.b/", media_type="text/html"
    )
    assert result.markdown == result.text == "Only a line."


@pytest.mark.parametrize("body", [b"", b"   ", "\x00\x00"])
def test_an_empty_body_gives_empty_content_not_an_error(body):
    result = extract_page(body, url="https://a.b/", media_type="text/html")
    assert (result.title, result.markdown, result.text) == ("", "", "")
    assert result.provenance.content_hash == hashlib.sha256(b"").hexdigest()
    assert result.provenance.word_count == 0


# --- hostile HTML ---------------------------------------------------------------------------


@pytest.mark.parametrize("format", ["markdown", "text"])
def test_deep_nesting_does_not_overflow_the_stack(format):
    html = "<html><body>" + "<div><span>" * 50_000 + "deep" + "</span></div>" * 50_000 + "</body></html>"
    result = extract_page(html, url="https://a.b/", media_type="text/html", format=format)
    assert isinstance(result.markdown, str)


def test_a_page_of_too_many_elements_is_read_as_text_with_its_declared_metadata(monkeypatch):
    import trafilatura
    import trafilatura.metadata

    def refuse(*args, **kwargs):
        raise AssertionError("trafilatura must not run on an oversized page")

    monkeypatch.setattr(trafilatura, "extract", refuse)
    monkeypatch.setattr(trafilatura.metadata, "extract_metadata", refuse)
    monkeypatch.setattr(extract, "MAX_ELEMENTS", 20)
    head = (
        '<head><title>Big page</title><meta name="author" content="Ann Lee">'
        '<meta property="article:published_time" content="2020-02-03"></head>'
    )
    html = f"<html>{head}<body>" + "<p>word</p>" * 30 + "</body></html>"
    result = extract_page(html, url="https://a.b/", media_type="text/html")
    assert result.markdown == result.text == "\n\n".join(["word"] * 30)
    assert (result.title, result.provenance.author, result.provenance.published) == (
        "Big page",
        "Ann Lee",
        "2020-02-03",
    )


def test_input_beyond_the_cap_is_not_read(monkeypatch):
    monkeypatch.setattr(extract, "MAX_INPUT_BYTES", 2_000)
    filler = "<p>" + "early words " * 100 + "</p>"
    html = f"<html><body>{filler}<p>LATE_MARKER</p></body></html>"
    assert len(filler) > 1_000
    result = extract_page(html * 3, url="https://a.b/", media_type="text/html", format="text")
    assert "early words" in result.text and result.text.count("LATE_MARKER") == 1  # of 3
    assert result.incomplete
    assert result.incomplete_reason == "only the first 2,000 characters of the body were read"
    assert not extract_page(html, url="https://a.b/", media_type="text/html").incomplete


# --- bytes to text ----------------------------------------------------------------------------


def cp1252_page(head: str) -> bytes:
    return (
        f"<html><head>{head}<title>Caf\xe9</title></head>"
        "<body><p>Le caf\xe9 est tr\xe8s bon, na\xefve r\xe9sum\xe9.</p></body></html>"
    ).encode("cp1252")


@pytest.mark.parametrize(
    "head",
    [
        '<meta charset="windows-1252">',
        "<meta charset=windows-1252>",
        '<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=windows-1252">',
        '<meta content="text/html;charset=\'iso-8859-1\'" http-equiv="content-type">',  # read as 1252
    ],
)
def test_html_bytes_are_decoded_by_the_charset_their_meta_declares(head):
    result = extract_page(cp1252_page(head), url="https://a.b/", media_type="text/html", format="text")
    assert result.title == "Café"
    assert result.text == "Le café est très bon, naïve résumé."


def test_the_http_charset_outranks_the_meta_and_a_byte_order_mark_outranks_both():
    body = cp1252_page('<meta charset="utf-8">')
    for kwargs in ({"charset": "windows-1252"}, {}):  # the keyword, or the media type's parameter
        media_type = "text/html" if kwargs else "text/html; charset=Windows-1252"
        result = extract_page(body, url="https://a.b/", media_type=media_type, format="text", **kwargs)
        assert result.title == "Café"
    utf8 = b"\xef\xbb\xbf" + cp1252_page("").decode("cp1252").encode("utf-8")
    result = extract_page(utf8, url="https://a.b/", media_type="text/html", charset="iso-8859-1")
    assert result.title == "Café"
    utf16 = "\ufeff<html><head><title>Caf\xe9</title></head><body><p>x</p></body></html>".encode("utf-16-le")
    assert extract_page(utf16, url="https://a.b/", media_type="text/html").title == "Café"


def test_plain_text_and_markdown_honour_the_http_charset():
    body = "Caf\xe9 cr\xe8me\nline two".encode("latin-1")
    result = extract_page(body, url="https://a.b/t.txt", media_type="text/plain; charset=iso-8859-1")
    assert (result.title, result.markdown) == ("Café crème", "Café crème\nline two")
    result = extract_page(body, url="https://a.b/t.md", media_type="text/markdown", charset="ISO-8859-1")
    assert result.markdown == "Café crème\nline two"
    # a text file's <meta>-looking line is text, not a declaration: no charset means UTF-8
    body = b'<meta charset="windows-1252">\nCaf\xc3\xa9'
    assert extract_page(body, url="https://a.b/t.txt", media_type="text/plain").text.endswith("Café")


@pytest.mark.parametrize("charset", ["x-bogus", "base64", "rot13", "utf-7", "unicode-escape", "a" * 100, ""])
def test_an_unknown_or_unfit_charset_falls_back_to_utf8(charset):
    head = f"<meta charset='{charset}'><title>Caf\xe9 \\x41</title>"
    body = f"<html><head>{head}</head><body><p>Hello world</p></body></html>"
    for media_type, kwargs in (("text/html", {"charset": charset}), (f"text/html; charset={charset}", {})):
        result = extract_page(body.encode("utf-8"), url="https://a.b/", media_type=media_type, **kwargs)
        assert result.title == "Café \\x41"
    text = extract_page("Caf\xe9".encode(), url="https://a.b/", media_type="text/plain", charset=charset)
    assert text.text == "Café"


def test_decode_body_replaces_invalid_bytes_and_passes_text_through():
    assert decode_body(b"caf\xe9 ok", media_type="text/html") == "caf\ufffd ok"  # no declaration: UTF-8
    assert decode_body("déjà", media_type="text/html", charset="ascii") == "déjà"
    # a page that says it is UTF-16 in ASCII is not: UTF-8 (the WHATWG rule)
    assert decode_body(b'<meta charset="utf-16"><p>\xc3\xa9', media_type="text/html").endswith("é")
    # a declaration in a comment is not one; past the first 4 KB it is not looked for
    assert decode_body(b'<!-- <meta charset="koi8-r"> --><p>\xc3\xa9', media_type="text/html").endswith("é")
    late = b" " * 5000 + b'<meta charset="windows-1252"><p>\xc3\xa9'
    assert decode_body(late, media_type="text/html").endswith("é")
    xhtml = b'<?xml version="1.0" encoding="windows-1252"?><html><body><p>caf\xe9</p></body></html>'
    assert "café" in decode_body(xhtml, media_type="application/xhtml+xml")
    assert extract_page(xhtml, url="https://a.b/", media_type="application/xhtml+xml").text == "café"


# --- title and author -------------------------------------------------------------------------


def test_title_and_author_are_one_line_plain_strings_with_invisible_characters_left_for_the_caller():
    head = '<meta name="author" content="Bob \n\t Smith\u2028Jr"><title>\n  A   title\r\n</title>'
    article = "<article><p>" + "Some article text. " * 30 + "</p></article>"
    html = f"<html><head>{head}</head><body>{article}</body></html>"
    for format in ("markdown", "text"):
        result = extract_page(html.encode(), url="https://a.b/", media_type="text/html", format=format)
        assert (result.title, result.provenance.author) == ("A title", "Bob Smith Jr")
        assert type(result.title) is str and type(result.provenance.author) is str
    # invisible characters are the caller's to find and report (page.py strips them from both)
    tags = "\U000e0049\U000e0047"
    body = f"# Title \u202eevil\u202c {tags}\u200b\n\nbody text"
    result = extract_page(body.encode(), url="https://a.b/r.md", media_type="text/markdown")
    assert result.title == f"Title \u202eevil\u202c {tags}\u200b"


def test_a_long_title_and_author_are_cut_to_300_characters():
    long = "word " * 200
    html = (
        f'<html><head><title>{long}</title><meta name="author" content="{long}"></head>'
        f"<body><article><p>{'Some article text. ' * 30}</p></article></body></html>"
    )
    for format in ("markdown", "text"):
        result = extract_page(html, url="https://a.b/", media_type="text/html", format=format)
        assert len(result.title) == 300 and result.title.endswith("word…")
        assert len(result.provenance.author) <= 300 and result.provenance.author.endswith("…")
    result = extract_page(f"# {long}\n\nbody", url="https://a.b/", media_type="text/markdown")
    assert len(result.title) <= 300


# --- dates ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-01", date(2024, 3, 1)),
        ("  2024-03-01\n", date(2024, 3, 1)),
        ("2024-03-01T23:30:00-05:00", date(2024, 3, 1)),  # the day as stated, not moved to UTC
        ("2024-03-01T10:00:00Z", date(2024, 3, 1)),
        ("2024-03-01 10:00", date(2024, 3, 1)),
        ("Fri, 01 Mar 2024 10:00:00 GMT", date(2024, 3, 1)),
        ("1850-07-04", date(1850, 7, 4)),
        (date(2024, 3, 1), date(2024, 3, 1)),
        (datetime(2024, 3, 1, 23, 59), date(2024, 3, 1)),
        ("2023-02-30", None),
        ("2024-13-01", None),
        ("2024-03", None),
        ("2024-03-011", None),
        ("24-03-01", None),
        ("March 2024", None),
        ("", None),
        (None, None),
        (20240301, None),
        ("2024-03-01" + " " * 200, None),
    ],
)
def test_parse_day_reads_iso_dates_and_date_times_and_nothing_else(value, expected):
    assert parse_day(value) == expected


# --- text, Markdown, PDF, errors ------------------------------------------------------------


def test_plain_text_is_returned_as_is_with_its_first_line_as_title():
    result = extract_page(
        b"\n  First line\r\nsecond line\r\n", url="https://a.b/t.txt", media_type="text/plain"
    )
    assert result.markdown == result.text == "\n  First line\nsecond line\n"
    assert result.title == "First line"
    assert result.provenance.word_count == 4


def test_markdown_is_returned_as_is_with_its_first_heading_as_title():
    body = "Intro line\n\n## The *real* title\n\n- item [link](https://x.org)\n"
    result = extract_page(body.encode("utf-8"), url="https://a.b/r.md", media_type="text/markdown")
    assert result.markdown == body
    assert result.title == "The real title"
    assert result.text == "Intro line\n\nThe real title\n\nitem link\n"


def test_format_text_of_markdown_is_its_text_and_the_hash_follows():
    body = "## The *real* title\n\n- item\n"
    result = extract_page(body, url="https://a.b/r.md", media_type="text/markdown", format="text")
    assert result.markdown == result.text == "The real title\n\nitem\n"
    assert result.provenance.content_hash == hashlib.sha256(result.text.encode("utf-8")).hexdigest()


def make_pdf(pages: list[list[str]], info: dict[str, str], lang: str) -> bytes:
    """A minimal PDF with one Helvetica text line per string, an information dictionary and a
    catalog /Lang; offsets computed so the cross-reference table is exact."""
    page_ids = [4 + 2 * i for i in range(len(pages))]
    objects = [
        f"<< /Type /Catalog /Pages 2 0 R /Lang ({lang}) >>".encode(),
        f"<< /Type /Pages /Kids [{' '.join(f'{i} 0 R' for i in page_ids)}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for page_id, lines in zip(page_ids, pages, strict=True):
        content = (
            b"BT /F1 12 Tf 72 720 Td 14 TL " + b" ".join(f"({line}) '".encode() for line in lines) + b" ET"
        )
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >>"
            f" /Contents {page_id + 1} 0 R >>".encode()
        )
        objects.append(f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream")
    objects.append(("<< " + " ".join(f"/{key} ({value})" for key, value in info.items()) + " >>").encode())
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info {len(objects)} 0 R >>\n"
        f"startxref\n{xref}\n%%EOF\n"
    ).encode()
    return bytes(out)


def test_a_pdf_is_read_page_by_page_with_its_document_information():
    pdf = make_pdf(
        [["Groundhog reads PDFs.", "A second line."], [], ["Page three is about rockets."]],
        {
            "Title": "A test PDF",
            "Author": "Jane Roe",
            "CreationDate": "D:20210304101500Z",
            "ModDate": "D:20220506",
        },
        "en-US",
    )
    result = extract_page(pdf, url="https://a.b/doc.pdf", media_type="application/pdf")
    assert result.markdown == (
        "## Page 1\n\nGroundhog reads PDFs.\nA second line.\n\n## Page 3\n\nPage three is about rockets."
    )
    assert result.title == "A test PDF"
    provenance = result.provenance
    assert (provenance.author, provenance.published, provenance.modified) == (
        "Jane Roe",
        "2021-03-04",
        "2022-05-06",
    )
    assert provenance.language == "en-US"
    assert provenance.content_hash == hashlib.sha256(result.markdown.encode()).hexdigest()


def test_a_broken_pdf_gives_empty_content():
    result = extract_page(
        b"%PDF-1.7\n1 0 obj << /Type /Catalog", url="https://a.b/x.pdf", media_type="application/pdf"
    )
    assert result.markdown == "" and result.provenance.word_count == 0
    assert not result.incomplete  # unreadable is not cut short: there is nothing to read


def crafted_pdf(pages: int, raw_bytes: int) -> bytes:
    """The review's hostile PDF: each page one Flate stream of a text-showing operator repeated
    (a few KB compressed, megabytes decompressed), which pypdf takes seconds a page to read."""
    raw = b"BT /F1 12 Tf 10 10 Td (hello world) Tj ET\n" * (raw_bytes // 40)
    stream = zlib.compress(raw, 9)
    kids = " ".join(f"{3 + 2 * i} 0 R" for i in range(pages))
    objects = [b"<</Type/Catalog/Pages 2 0 R>>", f"<</Type/Pages/Kids[{kids}]/Count {pages}>>".encode()]
    font = "/Resources<</Font<</F1<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>>>>>"
    for i in range(pages):
        objects.append(
            f"<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]/Contents {4 + 2 * i} 0 R{font}>>".encode()
        )
        objects.append(
            f"<</Length {len(stream)}/Filter/FlateDecode>>stream\n".encode() + stream + b"\nendstream"
        )
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj".encode() + body + b"endobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer<</Size {len(objects) + 1}/Root 1 0 R>>\nstartxref\n{xref}\n%%EOF".encode()
    return bytes(out)


def test_a_pdf_that_reads_too_long_is_stopped_and_flagged_incomplete():
    pdf = crafted_pdf(3, 4_000_000)  # 38 KB: over 30 s of pypdf unbounded
    assert len(pdf) < 50_000
    result = extract_page(pdf, url="https://a.b/x.pdf", media_type="application/pdf", timeout=1)
    assert result.incomplete
    assert re.fullmatch(
        r"PDF reading stopped after 1 s: (no page read|\d of 3 pages read)", result.incomplete_reason
    )
    assert result.provenance.content_hash == hashlib.sha256(result.markdown.encode()).hexdigest()


def test_a_small_crafted_pdf_is_read_in_full_when_time_allows():
    result = extract_page(crafted_pdf(2, 40_000), url="https://a.b/x.pdf", media_type="application/pdf")
    assert not result.incomplete and result.incomplete_reason is None
    assert result.markdown.startswith("## Page 1\n\nhello world") and "\n\n## Page 2\n\n" in result.markdown
    assert len(result.title) == 300  # the first line, cut


def test_a_pdf_over_the_character_cap_returns_the_pages_before_it_flagged():
    pages = [[f"Page {n} line {i} with some words in it." for i in range(20)] for n in range(1, 4)]
    pdf = make_pdf(pages, {"Title": "Capped"}, "en")
    full = extract_page(pdf, url="https://a.b/c.pdf", media_type="application/pdf")
    assert not full.incomplete and "## Page 3" in full.markdown
    page_chars = len("\n".join(pages[0]))
    result = extract_page(
        pdf, url="https://a.b/c.pdf", media_type="application/pdf", max_chars=page_chars + 50
    )
    assert result.incomplete
    assert result.incomplete_reason == f"PDF text over {page_chars + 50:,} characters: 2 of 3 pages read"
    assert "Page 1 line 19" in result.markdown and "Page 2 line 0 with" in result.markdown
    assert "Page 2 line 2" not in result.markdown and "## Page 3" not in result.markdown
    assert result.title == "Capped"


def test_pages_beyond_the_page_limit_are_not_read_and_say_so(monkeypatch):
    monkeypatch.setattr(extract, "MAX_PDF_PAGES", 2)
    pdf = make_pdf([["one"], ["two"], ["three"]], {}, "en")
    result = extract_page(pdf, url="https://a.b/c.pdf", media_type="application/pdf")
    assert result.markdown == "## Page 1\n\none\n\n## Page 2\n\ntwo"
    assert (result.incomplete, result.incomplete_reason) == (True, "PDF of 3 pages: the first 2 read")


def test_a_pdf_reader_that_cannot_start_or_get_a_slot_gives_a_flagged_empty_result(monkeypatch):
    pdf = make_pdf([["one"]], {}, "en")
    monkeypatch.setattr(extract, "_PDF_SLOTS", threading.Semaphore(0))
    result = extract_page(pdf, url="https://a.b/c.pdf", media_type="application/pdf", timeout=0.05)
    assert (result.markdown, result.incomplete) == ("", True)
    assert result.incomplete_reason == "PDF not read: 4 other PDFs were being read for 0.05 s"
    monkeypatch.undo()
    monkeypatch.setattr(extract.sys, "executable", "/nonexistent/python")
    result = extract_page(pdf, url="https://a.b/c.pdf", media_type="application/pdf")
    assert result.incomplete_reason == "PDF not read: the reader process could not be started"


def test_reading_a_pdf_leaves_this_process_logging_alone():
    before = logging.getLogger("pypdf").level
    extract_page(make_pdf([["one"]], {}, "en"), url="https://a.b/c.pdf", media_type="application/pdf")
    assert logging.getLogger("pypdf").level == before


def test_unread_media_types_and_formats_are_refused_by_name():
    with pytest.raises(ValueError, match="media type 'image/png' is not read"):
        extract_page(b"\x89PNG", url="https://a.b/i.png", media_type="image/png")
    with pytest.raises(ValueError, match="format: 'html' is not one of markdown, text"):
        extract_page(b"<p>x</p>", url="https://a.b/", media_type="text/html", format="html")


def test_importing_the_module_loads_no_parser():
    import subprocess
    import sys

    code = (
        "import sys; import lynxc.runtime.backends.groundhog.extract, lynxc.runtime.backends.groundhog.rank; "
        "print(sorted(m for m in ('trafilatura', 'lxml', 'pypdf') if m in sys.modules))"
    )
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        == "[]\n"
    )

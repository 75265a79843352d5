"""The site's files from the servers' `ServerDoc`s: Jinja2 templates with autoescape on, the
bundled stylesheet and script, and the search data embedded in the index page (a page opened
from file:// cannot fetch() a JSON file beside it)."""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup, escape

from ..backticks import code_spans
from .model import ServerDoc

ASSETS = ("docs.css", "docs.js")
MARKER = ".lynxc-docs"  # in every site lynxc writes: `lynxc docs` replaces no other folder
MARKER_TEXT = "This folder is written by `lynxc docs` and replaced whole by its next run.\n"
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def code_text(text: str) -> Markup:
    """Text with its `backticked` spans as <code>, everything escaped."""
    out = []
    last = 0
    for match in code_spans(text):
        out.append(escape(text[last : match.start()]))
        out.append(Markup("<code>{}</code>").format(match.group(1)))
        last = match.end()
    out.append(escape(text[last:]))
    return Markup("").join(out)


def paragraph(text: str) -> Markup:
    """One description section: lines that start with `- ` become a list, the rest a paragraph
    with its line breaks kept."""
    lines = text.splitlines()
    if lines and all(re.match(r"^\s*[-*] ", line) for line in lines):
        items = Markup("").join(
            Markup("<li>{}</li>").format(code_text(re.sub(r"^\s*[-*] ", "", line))) for line in lines
        )
        return Markup("<ul>{}</ul>").format(items)
    body = Markup("<br>\n").join(code_text(line) for line in lines)
    return Markup("<p>{}</p>").format(body)


def embedded_json(value: Any) -> Markup:
    """JSON safe inside <script type="application/json">: no `<`, `>` or `&` can close it."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    for char, escaped in _JSON_ESCAPES.items():
        text = text.replace(char, escaped)
    return Markup(text)


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("lynxc.compiler.docs", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["code"] = code_text
    env.filters["paragraph"] = paragraph
    env.filters["embedded_json"] = embedded_json
    return env


def search_entries(docs: list[ServerDoc]) -> list[dict[str, str]]:
    """One entry per tool of every server: what the index's search box looks in."""
    return [
        {
            "server": doc.name,
            "tool": tool.name,
            "title": tool.title,
            "text": " ".join(tool.sections)[:2000],
            "summary": tool.summary,
            "href": f"{doc.name}/index.html#{tool.anchor}",
        }
        for doc in docs
        for tool in doc.tools
    ]


def render_site(docs: list[ServerDoc]) -> dict[str, str]:
    """{path relative to the site: text} of the whole site, sorted, the same bytes for the same
    servers."""
    docs = sorted(docs, key=lambda d: d.name)
    env = _environment()
    files: dict[str, str] = {MARKER: MARKER_TEXT}
    package = resources.files("lynxc.compiler.docs") / "assets"
    for asset in ASSETS:
        files[f"assets/{asset}"] = (package / asset).read_text(encoding="utf-8")
    files["index.html"] = env.get_template("index.html.j2").render(
        servers=docs, search=search_entries(docs), root="", page="index"
    )
    for doc in docs:
        files[f"{doc.name}/index.html"] = env.get_template("server.html.j2").render(
            server=doc, root="../", page="server"
        )
        files[f"{doc.name}/changelog.html"] = env.get_template("changelog.html.j2").render(
            server=doc, root="../", page="changelog"
        )
    return dict(sorted(files.items()))

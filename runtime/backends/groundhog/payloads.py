"""Visible text that attacks the reader rather than hiding from it: prompt delimiters a model
may take for its own (`<|im_start|>system`, `[INST]`, `<<SYS>>`, `</tool_result>`) and
instructions encoded so a human skims past them (base64 text, `data:` URIs holding text).

They stay in the content (a human reader sees them too, and removing words would misquote the
page) but are reported as threats, `delimiter` and `encoded`, beside the hidden-content types,
and research fences every passage so none of them can pass for the client's own markup.
"""

from __future__ import annotations

import base64
import binascii
import re

from .hidden import Threat

MAX_FINDINGS = 20
EXCERPT_CHARS = 200
# Chat-template and tool-protocol markers of the common model families, and the XML-ish tags
# agents wrap tool output in. Matched in page text, where no honest page needs them as markup.
_DELIMITER = re.compile(
    r"<\|(?:im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|eot_id)\|>"
    r"|\[/?INST\]|<</?SYS>>"
    r"|</?(?:system|tool_result|tool_call|function_results|function_calls|assistant|user_message)>",
    re.IGNORECASE,
)
_MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>|])")
_TAGS = re.compile(r"<(?!<|/?SYS>>|\|)[^>]{0,200}>")
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=])")
_DATA_URI = re.compile(r"data:(text/[\w.+-]+)(?:;[\w=.-]+)*;base64,([A-Za-z0-9+/=]{8,})", re.IGNORECASE)


def find_payloads(text: str, html: str | None = None) -> list[Threat]:
    """Threats in the content a reader gets (and in the page's `data:` URIs, which never reach
    the content but are a known way to smuggle text past a filter)."""
    found: list[Threat] = []
    text = _MARKDOWN_ESCAPE.sub(r"\1", text)  # `\[INST\]` in Markdown is `[INST]` to a reader
    markers = set()
    for match in _DELIMITER.finditer(text):
        markers.add(match.group(0).lower())
        found.append(
            Threat(
                "delimiter",
                f"prompt delimiter {match.group(0)!r} in the page text",
                _line(text, match.start()),
                _excerpt(text[match.start() : match.start() + EXCERPT_CHARS]),
            )
        )
    # An HTML parser takes `<<SYS>>` or `<system>` for markup and drops it from the text: the
    # page's source says what it holds.
    for match in _DELIMITER.finditer(html or ""):
        if match.group(0).lower() not in markers:
            markers.add(match.group(0).lower())
            found.append(
                Threat(
                    "delimiter",
                    f"prompt delimiter {match.group(0)!r} in the page's HTML",
                    _line(html or "", match.start()),
                    _excerpt(_TAGS.sub(" ", (html or "")[match.start() : match.start() + EXCERPT_CHARS])),
                )
            )
    for match in _BASE64.finditer(text):
        decoded = _readable(match.group(0))
        if decoded is not None:
            found.append(
                Threat(
                    "encoded",
                    "base64 text that decodes to words",
                    _line(text, match.start()),
                    _excerpt(decoded),
                )
            )
    for match in _DATA_URI.finditer(html or ""):
        decoded = _readable(match.group(2))
        if decoded is not None:
            found.append(Threat("encoded", f"a data: URI holding {match.group(1)}", None, _excerpt(decoded)))
    return _merged(found)[:MAX_FINDINGS]


def _readable(candidate: str) -> str | None:
    """The decoded text when `candidate` is base64 of words (letters and spaces), else None: an
    identifier, a hash or an image's bytes decode to something else."""
    try:
        raw = base64.b64decode(candidate + "=" * (-len(candidate) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    letters = sum(c.isalpha() or c == " " for c in text)
    return text if " " in text and letters >= 0.8 * len(text) else None


def _merged(found: list[Threat]) -> list[Threat]:
    seen: dict[tuple[str, str], Threat] = {}
    for threat in found:
        key = (threat.type, threat.excerpt)
        if key in seen:
            earlier = seen[key]
            seen[key] = Threat(
                earlier.type, earlier.reason, earlier.location, earlier.excerpt, earlier.seen + 1
            )
        else:
            seen[key] = threat
    return list(seen.values())


def _line(text: str, offset: int) -> str:
    return f"line {text.count(chr(10), 0, offset) + 1}"


def _excerpt(text: str) -> str:
    return " ".join(text.split())[:EXCERPT_CHARS]

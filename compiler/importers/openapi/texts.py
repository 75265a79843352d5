"""Text from the document made safe for a spec: braces doubled (a spec's `{...}` quotes a cap),
backticked bare names unquoted (a spec's `name` must name a tool of the server), whitespace
collapsed, long text cut at a sentence so the description stays within the lint's budget."""

from __future__ import annotations

import re

_CODE_NAME = re.compile(r"`([A-Za-z][A-Za-z0-9_]*)`")
_SPACE = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(`])")
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]{0,200}>")

MAX_SECTION_CHARS = 600  # four sections stay under the lint's 500-token budget for a description


def clean_text(text: str, limit: int = MAX_SECTION_CHARS, *, template: bool = True) -> str:
    """`template`: the text is a spec description, where `{...}` quotes a cap."""
    plain = _HTML_TAG.sub(" ", text)
    plain = _CODE_NAME.sub(lambda m: f"'{m.group(1)}'", plain)
    plain = _SPACE.sub(" ", plain).strip()
    plain = shorten(plain, limit)
    return plain.replace("{", "{{").replace("}", "}}") if template else plain


def shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    kept = ""
    for sentence in sentences(text):
        if len(kept) + len(sentence) + 1 > limit:
            break
        kept = f"{kept} {sentence}".strip()
    return kept or text[: limit - 3].rstrip() + "..."


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text.strip()) if s]


def first_sentence(text: str) -> tuple[str, str]:
    """The first sentence of `text` and the rest."""
    parts = sentences(_SPACE.sub(" ", _HTML_TAG.sub(" ", text)).strip())
    if not parts:
        return "", ""
    return parts[0], " ".join(parts[1:])


def as_sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."

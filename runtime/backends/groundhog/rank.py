"""Rank passages against a query (BM25) and fit the best of them into a token budget.

- `rank_passages`: Okapi BM25 (k1 1.2, b 0.75, Lucene's non-negative idf) over the passages
  given, each passage's heading counted as part of its text; the statistics (document
  frequencies, average length) are those of this set of passages, so a word every source uses is
  worth little. Scores are divided by the best one: the best passage scores 1.0.
- `fit_budget`: best first, each passage that fits is kept; the top passage always is, cut to the
  budget (tokens.cut_to_tokens) when it alone is over it.

Standard library only: this runs on every `read_url` with a query and every `research`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import replace

from .passages import Passage, markdown_to_text
from .tokens import count_tokens, cut_to_tokens

K1 = 1.2
B = 0.75

# The commonest English function words: they match every passage and only add noise. Short on
# purpose: "not", "no", numbers and domain words ("use", "new") stay searchable.
_STOPWORDS = """a an and are as at be been but by can could did do does for from had has have he her his
    how i if in into is it its me my of on or our she so than that the their them then there these
    they this those to was we were what when where which who whom why will with would you your"""
STOPWORDS = frozenset(_STOPWORDS.split())

_WORD = re.compile(r"\w+")


def tokenize(text: str, *, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """Unicode words, case-folded, without stopwords. `_` joins a word (`snake_case` is one)."""
    return [word for word in _WORD.findall(text.casefold()) if word not in stopwords]


def rank_passages(query: str, passages: list[Passage]) -> list[tuple[Passage, float]]:
    """The passages that share a word with `query`, best first, scored in (0, 1] by BM25 divided
    by the best score; equal scores keep document order. Passages with no query word are left
    out, so an empty list means nothing matched. A query of stopwords only ("what is it") is
    matched on those words rather than on nothing."""
    stopwords = STOPWORDS if set(tokenize(query)) else frozenset()
    terms = set(tokenize(query, stopwords=stopwords))
    if not terms or not passages:
        return []
    documents = [
        Counter(tokenize(f"{passage.heading or ''}\n{markdown_to_text(passage.text)}", stopwords=stopwords))
        for passage in passages
    ]
    lengths = [sum(document.values()) for document in documents]
    average = (sum(lengths) / len(lengths)) or 1.0
    count = len(documents)
    idf = {}
    for term in terms:
        frequency = sum(1 for document in documents if term in document)
        idf[term] = math.log(1 + (count - frequency + 0.5) / (frequency + 0.5))
    scores = []
    for document, length in zip(documents, lengths, strict=True):
        norm = K1 * (1 - B + B * length / average)
        score = 0.0
        for term in terms:
            tf = document.get(term, 0)
            if tf:
                score += idf[term] * tf * (K1 + 1) / (tf + norm)
        scores.append(score)
    best = max(scores)
    if best <= 0:
        return []
    order = sorted(range(count), key=lambda i: -scores[i])  # stable: ties keep document order
    return [(passages[i], scores[i] / best) for i in order if scores[i] > 0]


def fit_budget(
    ranked: list[tuple[Passage, float]], max_tokens: int
) -> tuple[list[tuple[Passage, float, bool]], bool, int]:
    """Keep passages best first while the budget lasts: each one that fits in what is left is
    kept (a smaller, lower one may still fit after a large one was set aside); the top passage is
    always kept, and when it alone is over `max_tokens` it is cut to the budget at a sentence or
    word end (`text` and `end` shortened, `start` unchanged) and flagged clamped. With a budget
    below 1 that cut leaves an empty text.

    Returns (kept as (passage, score, clamped) in rank order, truncated: something was set aside
    or cut, set_aside: how many passages were left out)."""
    kept: list[tuple[Passage, float, bool]] = []
    used = 0
    for index, (passage, score) in enumerate(ranked):
        size = count_tokens(passage.text)
        if used + size <= max_tokens:
            kept.append((passage, score, False))
            used += size
        elif index == 0:
            text = cut_to_tokens(passage.text, max_tokens)
            kept.append((replace(passage, text=text, end=passage.start + len(text)), score, True))
            used += count_tokens(text)
    set_aside = len(ranked) - len(kept)
    clamped = any(flag for _, _, flag in kept)
    return kept, set_aside > 0 or clamped, set_aside

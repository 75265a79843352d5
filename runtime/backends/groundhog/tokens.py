"""Token budgets: the unit every budget is counted in, and the one way a text is cut to one.

- `count_tokens`: the unit of every budget (see its comment for the estimate).
- `cut_to_tokens`: the one way any text is cut to a token budget (the top passage in
  rank.fit_budget, a whole page without a query in `read_url`), so every cut ends at a sentence or
  word end alike.

Its own module, below both passages.py (which sizes passages with it) and rank.py (which ranks
passages and fits them to a budget), so neither imports the other in a circle.
Standard library only.
"""

from __future__ import annotations

import re


def count_tokens(text: str) -> int:
    """An estimate of a model's tokens in `text`: UTF-8 bytes / 4, rounded up.

    Byte-pair tokenizers (GPT, Claude, Llama) work on UTF-8 bytes and average about four bytes per
    token on English prose, so this is the familiar "4 characters a token" for ASCII, while
    Cyrillic or Greek (2 bytes a letter) count about 2 letters a token and Chinese or Japanese (3
    bytes) about 1.3 characters a token, close to what those tokenizers produce. A real tokenizer
    would tie the budget to one model family and cost a vocabulary load; the budget is a bound
    on size, not a bill. Monotonic in the text's length, so a prefix never counts more.
    """
    return -(-len(text.encode("utf-8", errors="replace")) // 4)


_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’)\]]*(?=\s)")


def cut_to_tokens(text: str, max_tokens: int) -> str:
    """`text` cut to fit `max_tokens` (count_tokens units): the text itself when it fits, else its
    longest prefix that fits, ended at a sentence end if one is in that prefix's second half, else
    at a word end if one is, else where the budget runs out; trailing whitespace removed. Always a
    prefix of `text` (offsets into it stay valid) and never over the budget; a budget below 1 gives
    "". The package's only text cutter: use it wherever a text must fit a budget."""
    if count_tokens(text) <= max_tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # count_tokens never shrinks as the prefix grows: bisect the longest one
        middle = (low + high + 1) // 2
        if count_tokens(text[:middle]) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    prefix = text[:low]
    sentence_ends = [match.end() for match in _SENTENCE_END.finditer(prefix + " ")]
    if sentence_ends and sentence_ends[-1] > len(prefix) // 2:
        return prefix[: sentence_ends[-1]].rstrip()
    space = max(prefix.rfind(" "), prefix.rfind("\n"), prefix.rfind("\t"))
    if space > 0 and text[len(prefix) : len(prefix) + 1].strip():  # the cut is inside a word
        return prefix[:space].rstrip()
    return prefix.rstrip()

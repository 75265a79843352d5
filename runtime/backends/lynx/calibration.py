"""Per-embedder constants measured on lynx-mcp's judged sets (bench/retrieval_quality.py): five
sets of different character (Cranfield prose; code-search, docstring -> function with the
docstring removed from the index; identifiers, queries that name an API; snippets, code-search
over stand-alone functions; web-questions, short web-search-style questions over one short
function per file) and 66 nonsense queries. An embedder not measured here gets the minilm values.

KEYWORD_WEIGHT, the sparse ranking's share in score fusion (fusion.py), is the weight whose worst
margin over the better single mode, across the four sets, is largest. With minilm every weight
from 0.1 to 0.7 beats both single modes on every set (nDCG@10); 0.5 is the plateau's middle and
its best worst case. With static, dense retrieval is too weak on code (nDCG@10 0.045 against
BM25's 0.427 on code-search) for any mix to beat BM25 alone, so hybrid is BM25 there.

AGREEMENT_POWER is how sharply that weight gives way, per query, when BM25's best hits are less
similar to the query than the dense ranking's (fusion.adapted_keyword_weight; a query naming
code keeps the weight). The fixed weight 0.5 was measured on the first four sets, where both
modes are about as good; on web-questions dense retrieval is far ahead (nDCG@10 0.718 against
BM25's 0.267), its questions share only common words with their answers, and the fixed weight
lost to dense alone by 0.177 (95% interval [-0.234, -0.121]). Of the powers measured (0, 4, 8,
12, 16, 20, 24, 32), 20 is the one at which no set's mean paired difference from its better mode
is below 0 (the worst, web-questions, +0.001 [-0.006, +0.013]; at 16 it is -0.010, at 24
-0.003, at 32 -0.001: the same question set, so noise decides among the high powers), and at
20 the weight 0.5 still has the best worst case. It gives back part of the fixed weight's gain
where both modes are good (code-search +0.014 over dense, against +0.054 with the fixed weight;
identifiers, whose queries name code, keep +0.077). Static needs none: its weight is 1.

MIN_SCORE, deep_search's default threshold on similarity (the cosine), is the highest best
similarity any nonsense query worded as a question or a word salad reached on any set, plus a
margin of 0.03: minilm's reached 0.390 at most (judged queries: the 3rd result is at 0.42 or
above for 92% of them, the best for 98%), and stopword-only queries ("AND OR NOT", "what is
it") stay as low; static's reached 0.693, and its stopword-only queries reach 0.895, which no
useful threshold can stop: with static, similarity is a weak guide (its cosines run high for
everything) and a query without content words passes.
"""

from __future__ import annotations

KEYWORD_WEIGHT = {"minilm": 0.5, "static": 1.0}
AGREEMENT_POWER = {"minilm": 20.0, "static": 0.0}
MIN_SCORE = {"minilm": 0.42, "static": 0.72}
MEASURED_WITH = "minilm"


def keyword_weight(embedder: str) -> float:
    return KEYWORD_WEIGHT.get(embedder, KEYWORD_WEIGHT[MEASURED_WITH])


def agreement_power(embedder: str) -> float:
    return AGREEMENT_POWER.get(embedder, AGREEMENT_POWER[MEASURED_WITH])


def min_score(embedder: str) -> float:
    return MIN_SCORE.get(embedder, MIN_SCORE[MEASURED_WITH])

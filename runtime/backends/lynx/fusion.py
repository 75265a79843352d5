"""Fusion: each source's sparse and dense candidate pools -> one ranked list, with the score
that orders it. Pure functions over the pools; ranking.py fetches them.

- `score` (the default): each ranking's scores (BM25, cosine) standardized over its pool,
  every source's together (z-scores shifted so the pool's last candidate, and a candidate the
  ranking lacks, score 0),
  then a convex combination: w * sparse + (1 - w) * dense. Unlike ranks, standardized scores
  keep how far a hit stands out, so a ranking that is sure of its top outvotes one that is not.
  The reported score is the fused value over the answer's best, so the top hit scores 1.
- w adapts to the query (`adapted_keyword_weight`): the keyword_weight when the two rankings
  agree, less as the keyword ranking's best hits look less like the query than the dense
  ranking's do, judged by the one measure both share, the embedder's similarity. A question
  typed as into a web search ("python check if file exists") shares only common words with
  the code that answers it: BM25's best hits match those words and are about something else,
  and a fixed weight let them outvote a dense ranking that had the answer first. A query that
  names code (`Client.send`, `parse_header()`, `BaseLoader`) keeps the fixed weight
  (`query_agreement_power`): an exact name is BM25's strength, and the embedder's similarity
  judges a chunk holding it no higher than its neighbours.
- `rrf`: reciprocal rank fusion, k=60, every ranking of every source weighted equally (lynx's
  original fusion). It drags a strong ranking down when the other is weak. Reported score: the
  RRF sum over its largest possible value, in (0, 1].

The keyword weight is measured per embedder (calibration.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lynxc.runtime.backends.retrieval.identifiers import has_compound_identifier

from .calibration import AGREEMENT_POWER, KEYWORD_WEIGHT, MEASURED_WITH

FUSIONS = ("score", "rrf")
DEFAULT_FUSION = "score"
RRF_K = 60
DEFAULT_KEYWORD_WEIGHT = KEYWORD_WEIGHT[MEASURED_WITH]  # the default embedder's
DEFAULT_AGREEMENT_POWER = AGREEMENT_POWER[MEASURED_WITH]
AGREEMENT_TOP = 5  # how many of each ranking's best hits adapted_keyword_weight compares
FOUND = 1e-6  # see _standardized
_DOTTED_OR_CALLED = re.compile(r"\w\.[A-Za-z_]|\w\(")  # Client.send, send(); not 2.0


@dataclass(frozen=True)
class Candidate:
    """One chunk of one ranking: its id, the ranking's raw score (BM25, or cosine for dense),
    its cosine to the query, and the row it came from."""

    id: str
    raw: float
    cosine: float
    row: Mapping[str, Any]

    @property
    def similarity(self) -> float:
        """The cosine clipped to [0, 1]: the calibrated number a threshold is set on."""
        return min(max(self.cosine, 0.0), 1.0)


@dataclass(frozen=True)
class Ranked:
    source: str
    candidate: Candidate
    score: float


# Per source: (sparse pool, dense pool), each best first; a mode that did not run has [].
Pools = Mapping[str, tuple[Sequence[Candidate], Sequence[Candidate]]]


def fuse(
    pools: Pools,
    mode: str,
    fusion: str,
    keyword_weight: float = DEFAULT_KEYWORD_WEIGHT,
    agreement_power: float = DEFAULT_AGREEMENT_POWER,
) -> list[Ranked]:
    """Every candidate once, best first; equal scores by cosine, then source, path and line, so
    the order is the same on every call. `agreement_power` 0 keeps keyword_weight fixed.

    Scores are put on one scale over every source's pool together, never per source: per source,
    each source's best would score about 1 however weak, and a weak source would crowd out
    the good hits of the others."""
    if fusion not in FUSIONS:
        raise ValueError(f"unknown fusion {fusion!r} (known: {', '.join(FUSIONS)})")
    pools = {
        source: tuple(
            [c for c in ranking if math.isfinite(c.raw) and math.isfinite(c.cosine)] for ranking in both
        )
        for source, both in pools.items()
    }
    if mode == "dense":
        scored = {(s, c.id): Ranked(s, c, c.similarity) for s, (_, dense) in pools.items() for c in dense}
    elif mode == "sparse":
        best = max((c.raw for _, (sparse, _) in pools.items() for c in sparse), default=0.0)
        scored = {
            (s, c.id): Ranked(s, c, c.raw / best if best > 0 else 0.0)
            for s, (sparse, _) in pools.items()
            for c in sparse
        }
    elif fusion == "rrf":
        scored = _rrf(pools)
    else:
        scored = _by_score(pools, adapted_keyword_weight(pools, keyword_weight, agreement_power))
    return sorted(scored.values(), key=_order)


def query_agreement_power(query: str, agreement_power: float) -> float:
    """The agreement power for this query: 0 (the weight stays fixed) when it names code, a
    dotted name, a call or a CamelCase or snake_case identifier."""
    names_code = bool(_DOTTED_OR_CALLED.search(query)) or has_compound_identifier(query)
    return 0.0 if names_code else agreement_power


def adapted_keyword_weight(pools: Pools, keyword_weight: float, agreement_power: float) -> float:
    """keyword_weight with its odds against the dense side multiplied by agreement ** power:
    agreement is how similar to the query the sparse ranking's AGREEMENT_TOP best hits are,
    over how similar the dense ranking's are (each a mean discounted by rank as in DCG, so the
    order counts even where both tops hold the same chunks; at most 1, as the dense ranking's
    best are the most similar there are). Odds keep the ends: 1 stays BM25 alone, 0 dense alone."""
    if keyword_weight in (0.0, 1.0) or agreement_power == 0:
        return keyword_weight
    sparse, dense = ([c for both in pools.values() for c in both[side]] for side in (0, 1))
    if not sparse or not dense:
        return keyword_weight  # one ranking found nothing: nothing to compare
    top = min(AGREEMENT_TOP, len(sparse), len(dense))  # as many hits on each side
    similar_sparse, similar_dense = (_top_similarity(ranking, top) for ranking in (sparse, dense))
    if similar_dense <= 0:
        return keyword_weight
    agreement = min(similar_sparse / similar_dense, 1.0)
    odds = keyword_weight / (1 - keyword_weight) * agreement**agreement_power
    return odds / (1 + odds)


def _top_similarity(ranking: Sequence[Candidate], count: int) -> float:
    best = sorted(ranking, key=lambda c: -c.raw)[:count]  # every source's pool together
    discounts = [1 / math.log2(rank + 2) for rank in range(count)]
    return sum(d * c.similarity for d, c in zip(discounts, best, strict=True)) / sum(discounts)


def _order(item: Ranked) -> tuple[float, float, str, str, int, str]:
    row = item.candidate.row
    return (
        -item.score,
        -item.candidate.cosine,  # hits one ranking alone found tie at 0 on a side weighted 1
        item.source,
        row["path"],
        int(row["start_line"]),
        item.candidate.id,
    )


def _rrf(pools: Pools) -> dict[tuple[str, str], Ranked]:
    sums: dict[tuple[str, str], float] = {}
    chosen: dict[tuple[str, str], Candidate] = {}
    for source, rankings in pools.items():
        for ranking in rankings:
            for rank, c in enumerate(ranking):
                key = (source, c.id)
                sums[key] = sums.get(key, 0.0) + 1.0 / (RRF_K + rank + 1)
                chosen.setdefault(key, c)
    top = 2 / (RRF_K + 1)  # first in both of its source's rankings
    return {key: Ranked(key[0], chosen[key], value / top) for key, value in sums.items()}


def _by_score(pools: Pools, keyword_weight: float) -> dict[tuple[str, str], Ranked]:
    sums: dict[tuple[str, str], float] = {}
    chosen: dict[tuple[str, str], Candidate] = {}
    for side, weight in ((0, keyword_weight), (1, 1.0 - keyword_weight)):
        found = [(source, c) for source, both in pools.items() for c in both[side]]
        for (source, c), value in zip(found, _standardized([c.raw for _, c in found]), strict=True):
            key = (source, c.id)
            sums[key] = sums.get(key, 0.0) + weight * value
            chosen.setdefault(key, c)
    best = max(sums.values(), default=0.0)
    return {
        key: Ranked(key[0], chosen[key], value / best if best > 0 else 0.0) for key, value in sums.items()
    }


def _standardized(values: Sequence[float]) -> list[float]:
    """(value - lowest) / standard deviation: z-scores shifted so the lowest is 0, plus FOUND, so
    a candidate a ranking found stays above one it did not (which scores 0 there) when the other
    ranking does not tell them apart. A pool of one, or of equal scores, gives each 1."""
    if len(values) < 2:
        return [1.0] * len(values)
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    if spread == 0:
        return [1.0] * len(values)
    low = min(values)
    return [(v - low) / spread + FOUND for v in values]

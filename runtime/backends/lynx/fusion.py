"""Fusion: each source's sparse and dense candidate pools -> one ranked list, with the score
that orders it. Pure functions over the pools; ranking.py fetches them.

- `score` (the default): each ranking's scores (BM25, cosine) standardized over its pool
  (z-scores shifted so the pool's last candidate, and a candidate the ranking lacks, score 0),
  then a convex combination: keyword_weight * sparse + (1 - keyword_weight) * dense. Unlike
  ranks, standardized scores keep how far a hit stands out, so a ranking that is sure of its top
  outvotes one that is not. The reported score is the fused value over the answer's best, so the
  top hit scores 1.
- `rrf`: reciprocal rank fusion, k=60, every ranking of every source weighted equally (lynx's
  original fusion). It drags a strong ranking down when the other is weak. Reported score: the
  RRF sum over its largest possible value, in (0, 1].

The keyword weight is measured per embedder (calibration.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

FUSIONS = ("score", "rrf")
DEFAULT_FUSION = "score"
RRF_K = 60
DEFAULT_KEYWORD_WEIGHT = 0.5
FOUND = 1e-6  # see _standardized


@dataclass(frozen=True)
class Candidate:
    """One chunk of one ranking: its id, the ranking's raw score (BM25, or cosine for dense),
    its cosine similarity to the query in [0, 1], and the row it came from."""

    id: str
    raw: float
    similarity: float
    row: Mapping[str, Any]


@dataclass(frozen=True)
class Ranked:
    source: str
    candidate: Candidate
    score: float


# Per source: (sparse pool, dense pool), each best first; a mode that did not run has [].
Pools = Mapping[str, tuple[Sequence[Candidate], Sequence[Candidate]]]


def fuse(
    pools: Pools, mode: str, fusion: str, keyword_weight: float = DEFAULT_KEYWORD_WEIGHT
) -> list[Ranked]:
    """Every candidate once, best first; ties by source, path and line, so the order is the
    same on every call."""
    if fusion not in FUSIONS:
        raise ValueError(f"unknown fusion {fusion!r} (known: {', '.join(FUSIONS)})")
    scored: dict[tuple[str, str], Ranked] = {}
    if mode == "dense":
        for source, (_, dense) in pools.items():
            for c in dense:
                scored[(source, c.id)] = Ranked(source, c, c.similarity)
    elif mode == "sparse":
        # BM25 relative to each source's best match: raw BM25 of two tables has no common scale
        # (each has its own term statistics), so sources interleave by how close to their best.
        for source, (sparse, _) in pools.items():
            best = max((c.raw for c in sparse), default=0.0)
            for c in sparse:
                scored[(source, c.id)] = Ranked(source, c, c.raw / best if best > 0 else 0.0)
    elif fusion == "rrf":
        scored = _rrf(pools)
    else:
        scored = _by_score(pools, keyword_weight)
    return sorted(scored.values(), key=_order)


def _order(item: Ranked) -> tuple[float, str, str, int, str]:
    row = item.candidate.row
    return (-item.score, item.source, row["path"], int(row["start_line"]), item.candidate.id)


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
    for source, (sparse, dense) in pools.items():
        for ranking, weight in ((sparse, keyword_weight), (dense, 1.0 - keyword_weight)):
            for c, value in zip(ranking, _standardized([c.raw for c in ranking]), strict=True):
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

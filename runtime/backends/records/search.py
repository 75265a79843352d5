"""The four ways search_records matches `query` against one resource's table.

- `text`: BM25 full-text search on `_terms` (the keyword fields as search terms, tokens.py: stop
  words kept, symbols named, identifiers whole and split; the query goes through the same
  function), best first.
- `semantic`: cosine nearest neighbours of the query's embedding on `_vector` (the meaning
  fields, embedded by the embedder the resource was loaded with). A resource without meaning
  fields has no vectors: nothing is returned, and execution_info says so.
- `hybrid`: the union of both rankings, fused by score: each ranking's scores (BM25, cosine)
  are standardized over its window, weighted by KEYWORD_WEIGHT and summed; a resource with
  only one of the two runs that one (execution_info says which).
- `vector_boosted`: every `text` match, in `text`'s order, except that the BOOSTED matches
  closest in meaning are lifted to the top. BOOSTED is below the default limit (5, the first
  page), so text's best hit stays on the first page: it is lifted or comes right after the
  lifted ones. Without vectors it is `text` (applied_search_type says so).

Filters are pre-filters: they apply inside each search, before ranking, so they never empty a
page that has matches further down. Each mode ranks at most WINDOW records; ties are broken by
record key, so a ranking is the same on every call and pages cut from it never overlap.

`_sys.relevance` is the score the list is ordered by, in [0, 1], so it never rises along a list:
- text: the BM25 score b as b / (b + BM25_HALF);
- semantic: the cosine, clipped to [0, 1];
- hybrid: the fused score f (0 for a record last in both rankings) as f / (f + 1);
- vector_boosted: 0.5 + cosine / 2 for the lifted records, the text relevance / 2 for the rest.
`_sys.similarity` is the cosine of the query's and the record's embeddings, clipped to [0, 1], in
every mode where both exist (as lynx-mcp's `similarity`): one record has one similarity for one
query whichever mode found it; null without vectors.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lynxc.runtime.errors import ToolError

from .definitions import Resource
from .tokens import term_text

SEARCH_TYPES = ("hybrid", "text", "semantic", "vector_boosted")
# The keyword ranking's share of a hybrid score, by embedder. Measured on Cranfield (1,400
# abstracts, 225 queries, nDCG@10, bench/records_quality.py): minilm 0.405 hybrid against 0.363
# text and 0.367 semantic; static 0.368 against 0.363 and 0.139 (the weaker embedder gets the
# smaller share, so hybrid stays at least as good as keyword search alone). Reciprocal rank
# fusion scored 0.401 and 0.273: with static, it let the weak ranking pull good hits down.
# Checked again on the tune half of bench/data/pep-questions (MRR@10 / Recall@10, minilm): 0.5
# 0.843 / 0.873, 0.6 0.843 / 0.867, 0.7 0.833 MRR@10 (bench/records_search_quality.py): 0.5 stays.
KEYWORD_WEIGHT = {"minilm": 0.5, "static": 0.75}
WINDOW = 1000
BOOSTED = 3
FIRST_PAGE = 5  # search_records' default limit; BOOSTED must stay below it
BM25_HALF = 10.0
ANN_REFINE = 1
ANN_EF = 2 * WINDOW


@dataclass(frozen=True)
class Ranking:
    """A search's whole ranked window: keys best first and each one's relevance."""

    keys: list[str]
    applied: str  # hybrid, text, semantic, vector_boosted or none: what really ran
    mode: str  # the same, said for a person
    scores: Mapping[str, float] = field(default_factory=dict)

    def page(self, offset: int, limit: int) -> tuple[list[str], bool]:
        return self.keys[offset : offset + limit], len(self.keys) > offset + limit

    def relevance(self, key: str) -> float | None:
        score = self.scores.get(key)
        return None if score is None else round(score, 4)


@dataclass(frozen=True)
class Searchable:
    """What the table of one resource offers: full-text (`_terms` with its index) and vectors."""

    resource: Resource
    embedder: str | None  # the embedder the stored vectors were made with; None: no vectors

    @property
    def has_text(self) -> bool:
        return bool(self.resource.keyword)

    @property
    def has_vectors(self) -> bool:
        return bool(self.resource.meaning) and self.embedder is not None


async def rank(
    table: Any,
    searchable: Searchable,
    query: str,
    vector: Any | None,
    search_type: str,
    where: str | None,
) -> Ranking:
    """Rank `table`'s records for `query` (`vector`: its embedding, when the resource has
    vectors)."""
    if search_type not in SEARCH_TYPES:
        raise ToolError(f"search_type: {search_type!r} is not one of {', '.join(SEARCH_TYPES)}")
    text, vectors = searchable.has_text, searchable.has_vectors and vector is not None
    keyword = ", ".join(searchable.resource.keyword)
    meaning = f"{searchable.embedder} embeddings of {', '.join(searchable.resource.meaning)}"
    if search_type == "vector_boosted" and text and vectors:
        return await _vector_boosted(table, query, vector, where, keyword, meaning)
    if search_type == "hybrid" and text and vectors:
        texts, nearest = await asyncio.gather(
            _text_ranking(table, query, where), _vector_ranking(table, vector, where)
        )
        fused = _fuse(texts, nearest, KEYWORD_WEIGHT.get(searchable.embedder or "", 0.5))
        mode = f"hybrid: BM25 over {keyword} and {meaning}, scores fused"
        return Ranking([k for k, _ in fused], "hybrid", mode, {k: _squash(f, 1.0) for k, f in fused})
    if search_type == "semantic" or (search_type == "hybrid" and not text):
        if not vectors:
            return Ranking([], "none", _NO_VECTORS.format(id=searchable.resource.id))
        nearest = await _vector_ranking(table, vector, where)
        note = "" if search_type == "semantic" else f" ({searchable.resource.id!r} has no keyword fields)"
        scores = {k: _cosine(1.0 - d) for k, d in nearest}
        return Ranking(list(scores), "semantic", f"meaning: cosine similarity of {meaning}{note}", scores)
    if not text:  # text or vector_boosted asked for
        return Ranking([], "none", _NO_TEXT.format(id=searchable.resource.id))
    texts = await _text_ranking(table, query, where)
    note = {
        "text": "",
        "hybrid": f" ({searchable.resource.id!r} has no embeddings)",
        "vector_boosted": f" ({searchable.resource.id!r} has no embeddings to boost by: BM25 order)",
    }[search_type]
    scores = {k: _squash(s, BM25_HALF) for k, s in texts}
    return Ranking(list(scores), "text", f"keyword: BM25 over {keyword}{note}", scores)


_NO_VECTORS = (
    "none: {id!r} has no embeddings (it declares no meaning fields), so nothing matches by meaning; "
    "use search_type text"
)
_NO_TEXT = "none: {id!r} declares no keyword fields, so nothing matches by keyword; use search_type semantic"


_NO_VECTORS = (
    "none: {id!r} has no embeddings (it declares no meaning fields), so nothing matches by meaning; "
    "use search_type text"
)
_NO_TEXT = "none: {id!r} declares no keyword fields, so nothing matches by keyword; use search_type semantic"


def _squash(score: float, half: float) -> float:
    """A score >= 0 into [0, 1), keeping its order: half scores 0.5."""
    score = max(score, 0.0)
    return score / (score + half)


def _cosine(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def _fuse(
    texts: Sequence[tuple[str, float]], nearest: Sequence[tuple[str, float]], keyword_weight: float
) -> list[tuple[str, float]]:
    """Both rankings' scores standardized over their windows (z-scores shifted so a ranking's
    last record scores 0, as does a record it lacks), weighted, summed; best first, ties by key."""
    scores: dict[str, float] = {}
    similarities = [(key, 1.0 - distance) for key, distance in nearest]
    for ranking, weight in ((texts, keyword_weight), (similarities, 1.0 - keyword_weight)):
        for key, value in _standardized(ranking):
            scores[key] = scores.get(key, 0.0) + weight * value
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


def _standardized(ranking: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    values = [value for _, value in ranking]
    if len(values) < 2:
        return [(key, 1.0) for key, _ in ranking]
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    if spread == 0:
        return [(key, 1.0) for key, _ in ranking]
    low = min(values)
    return [(key, (value - low) / spread) for key, value in ranking]


def _match(terms: str) -> Any:
    from lancedb.query import FullTextOperator, MatchQuery

    # A MatchQuery takes the words as they are: no query syntax (quotes, AND, parentheses) to trip
    # on. Any term matches, and BM25 ranks records holding more of them (and rarer ones) higher.
    return MatchQuery(terms, "_terms", operator=FullTextOperator.OR)


async def _text_matches(
    table: Any, query: str, where: str | None, columns: list[str]
) -> list[dict[str, Any]]:
    terms = term_text(query)
    if not terms:  # nothing searchable in the query (a lone "?"): no match, not an error
        return []
    builder = table.query().nearest_to_text(_match(terms))
    if where:
        builder = builder.where(where)
    rows = await _fts(builder.select(columns).limit(WINDOW).to_list())
    rows.sort(key=lambda row: (-row["_score"], row["_key"]))
    return rows


async def _text_ranking(table: Any, query: str, where: str | None) -> list[tuple[str, float]]:
    rows = await _text_matches(table, query, where, ["_key", "_score"])
    return [(row["_key"], float(row["_score"])) for row in rows]


async def _vector_ranking(table: Any, vector: Any, where: str | None) -> list[tuple[str, float]]:
    # Below the loader's ANN threshold the table has no vector index and the scan is exact.
    # Above it, HNSW explores ANN_EF candidates and the refine step recomputes the WINDOW best
    # by exact distance (LanceDB refuses an ef below WINDOW * ANN_REFINE). Measured on 200,000
    # records (64-d, 4 IVF partitions): ef 2000 / refine 1 kept recall@100 at 1.00 of the exact
    # scan with and without a filter, in 33 ms unfiltered against 71 ms for ef 5000 / refine 5
    # (156 ms against 67 ms with a filter on an eighth of them). On one table version the search is
    # deterministic, so pages cut from it never overlap.
    builder = (
        table.query()
        .nearest_to(vector)
        .column("_vector")
        .distance_type("cosine")
        .ef(ANN_EF)
        .refine_factor(ANN_REFINE)
    )
    if where:
        builder = builder.where(where)
    rows = await builder.select(["_key", "_distance"]).limit(WINDOW).to_list()
    rows.sort(key=lambda row: (row["_distance"], row["_key"]))
    return [(row["_key"], float(row["_distance"])) for row in rows]


async def _vector_boosted(
    table: Any, query: str, vector: Any, where: str | None, keyword: str, meaning: str
) -> Ranking:
    rows = await _text_matches(table, query, where, ["_key", "_score", "_vector"])
    # A record without a vector yet (loaded with --embed later) is matched, never lifted.
    cosines = {row["_key"]: similarity(row["_vector"], vector) for row in rows}
    embedded = [row["_key"] for row in rows if cosines[row["_key"]] is not None]
    by_meaning = sorted(embedded, key=lambda key: (-cosines[key], key))
    lifted = {key: 0.5 + cosines[key] / 2 for key in by_meaning[:BOOSTED]}
    scores = dict(lifted)
    for row in rows:  # text's order
        if row["_key"] not in lifted:
            scores[row["_key"]] = _squash(float(row["_score"]), BM25_HALF) / 2
    mode = (
        f"vector_boosted: BM25 matches in {keyword} in BM25 order, the {BOOSTED} closest by {meaning} "
        "lifted to the top"
    )
    return Ranking(list(scores), "vector_boosted", mode, scores)


async def _fts(awaitable: Any) -> Any:
    try:
        return await awaitable
    except (ValueError, RuntimeError) as err:  # LanceDB raises either, by where it notices
        message = str(err).lower()
        if "inverted index" in message or "'_terms'" in message:
            raise ToolError(
                "the keyword index of this resource is missing or was built by an older lynxc "
                "(a load stopped early, or the store predates the current tokenizer): run "
                "`lynxc load` again"
            ) from None
        raise


def similarity(stored_vector: Any | None, query_vector: Any | None) -> float | None:
    """The cosine of a record's stored vector and the query's, clipped to [0, 1]; None without
    both. (Query vectors are unit length; stored ones are normalized here.)"""
    if stored_vector is None or query_vector is None:
        return None
    import numpy as np

    stored = np.asarray(stored_vector, dtype=np.float32)
    cosine = float(stored @ np.asarray(query_vector, dtype=np.float32)) / max(
        float(np.linalg.norm(stored)), 1e-12
    )
    return round(_cosine(cosine), 4)

"""The four ways search_records matches `query` against one resource's table.

- `text`: BM25 full-text search on `_text` (the keyword fields), best first.
- `semantic`: cosine nearest neighbours of the query's embedding on `_vector` (the
  meaning fields, embedded by the embedder the resource was loaded with). A resource without
  meaning fields has no vectors: nothing is returned, and execution_info says so.
- `hybrid`: the union of both rankings, fused by score: each ranking's scores (BM25, cosine)
  are standardized over its window, weighted by KEYWORD_WEIGHT and summed; a resource with
  only one of the two runs that one (execution_info says which).
- `vector_boosted`: `text`'s matches, only reordered (so every result holds query terms, as
  with `text`): the BOOSTED closest of them by meaning come first, the rest follow in the
  resource's default order with relevance 0.

Filters are pre-filters: they apply inside each search, before ranking, so they never empty a
page that has matches further down. Each mode ranks at most WINDOW records; ties are broken by
record key, so a ranking is the same on every call and pages cut from it never overlap.

`_sys.relevance` is calibrated the same way in every mode, as lynx-mcp's scores are: the cosine
similarity of the query's embedding and the record's vector, clipped to [0, 1], so one record
has one relevance for one query whichever mode found it. On a resource without vectors a text
hit's relevance is its BM25 score squashed into [0, 1) as score / (score + BM25_HALF); records
vector_boosted does not lift have relevance 0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lynxc.runtime.errors import ToolError

from .definitions import Resource

SEARCH_TYPES = ("hybrid", "text", "semantic", "vector_boosted")
# The keyword ranking's share of a hybrid score, by embedder. Measured on Cranfield (1,400
# abstracts, 225 queries, nDCG@10, bench/records_quality.py): minilm 0.405 hybrid against 0.363
# text and 0.367 semantic; static 0.368 against 0.363 and 0.139 (the weaker embedder gets the
# smaller share, so hybrid stays at least as good as keyword search alone). Reciprocal rank
# fusion scored 0.401 and 0.273: with static, it let the weak ranking pull good hits down.
KEYWORD_WEIGHT = {"minilm": 0.5, "static": 0.75}
WINDOW = 1000
BOOSTED = 3
BM25_HALF = 10.0
ANN_REFINE = 1
ANN_EF = 2 * WINDOW


@dataclass(frozen=True)
class Ranking:
    """A search's whole ranked window: keys best first, and the relevance of those whose
    relevance the ranking itself decides (the others get their cosine when their page is read)."""

    keys: list[str]
    applied: str  # hybrid, text, semantic, vector_boosted or none: what really ran
    mode: str  # the same, said for a person
    fixed: Mapping[str, float] = field(default_factory=dict)

    def page(self, offset: int, limit: int) -> tuple[list[str], bool]:
        return self.keys[offset : offset + limit], len(self.keys) > offset + limit


@dataclass(frozen=True)
class DefaultOrder:
    """The columns a resource's default order reads, and a function that orders an Arrow table
    of `_key` and those columns into keys (query.order_keys, run off the event loop)."""

    columns: tuple[str, ...]
    order: Callable[[Any], Awaitable[list[str]]]


@dataclass(frozen=True)
class Searchable:
    """What the table of one resource offers: full-text (`_text` with its index) and vectors."""

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
    default_order: DefaultOrder | None = None,
) -> Ranking:
    """Rank `table`'s records for `query` (`vector`: its embedding, when the resource has
    vectors). vector_boosted puts records in `default_order`."""
    if search_type not in SEARCH_TYPES:
        raise ToolError(f"search_type: {search_type!r} is not one of {', '.join(SEARCH_TYPES)}")
    text, vectors = searchable.has_text, searchable.has_vectors and vector is not None
    keyword = ", ".join(searchable.resource.keyword)
    meaning = f"{searchable.embedder} embeddings of {', '.join(searchable.resource.meaning)}"
    if search_type == "vector_boosted":
        if not text:
            return Ranking([], "none", _NO_TEXT.format(id=searchable.resource.id))
        assert default_order is not None, "vector_boosted orders records by the default order"
        return await _vector_boosted(
            table, query, vector if vectors else None, where, default_order, keyword, meaning
        )
    if search_type == "hybrid" and text and vectors:
        texts, nearest = await asyncio.gather(
            _text_ranking(table, query, where), _vector_ranking(table, vector, where)
        )
        keys = _fuse(texts, nearest, KEYWORD_WEIGHT.get(searchable.embedder or "", 0.5))
        return Ranking(keys, "hybrid", f"hybrid: BM25 over {keyword} and {meaning}, scores fused")
    if search_type == "semantic" or (search_type == "hybrid" and not text):
        if not vectors:
            return Ranking([], "none", _NO_VECTORS.format(id=searchable.resource.id))
        nearest = await _vector_ranking(table, vector, where)
        note = "" if search_type == "semantic" else f" ({searchable.resource.id!r} has no keyword fields)"
        return Ranking([k for k, _ in nearest], "semantic", f"meaning: cosine similarity of {meaning}{note}")
    if not text:  # text asked for
        return Ranking([], "none", _NO_TEXT.format(id=searchable.resource.id))
    texts = await _text_ranking(table, query, where)
    fixed = {} if vectors else {k: round(s / (s + BM25_HALF), 4) for k, s in texts}
    note = "" if search_type == "text" else f" ({searchable.resource.id!r} has no embeddings)"
    return Ranking([k for k, _ in texts], "text", f"keyword: BM25 over {keyword}{note}", fixed)


_NO_VECTORS = (
    "none: {id!r} has no embeddings (it declares no meaning fields), so nothing matches by meaning; "
    "use search_type text"
)
_NO_TEXT = "none: {id!r} declares no keyword fields, so nothing matches by keyword; use search_type semantic"


def _fuse(
    texts: Sequence[tuple[str, float]], nearest: Sequence[tuple[str, float]], keyword_weight: float
) -> list[str]:
    """Both rankings' scores standardized over their windows (z-scores shifted so a ranking's
    last record scores 0, as does a record it lacks), weighted, summed; best first, ties by key."""
    scores: dict[str, float] = {}
    similarities = [(key, 1.0 - distance) for key, distance in nearest]
    for ranking, weight in ((texts, keyword_weight), (similarities, 1.0 - keyword_weight)):
        for key, value in _standardized(ranking):
            scores[key] = scores.get(key, 0.0) + weight * value
    return sorted(scores, key=lambda key: (-scores[key], key))


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


def _match(query: str) -> Any:
    from lancedb.query import FullTextOperator, MatchQuery

    # A MatchQuery takes the words as they are: no query syntax (quotes, AND, parentheses) to trip
    # on. Any term matches, and BM25 ranks records holding more of them (and rarer ones) higher.
    return MatchQuery(query, "_text", operator=FullTextOperator.OR)


async def _text_ranking(table: Any, query: str, where: str | None) -> list[tuple[str, float]]:
    builder = table.query().nearest_to_text(_match(query))
    if where:
        builder = builder.where(where)
    rows = await _fts(builder.select(["_key", "_score"]).limit(WINDOW).to_list())
    rows.sort(key=lambda row: (-row["_score"], row["_key"]))
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
    table: Any,
    query: str,
    vector: Any | None,
    where: str | None,
    default_order: DefaultOrder,
    keyword: str,
    meaning: str,
) -> Ranking:
    import numpy as np

    builder = table.query().nearest_to_text(_match(query))
    if where:
        builder = builder.where(where)
    columns = ["_key", *(c for c in default_order.columns if c != "_key")]
    wanted = [*columns, "_score", *(["_vector"] if vector is not None else [])]
    matches = await _fts(builder.select(wanted).limit(WINDOW).to_arrow())
    boosted: list[str] = []
    if vector is not None and matches.num_rows:
        keys = matches.column("_key").to_pylist()
        # .values keeps a null vector's slots (NaN; flatten() would drop them): never boosted.
        stored = matches.column("_vector").combine_chunks().values.to_numpy(zero_copy_only=False)
        cosines = stored.astype(np.float32).reshape(len(keys), -1) @ np.asarray(vector, dtype=np.float32)
        cosines = np.nan_to_num(cosines, nan=-np.inf)
        best = sorted(range(len(keys)), key=lambda i: (-float(cosines[i]), keys[i]))[:BOOSTED]
        boosted = [keys[i] for i in best]
    lifted = set(boosted)
    rest = [key for key in await default_order.order(matches.select(columns)) if key not in lifted]
    fixed = {key: 0.0 for key in rest}
    if vector is None:
        mode = f"keyword: BM25 matches in {keyword}, in default order (no embeddings to boost by)"
        return Ranking(rest, "text", mode, fixed)
    mode = (
        f"vector_boosted: BM25 matches in {keyword}; the {BOOSTED} closest by {meaning} first, "
        "the rest in default order"
    )
    return Ranking(boosted + rest, "vector_boosted", mode, fixed)


async def _fts(awaitable: Any) -> Any:
    try:
        return await awaitable
    except ValueError as err:
        if "INVERTED index" in str(err) or "no inverted index" in str(err).lower():
            raise ToolError(
                "the keyword index of this resource is missing (a load stopped early?): "
                "run `lynxc load` again"
            ) from None
        raise


def relevance(
    ranking: Ranking, key: str, stored_vector: Any | None, query_vector: Any | None
) -> float | None:
    """A page record's relevance (see the module docstring)."""
    if key in ranking.fixed:
        return ranking.fixed[key]
    if stored_vector is None or query_vector is None:
        return None
    import numpy as np

    stored = np.asarray(stored_vector, dtype=np.float32)
    cosine = float(stored @ np.asarray(query_vector, dtype=np.float32)) / max(
        float(np.linalg.norm(stored)), 1e-12
    )
    return round(min(max(cosine, 0.0), 1.0), 4)

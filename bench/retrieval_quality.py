"""Retrieval quality of lynx-mcp on five judged sets of different character (bench/retrieval_sets.py):
Cranfield (prose), code-search (docstring -> function, the docstring removed from the indexed
code), identifiers (queries that name an API), snippets (code-search over stand-alone
functions) and web-questions (short web-search-style questions over one short function per
file). For each set: nDCG@10 and Recall@100 of the sparse and dense modes and of hybrid under
each fusion (score fusion adapted per query, the default, and at its fixed keyword weight), the
`bm25s` package's BM25 on the same texts as the reference for sparse, and each hybrid's paired
difference from the better single mode with a 95% bootstrap interval. Then nDCG@10 of score
fusion at every keyword weight from 0 to 1 and at every agreement power (the measurements behind
calibration.KEYWORD_WEIGHT and AGREEMENT_POWER), and the best similarities of the results of
judged and of nonsense queries, which deep_search's default min_score is set from
(calibration.MIN_SCORE).

Each set is indexed with `index_source` exactly as `lynxc index` does; each query's candidate
pools are fetched once with `ranking.candidate_pools` and ranked with `fusion.fuse`, the two
steps of `ranking.search` (the code the MCP tools run), with the tools' pool size.

    python bench/retrieval_quality.py [--embedder minilm|static] [--sets cranfield,code-search,...]
                                      [--keep FOLDER] [--smoke]

`--smoke` runs the static embedder on Cranfield alone (the code sets index ~8,000 chunks each).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from records_common import ndcg_at_10  # bench/ is the script's folder, first on sys.path
from retrieval_sets import SETS, JudgedSet, doc_key, nonsense_queries
from smoke import parse_args_with_smoke

from lynxc.runtime.backends.lynx.calibration import agreement_power, keyword_weight, min_score
from lynxc.runtime.backends.lynx.fusion import (
    DEFAULT_FUSION,
    FUSIONS,
    Pools,
    Ranked,
    fuse,
    query_agreement_power,
)
from lynxc.runtime.backends.lynx.indexer import index_source
from lynxc.runtime.backends.lynx.ranking import POOL, candidate_pools
from lynxc.runtime.backends.lynx.reader import IndexReader
from lynxc.runtime.backends.lynx.sources import Source
from lynxc.runtime.backends.lynx.store import Store
from lynxc.runtime.backends.retrieval.embedders import Embedder, get_embedder

WEIGHTS = [w / 10 for w in range(11)]
POWERS = [0.0, 4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 32.0]
RESAMPLES = 2000


def recall_at_100(ranked: list[str], relevant: dict[str, int]) -> float:
    return len(set(ranked[:100]) & set(relevant)) / len(relevant)


def index(judged: JudgedSet, folder: Path, embedder: Embedder) -> tuple[str, int, float]:
    """The set's files written under folder and indexed (reused when the folder holds them)."""
    root, directory = folder / judged.name / "files", folder / judged.name / f"index-{embedder.name}"
    if not root.exists():
        for rel, text in judged.files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
    start = time.perf_counter()
    store = Store(str(directory))
    index_source(Source(judged.name, str(root), judged.kind), store, embedder)
    return str(directory), store.table(judged.name).count_rows(), time.perf_counter() - start


async def all_pools(
    directory: str, name: str, queries: dict[str, str], embedder: Embedder
) -> dict[str, Pools]:
    reader = IndexReader(directory)
    vectors = dict(zip(queries, embedder.embed(list(queries.values())), strict=True))
    return {
        q: await candidate_pools(reader, [name], text, vectors[q], "hybrid", None, POOL)
        for q, text in queries.items()
    }


def ranked_docs(name: str, ranked: list[Ranked]) -> list[str]:
    seen: dict[str, None] = {}
    for item in ranked:
        seen.setdefault(doc_key(name, item.candidate.row["path"], item.candidate.row["symbol"]), None)
    return list(seen)


def bm25s_runs(judged: JudgedSet) -> dict[str, list[str]]:
    """The reference BM25 over the same documents (a file, or a definition's chunks joined)."""
    import bm25s

    from lynxc.runtime.backends.lynx.chunking import chunk_file

    docs: dict[str, str] = {}
    for rel, text in judged.files.items():
        for chunk in chunk_file(rel, text, kind="docs" if judged.kind == "docs" else "auto"):
            key = doc_key(judged.name, rel, chunk.symbol)
            docs[key] = docs.get(key, "") + f"\n{chunk.symbol}\n{chunk.text}"
    ids = list(docs)
    retriever = bm25s.BM25()
    corpus = bm25s.tokenize([docs[i] for i in ids], stopwords="en", show_progress=False)
    retriever.index(corpus, show_progress=False)
    asked = bm25s.tokenize(list(judged.queries.values()), stopwords="en", show_progress=False)
    results, _ = retriever.retrieve(asked, k=100, show_progress=False)
    return {q: [ids[i] for i in row] for q, row in zip(judged.queries, results, strict=True)}


def mean_ndcg(judged: JudgedSet, ranked: dict[str, list[str]]) -> float:
    return statistics.mean(ndcg_at_10(ranked[q], judged.qrels[q]) for q in judged.qrels)


def paired_difference(judged: JudgedSet, a: dict[str, list[str]], b: dict[str, list[str]]) -> str:
    """Mean nDCG@10 of run a minus run b over the set's queries, with a 95% percentile bootstrap
    interval over queries (seeded, RESAMPLES draws): `+0.0123 [-0.0040, +0.0290]`."""
    diffs = [ndcg_at_10(a[q], judged.qrels[q]) - ndcg_at_10(b[q], judged.qrels[q]) for q in judged.qrels]
    rng = random.Random(0)
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(RESAMPLES))
    low, high = means[int(0.025 * RESAMPLES)], means[int(0.975 * RESAMPLES) - 1]
    return f"{statistics.fmean(diffs):+.4f} [{low:+.4f}, {high:+.4f}]"


def quality_table(judged: JudgedSet, runs: dict[str, dict[str, list[str]]], default: str) -> list[str]:
    lines = [f"  {'system':<46} {'nDCG@10':>8} {'Recall@100':>11}"]
    for label, ranked in runs.items():
        recall = statistics.mean(recall_at_100(ranked[q], judged.qrels[q]) for q in judged.qrels)
        mark = "  (default)" if label == default else ""
        lines.append(f"  {label:<46} {mean_ndcg(judged, ranked):8.4f} {recall:11.4f}{mark}")
    return lines


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    picks = [
        ordered[min(int(p * (len(ordered) - 1)), len(ordered) - 1)] for p in (0.05, 0.25, 0.5, 0.75, 0.95)
    ]
    return "  ".join(f"{v:.3f}" for v in picks) + f"   max {ordered[-1]:.3f}"


def hybrid(pools: Pools, query: str, weight: float, power: float, fusion: str = "score") -> list[Ranked]:
    """Hybrid as ranking.search fuses it: the agreement power as the query gets it."""
    return fuse(pools, "hybrid", fusion, weight, query_agreement_power(query, power))


def hybrid_ndcg(judged: JudgedSet, pools: dict[str, Pools], weight: float, power: float) -> float:
    ranked = {
        q: ranked_docs(judged.name, hybrid(pools[q], judged.queries[q], weight, power)) for q in judged.qrels
    }
    return mean_ndcg(judged, ranked)


def systems(weight: float, power: float, default: str) -> dict[str, Callable[[Pools, str], list[Ranked]]]:
    """label -> ranks (pools, query text)."""
    out: dict[str, Callable[[Pools, str], list[Ranked]]] = {
        "sparse": lambda p, _: fuse(p, "sparse", DEFAULT_FUSION),
        "dense": lambda p, _: fuse(p, "dense", DEFAULT_FUSION),
    }
    for fusion in FUSIONS:
        label = default if fusion == DEFAULT_FUSION else f"hybrid, {fusion}"
        out[label] = lambda p, query, fusion=fusion: hybrid(p, query, weight, power, fusion)
    out[f"hybrid, score, fixed weight {weight}"] = lambda p, query: hybrid(p, query, weight, 0.0)
    return out


def sweep_table(
    title: str, values: list[float], sweep: dict[str, list[float]], best: dict[str, float]
) -> list[str]:
    lines = [title, "  value   " + "".join(f"{name:>15}" for name in sweep) + "   worst margin"]
    for i, value in enumerate(values):
        margin = min(sweep[name][i] - best[name] for name in sweep)
        lines.append(
            f"  {value:6.1f}  " + "".join(f"{sweep[name][i]:15.4f}" for name in sweep) + f"   {margin:+.4f}"
        )
    return lines


def best_similarities(found: Pools) -> tuple[float, float]:
    """The best and the 3rd best similarity of the query's results: dense's top, the highest any
    mode can return, so a threshold above the nonsense queries' holds in every mode."""
    top = [item.candidate.similarity for item in fuse(found, "dense", DEFAULT_FUSION)[:3]]
    return (top[0] if top else 0.0), (top[2] if len(top) > 2 else 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm", choices=("minilm", "static"))
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--keep", help="write the sets and their indices here, and reuse them")
    args = parse_args_with_smoke(parser, embedder="static", sets="cranfield")
    embedder = get_embedder(args.embedder)
    weight, threshold = keyword_weight(args.embedder), min_score(args.embedder)
    power = agreement_power(args.embedder)
    default = f"hybrid, {DEFAULT_FUSION} (weight {weight}, adapted, power {power:g})"
    nonsense = {f"nonsense-{i}": q for i, q in enumerate(nonsense_queries())}
    sweep: dict[str, list[float]] = {}
    power_sweep: dict[str, list[float]] = {}
    best: dict[str, float] = {}
    summary: list[str] = []
    tops: dict[str, list[float]] = {
        "judged, best": [],
        "judged, 3rd": [],
        "nonsense, best": [],
        "nonsense, 3rd": [],
    }
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.keep or scratch)
        for name in args.sets.split(","):
            judged = SETS[name]()
            directory, chunks, took = index(judged, folder, embedder)
            pools = asyncio.run(all_pools(directory, name, {**judged.queries, **nonsense}, embedder))
            runs = {
                label: {q: ranked_docs(name, rank(pools[q], judged.queries[q])) for q in judged.qrels}
                for label, rank in systems(weight, power, default).items()
            }
            runs["bm25s BM25 (reference for sparse)"] = bm25s_runs(judged)
            print(f"\n{judged.describe}\n  indexed with {args.embedder}: {chunks} chunks ({took:.0f} s)")
            print("\n".join(quality_table(judged, runs, default)))
            better = max(("sparse", "dense"), key=lambda mode: mean_ndcg(judged, runs[mode]))
            best[name] = mean_ndcg(judged, runs[better])
            hybrids = [label for label in runs if label.startswith("hybrid")]
            summary += [
                f"  {name:<14} {label:<44} {paired_difference(judged, runs[label], runs[better])} vs {better}"
                for label in hybrids
            ]
            sweep[name] = [hybrid_ndcg(judged, pools, w, power) for w in WEIGHTS]
            power_sweep[name] = [hybrid_ndcg(judged, pools, weight, p) for p in POWERS]
            for q, found in pools.items():
                kind = "nonsense" if q in nonsense else "judged"
                first, third = best_similarities(found)
                tops[f"{kind}, best"].append(first)
                tops[f"{kind}, 3rd"].append(third)
    print(
        f"\nHybrid minus the better single mode ({args.embedder}), nDCG@10, paired, 95% bootstrap interval:"
    )
    print("\n".join(summary))
    title = (
        f"Score fusion by keyword weight ({args.embedder}, power {power:g}): nDCG@10; margin over the best"
    )
    print("\n" + "\n".join(sweep_table(title, WEIGHTS, sweep, best)))
    title = f"Score fusion by agreement power ({args.embedder}, weight {weight}; 0 is the fixed weight)"
    print("\n" + "\n".join(sweep_table(title, POWERS, power_sweep, best)))
    print(f"\nBest similarities of each query's results ({args.embedder}; percentiles 5 25 50 75 95, max):")
    for label, values in tops.items():
        passing = sum(v >= threshold for v in values) / len(values)
        print(f"  {label:<15} {percentiles(values)}   at or above min_score {threshold}: {passing:.1%}")


if __name__ == "__main__":
    main()

"""Retrieval quality on Cranfield (bench/data/cranfield, BEIR layout): nDCG@10 and
Recall@100 for lynx's sparse, dense and hybrid modes, with the `bm25s` package's BM25 on the
same corpus as the reference for sparse. Graded relevance (qrels score 1-4) drives nDCG.

Each abstract is written as one file of a docs source, indexed with `index_source` exactly as
`lynxc index` does, and searched with `retrieval.search` (the code the MCP tools run).

    python bench/retrieval_quality.py [--embedder minilm|static]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import numpy as np
from records_common import cranfield, ndcg_at_10  # bench/ is the script's folder, first on sys.path

from lynxc.runtime.backends.lynx.indexer import index_source
from lynxc.runtime.backends.lynx.ranking import search
from lynxc.runtime.backends.lynx.reader import IndexReader
from lynxc.runtime.backends.lynx.sources import Source
from lynxc.runtime.backends.lynx.store import Store
from lynxc.runtime.backends.retrieval.embedders import get_embedder


def load() -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]:
    """Cranfield with each document as one text, title first."""
    corpus, queries, qrels = cranfield()
    return {doc: f"{d['title']}\n{d['text']}" for doc, d in corpus.items()}, queries, qrels


def recall_at_100(ranked: list[str], relevant: dict[str, int]) -> float:
    return len(set(ranked[:100]) & set(relevant)) / len(relevant)


def evaluate(runs: dict[str, dict[str, list[str]]], qrels: dict[str, dict[str, int]]) -> None:
    print(f"  {'system':<34} {'nDCG@10':>8} {'Recall@100':>11}")
    for name, ranked in runs.items():
        judged = [q for q in ranked if q in qrels]
        ndcg = sum(ndcg_at_10(ranked[q], qrels[q]) for q in judged) / len(judged)
        recall = sum(recall_at_100(ranked[q], qrels[q]) for q in judged) / len(judged)
        print(f"  {name:<34} {ndcg:8.4f} {recall:11.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm", choices=("minilm", "static"))
    args = parser.parse_args()
    corpus, queries, qrels = load()
    embedder = get_embedder(args.embedder)
    runs: dict[str, dict[str, list[str]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "docs"
        root.mkdir()
        for doc_id, text in corpus.items():
            (root / f"{doc_id}.txt").write_text(text)
        store = Store(str(Path(folder) / "index"))
        start = time.perf_counter()
        report = index_source(Source("cranfield", str(root), "docs"), store, embedder)
        took = time.perf_counter() - start
        print(
            f"Cranfield: {len(corpus)} abstracts -> {report.chunks} chunks, {len(queries)} queries "
            f"({len(qrels)} judged); indexed with {args.embedder} in {took:.1f} s"
        )
        vectors = dict(zip(queries, embedder.embed(list(queries.values())), strict=True))
        for mode in ("sparse", "dense", "hybrid"):
            runs[f"lynx {mode} ({args.embedder})"] = asyncio.run(run_mode(store, queries, vectors, mode))
    import bm25s

    ids = list(corpus)
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize([corpus[i] for i in ids], stopwords="en", show_progress=False), show_progress=False
    )
    results, _ = retriever.retrieve(
        bm25s.tokenize([queries[q] for q in queries], stopwords="en", show_progress=False),
        k=100,
        show_progress=False,
    )
    runs["bm25s BM25 (reference for sparse)"] = {
        q: [ids[i] for i in row] for q, row in zip(queries, results, strict=True)
    }
    evaluate(runs, qrels)


async def run_mode(
    store: Store, queries: dict[str, str], vectors: dict[str, np.ndarray], mode: str
) -> dict[str, list[str]]:
    reader = IndexReader(store.directory)
    return {
        q: _unique_docs(await search(reader, ["cranfield"], text, vectors[q], mode, 100))
        for q, text in queries.items()
    }


def _unique_docs(hits) -> list[str]:
    seen: list[str] = []
    for hit in hits:
        doc = hit.path.removesuffix(".txt")
        if doc not in seen:
            seen.append(doc)
    return seen


if __name__ == "__main__":
    main()

"""Full-text search engines side by side: LanceDB's FTS index (what the records store and lynx-mcp
use) against DuckDB's `fts` extension, on the same text: build time, query latency p50/p95 (in
process, top 10) and, on Cranfield, nDCG@10 over the 225 graded queries.

Corpora: Cranfield (bench/data/cranfield: 1,400 short abstracts), the 736 PEP bodies (median
14,000 characters) and their 6,990 top-level sections (specs/foxnose-knowledge/data). Both
engines stem English and drop English stop words: LanceDB `FTS(stem=True,
remove_stop_words=True)`, DuckDB `create_fts_index(..., stemmer='english', stopwords='english')`;
both rank by BM25.

DuckDB's `fts` extension is not in the duckdb wheel and DuckDB downloads it on first use, which
this machine cannot. PyPI `duckdb-ext-fts` ships it for duckdb 1.4.4 exactly (it pins
`duckdb==1.4.4`), while the project runs a newer duckdb, so run this in a venv of its own:

    python3 -m venv /work/venv-fts
    /work/venv-fts/bin/pip install -e /work/main duckdb==1.4.4 duckdb-ext-fts==1.4.4.20260205
    /work/venv-fts/bin/python bench/records_fts.py [--queries 50] [--docs N] [--smoke]

`--smoke` is a tiny run (300 documents per corpus, 3 queries). Where DuckDB's extension is not
installed (the project's own venv, so CI), it measures LanceDB alone and says so; a full run
there stops instead.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from records_common import (  # bench/ is the script's folder, first on sys.path
    FOXNOSE_DATA,
    PEP_QUERIES,
    cranfield,
    mean_ndcg,
    ms,
    percentiles,
    read_jsonl_gz,
)
from smoke import parse_args_with_smoke

MISSING_FTS = "DuckDB's fts extension is missing: see this script's docstring for its venv"


def fts_extensions() -> Path | None:
    """The folder of the duckdb-ext-fts wheel's extensions, None where it is not installed."""
    spec = importlib.util.find_spec("duckdb_ext")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "extensions"


def duckdb_connection():
    """An in-memory DuckDB with `fts` loaded from the duckdb-ext-fts wheel, never downloaded."""
    import duckdb

    extensions = fts_extensions()
    if extensions is None:
        raise SystemExit(MISSING_FTS)
    con = duckdb.connect()
    con.execute("SET extension_directory = ?", [str(extensions)])
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("LOAD fts")
    return con


class DuckFts:
    def __init__(self, docs: dict[str, str]) -> None:
        import pyarrow as pa

        self.con = duckdb_connection()
        table = pa.table({"id": list(docs), "body": list(docs.values())})
        self.con.register("incoming", table)
        start = time.perf_counter()
        self.con.execute("CREATE TABLE docs AS SELECT * FROM incoming")
        self.con.execute(
            "PRAGMA create_fts_index('docs', 'id', 'body', stemmer='english', stopwords='english')"
        )
        self.build_seconds = time.perf_counter() - start

    def search(self, query: str, limit: int = 10) -> list[str]:
        rows = self.con.execute(
            "SELECT id, fts_main_docs.match_bm25(id, ?) AS score FROM docs "
            "WHERE score IS NOT NULL ORDER BY score DESC, id LIMIT ?",
            [query, limit],
        ).fetchall()
        return [row[0] for row in rows]


class LanceFts:
    def __init__(self, docs: dict[str, str], folder: Path) -> None:
        import lancedb
        import pyarrow as pa
        from lancedb.index import FTS

        async def build() -> tuple[object, float]:
            db = await lancedb.connect_async(str(folder))
            start = time.perf_counter()
            table = await db.create_table("docs", pa.table({"id": list(docs), "body": list(docs.values())}))
            await table.create_index("body", config=FTS(stem=True, remove_stop_words=True))
            return table, time.perf_counter() - start

        self.loop = asyncio.new_event_loop()
        self.table, self.build_seconds = self.loop.run_until_complete(build())

    def search(self, query: str, limit: int = 10) -> list[str]:
        async def run() -> list[str]:
            rows = (
                await self.table.query()
                .nearest_to_text(query)
                .select(["id", "_score"])
                .limit(limit)
                .to_list()
            )
            return [row["id"] for row in rows]

        return self.loop.run_until_complete(run())


def timed(search: Callable[[str], list[str]], queries: list[str]) -> tuple[float, float]:
    for query in queries[:3]:
        search(query)  # warm caches and lazily opened index files
    times = []
    for query in queries:
        start = time.perf_counter()
        search(query)
        times.append(time.perf_counter() - start)
    return percentiles(times)


def pep_corpora() -> dict[str, dict[str, str]]:
    peps = read_jsonl_gz(FOXNOSE_DATA / "peps.jsonl.gz")
    sections = read_jsonl_gz(FOXNOSE_DATA / "sections.jsonl.gz")
    return {
        "PEP bodies": {str(p["number"]): f"{p['title']}\n{p['body']}" for p in peps},
        "PEP sections": {s["section_id"]: f"{s['title']}\n{s.get('body', '')}" for s in sections},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=50, help="timed queries per corpus and engine")
    parser.add_argument("--docs", type=int, help="index only the first N documents of each corpus")
    args = parse_args_with_smoke(parser, queries=3, docs=300)
    import duckdb
    import lancedb

    with_duckdb = fts_extensions() is not None
    if not with_duckdb and not args.smoke:
        raise SystemExit(MISSING_FTS)
    print(f"duckdb {duckdb.__version__} (fts from duckdb-ext-fts), lancedb {lancedb.__version__}")
    if not with_duckdb:
        print(f"NOTE: {MISSING_FTS}; this smoke run measures LanceDB alone")
    corpus, queries, qrels = cranfield()
    cran_docs = {doc_id: f"{doc['title']}\n{doc['text']}" for doc_id, doc in corpus.items()}
    corpora = {
        name: dict(list(docs.items())[: args.docs])
        for name, docs in {"Cranfield": cran_docs, **pep_corpora()}.items()
    }
    header = f"  {'corpus':<13} {'docs':>6} {'MB':>6}  {'engine':<7} {'build':>8} {'p50':>10} {'p95':>10}"
    print(header + f" {'nDCG@10':>8}")
    with tempfile.TemporaryDirectory() as folder:
        for name, docs in corpora.items():
            size = sum(len(text.encode()) for text in docs.values()) / 1e6
            timed_queries = list(queries.values()) if name == "Cranfield" else PEP_QUERIES
            timed_queries = (timed_queries * (args.queries // len(timed_queries) + 1))[: args.queries]
            results = {}
            engines = {"LanceDB": LanceFts(docs, Path(folder) / re.sub(r"\W", "_", name))}
            if with_duckdb:
                engines["DuckDB"] = DuckFts(docs)
            for engine, index in engines.items():
                p50, p95 = timed(index.search, timed_queries)
                ndcg = ""
                if name == "Cranfield":
                    run = {q: index.search(text) for q, text in queries.items()}
                    ndcg = f"{mean_ndcg(run, qrels):8.4f}"
                results[engine] = (index.build_seconds, p50)
                print(
                    f"  {name:<13} {len(docs):>6} {size:>6.1f}  {engine:<7} {index.build_seconds:>7.2f}s "
                    f"{ms(p50)} {ms(p95)} {ndcg}"
                )
            if not with_duckdb:
                continue
            (lb, lq), (db, dq) = results["LanceDB"], results["DuckDB"]
            print(
                f"  {'':<13} {'':>6} {'':>6}  DuckDB/LanceDB: build {db / lb:.2f}x, query p50 {dq / lq:.2f}x"
            )


if __name__ == "__main__":
    main()

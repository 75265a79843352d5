"""ANN index build time, size and query latency against table size, for the README's paper design
of a 100-million-chunk deployment.

For each size, a LanceDB table of that many 384-d float32 vectors (minilm's width) is built in a
temporary folder and given each index type lynx-mcp could use: HNSW over scalar-quantized vectors
(what `lynxc index` builds from `ann_min_rows`) and IVF-PQ (partitions on disk, 48 bytes a vector:
what a table too large for memory needs). Reported per size and type: build seconds, bytes on
disk per vector (data and index), query p50/p95 of a top-10 cosine search (refine factor 4 for
IVF-PQ, re-ranked on the full vectors), and the serving process's RSS after the queries.

Vectors are clustered (a few hundred centres plus noise, normalised) rather than uniform: real
embeddings cluster, and uniform random vectors make k-means and HNSW degenerate. Recall on them
says little about real text, so none is reported here (bench/retrieval_quality.py measures
quality on judged sets); what scales with the row count, time and bytes, is what this measures.

    python bench/ann_scale.py [--sizes 50000,200000] [--queries 200] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import tempfile
import time

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import HnswSq, IvfPq
from smoke import parse_args_with_smoke  # bench/ is the script's folder, first on sys.path

DIMENSION = 384
CENTRES = 256


def clustered(rows: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((CENTRES, DIMENSION), dtype=np.float32)
    vectors = centres[rng.integers(0, CENTRES, rows)] + 0.6 * rng.standard_normal(
        (rows, DIMENSION), dtype=np.float32
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def table_of(db: lancedb.DBConnection, name: str, vectors: np.ndarray) -> lancedb.table.Table:
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    data = pa.table(
        {
            "id": pa.array(np.arange(len(vectors))),
            "vector": pa.FixedSizeListArray.from_arrays(flat, DIMENSION),
        }
    )
    return db.create_table(name, data)


def folder_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


def measure(folder: str, rows: int, kind: str, queries: np.ndarray) -> dict[str, float]:
    db = lancedb.connect(folder)
    table = table_of(db, kind, clustered(rows, seed=rows))
    data_bytes = folder_bytes(os.path.join(folder, f"{kind}.lance"))
    started = time.perf_counter()
    if kind == "hnsw_sq":
        table.create_index("vector", config=HnswSq(distance_type="cosine"))
    else:
        # 48 sub-vectors of 8 dimensions: 48 bytes a vector; partitions about sqrt(rows).
        partitions = max(16, int(rows**0.5))
        table.create_index(
            "vector", config=IvfPq(distance_type="cosine", num_partitions=partitions, num_sub_vectors=48)
        )
    build = time.perf_counter() - started
    index_bytes = folder_bytes(os.path.join(folder, f"{kind}.lance")) - data_bytes
    table = db.open_table(kind)
    times = []
    for vector in queries:
        search = table.search(vector).distance_type("cosine").limit(10)
        if kind == "ivf_pq":
            search = search.nprobes(20).refine_factor(4)
        started = time.perf_counter()
        search.to_arrow()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "build_s": build,
        "data_b": data_bytes / rows,
        "index_b": index_bytes / rows,
        "p50": statistics.median(times),
        "p95": times[int(0.95 * (len(times) - 1))],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50000,200000")
    parser.add_argument("--queries", type=int, default=200)
    args = parse_args_with_smoke(parser, sizes="2000", queries=5)
    sizes = [int(s) for s in args.sizes.split(",")]
    queries = clustered(args.queries, seed=7)
    print(
        f"# ANN scale: {DIMENSION}-d, lancedb {lancedb.__version__}, {os.cpu_count()} CPUs, "
        f"{platform.machine()}\n"
    )
    print("| rows | index | build s | build us/row | data B/row | index B/row | query p50 ms | p95 ms |")
    print("|------|-------|---------|--------------|------------|-------------|--------------|--------|")
    for rows in sizes:
        for kind in ("hnsw_sq", "ivf_pq"):
            folder = tempfile.mkdtemp(prefix="ann-scale-")
            try:
                m = measure(folder, rows, kind, queries)
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            print(
                f"| {rows:,} | {kind} | {m['build_s']:.1f} | {m['build_s'] / rows * 1e6:.0f} | "
                f"{m['data_b']:.0f} | {m['index_b']:.0f} | {m['p50']:.2f} | {m['p95']:.2f} |",
                flush=True,
            )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of this process: {peak:.0f} MB")


if __name__ == "__main__":
    main()

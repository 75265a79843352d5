"""Declared records, search quality on the PEPs: lynxc's four search types against a plain BM25
and a standardized fusion, on the judged questions of bench/data/pep-questions.

The bundled foxnose-knowledge server (generated/foxnose-knowledge) is loaded with the real
`lynxc load` (peps, then sections, with the embedder asked for) into a scratch data_dir, served
by the real `lynxc serve` over stdio, and every question goes to `search_records` through an MCP
client, once per search_type (text, semantic, hybrid, vector_boosted), limit 10. Beside them,
over the same texts (each record's keyword fields, joined as the loader joins them):

- BM25 ref: the `bm25s` package's BM25 (its own tokenizer: lower-cased words of two or more
  letters), without and with its English stop-word list;
- fused ref: that BM25's scores and the cosine of the same embedder's query vector with the
  record's stored vector (read from the store, so the vectors are the very ones lynxc ranks by),
  each z-standardized over the whole resource and averaged.

Of each reference's two variants, the stronger (MRR@10 on all questions) is the one the ratios
divide by.

MRR@10 (1 / rank of the first relevant record in the top 10) and Recall@10 (relevant records in
the top 10 over min(10, relevant records)) per system, on all questions, then on the `tune` and
`held-out` halves (bench/data/pep-questions/README.md). --smoke: six questions, a few dozen PEPs
and their sections, the static embedder.

    python bench/records_search_quality.py [--embedder minilm|static] [--questions N]
                                           [--data-dir DIR] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from records_common import FOXNOSE_DATA, ROOT, Project, call, load, read_jsonl_gz, serve, write_jsonl_gz
from smoke import parse_args_with_smoke

QUESTIONS = Path(__file__).resolve().parent / "data" / "pep-questions" / "questions.jsonl"
SERVER = "foxnose-knowledge"
SEARCH_TYPES = ("text", "semantic", "hybrid", "vector_boosted")
RESOURCE_IDS = {"peps": "peps", "sections": "peps/{pep}/sections"}
KEYS = {"peps": "number", "sections": "section_id"}
KEYWORD = {"peps": ("title", "abstract", "body"), "sections": ("title", "body")}
DEPTH = 10
SMOKE_PEPS = 40


def questions(limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    if limit is None:
        return rows
    peps = [q for q in rows if q["target"] == "peps"]
    sections = [q for q in rows if q["target"] == "sections"]
    return peps[: limit - limit // 3] + sections[: limit // 3]


def corpus(smoke_questions: list[dict[str, Any]] | None) -> dict[str, list[dict[str, Any]]]:
    """The PEPs and sections to load: all of them, or for --smoke the first SMOKE_PEPS PEPs plus
    those the smoke questions judge, and their sections."""
    peps = read_jsonl_gz(FOXNOSE_DATA / "peps.jsonl.gz")
    sections = read_jsonl_gz(FOXNOSE_DATA / "sections.jsonl.gz")
    if smoke_questions is None:
        return {"peps": peps, "sections": sections}
    wanted = {p["number"] for p in peps[:SMOKE_PEPS]}
    for q in smoke_questions:
        wanted |= {int(str(r).split("-")[0]) for r in q["relevant"]}
    return {
        "peps": [p for p in peps if p["number"] in wanted],
        "sections": [s for s in sections if s["pep"] in wanted],
    }


def joined(record: dict[str, Any], fields: tuple[str, ...]) -> str:
    return "\n".join(str(record[name]) for name in fields if record.get(name) is not None)


async def lynxc_runs(project: Project, asked: list[dict[str, Any]]) -> dict[str, dict[str, list[str]]]:
    runs: dict[str, dict[str, list[str]]] = {kind: {} for kind in SEARCH_TYPES}
    async with serve(project) as client:
        for kind in SEARCH_TYPES:
            start = time.perf_counter()
            for q in asked:
                arguments = {
                    "query": q["question"],
                    "resource_id": RESOURCE_IDS[q["target"]],
                    "search_type": kind,
                    "limit": DEPTH,
                }
                page = await call(client, "search_records", arguments)
                runs[kind][q["id"]] = [item["_sys"]["key"] for item in page["items"]]
            took = time.perf_counter() - start
            print(f"  {kind:<15} {len(asked)} questions over MCP in {took:.1f} s")
    return runs


def stored_vectors(data_dir: Path, resource: str) -> tuple[list[str], Any]:
    """The keys and vectors of the table CURRENT.json points at (the ones lynxc searches)."""
    import lancedb
    import numpy as np

    state = json.loads((data_dir / "CURRENT.json").read_text())["resources"][resource]
    table = lancedb.connect(str(data_dir / "lance")).open_table(state["table"])
    table.checkout(state["version"])
    rows = table.to_arrow().select(["_key", "_vector"])
    vectors = np.asarray(rows.column("_vector").combine_chunks().flatten(), dtype=np.float32)
    keys = rows.column("_key").to_pylist()
    vectors = vectors.reshape(len(keys), -1)
    return keys, vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def reference_runs(
    records: dict[str, list[dict[str, Any]]], asked: list[dict[str, Any]], data_dir: Path, embedder: str
) -> dict[str, dict[str, list[str]]]:
    import bm25s
    import numpy as np

    from lynxc.runtime.backends.retrieval.embedders import get_embedder

    model = get_embedder(embedder)
    runs: dict[str, dict[str, list[str]]] = {"bm25s": {}, "bm25s+en stop words": {}}
    fused_with: dict[str, dict[str, list[str]]] = {"bm25s": {}, "bm25s+en stop words": {}}
    for target, rows in records.items():
        mine = [q for q in asked if q["target"] == target]
        if not mine:
            continue
        keys = [str(r[KEYS[target]]) for r in rows]
        texts = [joined(r, KEYWORD[target]) for r in rows]
        stored_keys, vectors = stored_vectors(data_dir, target)
        order = {key: i for i, key in enumerate(stored_keys)}
        vectors = vectors[[order[key] for key in keys]]
        query_vectors = np.asarray(model.embed([q["question"] for q in mine]), dtype=np.float32)
        cosines = query_vectors @ vectors.T
        for name, stopwords in (("bm25s", None), ("bm25s+en stop words", "en")):
            retriever = bm25s.BM25()
            retriever.index(
                bm25s.tokenize(texts, stopwords=stopwords, show_progress=False), show_progress=False
            )
            tokenized = bm25s.tokenize(
                [q["question"] for q in mine], stopwords=stopwords, show_progress=False
            )
            inverse = {index: word for word, index in tokenized.vocab.items()}
            for i, q in enumerate(mine):
                words = [inverse[t] for t in tokenized.ids[i]]
                scores = retriever.get_scores(words) if words else np.zeros(len(keys))
                runs[name][q["id"]] = _top(keys, scores, matches_only=True)
                fused = _z(scores) + _z(cosines[i])
                fused_with[name][q["id"]] = _top(keys, fused)
    return {**runs, **{f"fused ({name} + {embedder})": run for name, run in fused_with.items()}}


def _z(values: Any) -> Any:
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    spread = values.std()
    return (values - values.mean()) / spread if spread > 0 else values * 0.0


def _top(keys: list[str], scores: Any, matches_only: bool = False) -> list[str]:
    """The DEPTH best keys; matches_only: only records scoring above 0 (BM25's matches)."""
    import numpy as np

    best = np.argsort(-np.asarray(scores), kind="stable")[:DEPTH]
    return [keys[i] for i in best if not matches_only or scores[i] > 0]


def mrr(run: dict[str, list[str]], asked: list[dict[str, Any]]) -> float:
    total = 0.0
    for q in asked:
        relevant = {str(r) for r in q["relevant"]}
        for rank, key in enumerate(run.get(q["id"], [])[:DEPTH], start=1):
            if key in relevant:
                total += 1.0 / rank
                break
    return total / max(len(asked), 1)


def recall(run: dict[str, list[str]], asked: list[dict[str, Any]]) -> float:
    total = 0.0
    for q in asked:
        relevant = {str(r) for r in q["relevant"]}
        found = len(relevant & set(run.get(q["id"], [])[:DEPTH]))
        total += found / min(len(relevant), DEPTH)
    return total / max(len(asked), 1)


def report(runs: dict[str, dict[str, list[str]]], asked: list[dict[str, Any]], embedder: str) -> None:
    bm25_names = [name for name in runs if name.startswith("bm25s")]
    bm25_ref = max(bm25_names, key=lambda name: mrr(runs[name], asked))
    fused_names = [name for name in runs if name.startswith("fused")]
    fused_ref = max(fused_names, key=lambda name: mrr(runs[name], asked))
    halves = {
        "tune": [q for q in asked if q["split"] == "tune"],
        "held-out": [q for q in asked if q["split"] == "held-out"],
    }
    print(f"\nBM25 ref: {bm25_ref}; fused ref: {fused_ref} (z-standardized over the resource, averaged)")
    print("(each ref: the stronger of its two variants by MRR@10 on all questions)")
    header = (
        f"  {'system':<36} {'MRR@10':>7} {'R@10':>6}  {'MRR/bm25':>8} {'MRR/fused':>9}"
        f"  {'R/bm25':>6} {'R/fused':>7}  {'MRR tune':>8} {'MRR held':>8}  {'R tune':>6} {'R held':>6}"
    )
    print(header)
    base_m, base_r = mrr(runs[bm25_ref], asked), recall(runs[bm25_ref], asked)
    fuse_m, fuse_r = mrr(runs[fused_ref], asked), recall(runs[fused_ref], asked)
    names = [*(f"lynxc {kind}" for kind in SEARCH_TYPES), *bm25_names, *fused_names]
    for name in names:
        run = runs[name.removeprefix("lynxc ")] if name.startswith("lynxc ") else runs[name]
        m, r = mrr(run, asked), recall(run, asked)
        print(
            f"  {name:<36} {m:7.3f} {r:6.3f}  {m / base_m:8.2f} {m / fuse_m:9.2f}  {r / base_r:6.2f} "
            f"{r / fuse_r:7.2f}  {mrr(run, halves['tune']):8.3f} {mrr(run, halves['held-out']):8.3f}  "
            f"{recall(run, halves['tune']):6.3f} {recall(run, halves['held-out']):6.3f}"
        )


def report_by_kind(runs: dict[str, dict[str, list[str]]], asked: list[dict[str, Any]]) -> None:
    kinds = {kind: [q for q in asked if q["kind"] == kind] for kind in ("keyword", "natural")}
    print(
        f"\n  {'MRR@10 by kind of question':<36} "
        + " ".join(f"{k} ({len(v)})".rjust(14) for k, v in kinds.items())
    )
    for name in [*(f"lynxc {kind}" for kind in SEARCH_TYPES), *(n for n in runs if n not in SEARCH_TYPES)]:
        run = runs[name.removeprefix("lynxc ")] if name.startswith("lynxc ") else runs[name]
        print(f"  {name:<36} " + " ".join(f"{mrr(run, qs):14.3f}" for qs in kinds.values()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm", choices=("minilm", "static"))
    parser.add_argument("--questions", type=int, help="ask only N questions (default all)")
    parser.add_argument("--data-dir", type=Path, help="keep the store here (a second run loads nothing new)")
    args = parse_args_with_smoke(parser, embedder="static", questions=6)
    asked = questions(args.questions)
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        data_dir = (args.data_dir or scratch / "data").resolve()
        records = corpus(asked if args.smoke else None)
        project = Project(ROOT, SERVER, {"data_dir": str(data_dir), "embedder": args.embedder})
        for resource, rows in records.items():
            path = scratch / f"{resource}.jsonl.gz"
            write_jsonl_gz(path, rows)
            run = load(project, resource, path)
            print(f"{resource}: {len(rows)} records loaded with {args.embedder} in {run.seconds:.1f} s")
        kinds = {t: sum(q["target"] == t for q in asked) for t in RESOURCE_IDS}
        print(f"{len(asked)} judged questions ({kinds['peps']} over peps, {kinds['sections']} over sections)")
        runs = anyio.run(lynxc_runs, project, asked)
        runs.update(reference_runs(records, asked, data_dir, args.embedder))
    report(runs, asked, args.embedder)
    report_by_kind(runs, asked)
    sys.stdout.flush()


if __name__ == "__main__":
    main()

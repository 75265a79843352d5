"""Load speed of the records loader: records/s and CPU-seconds per record, loading
foxnose-knowledge's PEPs and then their sections (the child resource) into a fresh store, with
each embedder, three ways in one run:

- old: the loader's former embedding stage, kept reachable through `load(vectors=...)` as
  vectors.serial_vectors: 512 texts per embedder call on the loader's own thread, the embedder
  with its default onnxruntime threads (two);
- new: the default stage, vectors.ParallelVectors: windows sorted by length into token-budgeted
  jobs, two embedding threads of one onnxruntime thread each, beside the thread that reads the
  spill and hands LanceDB its batches;
- later: `--embed later`: the records are written without vectors, searchable by text (what a
  user waits for before the first keyword search; `lynxc embed` then costs about "new"'s
  embedding).

Both the old and new ways run today's embedder, whose onnxruntime threads no longer spin while
idle; that change alone halved minilm's CPU time on a busy 2-core machine (800 sections: 46 s
against 24 s of CPU for the same wall time), so against the commit before this work the CPU
ratio is larger than the one printed here.

Then, with `--scale N` (default 30,000), N sections (copies under new keys) with the static
embedder, old against new (static holds the GIL: its gain is the overlap with LanceDB's writing).

CPU time is the process's (every thread's, and its finished children's) user + system time; models are loaded
before any timing. Run: `python bench/records_load.py [--embedders minilm,static] [--peps N]`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from records_common import FOXNOSE_DATA, ROOT
from smoke import parse_args_with_smoke

WAYS = ("old", "new", "later")


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def subset(folder: Path, peps: int | None, scale: int) -> dict[str, Path]:
    """The first `peps` PEPs (all: None) and their sections, and `scale` copies of sections, as
    JSONL files in `folder`."""

    def rows(name: str) -> list[dict[str, Any]]:
        with gzip.open(FOXNOSE_DATA / f"{name}.jsonl.gz", "rt", encoding="utf-8") as handle:
            return [json.loads(line) for line in handle]

    kept = rows("peps")[:peps] if peps else rows("peps")
    numbers = {str(row["number"]) for row in kept}
    sections = [row for row in rows("sections") if str(row["pep"]) in numbers]
    copies = [  # the sections again and again under new keys, up to `scale` records
        {**row, "section_id": f"{row['section_id']}-copy{n}"}
        for n in range(scale // max(len(sections), 1) + 1)
        for row in sections
    ][:scale]
    files = {}
    for name, data in (("peps", kept), ("sections", sections), ("copies", copies)):
        files[name] = folder / f"{name}.jsonl"
        files[name].write_text("".join(json.dumps(row) + "\n" for row in data), encoding="utf-8")
    return files


def run(
    way: str, embedder: str, files: dict[str, Path], data_dir: Path, scale: bool = False
) -> list[dict[str, Any]]:
    from lynxc.runtime.backends.records.loader import EMBED_CHUNK, EMBED_LATER, EMBED_NOW, load
    from lynxc.runtime.backends.records.vectors import serial_vectors
    from lynxc.runtime.backends.retrieval.embedders import DIMENSIONS, get_embedder
    from lynxc.runtime.definition import load_definition

    definition = load_definition(ROOT / "generated" / "foxnose-knowledge")
    settings = {"data_dir": str(data_dir), "embedder": embedder}
    figures = []
    names = ["peps", "copies"] if scale else ["peps", "sections"]
    for name in names:  # the parent first: sections name loaded PEPs
        vectors = None
        if way == "old":
            vectors = serial_vectors(get_embedder(embedder).embed, DIMENSIONS[embedder], EMBED_CHUNK)
        started, cpu = time.monotonic(), cpu_seconds()
        report = load(
            definition,
            "sections" if name == "copies" else name,
            [str(files[name])],
            settings=settings,
            embed=EMBED_LATER if way == "later" else EMBED_NOW,
            vectors=vectors,
        )
        wall, cpu = time.monotonic() - started, cpu_seconds() - cpu
        label = f"sections@{report.records}" if name == "copies" else name
        figures.append({"resource": label, "records": report.records, "wall": wall, "cpu": cpu})
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--embedders", default="minilm,static", help="comma-separated embedders")
    parser.add_argument(
        "--peps", type=int, default=0, help="load the first N PEPs and their sections (0: all)"
    )
    parser.add_argument(
        "--scale",
        type=int,
        default=30_000,
        help="then load this many sections (copies under new keys) with the static embedder, old "
        "against new (0: skip)",
    )
    args = parse_args_with_smoke(parser, peps=8, scale=0)
    from lynxc.runtime.backends.retrieval.embedders import get_embedder

    embedders = [name.strip() for name in args.embedders.split(",") if name.strip()]
    with tempfile.TemporaryDirectory(prefix="lynxc-load-bench-") as tmp:
        files = subset(Path(tmp), args.peps or None, args.scale)
        results: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for embedder in embedders:
            # Models (both thread settings, as each way asks for them) and LanceDB loaded before
            # any timing.
            get_embedder(embedder).embed(["warm up"])
            get_embedder(embedder, threads=1).embed(["warm up"])
            run("later", embedder, files, Path(tmp) / f"{embedder}-warm")
            for way in WAYS:
                results[(embedder, way)] = run(way, embedder, files, Path(tmp) / f"{embedder}-{way}")
        if args.scale:
            get_embedder("static").embed(["warm up"])
            for way in ("old", "new"):
                at_scale = run(way, "static", files, Path(tmp) / f"scale-{way}", scale=True)
                results[("static", way)] += at_scale[1:]  # the copies (the PEPs are above)
    print(
        f"{'resource':<15} {'embedder':<7} {'way':<6} {'records':>7} {'wall s':>8} {'rec/s':>8} "
        f"{'CPU s':>8} {'CPU ms/rec':>10} {'speed x old':>11} {'CPU x old':>9}"
    )
    for embedder in embedders:
        old = {f["resource"]: f for f in results[(embedder, "old")]}
        for way in WAYS:
            for f in results[(embedder, way)]:
                base = old[f["resource"]]
                rate = f["records"] / max(f["wall"], 1e-9)
                speed = base["wall"] / max(f["wall"], 1e-9)
                cpu_ratio = f["cpu"] / max(base["cpu"], 1e-9)
                print(
                    f"{f['resource']:<15} {embedder:<7} {way:<6} {f['records']:>7} {f['wall']:>8.1f} "
                    f"{rate:>8.1f} {f['cpu']:>8.1f} {1000 * f['cpu'] / max(f['records'], 1):>10.2f} "
                    f"{speed:>10.2f}x {cpu_ratio:>8.2f}x"
                )
    print("speed x old: old wall time / this wall time (higher is faster); CPU x old: this CPU / old CPU")


if __name__ == "__main__":
    main()

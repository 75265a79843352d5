"""Article extraction on the article-extraction-benchmark (bench/data/article-extraction-benchmark:
181 real pages, each with its article body as ground truth): token precision, recall and F1 of
groundhog's pipeline side by side with `trafilatura.extract` called directly on the same HTML,
macro-averaged over the pages, and pages per second.

Pipelines, all given the same HTML (the page's bytes decoded as UTF-8):
- trafilatura: `trafilatura.extract(html)`, its default plain-text output;
- groundhog: `extract_page(html, format="markdown")` (Markdown, metadata and provenance), as
  `read_url` does without hidden-content stripping;
- groundhog + strip_hidden: `strip_hidden(html)` first, then the same, as `read_url` does by
  default (only when runtime/backends/groundhog/hidden.py exists);
- ... + passages: the last of those (stripped when hidden.py exists) split into passages
  (`split_passages`), their texts joined: what `research` ranks (heading lines move to the
  passages' `heading` field, so they are not scored here).

Scoring, identical for every pipeline and the ground truth: the text goes through
`passages.markdown_to_text` (heading marks, list markers, fences, table pipes, emphasis, link
targets and escapes removed; text without Markdown passes unchanged), is case-folded and cut into
Unicode words (`\\w+`). Precision and recall count the words in common as multisets (a word
three times in both counts three). A pipeline that returns nothing scores 0 on that page.

    python bench/extraction.py [--pages N] [--smoke]
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import re
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from smoke import parse_args_with_smoke  # bench/ is the script's folder, first on sys.path

DATA = Path(__file__).parent / "data" / "article-extraction-benchmark"
TARGET = 0.005  # the pipeline may cost at most this much F1 against trafilatura alone
_WORD = re.compile(r"\w+")


def load(limit: int | None) -> list[tuple[str, str, str, str]]:
    """(page id, url, html, ground-truth article body) for each page, in file name order."""
    truth = json.loads((DATA / "ground-truth.json").read_text(encoding="utf-8"))
    pages = []
    for path in sorted((DATA / "html").glob("*.html.gz"))[:limit]:
        page_id = path.name.removesuffix(".html.gz")
        html = gzip.decompress(path.read_bytes()).decode("utf-8", errors="replace")
        pages.append((page_id, truth[page_id]["url"], html, truth[page_id]["articleBody"]))
    return pages


def words(text: str) -> Counter[str]:
    from lynxc.runtime.backends.groundhog.passages import markdown_to_text

    return Counter(_WORD.findall(markdown_to_text(text).casefold()))


def score(predicted: str, truth: Counter[str]) -> tuple[float, float, float]:
    found = words(predicted)
    common = sum((found & truth).values())
    if not common:
        return 0.0, 0.0, 0.0
    precision, recall = common / sum(found.values()), common / sum(truth.values())
    return precision, recall, 2 * precision * recall / (precision + recall)


def pipelines() -> dict[str, Callable[[str, str], str]]:
    import trafilatura

    from lynxc.runtime.backends.groundhog.extract import extract_page
    from lynxc.runtime.backends.groundhog.passages import split_passages

    def groundhog(html: str, url: str) -> str:
        return extract_page(html, url=url, media_type="text/html", format="markdown").markdown

    runs: dict[str, Callable[[str, str], str]] = {
        "trafilatura.extract": lambda html, url: trafilatura.extract(html) or "",
        "groundhog extract_page": groundhog,
    }
    read = groundhog
    # hidden-content stripping (hidden.py, written alongside this benchmark): scored once it exists
    if importlib.util.find_spec("lynxc.runtime.backends.groundhog.hidden") is not None:
        from lynxc.runtime.backends.groundhog.hidden import strip_hidden

        def read(html: str, url: str) -> str:
            return groundhog(strip_hidden(html)[0], url)

        runs["groundhog strip_hidden+extract"] = read
    else:
        print("NOTE: runtime/backends/groundhog/hidden.py is missing: strip_hidden+extract is not scored")

    def passages(html: str, url: str) -> str:
        return "\n\n".join(passage.text for passage in split_passages(read(html, url), prefix="p"))

    runs["groundhog ... + passages"] = passages
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=None, help="score only the first N pages")
    args = parse_args_with_smoke(parser, pages=3)
    pages = load(args.pages)
    truths = {page_id: words(body) for page_id, _, _, body in pages}
    runs = pipelines()
    results: dict[str, dict[str, tuple[float, float, float]]] = {}
    seconds: dict[str, float] = {}
    for name, run in runs.items():
        results[name], elapsed = {}, 0.0
        for page_id, url, html, _ in pages:
            started = time.perf_counter()
            predicted = run(html, url)
            elapsed += time.perf_counter() - started
            results[name][page_id] = score(predicted, truths[page_id])
        seconds[name] = elapsed

    print(f"{len(pages)} pages from {DATA}")
    print(f"  {'pipeline':<32} {'precision':>9} {'recall':>7} {'F1':>7} {'ΔF1':>8} {'pages/s':>8}")
    reference = "trafilatura.extract"
    base = _mean(results[reference], 2)
    for name, per_page in results.items():
        p, r, f = (_mean(per_page, i) for i in range(3))
        delta = "" if name == reference else f"{f - base:+8.4f}"
        print(f"  {name:<32} {p:9.4f} {r:7.4f} {f:7.4f} {delta:>8} {len(pages) / seconds[name]:8.1f}")
    for name in results:
        if name == reference:
            continue
        delta = _mean(results[name], 2) - base
        verdict = "within" if delta >= -TARGET else "NOT within"
        print(f"  {name}: ΔF1 {delta:+.4f}, {verdict} {TARGET} of trafilatura alone")
        worse = sorted(results[name], key=lambda page: results[name][page][2] - results[reference][page][2])
        for page in worse[:3]:
            ours, theirs = results[name][page][2], results[reference][page][2]
            if ours < theirs:
                print(f"    worst page {page[:12]}: F1 {ours:.3f} vs {theirs:.3f}")


def _mean(per_page: dict[str, tuple[float, float, float]], index: int) -> float:
    return sum(values[index] for values in per_page.values()) / len(per_page)


if __name__ == "__main__":
    main()

"""Findings per rule of `lynxc diff` over the real release histories in tests/data/mcp-tool-versions.

A history is every saved release of one server (`<history>_<version>.json`), in version order.
Each history is reviewed pair by pair (every release against the one before it) and once from
its first release to its last. The counts per rule are what `test_diff_histories.py` compares
with its golden, so a change of the judge shows up in review as the counts it moved.

    python -m tests.compiler.history_counts          # the table, as in the golden
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from lynxc.compiler.inputs import load_side
from lynxc.compiler.review.compare import ServerReview, review
from tests.conftest import DATA, ROOT

VERSIONS = DATA / "mcp-tool-versions"
RELEASES = "releases"  # every consecutive pair of a history, added up
FIRST_TO_LAST = "first→last"
SPANS = (RELEASES, FIRST_TO_LAST)
HISTORY_WIDTH, RULE_WIDTH = 26, 32  # the longest names today; a longer one moves only its lines


def version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", path.stem.rsplit("_", 1)[1]))


def histories(folder: Path = VERSIONS) -> dict[str, list[Path]]:
    """Saved releases by history name, oldest first."""
    found: dict[str, list[Path]] = {}
    for path in folder.glob("*.json"):
        found.setdefault(path.stem.rsplit("_", 1)[0], []).append(path)
    return {name: sorted(paths, key=version_key) for name, paths in sorted(found.items())}


@dataclass(frozen=True)
class Pair:
    history: str
    span: str  # RELEASES for a consecutive pair, FIRST_TO_LAST for the whole history
    old: Path
    new: Path

    @property
    def label(self) -> str:
        return f"{self.old.stem}..{self.new.stem.rsplit('_', 1)[1]}"


def pairs(found: dict[str, list[Path]]) -> Iterator[Pair]:
    for name, paths in found.items():
        for old, new in itertools.pairwise(paths):
            yield Pair(name, RELEASES, old, new)
        if len(paths) > 1:  # with two releases, the same pair: both columns then agree
            yield Pair(name, FIRST_TO_LAST, paths[0], paths[-1])


def review_saved(pair: Pair) -> ServerReview:
    """`lynxc diff OLD NEW` in-process: the same loading and review as the command."""
    (server,) = review(load_side(str(pair.old), ROOT), load_side(str(pair.new), ROOT))
    return server


Counts = Counter[tuple[str, str, str]]  # (history, span, rule or level) -> findings


def count(reviews: Iterable[tuple[Pair, ServerReview]]) -> Counts:
    counts: Counts = Counter()
    for pair, server in reviews:
        for finding in server.findings:
            for subject in (pair.history, "all"):
                counts[subject, pair.span, finding.rule_id] += 1
                counts[subject, pair.span, f"= {finding.level}"] += 1
    return counts


def table(found: dict[str, list[Path]], counts: Counts) -> str:
    """One line per history and rule (levels last), so a moved count is a moved line. Column
    widths are fixed, not fitted to the longest name, so a new rule moves only its own lines."""
    lines = [
        "# lynxc diff over real release histories (python -m tests.compiler.history_counts)",
        f"# {RELEASES}: findings over every consecutive release pair; {FIRST_TO_LAST}: first release"
        " against the last",
    ]
    for name, paths in found.items():
        versions = ", ".join(path.stem.rsplit("_", 1)[1] for path in paths)
        lines.append(f"# {name}: {len(paths)} release{'s' if len(paths) > 1 else ''}: {versions}")
    lines.append(f"{'history':<{HISTORY_WIDTH}}  {'rule':<{RULE_WIDTH}}  {RELEASES:>8}  {FIRST_TO_LAST:>10}")
    subjects = [*sorted({subject for subject, _, _ in counts} - {"all"}), "all"]
    for subject in subjects:
        keys = sorted({key for s, _, key in counts if s == subject}, key=lambda k: (k.startswith("="), k))
        for key in keys:
            releases, whole = (counts[subject, span, key] for span in SPANS)
            lines.append(f"{subject:<{HISTORY_WIDTH}}  {key:<{RULE_WIDTH}}  {releases:>8}  {whole:>10}")
    return "\n".join(lines) + "\n"


def history_table(folder: Path = VERSIONS) -> str:
    found = histories(folder)
    return table(found, count((pair, review_saved(pair)) for pair in pairs(found)))


if __name__ == "__main__":
    print(history_table(), end="")

"""`lynxc diff` over every real release history in tests/data/mcp-tool-versions: the findings per
rule (per history, and in all) against a committed golden, so a change of the judge shows up in
review as the lines of `diff_histories/counts.txt` it moved; and what must hold for every pair.

Regenerate with `LYNXC_UPDATE_GOLDENS=1 pytest tests/compiler/test_diff_histories.py`, then read
the moved lines: each one is a verdict that changed somewhere in a real history.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from lynxc.compiler.review.diff import Change, diff_tools
from lynxc.compiler.review.judge import LEVELS
from lynxc.compiler.rules import RULES
from tests.compiler.history_counts import (
    FIRST_TO_LAST,
    RELEASES,
    Pair,
    count,
    histories,
    pairs,
    review_saved,
    table,
)

GOLDEN = Path(__file__).parent / "diff_histories" / "counts.txt"
UPDATE = os.environ.get("LYNXC_UPDATE_GOLDENS") == "1"
HISTORIES = histories()
PAIRS = list(pairs(HISTORIES))
# Each pair once: a two-release history's first→last pair is its one consecutive pair.
DISTINCT_PAIRS = list({(pair.old, pair.new): pair for pair in PAIRS}.values())


def test_counts_per_rule_match_the_golden() -> None:
    output = table(HISTORIES, count((pair, review_saved(pair)) for pair in PAIRS))
    if UPDATE:
        GOLDEN.write_text(output)
    # Line by line, so a failure lists exactly the counts that moved.
    assert output.splitlines() == GOLDEN.read_text().splitlines()


def _change_key(change: Change) -> str:
    return json.dumps(change.to_json(), sort_keys=True, default=repr)


@pytest.mark.parametrize("pair", DISTINCT_PAIRS, ids=[p.label for p in DISTINCT_PAIRS])
def test_every_change_gets_exactly_one_finding_with_its_catalogue_level(pair: Pair) -> None:
    server = review_saved(pair)
    old = json.loads(pair.old.read_text())["tools"]
    new = json.loads(pair.new.read_text())["tools"]
    changes = Counter(_change_key(change) for change in diff_tools(old, new))
    judged = Counter(_change_key(finding.change) for finding in server.findings)
    assert judged == changes
    for finding in server.findings:
        rule = RULES[finding.rule_id]
        assert rule.category == "diff", finding.rule_id
        assert finding.level == rule.severity and finding.level in LEVELS
        assert finding.message.strip(), finding.rule_id


def test_histories_are_real_multi_release_histories() -> None:
    # The golden means something only over long histories: several servers, each with many
    # releases, reviewed pair by pair and whole.
    long = [name for name, paths in HISTORIES.items() if len(paths) >= 5]
    assert len(long) >= 5, long
    assert {pair.span for pair in PAIRS} == {RELEASES, FIRST_TO_LAST}
    for paths in HISTORIES.values():
        for path in paths:
            saved = json.loads(path.read_text())
            assert saved["version"] == path.stem.rsplit("_", 1)[1] and saved["tools"], path.name

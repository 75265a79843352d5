"""`lynxc diff` over every real release history in tests/data/mcp-tool-versions: the findings per
rule (per history, and in all) against a committed golden, so a change of the judge shows up in
review as the lines of `diff_histories/counts.txt` it moved; and what must hold for every pair.

Regenerate with `LYNXC_UPDATE_GOLDENS=1 pytest tests/compiler/test_diff_histories.py`, then read
the moved lines: each one is a verdict that changed somewhere in a real history.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from lynxc.compiler.review.diff import Change, diff_tools
from lynxc.compiler.review.judge import LEVELS
from lynxc.compiler.rules import RULES
from tests.compiler.history_counts import (
    FIRST_TO_LAST,
    RELEASES,
    VERSIONS,
    Pair,
    histories,
    history_table,
    pairs,
    review_saved,
)
from tests.conftest import ROOT, lynxc_command

GOLDEN = Path(__file__).parent / "diff_histories" / "counts.txt"
UPDATE = os.environ.get("LYNXC_UPDATE_GOLDENS") == "1"
HISTORIES = histories()
PAIRS = list(pairs(HISTORIES))
# Each pair once: a two-release history's first→last pair is its one consecutive pair.
DISTINCT_PAIRS = list({(pair.old, pair.new): pair for pair in PAIRS}.values())


def test_counts_per_rule_match_the_golden() -> None:
    output = history_table()
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
    # A change another finding already says is folded into it (`Finding.folded`), not dropped.
    judged = Counter(
        _change_key(change) for finding in server.findings for change in (finding.change, *finding.folded)
    )
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


def _capture_module(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    # The capture script lives beside the data it writes, outside any package; its dataclasses
    # look their module up in sys.modules while it loads.
    spec = importlib.util.spec_from_file_location("mcp_tool_versions_capture", VERSIONS / "capture.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.anyio
async def test_capture_saves_exactly_what_a_stdio_server_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The capture path (raw JSON-RPC over the SDK's stdio transport, every page, atomic write)
    # against a real server that needs no registry: a bundled one, whose tools.json is what its
    # tools/list answers.
    capture = _capture_module(monkeypatch)
    command = lynxc_command("serve", "dot-harness")
    answer = await capture.list_tools(command, capture.Launch(), tmp_path)
    published = json.loads((ROOT / "generated/dot-harness/tools.json").read_text())
    assert answer["tools"] == published["tools"]
    assert answer["serverInfo"]["name"] == "dot-harness" and answer["protocolVersion"]
    saved = tmp_path / "dot-harness_1.json"
    capture.write_atomically(saved, json.dumps(answer, indent=1))
    assert json.loads(saved.read_text()) == answer
    assert [path.name for path in tmp_path.iterdir()] == [saved.name]

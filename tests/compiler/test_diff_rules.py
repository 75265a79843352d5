"""One golden fixture per diff rule: `diff_rules/<RULE>/before.*` and `after.*` (specs, or a
tools/list JSON where a spec cannot express the change; for resource rules, generated folders
`before/rules/` and `after/rules/` holding tools.json and collections.json) and the expected review
in `expected.txt`. Every diff rule of the catalogue has a folder, and its fixture triggers it.

Regenerate goldens with `LYNXC_UPDATE_GOLDENS=1 pytest tests/compiler/test_diff_rules.py`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lynxc.compiler.inputs import load_side
from lynxc.compiler.review.compare import review
from lynxc.compiler.review.render import render_text
from lynxc.compiler.rules import RULES
from tests.conftest import ROOT

FIXTURES = Path(__file__).parent / "diff_rules"
UPDATE = os.environ.get("LYNXC_UPDATE_GOLDENS") == "1"
DIFF_RULES = sorted(rule_id for rule_id, rule in RULES.items() if rule.category == "diff")


def test_every_diff_rule_has_a_fixture() -> None:
    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) == DIFF_RULES


def _side(folder: Path, name: str) -> str:
    found = next(
        p
        for p in sorted(folder.iterdir())
        if p.stem == name and (p.suffix in (".yaml", ".json") or p.is_dir())
    )
    if found.is_dir():  # before/<server>/: a generated folder, named by its server
        return f"{name}/{next(found.iterdir()).name}"
    return found.name


@pytest.mark.parametrize("rule_id", DIFF_RULES)
def test_rule_fixture(rule_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = FIXTURES / rule_id
    monkeypatch.chdir(folder)
    base = load_side(_side(folder, "before"), ROOT)
    head = load_side(_side(folder, "after"), ROOT)
    assert not base.diagnostics and not head.diagnostics
    reviews = review(base, head)
    assert rule_id in {finding.rule_id for r in reviews for finding in r.findings}
    rendered = render_text(reviews)
    expected = folder / "expected.txt"
    if UPDATE:
        expected.write_text(rendered)
    assert rendered == expected.read_text()
    for finding in (f for r in reviews for f in r.findings):
        assert finding.level == RULES[finding.rule_id].severity

"""The cases issue 25 found misjudged or unseen on github-mcp-server's release history, each as a
minimal before/after pair in `diff_cases/<case>/` shaped like that server's tools: the verdict a
reviewer should agree with, one finding per change, and the golden text review.

Regenerate goldens with `LYNXC_UPDATE_GOLDENS=1 pytest tests/compiler/test_diff_cases.py`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lynxc.compiler.inputs import load_side
from lynxc.compiler.review.compare import review
from lynxc.compiler.review.render import render_text
from tests.conftest import ROOT

CASES = Path(__file__).parent / "diff_cases"
UPDATE = os.environ.get("LYNXC_UPDATE_GOLDENS") == "1"

# case -> the rules of its findings, in review order
VERDICTS = {
    "input-schema-null-repaired": ["INPUT_SCHEMA_REPAIRED"],
    "input-schema-object-to-null": ["INPUT_SCHEMA_REPLACED"],
    "default-added-to-a-required-parameter": ["DEFAULT_ADDED", "PARAM_BECAME_OPTIONAL"],
    "dependent-schemas-added": ["DEPENDENCY_ADDED"],
    "dependent-schemas-removed": ["DEPENDENCY_REMOVED"],
    "open-object-split-into-closed-shapes": ["PARAM_ALTERNATIVE_REMOVED"],
    "parameter-removed-from-an-open-object": ["PARAM_REMOVED"],
    "enum-values-change-case": ["ENUM_VALUE_REMOVED"],
    "type-becomes-nullable-anyof": ["PARAM_TYPE_WIDENED"],
    "meta-ui-hides-the-tool-from-the-model": ["TOOL_HIDDEN_FROM_MODEL"],
    "icons-lose-their-sizes": ["ICONS_CHANGED"],
    "unknown-tool-field": ["TOOL_FIELD_UNKNOWN"],
}


def test_every_case_folder_has_a_verdict() -> None:
    assert sorted(p.name for p in CASES.iterdir() if p.is_dir()) == sorted(VERDICTS)


@pytest.mark.parametrize("case", sorted(VERDICTS))
def test_case(case: str) -> None:
    folder = CASES / case
    reviews = review(
        load_side(str(folder / "before.json"), ROOT), load_side(str(folder / "after.json"), ROOT)
    )
    assert [f.rule_id for r in reviews for f in r.findings] == VERDICTS[case]
    rendered = render_text(reviews)
    expected = folder / "expected.txt"
    if UPDATE:
        expected.write_text(rendered)
    assert rendered == expected.read_text()

"""Generated Markdown renders as intended everywhere: a heading stands between blank lines
(CommonMark renderers differ on headings glued to a list or a paragraph)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT

MARKDOWN = sorted([*(ROOT / "generated").glob("*/README.md"), *(ROOT / "schema-changelog").glob("*/*.md")])


def glued_headings(text: str) -> list[str]:
    lines = text.splitlines()
    found, fenced = [], False
    for index, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        before = lines[index - 1] if index else ""
        after = lines[index + 1] if index + 1 < len(lines) else ""
        if before.strip() or after.strip():
            found.append(f"line {index + 1}: {line}")
    return found


def test_the_check_sees_a_glued_heading() -> None:
    assert glued_headings("- a\n### tool\n\ntext\n") == ["line 2: ### tool"]
    assert glued_headings("text\n\n## ok\n\nmore\n```\n# not a heading\n```\n") == []


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_headings_stand_between_blank_lines(path: Path) -> None:
    assert glued_headings(path.read_text()) == []

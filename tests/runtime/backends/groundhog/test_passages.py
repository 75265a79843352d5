"""split_passages: blocks with their last heading, offsets checked by slicing, long blocks split
at sentence ends, tiny blocks merged; markdown_to_text; real pages from tests/data/web/articles."""

from __future__ import annotations

import gzip
import itertools
import json
import re
from pathlib import Path

import pytest

from lynxc.runtime.backends.groundhog import passages as module
from lynxc.runtime.backends.groundhog.extract import extract_page
from lynxc.runtime.backends.groundhog.passages import (
    MAX_PASSAGE_TOKENS,
    MIN_PASSAGE_TOKENS,
    markdown_to_text,
    split_passages,
)
from lynxc.runtime.backends.groundhog.tokens import count_tokens

ARTICLES = Path(__file__).parents[3] / "data" / "web" / "articles"
TRUTH = json.loads((ARTICLES / "ground-truth.json").read_text(encoding="utf-8"))

CRAFTED = """Title line
==========

Intro paragraph.

## Lists & *more* ##

- one item
  continued here
- two item
lazy line

| a | b |
|---|---|
| 1 | 2 |

```python
# not a heading

x = 1
```
After the fence.

***

### Empty section
### Last section

Final words.
"""


def check_slices(markdown: str, found: list) -> None:
    for passage in found:
        assert markdown[passage.start : passage.end] == passage.text
        assert passage.text == passage.text.strip() and passage.text
    starts = [passage.start for passage in found]
    assert starts == sorted(starts)
    assert all(a.end <= b.start for a, b in itertools.pairwise(found))  # no overlap


def test_each_block_is_a_passage_with_its_last_heading(monkeypatch):
    monkeypatch.setattr(module, "MIN_PASSAGE_TOKENS", 0)  # blocks as they are, no merging
    found = split_passages(CRAFTED, prefix="t")
    check_slices(CRAFTED, found)
    assert [(p.id, p.heading, p.text) for p in found] == [
        ("t-1", "Title line", "Intro paragraph."),  # setext heading
        # the heading without its closing #s and emphasis; the list with its continuation lines
        ("t-2", "Lists & more", "- one item\n  continued here\n- two item\nlazy line"),
        ("t-3", "Lists & more", "| a | b |\n|---|---|\n| 1 | 2 |"),
        ("t-4", "Lists & more", "```python\n# not a heading\n\nx = 1\n```"),  # a # line inside a fence
        ("t-5", "Lists & more", "After the fence."),
        ("t-6", "Last section", "Final words."),  # the empty section has no passage; *** is no block
    ]


def test_tiny_blocks_join_the_next_block_under_the_same_heading():
    found = split_passages(CRAFTED, prefix="p")
    check_slices(CRAFTED, found)
    assert [(p.heading, p.text.split("\n")[0]) for p in found] == [
        ("Title line", "Intro paragraph."),  # tiny, but the next block is under another heading
        ("Lists & more", "- one item"),  # list, table and code: one passage, then
        ("Last section", "Final words."),
    ]
    assert found[1].text.endswith("```\nAfter the fence.")  # the last under its heading joins backwards


def test_a_long_paragraph_is_split_at_sentence_ends():
    sentences = [f"Sentence number {i} says something about groundhogs and weather." for i in range(200)]
    markdown = "# Heading\n\n" + " ".join(sentences) + "\n"
    found = split_passages(markdown, prefix="p")
    check_slices(markdown, found)
    assert len(found) > 5
    for passage in found:
        assert count_tokens(passage.text) <= MAX_PASSAGE_TOKENS
        assert passage.text.startswith("Sentence number ") and passage.text.endswith("weather.")
        assert passage.heading == "Heading"
    assert " ".join(p.text for p in found) == " ".join(sentences)


def test_a_long_list_is_split_at_line_ends_and_a_huge_word_anywhere():
    items = "\n".join(f"- item {i} with a few words of its own" for i in range(300))
    word = "x" * 5000
    markdown = f"{items}\n\n{word}\n"
    found = split_passages(markdown, prefix="p")
    check_slices(markdown, found)
    assert all(count_tokens(p.text) <= MAX_PASSAGE_TOKENS for p in found)
    list_parts = [p for p in found if p.text.startswith("- ")]
    assert all(p.text.endswith("of its own") for p in list_parts)
    assert "".join(p.text for p in found if p.text.startswith("x")) == word


def test_passage_ids_carry_the_prefix_and_count_from_one():
    found = split_passages("First paragraph, long enough.\n\n" * 3 + "x " * 200, prefix="s2")
    assert [p.id for p in found] == [f"s2-{n}" for n in range(1, len(found) + 1)]


@pytest.mark.parametrize("markdown", ["", "\n\n  \n", "# Only a heading\n", "---\n"])
def test_nothing_to_read_gives_no_passages(markdown):
    assert split_passages(markdown, prefix="p") == []


def test_a_hostile_document_is_linear_not_recursive():
    markdown = "\n".join(">" * 200 + " - " * 200 + "x" for _ in range(2000)) + "\n" + "```\n" * 5001
    found = split_passages(markdown, prefix="p")
    check_slices(markdown, found)


@pytest.mark.parametrize("page_id", sorted(TRUTH))
@pytest.mark.parametrize("format", ["markdown", "text"])
def test_real_pages_split_into_exact_slices_that_cover_the_content(page_id, format):
    html = gzip.decompress((ARTICLES / f"{page_id}.html.gz").read_bytes())
    markdown = extract_page(html, url=TRUTH[page_id]["url"], media_type="text/html", format=format).markdown
    found = split_passages(markdown, prefix="p")
    check_slices(markdown, found)
    assert all(count_tokens(p.text) <= MAX_PASSAGE_TOKENS for p in found)
    # every word of the page is in a passage, apart from the heading lines (in `heading`)
    covered = "\n".join(p.text for p in found)
    body = "\n".join(line for line in markdown.split("\n") if not re.match(r" {0,3}#{1,6} ", line))
    assert sorted(re.findall(r"\w+", covered)) == sorted(re.findall(r"\w+", body))
    for index, passage in enumerate(found):  # a tiny passage stands alone only when it cannot join
        if count_tokens(passage.text) >= MIN_PASSAGE_TOKENS:
            continue
        for neighbour in found[index - 1 : index] + found[index + 1 : index + 2]:
            first, last = sorted((passage, neighbour), key=lambda p: p.start)
            assert neighbour.heading != passage.heading or (
                count_tokens(markdown[first.start : last.end]) > MAX_PASSAGE_TOKENS
            )


def test_headings_of_a_real_page():
    page_id = next(key for key in TRUTH if key.startswith("57b4dafd18cf"))
    html = gzip.decompress((ARTICLES / f"{page_id}.html.gz").read_bytes())
    found = split_passages(
        extract_page(html, url="https://x.org/", media_type="text/html").markdown, prefix="p"
    )
    assert found[0].heading is None  # the text before the first heading
    assert "Analoge Prozesse" in [p.heading for p in found]
    assert "Status Quo" not in [p.heading for p in found]  # directly followed by a subheading


def test_markdown_to_text_removes_the_syntax_and_keeps_the_words():
    markdown = (
        "# Title #\n"
        "> quoted **bold** and *em* and _under_ and ~~gone~~ `code`\n"
        "1. first [link](https://x.org/a_b) ![alt text](i.png) <https://auto.link>\n"
        "   * nested\n"
        "| a | b \\| c |\n"
        "|:---|---:|\n"
        "---\n"
        "snake_case and 5 * 3 and 2*x and \\*escaped\\* and \\_under\\_\n"
        "```\n"
        "**kept** in code\n"
        "```"
    )
    assert markdown_to_text(markdown).split("\n") == [
        "Title",
        "quoted bold and em and under and gone code",
        "first link alt text https://auto.link",
        "nested",
        "a b | c",
        "snake_case and 5 * 3 and 2*x and *escaped* and _under_",
        "**kept** in code",
    ]

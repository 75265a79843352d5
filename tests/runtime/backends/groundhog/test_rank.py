"""BM25 ranking of passages on a crafted page, the token estimate, and fitting a budget."""

from __future__ import annotations

import math

import pytest

from lynxc.runtime.backends.groundhog.passages import Passage, split_passages
from lynxc.runtime.backends.groundhog.rank import fit_budget, rank_passages, tokenize
from lynxc.runtime.backends.groundhog.tokens import count_tokens, cut_to_tokens

PAGE = """# Groundhog Day

Punxsutawney Phil is the groundhog who forecasts the weather every February in Pennsylvania.
If he sees his shadow, six more weeks of winter follow; the crowd waits for the verdict.

## Accuracy

The forecasts are right about forty percent of the time, according to weather records kept
by the national climate center over several decades of observations.

## The film

Bill Murray plays a weatherman who relives the same day again and again in a small town.
The film was released in 1993 and is a comedy about repetition and change.

## Shadow puppets

Children make shadow puppets with their hands in front of a lamp on winter evenings.
"""


@pytest.fixture
def passages() -> list[Passage]:
    return split_passages(PAGE, prefix="p")


def test_the_passage_about_the_query_ranks_first_and_scores_one(passages):
    ranked = rank_passages("how accurate is the groundhog's weather forecast", passages)
    assert ranked[0][0].heading == "Groundhog Day"
    assert ranked[0][1] == 1.0
    assert all(0 < score <= 1 for _, score in ranked)
    assert [score for _, score in ranked] == sorted((score for _, score in ranked), reverse=True)


def test_the_heading_counts_with_the_passage(passages):
    # "accuracy" is only in a heading; its passage says "right about forty percent"
    ranked = rank_passages("accuracy", passages)
    assert [(p.heading, score) for p, score in ranked] == [("Accuracy", 1.0)]


def test_passages_without_a_query_word_are_left_out(passages):
    ranked = rank_passages("film comedy", passages)
    assert [p.heading for p, _ in ranked] == ["The film"]
    assert rank_passages("zeppelin", passages) == []
    assert rank_passages("", passages) == []
    assert rank_passages("shadow", []) == []


def test_a_rarer_word_outweighs_a_common_one(passages):
    ranked = rank_passages("shadow puppets", passages)
    assert ranked[0][0].heading == "Shadow puppets"  # "shadow" alone is also in the first passage
    assert ranked[1][0].heading == "Groundhog Day" and ranked[1][1] < 0.5


def test_equal_scores_keep_document_order():
    same = [Passage(f"p-{n}", "the same words here", None, 30 * n, 30 * n + 19) for n in range(1, 5)]
    assert [p.id for p, _ in rank_passages("same words", same)] == ["p-1", "p-2", "p-3", "p-4"]
    assert {score for _, score in rank_passages("same words", same)} == {1.0}


def test_a_query_of_stopwords_only_is_matched_on_them():
    texts = ["what it is", "nothing of the kind", "another thing"]
    found = [Passage(f"p-{n}", text, None, 0, len(text)) for n, text in enumerate(texts, 1)]
    assert [p.id for p, _ in rank_passages("what is it", found)] == ["p-1"]


def test_scores_are_bm25_with_k1_1_2_and_b_0_75_normalised_by_the_best():
    texts = ["apple apple banana", "apple cherry cherry cherry", "banana"]
    found = [Passage(f"p-{n}", text, None, 0, len(text)) for n, text in enumerate(texts, 1)]
    lengths, average, count = [3, 4, 1], 8 / 3, 3

    def idf(df: int) -> float:
        return math.log(1 + (count - df + 0.5) / (df + 0.5))

    def part(tf: int, length: int, df: int) -> float:
        return idf(df) * tf * 2.2 / (tf + 1.2 * (1 - 0.75 + 0.75 * length / average))

    raw = [part(2, lengths[0], 2), part(1, lengths[1], 2), 0.0]  # query "apple"
    ranked = rank_passages("Apple", found)
    assert [p.id for p, _ in ranked] == ["p-1", "p-2"]
    assert ranked[1][1] == pytest.approx(raw[1] / raw[0])


def test_tokens_are_casefolded_unicode_words_without_stopwords():
    assert tokenize("The Straße and the CAFÉ, snake_case 42!") == ["strasse", "café", "snake_case", "42"]
    assert tokenize("Москва — столица") == ["москва", "столица"]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("abcd", 1), ("abcde", 2), ("é" * 4, 2), ("日本語の", 3), ("x" * 4000, 1000)],
)
def test_count_tokens_is_utf8_bytes_over_four_rounded_up(text, tokens):
    assert count_tokens(text) == tokens


# --- fit_budget ------------------------------------------------------------------------------


def ranked_of(*sizes: int) -> list[tuple[Passage, float]]:
    """Passages of the given token sizes (4 ASCII characters per token), scored best first."""
    out, offset = [], 0
    for n, size in enumerate(sizes, 1):
        text = ("word " * size)[: size * 4 - 1] + "."
        out.append((Passage(f"p-{n}", text, None, offset, offset + len(text)), 1.0 / n))
        offset += len(text) + 2
    return out


def test_passages_that_exactly_fill_the_budget_are_all_kept():
    ranked = ranked_of(10, 20, 30)
    kept, truncated, set_aside = fit_budget(ranked, 60)
    assert [(p.id, clamped) for p, _, clamped in kept] == [("p-1", False), ("p-2", False), ("p-3", False)]
    assert (truncated, set_aside) == (False, 0)
    assert [score for _, score, _ in kept] == [score for _, score in ranked]


def test_one_over_the_budget_sets_the_last_aside_and_a_smaller_one_still_fits():
    kept, truncated, set_aside = fit_budget(ranked_of(10, 30, 20, 5), 36)
    assert [p.id for p, _, _ in kept] == ["p-1", "p-3", "p-4"]  # p-2 (30) did not fit after p-1
    assert (truncated, set_aside) == (True, 1)


def test_the_top_passage_over_the_budget_is_cut_and_flagged_clamped():
    text = "First sentence is here. Second sentence is a little longer than that. Third one ends it."
    top = Passage("p-1", text, "Heading", 100, 100 + len(text))
    kept, truncated, set_aside = fit_budget([(top, 1.0), ranked_of(30)[0]], 11)
    ((passage, score, clamped),) = kept
    assert clamped and truncated and set_aside == 1 and score == 1.0
    assert passage.text == "First sentence is here."  # cut at a sentence end within 11 tokens (44 bytes)
    assert (passage.id, passage.heading, passage.start) == ("p-1", "Heading", 100)
    assert passage.end == 100 + len(passage.text)  # still a slice of the page's Markdown
    assert count_tokens(passage.text) <= 11


def test_a_zero_budget_still_admits_the_top_passage_cut_to_nothing():
    kept, truncated, set_aside = fit_budget(ranked_of(10, 20), 0)
    ((passage, _, clamped),) = kept
    assert clamped and passage.text == "" and passage.end == passage.start
    assert (truncated, set_aside) == (True, 1)


def test_nothing_ranked_gives_nothing():
    assert fit_budget([], 100) == ([], False, 0)


def test_cut_to_tokens_prefers_sentence_then_word_ends():
    assert cut_to_tokens("short", 10) == "short"
    assert cut_to_tokens("alpha beta gamma delta", 4) == "alpha beta gamma"  # 16 bytes end at a word end
    assert cut_to_tokens("alpha beta gammadelta", 4) == "alpha beta"  # 16 bytes end inside a word
    assert cut_to_tokens("abcdefghijklmnopqrstuvwxyz", 2) == "abcdefgh"  # no boundary: where it runs out
    assert cut_to_tokens("Один два три четыре", 4) == "Один два"  # Cyrillic: 2 bytes a letter
    assert cut_to_tokens("anything", 0) == ""
    # a sentence end in the first half of the cut would waste the budget: a word end then
    assert (
        cut_to_tokens("Tiny. And then a much longer sentence follows here.", 8)
        == "Tiny. And then a much longer"
    )


@pytest.mark.parametrize("budget", [-3, 0, 1, 2, 5, 13, 40, 1000])
def test_cut_to_tokens_is_a_prefix_within_the_budget(budget):
    text = "Première phrase, assez longue. 第二句话在这里。 Third: snake_case words\tand\nlines end here."
    cut = cut_to_tokens(text, budget)
    assert text.startswith(cut)
    assert count_tokens(cut) <= max(budget, 0)
    assert cut == (text if count_tokens(text) <= budget else cut.rstrip())

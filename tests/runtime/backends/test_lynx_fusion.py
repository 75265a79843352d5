"""Fusion of lynx's sparse and dense candidate pools (pure functions): the order, the reported
score, and the limits of each fusion."""

from __future__ import annotations

import random

import pytest

from lynxc.runtime.backends.lynx.calibration import agreement_power, keyword_weight, min_score
from lynxc.runtime.backends.lynx.fusion import Candidate, adapted_keyword_weight, fuse, query_agreement_power


def pool(*items: tuple[str, float, float]) -> list[Candidate]:
    """Candidates (id, raw score, similarity), best first; the path is the id."""
    return [Candidate(i, raw, sim, {"path": i, "start_line": 1}) for i, raw, sim in items]


def ids(ranked) -> list[str]:
    return [item.candidate.id for item in ranked]


SPARSE = pool(("a", 12.0, 0.30), ("b", 6.0, 0.50), ("c", 5.5, 0.20), ("d", 5.0, 0.10))
DENSE = pool(("b", 0.50, 0.50), ("e", 0.45, 0.45), ("a", 0.30, 0.30), ("f", 0.29, 0.29))


def test_score_fusion_orders_by_the_reported_score_and_the_top_is_1() -> None:
    ranked = fuse({"s": (SPARSE, DENSE)}, "hybrid", "score", 0.5, agreement_power=0)  # fixed weight
    scores = [item.score for item in ranked]
    assert scores == sorted(scores, reverse=True) and scores[0] == 1.0 and scores[-1] >= 0
    assert set(ids(ranked)) == {"a", "b", "c", "d", "e", "f"}  # every candidate once
    assert ids(ranked)[:2] == ["b", "a"]  # found by both, high in both


def test_the_keyword_weight_moves_the_order_between_the_two_rankings() -> None:
    sparse_only = ids(fuse({"s": (SPARSE, DENSE)}, "hybrid", "score", 1.0))
    dense_only = ids(fuse({"s": (SPARSE, DENSE)}, "hybrid", "score", 0.0))
    assert sparse_only[:4] == ids(fuse({"s": (SPARSE, [])}, "sparse", "score"))
    assert dense_only[:4] == ["b", "e", "a", "f"]


def test_a_candidate_a_ranking_found_stays_above_one_it_did_not() -> None:
    """Weight 1: the dense side counts for nothing, so a dense-only candidate ties the sparse
    pool's last at 0 unless being found counts; it must rank after every sparse candidate."""
    ranked = ids(fuse({"s": (SPARSE, pool(("0-dense-only", 0.9, 0.9)))}, "hybrid", "score", 1.0))
    assert ranked == ["a", "b", "c", "d", "0-dense-only"]


def test_dense_scores_are_similarities_and_sparse_scores_are_relative_to_the_best() -> None:
    dense = fuse({"x": ([], DENSE)}, "dense", "score")
    assert all(item.score == item.candidate.similarity for item in dense)
    sparse = fuse({"x": (SPARSE, []), "y": (pool(("z", 3.0, 0.4)), [])}, "sparse", "score")
    assert [(item.source, item.score) for item in sparse][:2] == [("x", 1.0), ("x", 0.5)]
    assert sparse[-1].source == "y" and sparse[-1].score == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("mode", "weight"), [("hybrid", 0.5), ("hybrid", 0.2), ("sparse", 0.5), ("dense", 0.5)]
)
def test_sources_fuse_as_one_source_holding_them_all(mode: str, weight: float) -> None:
    """A weak source's best must not score like a strong one's: the order of two sources is the
    order of one source holding both (scores are standardized over every pool together)."""
    rng = random.Random(7)
    sides = {
        source: [
            sorted(
                pool(*[(f"{source}{i}", rng.uniform(0, scale), rng.uniform(0, 0.8)) for i in range(30)]),
                key=lambda c: -c.raw,
            )
            for scale in (20.0 if source == "a" else 4.0, 0.8)
        ]
        for source in ("a", "b")
    }
    two = fuse({s: (sp, de) for s, (sp, de) in sides.items()}, mode, "score", weight)
    merged = [sorted(sides["a"][k] + sides["b"][k], key=lambda c: -c.raw) for k in (0, 1)]
    one = fuse({"all": (merged[0], merged[1])}, mode, "score", weight)
    assert ids(two) == ids(one)
    assert [i.score for i in two] == pytest.approx([i.score for i in one])


def test_equal_scores_go_by_cosine_and_non_finite_scores_are_dropped() -> None:
    lonely = pool(("p", 0.2, 0.2), ("q", 0.9, 0.9), ("r", float("nan"), 0.5))
    ranked = fuse({"s": ([], lonely)}, "hybrid", "score", 1.0)  # the dense side counts for 0
    assert ids(ranked) == ["q", "p"] and all(item.score == 0 for item in ranked)
    broken = pool(("a", 2.0, 0.3), ("b", float("inf"), 0.3), ("c", 1.0, float("nan")))
    assert ids(fuse({"s": (broken, [])}, "hybrid", "score")) == ["a"]


def test_rrf_keeps_lynx_original_order_with_scores_in_0_1() -> None:
    ranked = fuse({"s": (SPARSE, DENSE)}, "hybrid", "rrf")
    assert ids(ranked)[:2] == ["b", "a"]  # 2nd + 1st beats 1st + 3rd at k=60
    assert 0 < ranked[-1].score <= ranked[0].score <= 1
    first_in_both = fuse({"s": (pool(("a", 1.0, 0.5)), pool(("a", 0.5, 0.5)))}, "hybrid", "rrf")
    assert first_in_both[0].score == pytest.approx(1.0)


def test_ties_break_the_same_way_on_every_call() -> None:
    """Equal scores fuse to equal values, ordered by path (rankings arrive sorted by score and
    id from ranking.py, so rrf's ranks are stable too)."""
    tied = pool(*[(f"id{i:02}", 1.0, 0.5) for i in range(20)])
    shuffled = tied[:]
    random.Random(3).shuffle(shuffled)
    first = ids(fuse({"s": (tied, tied)}, "hybrid", "score"))
    assert first == ids(fuse({"s": (shuffled, shuffled[::-1])}, "hybrid", "score")) == sorted(first)


def test_empty_pools_and_an_unknown_fusion() -> None:
    assert fuse({"s": ([], [])}, "hybrid", "score") == []
    assert ids(fuse({"s": ([], DENSE)}, "hybrid", "score")) == ["b", "e", "a", "f"]
    with pytest.raises(ValueError, match="unknown fusion 'max'"):
        fuse({"s": (SPARSE, DENSE)}, "hybrid", "max")


def test_measured_constants_and_their_fallback() -> None:
    assert keyword_weight("minilm") == 0.5 and keyword_weight("static") == 1.0
    assert agreement_power("minilm") == 20 and agreement_power("static") == 0
    assert agreement_power("someone-elses") == agreement_power("minilm")
    assert min_score("minilm") == 0.42 and min_score("someone-elses") == min_score("minilm")


# A question typed as into a web search ("python check if file exists"): BM25's best hits share
# its common words and are about something else (low similarity); the dense ranking has the
# answer first. The same shape as bench/retrieval_sets.py's web-questions set.
WEB_SPARSE = pool(
    ("check_python_version", 14.0, 0.22),
    ("file_exists_error", 12.5, 0.25),
    ("python_file_header", 11.0, 0.18),
    ("if_exists_clause", 9.0, 0.15),
    ("check_file_mode", 8.5, 0.30),
    ("answer_nearby", 3.0, 0.55),
)
WEB_DENSE = pool(
    ("path_is_regular_file", 0.64, 0.64),
    ("answer_nearby", 0.55, 0.55),
    ("stat_of_path", 0.52, 0.52),
    ("open_for_reading", 0.50, 0.50),
    ("check_file_mode", 0.30, 0.30),
    ("file_exists_error", 0.25, 0.25),
)


def test_the_keyword_weight_gives_way_when_bm25s_best_hits_are_unlike_the_query() -> None:
    fixed = ids(fuse({"s": (WEB_SPARSE, WEB_DENSE)}, "hybrid", "score", 0.5, agreement_power=0))
    adapted = ids(fuse({"s": (WEB_SPARSE, WEB_DENSE)}, "hybrid", "score"))  # the defaults
    assert fixed[0] == "check_python_version"  # BM25's noise outvoted the answer
    assert adapted[:2] == ["path_is_regular_file", "answer_nearby"]


def test_the_adapted_weight_keeps_agreement_and_its_ends() -> None:
    web = {"s": (WEB_SPARSE, WEB_DENSE)}
    alike = {"s": (pool(("x", 9.0, 0.6), ("y", 4.0, 0.5)), pool(("y", 0.6, 0.6), ("x", 0.5, 0.5)))}
    assert adapted_keyword_weight(alike, 0.5, 16) == 0.5  # as similar as dense's best: unchanged
    assert adapted_keyword_weight(web, 0.5, 16) < 0.01
    assert adapted_keyword_weight(web, 0.5, 4) > adapted_keyword_weight(web, 0.5, 16)
    assert [adapted_keyword_weight(web, w, 16) for w in (0.0, 1.0)] == [0.0, 1.0]  # dense, BM25 alone
    assert adapted_keyword_weight(web, 0.5, 0) == 0.5
    assert adapted_keyword_weight({"s": (WEB_SPARSE, [])}, 0.5, 16) == 0.5  # nothing to compare
    assert adapted_keyword_weight({"s": (WEB_SPARSE, pool(("z", 0.0, 0.0)))}, 0.5, 16) == 0.5


@pytest.mark.parametrize(
    ("query", "adapts"),
    [
        ("python check if file exists", True),
        ("convert string to datetime", True),
        ("Client.send", False),
        ("parse_header_links()", False),
        ("where is BaseLoader defined", False),
        ("HTTPClient timeout", False),
        ("send() with a body", False),
        ("version 2.0 changes", True),  # digits around a dot are no name
    ],
)
def test_a_query_naming_code_keeps_the_fixed_weight(query: str, adapts: bool) -> None:
    """An exact name is BM25's strength and the embedder cannot tell the chunk holding it from
    its neighbours, so such a query keeps the keyword weight as measured."""
    assert query_agreement_power(query, 20.0) == (20.0 if adapts else 0.0)

"""Text handling of the DOT backends: the fast ASCII path must match `re.IGNORECASE` exactly."""

from __future__ import annotations

import random
import re

import pytest

from lynxc.runtime.backends.dot_harness.text import LiteralQuery, decode_strict, excerpt, matching_lines
from lynxc.runtime.backends.lines import split_lines_keepends

TRICKY = ["K", "k", "\u212a", "s", "S", "\u017f", "i", "I", "\u0130", "\u0131", "ß", "é", "e", "_", "x"]


def spans(query: LiteralQuery, text: str) -> list[tuple[int, int]]:
    find = query.finder(text)
    found, pos = [], 0
    while (hit := find(text, pos)) is not None:
        found.append(hit)
        pos = hit[0] + 1
    return found


def regex_spans(query: str, text: str) -> list[tuple[int, int]]:
    pattern = re.compile(re.escape(query), re.IGNORECASE)
    found, pos = [], 0
    while (match := pattern.search(text, pos)) is not None:
        found.append(match.span())
        pos = match.start() + 1
    return found


@pytest.mark.parametrize("seed", range(40))
def test_ascii_fast_path_equals_regex(seed: int) -> None:
    rng = random.Random(seed)
    ascii_text = "".join(rng.choice("kKsSiIx_e \n") for _ in range(400))
    for _ in range(20):
        query = "".join(rng.choice(TRICKY) for _ in range(rng.randint(1, 3)))
        for text in (ascii_text, ascii_text + "\u212a\u017f"):  # ASCII, then not
            assert spans(LiteralQuery(query, False), text) == regex_spans(query, text), (query, text[-5:])


def test_kelvin_and_long_s_fold_like_re() -> None:
    assert spans(LiteralQuery("\u212a", False), "kK") == [(0, 1), (1, 2)]  # Kelvin sign ~ k
    assert spans(LiteralQuery("\u017f", False), "sS") == [(0, 1), (1, 2)]  # long s ~ s
    assert spans(LiteralQuery("é", False), "eE") == []  # no ASCII form: never in ASCII text
    assert spans(LiteralQuery("K", True), "kK") == [(1, 2)]


def test_lines_crlf_lone_cr_and_bom() -> None:
    text = decode_strict("\ufeffa x\r\nb\rx\nx".encode())
    assert text == "a x\r\nb\rx\nx"
    hits = list(matching_lines(text, LiteralQuery("X", False).finder(text)))
    assert [(h.line_number, h.line, h.start) for h in hits] == [(1, "a x", 2), (2, "b\rx", 2), (3, "x", 0)]
    assert split_lines_keepends(text) == ["a x\r\n", "b\rx\n", "x"]
    assert decode_strict(b"a\x00b") is None and decode_strict(b"\xff") is None


def test_excerpt_window_holds_the_match() -> None:
    line = "a" * 1000 + "MATCH" + "b" * 1000
    shown, cut = excerpt(line, 1000, 1005, 600)
    assert len(shown) == 600 and "MATCH" in shown and line[cut : cut + 600] == shown
    assert excerpt("short", 0, 1, 600) == ("short", 0)
    end = "c" * 700 + "END"
    shown, cut = excerpt(end, 700, 703, 600)
    assert shown.endswith("END") and len(shown) == 600

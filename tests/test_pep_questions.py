"""The judged PEP questions of bench/data/pep-questions are what their README claims: well-formed
lines, unique ids, both halves and both kinds present, at least 80 questions, and every judged
answer a PEP number or section id that exists in the bundled data."""

from __future__ import annotations

import gzip
import json
import re

from tests.conftest import ROOT

FOLDER = ROOT / "bench" / "data" / "pep-questions"
DATA = ROOT / "specs" / "foxnose-knowledge" / "data"
FIELDS = {"id", "split", "target", "kind", "question", "relevant"}


def read_gz(name: str) -> list[dict]:
    with gzip.open(DATA / name, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def questions() -> list[dict]:
    rows = []
    for number, line in enumerate((FOLDER / "questions.jsonl").read_text().splitlines(), start=1):
        row = json.loads(line)
        assert set(row) == FIELDS, f"questions.jsonl:{number}: fields {sorted(row)}"
        rows.append(row)
    return rows


def test_the_set_is_well_formed() -> None:
    rows = questions()
    assert len(rows) >= 80
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({r["question"] for r in rows}) == len(rows)
    for r in rows:
        assert re.fullmatch(r"q\d{3}", r["id"]), r
        assert r["split"] == ("tune" if int(r["id"][1:]) % 2 else "held-out"), r
        assert r["target"] in {"peps", "sections"} and r["kind"] in {"keyword", "natural"}, r
        assert r["question"].strip() == r["question"] and r["question"], r
        assert r["relevant"] and len(set(r["relevant"])) == len(r["relevant"]), r
    assert {r["kind"] for r in rows} == {"keyword", "natural"}
    assert {r["target"] for r in rows} == {"peps", "sections"}
    assert "The questions came first" in (FOLDER / "README.md").read_text()


def test_every_judged_answer_exists_in_the_data() -> None:
    peps = {p["number"] for p in read_gz("peps.jsonl.gz")}
    sections = {s["section_id"] for s in read_gz("sections.jsonl.gz")}
    for r in questions():
        if r["target"] == "peps":
            assert all(isinstance(n, int) and n in peps for n in r["relevant"]), r
        else:
            assert all(isinstance(s, str) and s in sections for s in r["relevant"]), r

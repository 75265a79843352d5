"""tokens.py: the terms a record's keyword text and a query share."""

from __future__ import annotations

import pytest

from lynxc.runtime.backends.records import store
from lynxc.runtime.backends.records.tokens import TOKENIZER, term_text, terms

from .tables import RESOURCES


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The with statement", ["the", "with", "statement"]),  # no stop word dropped
        ("x := f(y)", ["x", "op_walrus", "f", "y"]),
        ("expr ::= atom", ["expr", "op_grammar", "atom"]),  # a grammar rule is not a walrus
        ("def f() -> int", ["def", "f", "op_arrow", "int"]),
        (
            "a ** b // c % d @ e",
            ["a", "op_starstar", "b", "op_floordiv", "c", "op_percent", "d", "op_at", "e"],
        ),
        ("a ?? b?.c", ["a", "op_nullcoalesce", "b", "op_nullsafe", "c"]),
        ("os.path.join", ["os.path.join", "os", "path", "join"]),
        ("__init__ and __future__", ["__init__", "init", "and", "__future__", "future"]),
        ("TypeVarTuple", ["typevartuple", "type", "var", "tuple"]),
        ("async_generator", ["async_generator", "async", "generator"]),
        ('f"{x}" and f-strings', ["op_fstring", "x", "and", "op_fstring", "f", "string"]),
        ("PEP 8, pep-0008, :pep:`484`", ["pep", "8", "pep8", "pep", "8", "pep8", "pep", "484", "pep484"]),
        ("Python 3.12", ["python", "3.12", "3", "12"]),
        ("naïve café", ["naïve", "café"]),
        ("Title\n=====\nBody ----", ["title", "body"]),  # underlines are layout, not operators
        ("What is a PEP?", ["what", "is", "a", "pep"]),  # a question mark is no term
    ],
)
def test_terms(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


def test_a_query_of_symbols_only_has_terms_and_one_of_punctuation_has_none() -> None:
    assert term_text(":=") == "op_walrus"
    assert term_text("?!,.") == ""


def test_the_tokenizer_is_part_of_the_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another tokenizer changes the declaration hash of a resource with keyword fields, so the next
    load writes a new table generation instead of searching old terms with new queries."""
    resource = next(r for r in RESOURCES.items if r.keyword)
    before = store.declaration_sha256(resource, RESOURCES)
    monkeypatch.setattr(store, "TOKENIZER", TOKENIZER + "-next")
    assert store.declaration_sha256(resource, RESOURCES) != before


def test_a_table_indexed_before_the_terms_asks_for_a_load(tmp_path) -> None:
    """A table from before `_terms` (its text in `_text`) is never searched with new terms: the
    search says to load again (which writes a new generation, the declaration having changed)."""
    import asyncio

    import lancedb
    import pyarrow as pa
    from lancedb.index import FTS

    from lynxc.runtime.backends.records.search import _text_ranking
    from lynxc.runtime.errors import ToolError

    async def search() -> None:
        db = await lancedb.connect_async(str(tmp_path))
        table = await db.create_table("old-1", pa.table({"_key": ["a"], "_text": ["the with statement"]}))
        await table.create_index("_text", config=FTS())
        await _text_ranking(table, "with", None)

    with pytest.raises(ToolError, match="run `lynxc load` again"):
        asyncio.run(search())

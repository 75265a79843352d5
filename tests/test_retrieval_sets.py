"""The judged retrieval sets of bench/retrieval_sets.py are what they claim: the code sets' files
parse, every judged document is a chunk lynx makes, a code-search query never names its function
and its docstring is gone from the indexed text, identifier queries name their one definition."""

from __future__ import annotations

import ast
import importlib
import re
import sys
from types import ModuleType

import pytest

from lynxc.runtime.backends.lynx.chunking import chunk_file
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def sets() -> ModuleType:
    # bench scripts import each other as top-level modules (their folder is first on sys.path)
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        return importlib.import_module("retrieval_sets")
    finally:
        sys.path.remove(str(ROOT / "bench"))


def chunk_keys(sets: ModuleType, judged, paths: set[str] | None = None) -> set[str]:
    """The doc keys of the chunks lynx makes of the set's files (of `paths` only, if given). A code
    file's chunks are chunk_file's (sets.chunks_of: those package_sources made of the very same
    text, or chunked anew when the set changed the text)."""
    return {
        sets.doc_key(judged.kind, chunk.path, chunk.symbol)
        for path, text in judged.files.items()
        if paths is None or path in paths
        for chunk in (
            chunk_file(path, text, kind="docs") if judged.kind == "docs" else sets.chunks_of(path, text)
        )
    }


@pytest.fixture(scope="module")
def code_search(sets: ModuleType):
    return sets.code_search_set()


@pytest.fixture(scope="module")
def identifiers(sets: ModuleType):
    return sets.identifier_set()


@pytest.fixture(scope="module")
def judged_trees(code_search) -> dict[str, ast.Module]:
    """The files holding code-search's judged functions, parsed (each must parse)."""
    paths = {key.split("::")[0] for relevant in code_search.qrels.values() for key in relevant}
    return {path: ast.parse(code_search.files[path], filename=path) for path in sorted(paths)}


def test_code_search_files_parse_and_every_judged_function_is_a_chunk(
    sets, code_search, judged_trees
) -> None:
    assert code_search.kind == "code"
    assert len(code_search.queries) >= 360  # of 400 asked: the packages hold >1,000 candidates
    assert set(code_search.queries) == set(code_search.qrels)
    sources = {source.path: source.text for source in sets.package_sources()[0]}
    stripped = {path for path, text in code_search.files.items() if text != sources[path]}
    # the judged files, each parsed by judged_trees, are the stripped ones; the others are the
    # packages' own
    assert stripped == set(judged_trees)
    keys = chunk_keys(sets, code_search, stripped)
    for qid, relevant in code_search.qrels.items():
        assert len(relevant) == 1 and set(relevant.values()) == {1}
        assert set(relevant) <= keys, (qid, relevant)


def test_code_search_queries_do_not_name_their_function_and_its_docstring_is_gone(
    sets, code_search, judged_trees
) -> None:
    trees = judged_trees
    for qid, query in code_search.queries.items():
        (key,) = code_search.qrels[qid]
        path, symbol = key.split("::")
        name = symbol.rsplit(".", 1)[-1]
        assert name.lower() not in query.lower(), (qid, query, key)
        assert len(query.split()) >= sets.MIN_QUERY_WORDS
        assert not re.search(r"`|:\w+:|>>>", query), query  # markup cleaned
        (node,) = [d.node for d in sets.definitions(path, trees[path]) if d.symbol == symbol]
        assert ast.get_docstring(node) is None, key


def test_identifier_queries_name_their_one_definition(sets, identifiers) -> None:
    assert identifiers.kind == "code"
    assert len(identifiers.queries) == 300
    keys = chunk_keys(sets, identifiers)  # the unmodified files: package_sources' chunks of them
    symbols = [key.split("::", 1)[1] for key in keys]
    for qid, query in identifiers.queries.items():
        (key,) = identifiers.qrels[qid]
        assert key in keys, (qid, key)
        symbol = key.split("::", 1)[1]
        typed = next(
            word.removesuffix("()")
            for word in query.split()
            if symbol == word.removesuffix("()") or symbol.endswith("." + word.removesuffix("()"))
        )
        assert len(typed) >= sets.MIN_IDENTIFIER_CHARS
        named = [s for s in symbols if s == typed or s.endswith("." + typed)]
        assert named == [symbol], (query, named)


def test_identifier_files_are_the_unmodified_sources(sets, identifiers, code_search) -> None:
    sources = {source.path: source.text for source in sets.package_sources()[0]}
    assert identifiers.files == sources
    assert set(code_search.files) == set(sources)
    assert all(path.split("/", 1)[0] in {name for name, _ in sets.PACKAGES} for path in sources)


def test_cranfield_keys_are_file_stems(sets) -> None:
    judged = sets.cranfield_set()
    assert judged.kind == "docs" and len(judged.files) == 1400 and len(judged.queries) == 225
    keys = chunk_keys(sets, judged)
    empty = {path.removesuffix(".txt") for path, text in judged.files.items() if not text.strip()}
    assert empty == {"471", "995"}  # abstracts with neither title nor text; 995 is judged (query 125)
    assert {doc for relevant in judged.qrels.values() for doc in relevant} <= keys | empty


def test_the_sets_are_deterministic(sets, code_search) -> None:
    again = sets.code_search_set()
    assert again.queries == code_search.queries and again.qrels == code_search.qrels
    assert again.files == code_search.files


def test_nonsense_queries() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        queries = importlib.import_module("retrieval_sets").nonsense_queries()
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert 50 <= len(queries) <= 70 and len(set(queries)) == len(queries)
    assert all(query.strip() == query and query for query in queries)


def test_doc_key_joins_the_parts_of_a_long_chunk(sets) -> None:
    assert sets.doc_key("code", "a/b.py", "C.m (part 12)") == "a/b.py::C.m"
    assert sets.doc_key("identifiers", "a/b.py", "<module>") == "a/b.py::<module>"
    assert sets.doc_key("cranfield", "184.txt", "184.txt") == "184"
    with pytest.raises(ValueError, match="unknown set"):
        sets.doc_key("prose", "a", "b")


def test_query_from_docstring_keeps_the_first_paragraph_as_plain_words(sets) -> None:
    doc = (
        "Send a :class:`~httpx.Request` with ``auth`` and *retries*,\n"
        ":attr:`click.Context.meta` included; see `the docs <https://x.org>`_.\n\n"
        ":param request: the request\n>>> send(x)\n"
    )
    assert (
        sets.query_from_docstring(doc) == "Send a Request with auth and retries, meta included; see the docs."
    )
    assert sets.query_from_docstring("Optional[float]: Get the time left.\n\nArgs:\n  x: y") == (
        "Get the time left."
    )
    assert sets.query_from_docstring("Do a thing.\n:param x: the x\n") == "Do a thing."


def test_web_questions_are_one_function_per_file_and_never_name_it(sets) -> None:
    judged = sets.web_questions_set(distractors=200)
    for path, text in judged.files.items():
        functions = [
            node for node in ast.parse(text).body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        assert len(functions) == 1 and len(text.splitlines()) <= 20, path
    pairs = {query: name for query, name, _ in sets.web_question_pairs()}
    assert len(judged.queries) == len(pairs) >= 80
    for qid, query in judged.queries.items():
        (stem,) = judged.qrels[qid]
        tree = ast.parse(judged.files[f"{stem}.py"])
        (function,) = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
        assert function == pairs[query]
        spoken = function.replace("_", " ").strip().lower()
        assert spoken not in " ".join(re.findall(r"[a-z0-9]+", query.lower())), query
    assert judged == sets.web_questions_set(distractors=200)  # seeded: the same set every time
    assert "licence: MIT" in sets.WEB_QUESTIONS.read_text()

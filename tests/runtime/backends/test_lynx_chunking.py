"""Chunking by symbol (tree-sitter grammars from PyPI, offline) and by heading."""

from __future__ import annotations

import pytest

from lynxc.runtime.backends.lynx import chunking
from lynxc.runtime.backends.lynx.chunking import chunk_file

CASES = {
    "store.py": (
        "import os\n\nclass Store:\n    '''doc'''\n    limit = 3\n\n"
        "    def get(self, k):\n        return k\n\ndef main():\n    pass\n",
        [
            ("module", "<module>", 1, 1),
            ("class", "Store", 3, 6),
            ("method", "Store.get", 7, 8),
            ("function", "main", 10, 11),
        ],
    ),
    "server.go": (
        "package x\n\ntype Server struct { n int }\n\n"
        "func (s *Server) Start() error { return nil }\n\nfunc New() *Server { return nil }\n",
        [
            ("module", "<module>", 1, 1),
            ("class", "Server", 3, 3),
            ("method", "Server.Start", 5, 5),
            ("function", "New", 7, 7),
        ],
    ),
    "p.rs": (
        "struct P;\nimpl Display for P {\n    fn fmt(&self) {}\n}\nfn main() {}\n",
        [("class", "P", 1, 1), ("class", "P", 2, 4), ("method", "P.fmt", 3, 3), ("function", "main", 5, 5)],
    ),
    "A.java": (
        "class A {\n  int x;\n  A() {}\n  void run() {}\n}\n",
        [("class", "A", 1, 5), ("method", "A.A", 3, 3), ("method", "A.run", 4, 4)],
    ),
    "k.cpp": (
        "namespace n {\nclass K { public: void f(); };\nvoid K::f() {}\n}\nint main() { return 0; }\n",
        [
            ("class", "n", 1, 4),
            ("class", "n.K", 2, 2),
            ("method", "n.K::f", 3, 3),
            ("function", "main", 5, 5),
        ],
    ),
    "add.c": (
        "#include <x.h>\nstatic int add(int a, int b) { return a + b; }\n",
        [("module", "<module>", 1, 1), ("function", "add", 2, 2)],
    ),
    "q.ts": (
        "export class Q {\n  push(x: number) {}\n}\nfunction top(): void {}\n",
        [("class", "Q", 1, 3), ("method", "Q.push", 2, 2), ("function", "top", 4, 4)],
    ),
    "c.js": (
        "const x = 1;\nfunction f() {}\nclass C { m() {} }\n",
        [("module", "<module>", 1, 1), ("function", "f", 2, 2), ("method", "C.m", 3, 3)],
    ),
}


@pytest.mark.parametrize("path", CASES)
def test_code_is_chunked_by_symbol(path: str) -> None:
    text, expected = CASES[path]
    chunks = chunk_file(path, text)
    assert [(c.kind, c.symbol, c.start_line, c.end_line) for c in chunks] == expected
    lines = text.splitlines(keepends=True)
    for chunk in chunks:
        if chunk.kind != "class":  # a class chunk holds its lines outside its methods
            assert chunk.text == "".join(lines[chunk.start_line - 1 : chunk.end_line])


def test_docs_by_heading_with_their_trail() -> None:
    text = "# Title\nintro\n\n## Install\npip install\n\n### Linux\napt\n\n## Use\nrun it\n"
    chunks = chunk_file("docs/README.md", text)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [
        ("Title", 1, 3),
        ("Title > Install", 4, 6),
        ("Title > Install > Linux", 7, 9),
        ("Title > Use", 10, 11),
    ]
    assert all(c.kind == "section" for c in chunks)


def test_oversized_chunks_are_split_into_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunking, "MAX_LINES", 10)
    body = "".join(f"    x{i} = {i}\n" for i in range(25))
    chunks = chunk_file("big.py", f"def big():\n{body}")
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [
        ("big (part 1)", 1, 10),
        ("big (part 2)", 11, 20),
        ("big (part 3)", 21, 26),
    ]


def test_unknown_files_become_windows() -> None:
    chunks = chunk_file("notes.cfg", "a = 1\n\nb = 2\n")
    assert [(c.kind, c.start_line, c.end_line) for c in chunks] == [("window", 1, 3)]

"""Split files into retrieval chunks.

Code is chunked by symbol with tree-sitter (grammar wheels from PyPI, loaded offline): every
function and method is a chunk with its qualified name (`Class.method`, `Type.method` for Go
receivers and Rust impls) and line range; a class or type is a chunk of its own lines outside
its methods; top-level code between symbols is a `module` chunk. Docs are chunked by heading,
then by paragraph windows. Any chunk over the limits is split into parts (`name (part 2)`).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

MAX_LINES = 120
MAX_CHARS = 4000

# extension -> (language, grammar module, function returning the language)
GRAMMARS = {
    ".py": ("python", "tree_sitter_python", "language"),
    ".js": ("javascript", "tree_sitter_javascript", "language"),
    ".jsx": ("javascript", "tree_sitter_javascript", "language"),
    ".mjs": ("javascript", "tree_sitter_javascript", "language"),
    ".ts": ("typescript", "tree_sitter_typescript", "language_typescript"),
    ".tsx": ("typescript", "tree_sitter_typescript", "language_tsx"),
    ".go": ("go", "tree_sitter_go", "language"),
    ".rs": ("rust", "tree_sitter_rust", "language"),
    ".java": ("java", "tree_sitter_java", "language"),
    ".c": ("c", "tree_sitter_c", "language"),
    ".h": ("c", "tree_sitter_c", "language"),
    ".cc": ("cpp", "tree_sitter_cpp", "language"),
    ".cpp": ("cpp", "tree_sitter_cpp", "language"),
    ".hpp": ("cpp", "tree_sitter_cpp", "language"),
}
DOC_SUFFIXES = (".md", ".markdown", ".rst", ".txt")
FUNCTIONS = {
    "function_definition",
    "function_declaration",
    "generator_function_declaration",
    "method_definition",
    "method_declaration",
    "function_item",
    "constructor_declaration",
}
CONTAINERS = {
    "class_definition",
    "class_declaration",
    "abstract_class_declaration",
    "interface_declaration",
    "enum_declaration",
    "impl_item",
    "trait_item",
    "struct_item",
    "enum_item",
    "mod_item",
    "class_specifier",
    "struct_specifier",
    "namespace_definition",
    "type_declaration",
}


@dataclass(frozen=True)
class Chunk:
    path: str
    language: str
    kind: str  # function | method | class | module | section | window
    symbol: str
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str


def chunk_file(path: str, text: str, *, kind: str = "auto") -> list[Chunk]:
    suffix = "." + path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if kind == "docs" or (kind == "auto" and suffix in DOC_SUFFIXES):
        chunks = list(_doc_chunks(path, text))
    elif suffix in GRAMMARS:
        chunks = list(_code_chunks(path, text, GRAMMARS[suffix]))
    else:
        chunks = list(_windows(path, "text", text, 1, "window", path.rsplit("/", 1)[-1]))
    parts = [part for chunk in chunks for part in _split(chunk)]
    return sorted(parts, key=lambda c: (c.start_line, c.end_line, c.symbol))


@cache
def _parser(module: str, function: str) -> Any:
    from tree_sitter import Language, Parser

    return Parser(Language(getattr(importlib.import_module(module), function)()))


def _code_chunks(path: str, text: str, grammar: tuple[str, str, str]) -> Iterator[Chunk]:
    language, module, function = grammar
    source = text.encode("utf-8")
    tree = _parser(module, function).parse(source)
    lines = text.splitlines(keepends=True)
    covered: list[tuple[int, int]] = []
    for node, qualifier, kind in _symbols(tree.root_node, source, []):
        start, end = node.start_point[0] + 1, node.end_point[0] + 1
        name = _name(node, source) or _impl_type(node, source) or f"<{node.type}>"
        symbol = ".".join([*qualifier, name])
        if kind == "class":
            inner = [
                (c.start_point[0] + 1, c.end_point[0] + 1)
                for c, _, k in _symbols(node, source, [])
                if k != "class"
            ]
            body = [n for n in range(start, end + 1) if not any(a <= n <= b for a, b in inner)]
            if body:
                yield Chunk(
                    path, language, "class", symbol, body[0], body[-1], "".join(lines[n - 1] for n in body)
                )
        else:
            yield Chunk(path, language, kind, symbol, start, end, "".join(lines[start - 1 : end]))
        covered.append((start, end))
    yield from _gaps(path, language, lines, covered)


def _symbols(node: Any, source: bytes, qualifier: list[str]) -> Iterator[tuple[Any, list[str], str]]:
    for child in node.children:
        if child.type in FUNCTIONS:
            receiver = _receiver(child, source)
            owner = [*qualifier, receiver] if receiver else qualifier
            yield child, owner, "method" if owner else "function"
        elif child.type in CONTAINERS:
            name = _name(child, source) or _impl_type(child, source)
            yield child, qualifier, "class"
            yield from _symbols(child, source, [*qualifier, name] if name else qualifier)
        else:
            yield from _symbols(child, source, qualifier)


def _text(node: Any, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _name(node: Any, source: bytes) -> str | None:
    named = node.child_by_field_name("name")
    if named is not None:
        return _text(named, source)
    declarator = node.child_by_field_name("declarator")  # C and C++ functions
    while declarator is not None:
        if declarator.type in ("identifier", "field_identifier", "qualified_identifier", "destructor_name"):
            return _text(declarator, source)
        declarator = declarator.child_by_field_name("declarator")
    if node.type == "type_declaration":  # Go: type X struct {...}
        spec = next((c for c in node.children if c.type == "type_spec"), None)
        return _name(spec, source) if spec is not None else None
    return None


def _receiver(node: Any, source: bytes) -> str | None:
    """Go methods: `func (s *Server) Start()` belongs to Server."""
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    found = re.findall(r"[A-Za-z_]\w*", _text(receiver, source))
    return found[-1] if found else None


def _impl_type(node: Any, source: bytes) -> str | None:
    """Rust: `impl Trait for Type` and `impl Type` qualify their functions by Type."""
    kind = node.child_by_field_name("type")
    return _text(kind, source) if kind is not None else None


def _gaps(path: str, language: str, lines: list[str], covered: list[tuple[int, int]]) -> Iterator[Chunk]:
    """Top-level code outside every symbol, in runs of lines that hold something."""
    taken = [False] * (len(lines) + 2)
    for start, end in covered:
        for n in range(start, end + 1):
            taken[n] = True
    run: list[int] = []
    for n in range(1, len(lines) + 2):
        if n <= len(lines) and not taken[n]:
            run.append(n)
            continue
        content = [k for k in run if lines[k - 1].strip()]
        if content:
            yield Chunk(
                path,
                language,
                "module",
                "<module>",
                content[0],
                content[-1],
                "".join(lines[k - 1] for k in range(content[0], content[-1] + 1)),
            )
        run = []


def _doc_chunks(path: str, text: str) -> Iterator[Chunk]:
    lines = text.splitlines(keepends=True)
    trail: list[tuple[int, str]] = []  # (level, title) of the headings above
    start = 1
    for n, line in enumerate([*lines, "# \n"], start=1):
        heading = re.match(r"^(#{1,6})\s+(.*\S)?\s*$", line)
        if heading is None or n > len(lines) + 1:
            continue
        if n > start:
            symbol = " > ".join(title for _, title in trail) or path.rsplit("/", 1)[-1]
            yield from _windows(path, "markdown", "".join(lines[start - 1 : n - 1]), start, "section", symbol)
        level = len(heading.group(1))
        trail = [(lvl, title) for lvl, title in trail if lvl < level] + [(level, heading.group(2) or "")]
        start = n


def _windows(path: str, language: str, text: str, first: int, kind: str, symbol: str) -> Iterator[Chunk]:
    """Paragraph windows: consecutive paragraphs while they fit the limits."""
    if not text.strip():
        return
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines):
        end, size = start, 0
        while end < len(lines) and end - start < MAX_LINES and size + len(lines[end]) <= MAX_CHARS:
            size += len(lines[end])
            end += 1
        if end < len(lines):  # prefer to end at a blank line inside the window
            blank = max((i for i in range(start + 1, end) if not lines[i].strip()), default=None)
            end = blank + 1 if blank is not None else max(end, start + 1)
        piece = "".join(lines[start:end])
        if piece.strip():
            yield Chunk(path, language, kind, symbol, first + start, first + end - 1, piece)
        start = end


def _split(chunk: Chunk) -> Iterator[Chunk]:
    lines = chunk.text.splitlines(keepends=True)
    if len(lines) <= MAX_LINES and len(chunk.text) <= MAX_CHARS:
        yield chunk
        return
    part, start = 1, 0
    while start < len(lines):
        end, size = start, 0
        while (
            end < len(lines)
            and end - start < MAX_LINES
            and (size + len(lines[end]) <= MAX_CHARS or end == start)
        ):
            size += len(lines[end])
            end += 1
        yield replace(
            chunk,
            symbol=f"{chunk.symbol} (part {part})",
            start_line=chunk.start_line + start,
            end_line=chunk.start_line + end - 1,
            text="".join(lines[start:end])[: MAX_CHARS * 2],
        )
        part, start = part + 1, end

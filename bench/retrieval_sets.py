"""Judged retrieval sets of different character, for comparing lynx-mcp's sparse, dense and fused
rankings: Cranfield (prose abstracts), code search (a docstring's first paragraph -> the function
it documented, that docstring removed from the indexed text), identifiers (a developer typing
an API's name -> its definition), snippets (code search over stand-alone functions) and
web-questions (short questions as typed into a web search, over one short function per file),
plus nonsense queries that no document answers.

The code sets are built from the Python sources of a fixed list of installed packages (read from
the running interpreter's site-packages, never copied, never fetched): their versions are in each
set's `describe` line, and a different version gives a different, equally valid set. Everything
is deterministic for given package versions: sorted inputs and a seeded random sample.

Doc keys: a Cranfield document is its file's stem; a code document is `path::symbol`, the symbol as
lynx's chunker qualifies it (`Class.method`) without the ` (part N)` of a long chunk's pieces, so
every piece of one definition is the same document (`doc_key` maps a search hit).

    python bench/retrieval_sets.py     # each set's describe line and a few queries

That listing is small already: `--smoke` (which every bench script takes) changes nothing.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from records_common import cranfield  # bench/ is the script's folder, first on sys.path
from smoke import parse_args_with_smoke

from lynxc.runtime.backends.lynx.chunking import Chunk, chunk_file

SEED = 16
# (import name, distribution) of pure-Python packages with documented APIs: lynxc's own
# dependencies (httpx, jinja2, starlette via mcp, click via uvicorn, attrs via jsonschema, pypdf,
# trafilatura, urllib3 via trafilatura, packaging via lancedb) and rich (via import-linter, a test
# dependency). About 7,950 chunks in all; indexing them with MiniLM took 570 CPU-seconds on 2 cores.
PACKAGES = (
    ("httpx", "httpx"),
    ("starlette", "starlette"),
    ("jinja2", "Jinja2"),
    ("click", "click"),
    ("rich", "rich"),
    ("attr", "attrs"),
    ("packaging", "packaging"),
    ("urllib3", "urllib3"),
    ("pypdf", "pypdf"),
    ("trafilatura", "trafilatura"),
)
MIN_QUERY_WORDS = 4
MAX_QUERY_WORDS = 40
MIN_IDENTIFIER_CHARS = 6
# Openings that point at another API instead of saying what the function does.
POINTERS = re.compile(
    r"^(see|alias|an alias|same as|deprecated|backwards?[- ]compat\w*|equivalent to|shortcut for|"
    r"shorthand for|like)\b",
    re.IGNORECASE,
)
PART = re.compile(r" \(part \d+\)$")


@dataclass(frozen=True)
class JudgedSet:
    name: str  # "cranfield", "code-search", "identifiers"
    kind: str  # the lynx source kind to index it as: "docs" or "code"
    files: dict[str, str]  # relative path ('/'-separated) -> the exact text to index
    queries: dict[str, str]  # query id -> query text
    qrels: dict[str, dict[str, int]]  # query id -> {doc key: grade >= 1}
    describe: str  # one line: where it came from, counts, package versions


def doc_key(set_kind_or_name: str, path: str, symbol: str) -> str:
    """The document a search hit (its path and symbol) belongs to, as the set's qrels name it."""
    if set_kind_or_name in ("docs", "cranfield", "snippets", "web-questions"):
        return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if set_kind_or_name in ("code", "code-search", "identifiers"):
        return f"{path}::{PART.sub('', symbol)}"
    raise ValueError(f"doc_key: unknown set kind or name {set_kind_or_name!r} (docs, code or a set name)")


def cranfield_set() -> JudgedSet:
    """bench/data/cranfield: one file per abstract (title first), the judged queries only."""
    corpus, queries, qrels = cranfield()
    files = {f"{doc}.txt": f"{d['title']}\n{d['text']}" for doc, d in corpus.items()}
    judged = {q: text for q, text in queries.items() if q in qrels}
    return JudgedSet(
        "cranfield",
        "docs",
        files,
        judged,
        {q: qrels[q] for q in judged},
        f"cranfield: bench/data/cranfield (BEIR layout), {len(files)} aeronautics abstracts, "
        f"{len(judged)} judged queries, graded 1-4, {sum(map(len, qrels.values()))} judgments",
    )


# --- the code sets' corpus ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Source:
    path: str  # prefixed with the package's folder name: httpx/_client.py
    text: str
    tree: ast.Module | None  # None: the file does not parse with this Python
    chunked: tuple[Chunk, ...]  # the chunks lynx makes of it (chunk_file, kind "auto")
    starts: dict[str, list[int]]  # see chunk_starts

    @property
    def chunks(self) -> int:
        """How many chunks lynx makes of it."""
        return len(self.chunked)


@cache
def package_sources() -> tuple[tuple[_Source, ...], str]:
    """Every .py file of PACKAGES, sorted by path, parsed and chunked once; and the versions as
    one string. A missing package stops with its name: the sets would not be the same sets."""
    files: list[_Source] = []
    versions = []
    for name, dist in PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit(
                f"retrieval_sets: package {name} ({dist}) is not installed; it is in the fixed list"
            )
        try:
            versions.append(f"{dist} {version(dist)}")
        except PackageNotFoundError:
            versions.append(f"{dist} ?")
        root = Path(next(iter(spec.submodule_search_locations)))
        for file in sorted(root.rglob("*.py")):
            rel = f"{name}/{file.relative_to(root).as_posix()}"
            try:
                text = file.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # not text lynx would index as Python either
            chunks = chunk_file(rel, text, kind="auto")
            files.append(_Source(rel, text, _parse(text), tuple(chunks), chunk_starts(chunks)))
    return tuple(sorted(files, key=lambda f: f.path)), ", ".join(versions)


def chunks_of(path: str, text: str) -> tuple[Chunk, ...]:
    """The chunks lynx makes of a code file (chunk_file, kind "auto"): those package_sources made
    already when the text is a package file's, unchanged; chunked here otherwise."""
    source = _sources_by_path().get(path)
    if source is not None and source.text == text:
        return source.chunked
    return tuple(chunk_file(path, text, kind="auto"))


@cache
def _sources_by_path() -> dict[str, _Source]:
    return {source.path: source for source in package_sources()[0]}


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


@dataclass(frozen=True)
class Definition:
    path: str
    symbol: str  # qualified as the chunker does: Outer.Inner.method
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def definitions(path: str, tree: ast.Module) -> Iterator[Definition]:
    """Functions, methods and classes where lynx's chunker finds them: inside classes and any
    compound statement (if/try/with...), but not inside function bodies."""

    def walk(body: list[ast.stmt], qualifier: tuple[str, ...]) -> Iterator[Definition]:
        for stmt in body:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                yield Definition(path, ".".join([*qualifier, stmt.name]), stmt)
            elif isinstance(stmt, ast.ClassDef):
                yield Definition(path, ".".join([*qualifier, stmt.name]), stmt)
                yield from walk(stmt.body, (*qualifier, stmt.name))
            else:
                for field in ("body", "orelse", "finalbody"):
                    inner = getattr(stmt, field, None)
                    if isinstance(inner, list):
                        yield from walk(inner, qualifier)
                for handler in getattr(stmt, "handlers", []):
                    yield from walk(handler.body, qualifier)
                for case in getattr(stmt, "cases", []):
                    yield from walk(case.body, qualifier)

    yield from walk(tree.body, ())


def chunk_starts(chunks: list[Chunk]) -> dict[str, list[int]]:
    """symbol (without ` (part N)`) -> start lines of its definition chunk(s) among lynx's chunks."""
    starts: dict[str, list[int]] = {}
    for chunk in chunks:
        if chunk.kind in ("function", "method", "class") and not (
            PART.search(chunk.symbol) and not chunk.symbol.endswith(" (part 1)")
        ):
            starts.setdefault(PART.sub("", chunk.symbol), []).append(chunk.start_line)
    return starts


# --- code search: docstring -> function --------------------------------------------------------

_SECTION = re.compile(
    r"^\s*(:\w[^:`]*:(?!`)|>>>|\.\. |(Args|Arguments|Parameters|Params|Returns?|Yields?|Raises|Examples?|"
    r"Usage|Note|Notes|Warning|See Also|Attributes)\s*:?\s*$|-{3,}|={3,})"
)


def query_from_docstring(doc: str) -> str:
    """The first paragraph of a docstring as plain words: reST roles, literals, links, emphasis
    and URLs removed, doctest and field lines cut, at most MAX_QUERY_WORDS words (whole sentences
    when they fit)."""
    paragraph: list[str] = []
    for line in doc.strip().splitlines():
        if not line.strip() or _SECTION.match(line):
            break
        paragraph.append(line.strip())
    text = _type_prefix(_plain(" ".join(paragraph)))
    words = text.split()
    if len(words) > MAX_QUERY_WORDS:
        sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)
        kept = sentences[0]
        for sentence in sentences[1:]:
            if len(f"{kept} {sentence}".split()) > MAX_QUERY_WORDS:
                break
            kept = f"{kept} {sentence}"
        text = " ".join(kept.split()[:MAX_QUERY_WORDS])
    return text


def _plain(text: str) -> str:
    """reST/Markdown markup and URLs out, whitespace collapsed."""
    text = re.sub(r":[\w:.-]+:`~?([^`<]*?)\s*(<[^>]*>)?`", lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = re.sub(r"`([^`<]*?)\s*<[^>]*>`_{1,2}", r"\1", text)  # `Text <url>`_
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [text](url)
    text = re.sub(r"`+([^`]*)`+_{0,2}", r"\1", text)
    text = re.sub(r"\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*", lambda m: m.group(1) or m.group(2), text)
    text = re.sub(r"https?://\S+", "", text)
    text = re.sub(r"::$", ":", text.strip())
    return re.sub(r"\s+", " ", text).strip()


def _type_prefix(text: str) -> str:
    """Google-style property docstrings open with their type: `Optional[float]: Get ...`."""
    return re.sub(r"^[\w.]+(\[[\w.\[\], |]*\])?( \| [\w.\[\], |]+)?:\s+", "", text).lstrip("\"'")


def _normal(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _private(symbol: str) -> bool:
    return any(part.startswith("_") for part in symbol.split("."))


def _docstring_span(lines: list[str], node: ast.AST) -> tuple[int, int] | None:
    """0-based first and last line of a function's docstring when it fills whole lines (nothing
    but indentation before it, nothing but a comment after it); None otherwise."""
    body = node.body  # type: ignore[attr-defined]
    first = body[0]
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
        return None
    start, end = first.lineno - 1, (first.end_lineno or first.lineno) - 1
    before = lines[start].encode("utf-8")[: first.col_offset].decode("utf-8", errors="replace")
    after = lines[end].encode("utf-8")[first.end_col_offset or 0 :].decode("utf-8", errors="replace")
    if before.strip() or not (after.strip() == "" or after.strip().startswith("#")):
        return None
    if len(body) > 1 and body[1].lineno - 1 <= end:
        return None  # `"""doc"""; x = 1` on one line
    return start, end


def strip_docstrings(text: str, nodes: list[ast.AST]) -> str:
    """The text without these functions' docstrings: a docstring that was the whole body becomes
    `...` on its first line at its indentation; otherwise its lines go."""
    lines = text.split("\n")
    spans = []
    for node in nodes:
        span = _docstring_span(lines, node)
        assert span is not None, "candidates are checked with _docstring_span"
        spans.append((span, len(node.body) == 1))  # type: ignore[attr-defined]
    for (start, end), alone in sorted(spans, reverse=True):
        indent = re.match(r"\s*", lines[start]).group(0)  # type: ignore[union-attr]
        lines[start : end + 1] = [f"{indent}..."] if alone else []
    return "\n".join(lines)


@dataclass(frozen=True)
class _Candidate:
    path: str
    symbol: str
    line: int  # the `def` line in the unmodified file
    query: str


def code_search_set(limit: int = 400) -> JudgedSet:
    """Natural-language queries (a public function's or method's docstring, first paragraph) and
    the function's chunk as the one relevant document, its docstring removed from the index."""
    sources, versions = package_sources()
    by_path = {source.path: source for source in sources}
    candidates: list[_Candidate] = []
    all_docs: list[str] = []  # every docstring's text, to reject queries said twice
    for source in sources:
        if source.tree is None:
            continue
        lines = source.text.split("\n")
        found = list(definitions(source.path, source.tree))
        counts = Counter(d.symbol for d in found)
        module_doc = ast.get_docstring(source.tree)
        if module_doc:
            all_docs.append(_normal(_plain(module_doc)))
        for d in found:
            doc = ast.get_docstring(d.node)
            if doc:
                all_docs.append(_normal(_plain(doc)))
            if not doc or isinstance(d.node, ast.ClassDef) or _private(d.symbol) or counts[d.symbol] > 1:
                continue
            query = query_from_docstring(doc)
            if (
                len(re.findall(r"[A-Za-z]{2,}", query)) < MIN_QUERY_WORDS
                or d.node.name.lower() in query.lower()
                or POINTERS.match(query)
                or source.starts.get(d.symbol) != [d.node.lineno]
                or _docstring_span(lines, d.node) is None
            ):
                continue
            candidates.append(_Candidate(source.path, d.symbol, d.node.lineno, query))
    # A query said by more than one docstring (sync/async twins, overrides, copies) would have
    # relevant documents that are not judged: keep only queries no other docstring contains.
    said = Counter(_normal(c.query) for c in candidates)
    corpus_docs = "\n".join(all_docs)
    random.Random(SEED).shuffle(candidates)
    chosen: list[_Candidate] = []
    for candidate in candidates:
        normal = _normal(candidate.query)
        if said[normal] == 1 and corpus_docs.count(normal) == 1:
            chosen.append(candidate)
        if len(chosen) == limit:
            break
    chosen.sort(key=lambda c: (c.path, c.line))
    picked: dict[str, list[_Candidate]] = {}
    for candidate in chosen:
        picked.setdefault(candidate.path, []).append(candidate)
    files = {source.path: source.text for source in sources}
    chunks = sum(source.chunks for source in sources)
    kept: set[_Candidate] = set()
    for path, group in picked.items():
        tree = by_path[path].tree
        assert tree is not None
        nodes = {d.symbol: d.node for d in definitions(path, tree)}
        files[path] = strip_docstrings(files[path], [nodes[c.symbol] for c in group])
        stripped = chunk_file(path, files[path], kind="auto")
        chunks += len(stripped) - by_path[path].chunks
        starts = chunk_starts(stripped)
        after = {d.symbol: d.node.lineno for d in definitions(path, ast.parse(files[path]))}
        # removing a docstring must not change how the chunker sees the function (never seen so far)
        kept.update(c for c in group if starts.get(c.symbol) == [after[c.symbol]])
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for n, candidate in enumerate(chosen, 1):
        if candidate in kept:
            queries[f"cs{n:03d}"] = candidate.query
            qrels[f"cs{n:03d}"] = {f"{candidate.path}::{candidate.symbol}": 1}
    return JudgedSet(
        "code-search",
        "code",
        files,
        queries,
        qrels,
        f"code-search: {len(queries)} docstring -> function queries (of {len(candidates)} candidates, "
        f"seed {SEED}) over {len(files)} files, {chunks} chunks of {versions}",
    )


# --- identifiers: an API's name -> its definition ----------------------------------------------

_FORMS = (
    "{name}",
    "{name}()",
    "where is {name} defined",
    "{name} {word}",
    "{package} {name}",
    "how does {name} work",
)


def identifier_set(limit: int = 300) -> JudgedSet:
    """Queries naming a public function, method or class as a developer types it (`Client.send`,
    `parse_header_links()`, `where is BaseLoader.get_source defined`, `Environment.from_string
    source`), over the unmodified sources; relevant: that name's one definition chunk."""
    sources, versions = package_sources()
    # typed name -> definitions it names; a method is typed `Class.method` (its last two parts) or,
    # when no other definition ends with that name, by its bare name
    named: dict[str, set[tuple[str, str, int]]] = {}
    targets: list[tuple[str, str, str, str]] = []  # (typed name, path, symbol, context word)
    for source in sources:
        if source.tree is None:
            continue
        for d in definitions(source.path, source.tree):
            parts = d.symbol.split(".")
            for typed in {parts[-1], ".".join(parts[-2:])}:
                named.setdefault(typed, set()).add((source.path, d.symbol, d.node.lineno))
            if source.starts.get(d.symbol) != [d.node.lineno] or _private(d.symbol):
                continue  # not a chunk of its own (one of several with the symbol), or private
            word = _context_word(d.node)
            targets.append((".".join(parts[-2:]), source.path, d.symbol, word))
            if len(parts) > 1:
                targets.append((parts[-1], source.path, d.symbol, word))
    rng = random.Random(SEED)
    usable = sorted(
        t for t in targets if len(t[0]) >= MIN_IDENTIFIER_CHARS and len(named[t[0]]) == 1 and t[0][0] != "_"
    )
    rng.shuffle(usable)
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    seen: set[tuple[str, str]] = set()
    for typed, path, symbol, word in usable:
        if (path, symbol) in seen:
            continue
        seen.add((path, symbol))
        forms = [f for f in _FORMS if word or "{word}" not in f]
        query = rng.choice(forms).format(name=typed, word=word, package=path.split("/", 1)[0])
        qid = f"id{len(queries) + 1:03d}"
        queries[qid] = query
        qrels[qid] = {f"{path}::{symbol}": 1}
        if len(queries) == limit:
            break
    return JudgedSet(
        "identifiers",
        "code",
        {source.path: source.text for source in sources},
        queries,
        qrels,
        f"identifiers: {len(queries)} API-name queries (of {len(usable)} unique names >= "
        f"{MIN_IDENTIFIER_CHARS} chars, seed {SEED}) over {len(sources)} unmodified files, "
        f"{sum(s.chunks for s in sources)} chunks "
        f"of {versions}",
    )


def _context_word(node: ast.AST) -> str:
    """A word a developer might add to the name: the first real parameter (of `__init__` for a
    class), if it is a word of 4+ letters."""
    function = node
    if isinstance(node, ast.ClassDef):
        function = next(
            (s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None
        )  # type: ignore[assignment]
        if function is None:
            return ""
    arguments = [a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs]  # type: ignore[attr-defined]
    arguments = [a for a in arguments if a not in ("self", "cls")]
    return next((a for a in arguments if re.fullmatch(r"[a-z]{4,}", a)), "")


# --- nonsense ----------------------------------------------------------------------------------


def nonsense_queries() -> list[str]:
    """Queries no document of any set answers: cooking, sport, geography, travel, word salad and
    gibberish, worded like real questions, and stopword-only queries. Nothing about air, flow,
    heat, pressure, flight, materials (Cranfield) or software (the code sets)."""
    return list(NONSENSE)


NONSENSE = (
    # cooking
    "how long to knead sourdough bread dough by hand",
    "best recipe for lemon drizzle cake with poppy seeds",
    "can you freeze cooked rice and reheat it safely",
    "substitute for buttermilk in pancakes",
    "how to caramelise onions without burning them",
    "traditional spanish paella with saffron and prawns",
    "why did my risotto turn out gluey",
    "vegetarian lasagne with spinach and ricotta",
    "how many eggs in a classic french omelette",
    "fermenting cabbage into sauerkraut at home",
    # sport
    "who won the rugby world cup in nineteen ninety five",
    "offside rule in football explained for beginners",
    "marathon training plan for a first race in autumn",
    "how to improve my backhand in tennis",
    "cricket batting averages of famous opening batsmen",
    "best stretches before a morning jog",
    "breathing rhythm for swimming front crawl",
    "how are points counted in snooker",
    "famous tour de france champions from belgium",
    "basketball free throw shooting tips for kids",
    # geography and travel
    "what is the capital city of mongolia",
    "longest rivers in south america ranked",
    "visa requirements for visiting peru as a tourist",
    "cheap hostels near the old town of tallinn",
    "which countries surround lake victoria",
    "hiking trails in the scottish highlands in spring",
    "population of iceland compared to malta",
    "ferry timetable between helsinki and stockholm",
    "volcanoes you can climb in indonesia",
    "famous castles along the loire valley",
    # everyday life
    "how often should i repot a cactus indoors",
    "knitting a chunky wool scarf for winter",
    "getting a wine stain out of a cotton carpet",
    "when do swallows migrate back to europe",
    "learning to play the ukulele chords for beginners",
    "birthday party ideas for a seven year old",
    "how to train a puppy to sit and stay",
    "poems by emily dickinson about the seasons",
    "what do hedgehogs eat in the garden",
    "origami crane folding instructions step by step",
    # word salad
    "purple elephant sings quietly under marmalade mountains",
    "banana cathedral whispers seventeen velvet horses",
    "tangerine bicycle philosophy of sleepy giraffes",
    "moonlit accordion pancakes dance with sleepy otters",
    "crimson kettle orchestra forgets the walrus poem",
    "velvet umbrella sandwiches of the emerald duchess",
    "jellyfish librarian knits a saxophone for breakfast",
    "seventeen pickled dragons wander through the meadow",
    "grumpy lighthouse eats cinnamon snowflakes slowly",
    "carousel of whispering turnips and marzipan owls",
    # gibberish
    "qzxv blorft nimwap trelk",
    "zorbulate the fnord quibbix",
    "xyloquent brabbish vorpal snickersnee",
    "glarp wibbet frondle yazzik",
    "mrrf plonk skiddle zoop",
    "kwyjibo flumph derp snargle",
    "vlemp quorst jindle braxx",
    "ooglyboo twizzle fanookle",
    "prindle snorf gazumph wubble",
    "thrimble zazzy crunkle pwop",
    # stopwords and query-syntax words only: no content word at all (the tools refuse a query
    # without a letter or digit, so punctuation alone never reaches a search)
    "AND OR NOT",
    "what is it",
    "how do I do this",
    "the of and to in",
    "is there one",
    "why not",
)


# --- snippets: code-search as stand-alone functions, CodeSearchNet style ----------------------


def snippets_set(limit: int = 400) -> JudgedSet:
    """code-search's queries over every function and method of its corpus as a file of its own,
    named by number (`s00042.py`, dedented): no package path, module or neighbours to match, the
    judged functions' docstrings removed. Keyword search has little to hold on to here, the
    case where fusing it with a strong dense ranking used to cost most."""
    import textwrap

    base = code_search_set(limit)
    files: dict[str, str] = {}
    named: dict[str, str] = {}  # code-search key -> snippet file stem
    for rel, text in sorted(base.files.items()):
        for chunk in chunks_of(rel, text):
            key = doc_key("code-search", rel, chunk.symbol)
            if chunk.kind in ("function", "method") and key not in named:
                named[key] = f"s{len(named):05d}"
                files[f"{named[key]}.py"] = textwrap.dedent(chunk.text)
    qrels = {
        q: {named[key]: grade for key, grade in judged.items() if key in named}
        for q, judged in base.qrels.items()
    }
    qrels = {q: judged for q, judged in qrels.items() if judged}
    queries = {q: text for q, text in base.queries.items() if q in qrels}
    return JudgedSet(
        "snippets",
        "code",
        files,
        queries,
        qrels,
        f"snippets: code-search's {len(queries)} queries over {len(files)} stand-alone functions and methods",
    )


# --- web questions: what a developer types into a web search -> one short function ------------

WEB_QUESTIONS = Path(__file__).resolve().parent / "data" / "web-questions" / "pairs.txt"
MAX_DISTRACTOR_LINES = 15


def web_question_pairs() -> list[tuple[str, str, str]]:
    """(query, the answering function's name, its file's text) from bench/data/web-questions.
    A query that names its function (`flatten` in "flatten a list", `file exists` for
    `file_exists`) would be an identifier query, not this set's kind: refused here."""
    pairs = []
    for block in WEB_QUESTIONS.read_text(encoding="utf-8").split("\n### ")[1:]:
        query, _, text = block.partition("\n")
        name = re.search(r"^def (\w+)", text, re.MULTILINE)
        assert name, f"web-questions: no function under {query!r}"
        spoken = " ".join(part for part in name.group(1).lower().split("_") if part)
        if f" {spoken} " in f" {_normal(query)} ":
            raise SystemExit(f"web-questions: the query {query!r} names its function {name.group(1)}")
        pairs.append((query, name.group(1), text.strip() + "\n"))
    return pairs


def web_questions_set(distractors: int = 1500) -> JudgedSet:
    """Short web-search-style questions ("python check if file exists", "convert string to
    datetime"), each answered by one short hand-written function (bench/data/web-questions),
    among `distractors` short functions and methods of the code sets' packages (at most
    MAX_DISTRACTOR_LINES lines, dedented, a seeded sample): one function per file, files
    numbered in a seeded shuffle, so neither a path nor a neighbour gives an answer away. The
    queries share few words with the code they want, unlike the code sets' docstring queries."""
    import textwrap

    pairs = web_question_pairs()
    sources, versions = package_sources()
    short: dict[str, None] = {}  # texts, in corpus order, without repeats
    for source in sources:
        for chunk in source.chunked:
            text = textwrap.dedent(chunk.text).strip() + "\n"
            # a whole short function: not a piece of a longer one
            if text.count("\n") <= MAX_DISTRACTOR_LINES and _one_function(text):
                short.setdefault(text, None)
    rng = random.Random(SEED)
    texts = [(None, text) for text in rng.sample(list(short), min(distractors, len(short)))]
    texts += [(query, text) for query, _, text in pairs]
    rng.shuffle(texts)
    files, queries, qrels = {}, {}, {}
    for n, (query, text) in enumerate(texts):
        files[f"w{n:05d}.py"] = text
        if query is not None:
            qid = f"wq{len(queries) + 1:03d}"
            queries[qid], qrels[qid] = query, {f"w{n:05d}": 1}
    return JudgedSet(
        "web-questions",
        "code",
        files,
        queries,
        qrels,
        f"web-questions: {len(queries)} web-search-style questions (bench/data/web-questions) over "
        f"{len(files)} one-function files: their answers and {len(texts) - len(queries)} short "
        f"functions (seed {SEED}) of {versions}",
    )


def _one_function(text: str) -> bool:
    tree = _parse(text)
    return tree is not None and [type(node) for node in tree.body] in (
        [ast.FunctionDef],
        [ast.AsyncFunctionDef],
    )


SETS: dict[str, Callable[[], JudgedSet]] = {
    "cranfield": cranfield_set,
    "code-search": code_search_set,
    "identifiers": identifier_set,
    "snippets": snippets_set,
    "web-questions": web_questions_set,
}


def main() -> None:
    parse_args_with_smoke(argparse.ArgumentParser(description=__doc__.splitlines()[0]))
    for judged in (maker() for maker in SETS.values()):
        print(judged.describe)
        ids = list(judged.queries)
        for qid in ids[:: max(1, len(ids) // 5)][:5]:  # spread over the set (it is sorted by path)
            print(f"  {qid}: {judged.queries[qid]}  ->  {', '.join(judged.qrels[qid])}")
    print(f"nonsense: {len(NONSENSE)} queries, e.g. {NONSENSE[0]!r}, {NONSENSE[-1]!r}")


if __name__ == "__main__":
    main()

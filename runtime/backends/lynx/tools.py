"""The lynx-mcp tools: `list_sources`, `search`, `deep_search` over the LanceDB index.

This module holds the backends' declarations and stays light to import: `lynxc build` reads
the declarations, and numpy, LanceDB, onnxruntime and tree-sitter load only inside the calls
that use them (through `.reader`, `.retrieval`, `.store` and the shared
`lynxc.runtime.backends.retrieval.embedders`)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from lynxc.runtime.backend import backend
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

from .location import describe_error, is_uri, location_from_settings
from .sources import MAX_FILE_BYTES, Source, content_hash, sources_from_settings

if TYPE_CHECKING:
    from .filters import Filters
    from .ranking import Hit
    from .reader import IndexReader

SETTINGS = {
    "sources",
    "index_dir",
    "index_storage",
    "embedder",
    "mode",
    "fusion",
    "keyword_weight",
    "top_k",
    "min_score",
    "min_results",
}


def _reader(settings: Mapping[str, Any]) -> IndexReader:
    from .reader import reader_for

    if not _index_exists(settings):
        raise ToolError(
            f"the index {settings.get('index_dir')!r} does not exist yet: run `lynxc index lynx-mcp` first"
        )
    return reader_for(location_from_settings(settings))


def _index_exists(settings: Mapping[str, Any]) -> bool:
    """A local index is a folder; an object-store prefix has no such marker, so a URI counts as
    existing and a source without a table there answers as not indexed."""
    directory = settings.get("index_dir")
    return bool(directory) and (is_uri(directory) or os.path.isdir(directory))


@contextmanager
def _reading(settings: Mapping[str, Any]) -> Iterator[None]:
    """An index that cannot be read (an unreachable or refused object store, a damaged table)
    answers with a tool error naming the index, credentials redacted, not a traceback."""
    try:
        yield
    except ToolError:
        raise
    except Exception as err:
        location = location_from_settings(settings)
        raise ToolError(
            location.redact(f"the index {location.uri!r} cannot be read: {describe_error(err)}")
        ) from None


async def _embed(ctx: ToolContext, query: str) -> Any:
    """The query's vector, computed off the event loop: loading the model takes a second, running
    the transformer milliseconds."""
    from lynxc.runtime.backends.retrieval.embedders import get_embedder

    name = ctx.settings.get("embedder", "minilm")
    return (await ctx.run_sync(lambda: get_embedder(name).embed([query])))[0]


def _chosen(settings: Mapping[str, Any], source: str | list[str] | None) -> list[str]:
    known = sources_from_settings(settings)
    names = [source] if isinstance(source, str) else list(source or known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ToolError(
            f"source: unknown {', '.join(map(repr, unknown))} (sources: {', '.join(sorted(known))})"
        )
    return names


def _filters(params: Any) -> Filters:
    from .filters import Filters

    for i, extension in enumerate(params.extensions or ()):
        if not extension.strip(". ") or any(c in extension for c in "*?[/\\"):
            raise ToolError(
                f"extensions.{i}: {extension!r} is not a file extension (write '.py' or 'py'; "
                "for patterns use file_glob)"
            )
    # An empty glob or path fragment means no filter, as it did before globs were checked.
    return Filters(params.file_glob or None, tuple(params.extensions or ()), params.path_contains or None)


def _check_query(field: str, query: str) -> None:
    """A query with no letter or digit has nothing to match: BM25 finds no term in it, and its
    embedding is noise (with the static model its cosine reaches 0.8 against everything)."""
    if not any(c.isalnum() for c in query):
        raise ToolError(f"{field}: must hold a word (a letter or digit) to search for, got {query!r}")


def _hit_json(hit: Hit, outline: bool = False) -> dict[str, Any]:
    text = hit.text.splitlines()[0] if outline and hit.text else hit.text
    return {
        "source": hit.source,
        "path": hit.path,
        "start_line": hit.start_line,
        "end_line": hit.end_line,
        "symbol": hit.symbol,
        "kind": hit.kind,
        "score": hit.score,
        "similarity": hit.similarity,
        "text": text,
    }


def _render_hits(hits: list[dict[str, Any]]) -> list[str]:
    lines = []
    for h in hits:
        lines.append(
            f"{h['source']}:{h['path']}:{h['start_line']}-{h['end_line']}  {h['symbol']}"
            f"  (score {h['score']:.2f}, similarity {h['similarity']:.2f})"
        )
        lines += ["    " + line for line in h["text"].splitlines()[:12]]
    return lines


# --- list_sources -----------------------------------------------------------------------------


def render_sources(result: dict[str, Any]) -> str:
    rows = [
        f"{s['name']} ({s['kind']}) {s['root']}: {s['chunks']} chunks, {s['files_indexed']} files; "
        + _render_drift(s["drift"])
        for s in result["sources"]
    ]
    return "\n".join(rows) or "No sources configured."


def _render_drift(drift: dict[str, int] | None) -> str:
    if drift is None:
        return "drift unknown (its folder is not on this server)"
    return f"drift: {drift['changed']} changed, {drift['added']} new, {drift['removed']} removed"


@backend(params=set(), settings=SETTINGS, render_text=render_sources)
async def list_sources(params: Any, ctx: ToolContext) -> dict[str, Any]:
    with _reading(ctx.settings):
        return await ctx.run_sync(_list_sources, ctx.settings)


def _list_sources(settings: Mapping[str, Any]) -> dict[str, Any]:
    from .store import Store

    store = Store(location_from_settings(settings)) if _index_exists(settings) else None
    out = []
    for source in sources_from_settings(settings).values():
        indexed = store.indexed_hashes(source.name) if store else {}
        table = store.table(source.name) if store else None
        out.append(
            {
                "name": source.name,
                "kind": source.kind,
                "root": source.root,
                "chunks": table.count_rows() if table is not None else 0,
                "files_indexed": len(indexed),
                # A replica serving an object-store index may not have the files: drift unknown.
                "drift": _drift(source, indexed) if os.path.isdir(source.root) else None,
            }
        )
    return {"sources": out}


def _drift(source: Source, indexed: dict[str, str]) -> dict[str, int]:
    changed = added = 0
    seen = set()
    for rel, full in source.files():
        if os.path.getsize(full) > MAX_FILE_BYTES:
            continue
        seen.add(rel)
        if rel not in indexed:
            added += 1
        else:
            with open(full, "rb") as handle:
                changed += content_hash(handle.read()) != indexed[rel]
    return {"changed": changed, "added": added, "removed": len(set(indexed) - seen)}


# --- search -----------------------------------------------------------------------------------


def render_search(result: dict[str, Any]) -> str:
    head = f"{len(result['results'])} result(s), {result['mode']} over {', '.join(result['sources'])}"
    return "\n".join([head, *_render_hits(result["results"])]) if result["results"] else head + ": no match."


@backend(
    params={"query", "source", "top_k", "outline", "file_glob", "extensions", "path_contains"},
    required_params={"query"},
    caps={"max_top_k"},
    settings=SETTINGS,
    render_text=render_search,
)
async def search_tool(params: Any, ctx: ToolContext) -> dict[str, Any]:
    from .ranking import search

    _check_query("query", params.query)
    names = _chosen(ctx.settings, params.source)
    mode = ctx.settings.get("mode", "hybrid")
    filters, reader = _filters(params), _reader(ctx.settings)  # a bad glob fails before embedding
    vector = await _embed(ctx, params.query)
    with _reading(ctx.settings):
        hits = await search(
            reader, names, params.query, vector, mode, _top_k(params, ctx), filters, **_ranking(ctx)
        )
    return {"mode": mode, "sources": names, "results": [_hit_json(h, params.outline) for h in hits]}


def _ranking(ctx: ToolContext) -> dict[str, Any]:
    """The fusion setting, and a candidate pool no smaller than the largest top_k, so the first k
    results are the same whatever top_k asks."""
    from .calibration import agreement_power, keyword_weight
    from .fusion import DEFAULT_FUSION
    from .ranking import POOL

    settings = ctx.settings
    weight = settings.get("keyword_weight")
    embedder = settings.get("embedder", "minilm")
    return {
        "fusion": settings.get("fusion") or DEFAULT_FUSION,
        "pool": max(POOL, ctx.caps["max_top_k"]),
        "keyword_weight": keyword_weight(embedder) if weight is None else weight,
        "agreement_power": agreement_power(embedder),
    }


def _min_score(settings: Mapping[str, Any]) -> float:
    """The min_score setting, else the threshold measured for the embedder."""
    from .calibration import min_score

    value = settings.get("min_score")
    return min_score(settings.get("embedder", "minilm")) if value is None else value


def _top_k(params: Any, ctx: ToolContext) -> int:
    """The asked number, else the server's default, never above the cap."""
    return min(params.top_k or ctx.settings.get("top_k", 10), ctx.caps["max_top_k"])


# --- deep_search ------------------------------------------------------------------------------


def render_deep(result: dict[str, Any]) -> str:
    head = (
        f"variant {result['winning_variant'] + 1} passed"
        if result["passed"]
        else f"no variant passed; {result['warning']}"
    )
    return "\n".join([head, *_render_hits(result["results"])])


@backend(
    params={
        "queries",
        "source",
        "top_k",
        "mode",
        "file_glob",
        "extensions",
        "path_contains",
        "min_score",
        "min_results",
        "return_all_variants",
    },
    required_params={"queries"},
    caps={"max_top_k"},
    settings=SETTINGS,
    render_text=render_deep,
)
async def deep_search(params: Any, ctx: ToolContext) -> dict[str, Any]:
    from .ranking import search

    for i, query in enumerate(params.queries):
        _check_query(f"queries.{i}", query)
    names = _chosen(ctx.settings, params.source)
    if params.mode and len(names) > 1:
        raise ToolError("mode: a mode override applies to a single source; name one source or omit mode")
    settings = ctx.settings
    mode = params.mode or settings.get("mode", "hybrid")
    top_k = _top_k(params, ctx)
    min_score = _min_score(settings) if params.min_score is None else params.min_score
    min_results = settings.get("min_results", 3) if params.min_results is None else params.min_results
    filters, reader = _filters(params), _reader(settings)
    variants, best = [], None
    for index, query in enumerate(params.queries):
        await ctx.report_progress(index, len(params.queries), f"phrasing {index + 1}: {query}")
        vector = await _embed(ctx, query)
        with _reading(settings):
            hits = await search(reader, names, query, vector, mode, top_k, filters, **_ranking(ctx))
        strong = [h for h in hits if h.similarity >= min_score]
        top = max((h.similarity for h in hits), default=0.0)
        variants.append(
            {
                "query": query,
                "results": len(hits),
                "strong": len(strong),
                "top_similarity": top,
                "passed": len(strong) >= min_results,
            }
        )
        if best is None or (len(strong), top) > (best[1], best[2]):
            best = (index, len(strong), top, hits)
        if len(strong) >= min_results:
            best = (index, len(strong), top, hits)
            break
    await ctx.report_progress(len(params.queries), len(params.queries), "done")
    assert best is not None
    passed = variants[best[0]]["passed"]
    warning = (
        None
        if passed
        else (
            f"no phrasing reached {min_results} results of similarity {min_score} or more; these are the "
            f"strongest (variant {best[0] + 1}, top similarity {best[2]:.2f})"
        )
    )
    result: dict[str, Any] = {
        "mode": mode,
        "sources": names,
        "passed": passed,
        "winning_variant": best[0],
        "min_score": min_score,
        "min_results": min_results,
        "warning": warning,
        "results": [_hit_json(h) for h in best[3]],
    }
    if params.return_all_variants:
        result["variants"] = variants
    return result

"""`grep`: ripgrep over a pinned root, in three modes and two formats, paged by cursor."""

from __future__ import annotations

import dataclasses
import os
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

from lynxc.runtime.backend import backend
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

from . import cursor as cursors
from .render import content_lines, cut_line, fit, listing_lines
from .ripgrep import Search, run_listing, stream_events, text_of
from .roots import Located, open_under_roots, requested_path

PARAMS = {
    "pattern",
    "path",
    "file_path",
    "glob",
    "recursive",
    "context",
    "before",
    "after",
    "cursor",
    "ignore_case",
    "max_results",
    "output_mode",
    "output_format",
    "include_hidden",
    "include_ignored",
    "max_line_chars",
    "relative_paths",
    "max_output_chars",
}
CAPS = {"max_results", "max_context_lines", "max_line_chars", "max_output_chars"}


@dataclass
class _Page:
    items: list[dict[str, Any]] = field(default_factory=list)
    has_more: bool = False
    skipped_binaries: int | None = 0


def render_text(result: dict[str, Any]) -> str:
    return result["output"]


@backend(params=PARAMS, required_params={"pattern"}, caps=CAPS, settings={"roots"}, render_text=render_text)
async def grep(params: Any, ctx: ToolContext) -> dict[str, Any]:
    return await ctx.run_sync(_grep, params, ctx)


def _grep(params: Any, ctx: ToolContext) -> dict[str, Any]:
    path = requested_path(params)
    before = params.context if params.before is None else params.before
    after = params.context if params.after is None else params.after
    if params.cursor and (before or after):
        raise ToolError(
            "cursor: cannot be combined with context lines (context, before, after); page without them"
        )
    with open_under_roots(ctx.settings, path) as located:
        is_dir = located.opened.is_dir
        relative = params.relative_paths if params.relative_paths is not None else is_dir
        search = Search(
            pattern=params.pattern,
            fd=located.opened.fd,
            ignore_case=params.ignore_case,
            glob=params.glob if is_dir else None,
            recursive=params.recursive,
            before=before,
            after=after,
            include_hidden=params.include_hidden,
            include_ignored=params.include_ignored,
        )
        key = cursors.search_key(
            params.pattern,
            path,
            params.glob,
            params.recursive,
            params.ignore_case,
            params.output_mode,
            params.include_hidden,
            params.include_ignored,
        )
        position = cursors.decode(params.cursor, key) if params.cursor else None
        mode = params.output_mode
        if mode == "content":
            page = _content(search, located, relative, params, position, ctx)
        else:
            page = _listing(search, located, relative, params, position, mode)
    return _result(params, page, key, position, with_context=bool(before or after), mode=mode)


def _display(located: Located, rg_path: str, relative: bool) -> str:
    prefix = f"/proc/self/fd/{located.opened.fd}"
    inner = rg_path[len(prefix) :].lstrip("/")
    rel = (
        located.opened.rel
        if not inner
        else (inner if located.opened.rel == "." else f"{located.opened.rel}/{inner}")
    )
    return rel if relative else os.path.normpath(os.path.join(located.root, rel))


def _strip(text: str) -> str:
    return text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text


def _content(
    search: Search, located: Located, relative: bool, params: Any, position: dict | None, ctx: ToolContext
) -> _Page:
    """Matching lines in path order. A first page runs ripgrep in parallel and sorts; if it
    fills, the page is redone in path order so it is the same on every call. Resumed pages run
    in path order and skip what the cursor has seen. One match past the page makes has_more exact."""
    limit = params.max_results
    if position is None:
        page = _collect(search, located, relative, params, None, limit, ctx)
        if not page.has_more:
            page.items.sort(key=lambda m: (m["path"], m["line"]))
            return page
    return _collect(_sorted(search), located, relative, params, position, limit, ctx)


def _sorted(search: Search) -> Search:
    return dataclasses.replace(search, sort=True)


def _collect(
    search: Search,
    located: Located,
    relative: bool,
    params: Any,
    position: dict | None,
    limit: int,
    ctx: ToolContext,
) -> _Page:
    page = _Page()
    after_key = (position["p"], position["l"]) if position else None
    with closing(stream_events(search)) as events:
        return _gather(events, search, located, relative, params, page, after_key, limit, ctx)


def _gather(
    events,
    search: Search,
    located: Located,
    relative: bool,
    params: Any,
    page: _Page,
    after_key: tuple[str, int] | None,
    limit: int,
    ctx: ToolContext,
) -> _Page:
    explicit_file = not located.opened.is_dir
    pending: list[dict[str, Any]] = []  # matches of the current file, kept until we know it is text
    pending_context: list[dict[str, Any]] = []
    for event in events:
        if ctx.cancel.cancelled:
            break
        kind, data = event["type"], event.get("data", {})
        if kind == "begin":
            pending, pending_context = [], []
        elif kind in ("match", "context"):
            row = {
                "line": data["line_number"],
                "text": cut_line(_strip(text_of(data["lines"])), params.max_line_chars),
            }
            if kind == "context":
                pending_context.append(row)
                if pending and 0 < row["line"] - pending[-1]["line"] <= search.after:
                    pending[-1]["after"].append(row)
                continue
            path = _display(located, text_of(data["path"]), relative)
            match = {"path": path, "line": row["line"], "text": row["text"], "before": [], "after": []}
            match["before"] = [
                r
                for r in pending_context
                if r["line"] < row["line"] and (not pending or r["line"] > pending[-1]["line"])
            ]
            pending_context = []
            pending.append(match)
        elif kind == "end":
            if data.get("binary_offset") is not None and not explicit_file:
                page.skipped_binaries = (page.skipped_binaries or 0) + 1
                continue
            for match in pending:
                if after_key is not None and (match["path"], match["line"]) <= after_key:
                    continue
                if len(page.items) == limit:
                    page.has_more = True
                    return page  # the look-ahead match: closing the stream stops ripgrep
                page.items.append(match)
    return page


def _listing(
    search: Search, located: Located, relative: bool, params: Any, position: dict | None, mode: str
) -> _Page:
    """files_with_matches and count: the whole listing, sorted, then the page the cursor asks for."""
    kind = "count" if mode == "count" else "files"
    rows = sorted((_display(located, path, relative), count) for path, count in run_listing(search, kind))
    offset = position["o"] if position else 0
    chosen = rows[offset : offset + params.max_results]
    items = [{"path": p, "count": int(c)} if mode == "count" else {"path": p} for p, c in chosen]
    return _Page(items, offset + params.max_results < len(rows), None)


def _result(
    params: Any, page: _Page, key: str, position: dict | None, *, with_context: bool, mode: str
) -> dict:
    fmt = params.output_format
    if mode == "content":
        lines = content_lines(page.items, fmt, with_context)
    else:
        lines = listing_lines(((i["path"], i.get("count")) for i in page.items), fmt)
    text, cut_at = fit(lines, params.max_output_chars)
    shown = page.items if cut_at is None else page.items[:cut_at]
    has_more = page.has_more or cut_at is not None
    next_cursor = None
    if has_more and not with_context and shown:
        if mode == "content":
            next_cursor = cursors.encode(key, {"p": shown[-1]["path"], "l": shown[-1]["line"]})
        else:
            next_cursor = cursors.encode(key, {"o": (position["o"] if position else 0) + len(shown)})
    notes = []
    if cut_at is not None:
        notes.append(
            f"[output cut at {params.max_output_chars} characters after {len(shown)} of {len(page.items)} "
            "results" + ("; continue with next_cursor]" if next_cursor else "; narrow the search]")
        )
    elif page.has_more:
        notes.append(
            "[more results: continue with next_cursor]"
            if next_cursor
            else "[more results: narrow the search]"
        )
    if page.skipped_binaries:
        notes.append(f"[{page.skipped_binaries} binary file(s) with matches skipped]")
    if not shown:
        text = "No matches."
    output = "\n".join([text, *notes]) if notes else text
    result: dict[str, Any] = {
        "mode": mode,
        "format": fmt,
        "total": len(shown),
        "has_more": has_more,
        "next_cursor": next_cursor,
        "output_truncated": cut_at is not None,
        "skipped_binaries": page.skipped_binaries,
        "output": output,
    }
    key_name = {"content": "matches", "files_with_matches": "files", "count": "counts"}[mode]
    result[key_name] = [i["path"] for i in shown] if mode == "files_with_matches" else shown
    return result

"""`glob`: files matching a glob pattern, under the same ignore rules as `grep`."""

from __future__ import annotations

from typing import Any

from lynxc.runtime.backend import backend
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

from .grep import _display
from .render import fit
from .ripgrep import list_files
from .roots import open_under_roots


def render_text(result: dict[str, Any]) -> str:
    return result["output"]


@backend(
    params={"pattern", "path", "include_hidden", "include_ignored", "max_results", "relative_paths"},
    required_params={"pattern"},
    caps={"max_results", "max_output_chars"},
    settings={"roots"},
    render_text=render_text,
)
async def glob(params: Any, ctx: ToolContext) -> dict[str, Any]:
    return await ctx.run_sync(_glob, params, ctx)


def _glob(params: Any, ctx: ToolContext) -> dict[str, Any]:
    with open_under_roots(ctx.settings, params.path) as located:
        if not located.opened.is_dir:
            raise ToolError("path: glob searches a folder; to read a file use read")
        found = list_files(
            located.opened.fd,
            params.pattern,
            include_hidden=params.include_hidden,
            include_ignored=params.include_ignored,
        )
        files = [_display(located, path, params.relative_paths) for path in found]
    chosen = files[: params.max_results]
    text, cut_at = fit([(path, i) for i, path in enumerate(chosen)], ctx.caps["max_output_chars"])
    shown = chosen if cut_at is None else chosen[:cut_at]
    has_more = len(files) > len(shown)
    notes = (
        [f"[{len(files) - len(shown)} more file(s): narrow the pattern or raise max_results]"]
        if has_more
        else []
    )
    return {
        "files": shown,
        "total": len(files),
        "has_more": has_more,
        "output": "\n".join([text or "No files matched.", *notes]),
    }

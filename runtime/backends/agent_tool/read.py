"""`read`: a file's text, whole or a line range, decoded by its BOM (UTF-8, UTF-16 LE/BE),
else as UTF-8, else by the declared fallback (UTF-8 with U+FFFD for invalid bytes)."""

from __future__ import annotations

import codecs
from typing import Any

from lynxc.runtime.backend import backend
from lynxc.runtime.backends.lines import split_lines_keepends
from lynxc.runtime.backends.pinned import FileChanged, read_pinned
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

from .render import cut_line, fit
from .roots import open_under_roots, requested_path

BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decode(data: bytes) -> tuple[str, str]:
    """(text, encoding used). NUL bytes outside UTF-16 mark a binary file."""
    for bom, encoding in BOMS:
        if data.startswith(bom):
            return data.decode(encoding, errors="replace"), encoding.replace("-sig", "") + " (BOM)"
    if b"\x00" in data[:8192]:
        raise ToolError("path: a binary file (it holds NUL bytes); read only reads text")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), "utf-8 (invalid bytes replaced)"


def render_text(result: dict[str, Any]) -> str:
    return result["output"]


@backend(
    params={"path", "file_path", "offset", "limit", "max_line_chars"},
    caps={"max_read_bytes", "max_lines", "max_output_chars"},
    settings={"roots"},
    render_text=render_text,
)
async def read(params: Any, ctx: ToolContext) -> dict[str, Any]:
    return await ctx.run_sync(_read, params, ctx)


def _read(params: Any, ctx: ToolContext) -> dict[str, Any]:
    path = requested_path(params)
    if not path:
        raise ToolError("path: name the file to read (path or file_path)")
    with open_under_roots(ctx.settings, path) as located:
        opened = located.opened
        if opened.is_dir:
            raise ToolError(f"path: {opened.rel!r} is a folder; use glob to list its files")
        if opened.st.st_size > ctx.caps["max_read_bytes"]:
            raise ToolError(
                f"path: {opened.st.st_size} bytes, over the {ctx.caps['max_read_bytes']}-byte cap"
            )
        try:
            data = read_pinned(opened.fd, opened.st)
        except FileChanged as err:
            raise ToolError(f"path: {opened.rel!r} {err}; nothing returned") from None
    text, encoding = decode(data)
    lines = split_lines_keepends(text)
    start = params.offset
    if start > max(len(lines), 1):
        raise ToolError(f"offset: line {start} is past the end ({len(lines)} lines)")
    chosen = lines[start - 1 : start - 1 + params.limit]
    numbered = [
        (f"{start + i:>6}\t{cut_line(line.rstrip(chr(10)).rstrip(chr(13)), params.max_line_chars)}", i)
        for i, line in enumerate(chosen)
    ]
    body, cut_at = fit(numbered, ctx.caps["max_output_chars"])
    shown = len(chosen) if cut_at is None else cut_at
    end = start + shown - 1
    has_more = end < len(lines)
    note = [f"[lines {end + 1}-{len(lines)} not shown: continue with offset {end + 1}]"] if has_more else []
    return {
        "path": located.display_root,
        "encoding": encoding,
        "start_line": start,
        "end_line": end,
        "total_lines": len(lines),
        "has_more": has_more,
        "next_offset": end + 1 if has_more else None,
        "output": "\n".join([body, *note]) if body or note else "(empty file)",
    }

"""The text an agent reads: compact (grouped by file) or classic (`path:line:text`), with long
lines cut and the whole cut at a line boundary when over `max_output_chars`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Line = tuple[str, int]  # (text, index of the item it belongs to)


def cut_line(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… [+{len(text) - limit} chars]"


def content_lines(matches: list[dict[str, Any]], fmt: str, with_context: bool) -> list[Line]:
    """Classic: `path:N:text` for matches, `path-N-text` for context, `--` between separate
    groups. Compact: the path once, then `  N: text` / `  N- text`, `  ...` between groups."""
    lines: list[Line] = []
    last: tuple[str, int] | None = None  # (path, last line number printed)
    for index, match in enumerate(matches):
        path = match["path"]
        rows = [(r["line"], "-", r["text"]) for r in match.get("before", [])]
        rows.append((match["line"], ":", match["text"]))
        rows += [(r["line"], "-", r["text"]) for r in match.get("after", [])]
        if last is not None and last[0] == path:
            rows = [row for row in rows if row[0] > last[1]]  # context shared with the previous match
        if not rows:
            continue
        same_file = last is not None and last[0] == path
        gap = not same_file or rows[0][0] > last[1] + 1  # type: ignore[index]
        if fmt == "classic":
            if with_context and last is not None and gap:
                lines.append(("--", index))
            lines += [(f"{path}{sep}{number}{sep}{text}", index) for number, sep, text in rows]
        else:
            if not same_file:
                lines.append((path, index))
            elif with_context and gap:
                lines.append(("  ...", index))
            lines += [(f"  {number}{sep} {text}", index) for number, sep, text in rows]
        last = (path, rows[-1][0])
    return lines


def listing_lines(rows: Iterable[tuple[str, int | None]], fmt: str) -> list[Line]:
    out = []
    for index, (path, count) in enumerate(rows):
        if count is None:
            out.append((path, index))
        else:
            out.append((f"{path}:{count}" if fmt == "classic" else f"{path}  {count}", index))
    return out


def fit(lines: list[Line], limit: int) -> tuple[str, int | None]:
    """The lines of whole items that fit in `limit` characters, and the index of the first item
    left out (None when all fit). An item too big on its own is shown cut, so paging advances."""
    out: list[Line] = []
    used = 0
    for text, index in lines:
        cost = len(text) + 1
        if used + cost > limit:
            kept = [t for t, i in out if i < index]
            if kept:
                return "\n".join(kept), index
            partial = "\n".join(t for t, _ in out) + ("\n" if out else "") + text
            return cut_line(partial, max(limit - 40, 1)), index + 1
        out.append((text, index))
        used += cost
    return "\n".join(t for t, _ in out), None

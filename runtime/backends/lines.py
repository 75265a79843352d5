"""The line rule of the file-reading backends (dot-harness's read and search, agent-tool's
read): a line ends at LF, and a CR right before that LF belongs to its ending; any other CR (a
lone CR) is content. A line number means the same in all their replies."""

from __future__ import annotations


def split_lines_keepends(text: str) -> list[str]:
    """Lines with their LF or CRLF endings; a lone CR is content."""
    pieces = text.split("\n")
    lines = [piece + "\n" for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines

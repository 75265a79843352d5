"""Backticked names in descriptions, shared by the spec check of tool references and by lint.

A single-backticked span is code (`search`); a reStructuredText inline literal (``None``) is
blanked out first, so its backticks cannot pair with their neighbours' and yield words that
were never quoted."""

from __future__ import annotations

import re

_RST_LITERAL = re.compile(r"``[^`\n]+?``")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def code_spans(text: str) -> list[re.Match[str]]:
    """Single-backticked spans of `text` (group 1 is the name), rST inline literals left out.
    Positions are those of `text`: literals are blanked with spaces, not removed."""
    blanked = _RST_LITERAL.sub(lambda m: " " * len(m.group(0)), text)
    return list(_CODE_SPAN.finditer(blanked))

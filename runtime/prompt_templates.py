"""What the build and the runtime share of prompts and completions (issue 31): the sandboxed
Jinja2 environment templates are parsed and rendered in, the limits, and the statement a SQL
completion runs. Light: the compiler imports it without the MCP SDK (Jinja2 loads on use)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jinja2

MAX_ARGUMENT_BYTES = 64 * 1024  # one argument's value (and what a completion request types)
MAX_RENDERED_BYTES = 1 << 20  # the text of one prompts/get answer, all messages together
MAX_IMAGE_BYTES = 1 << 20  # one image file of a prompt
MAX_VALUES = 100  # values in one completion answer (the MCP specification's limit)
MAX_SQL_VALUES = MAX_VALUES + 1  # rows a SQL source reads: one more tells whether there are more


@lru_cache(maxsize=1)
def template_environment() -> jinja2.Environment:
    """The one environment prompt templates are parsed (build) and rendered (runtime) in: the
    immutable sandbox (no attribute starting with _, no mutation of lists or dicts) with
    StrictUndefined (a name nobody gave is an error, never empty text)."""
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    return ImmutableSandboxedEnvironment(
        undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True
    )


def sql_statement(text: str) -> str:
    """What the engine runs for a SQL completion source: its one column, at most MAX_SQL_VALUES
    rows (the build checks this very text; the newline ends a trailing comment)."""
    return f"SELECT * FROM (\n{text}\n) AS completion LIMIT {MAX_SQL_VALUES}"


class RenderedTooLarge(Exception):
    """A template's output went past the limit (rendering stopped there)."""


def render_bounded(template: jinja2.Template, values: dict[str, str], limit: int = MAX_RENDERED_BYTES) -> str:
    """The template's text, rendered piece by piece and stopped once it passes `limit` bytes:
    a loop cannot fill memory before the limit is checked."""
    pieces, size = [], 0
    for piece in template.generate(values):
        size += len(piece.encode("utf-8", "surrogatepass"))
        if size > limit:
            raise RenderedTooLarge(f"renders to over {limit} bytes")
        pieces.append(piece)
    return "".join(pieces)

"""`lynxc init NAME`: a server spec with one documented tool and its backend, ready to build."""

from __future__ import annotations

from pathlib import Path

from .files import write_text_atomic
from .lower.server import SERVER_NAME

SPEC = """\
lynxc: 1
server:
  name: {name}
  version: 0.1.0
  title: {title}
  instructions: Tools of the {name} server. Start with `count_words`.
tools:
  - name: count_words
    title: Count words in text
    backend: {module}:count_words
    annotations:
      readOnlyHint: true
      idempotentHint: true
      destructiveHint: false
      openWorldHint: false
    description:
      purpose: Count the words, lines and characters of a piece of text given in the call.
      usage: >-
        Use it for quick size checks of text you already have; it cannot read files or URLs.
      behaviour: >-
        Pure computation with no side effects. Words are runs of non-space characters; text
        longer than {{caps.max_text_chars}} characters is rejected.
      returns: The three counts; empty text gives zeros.
    caps:
      max_text_chars:
        value: 100000
        unit: chars
        description: Longest text accepted.
    parameters:
      text:
        type: string
        required: true
        maxLength: caps.max_text_chars
        description: The text to measure, as given; nothing is trimmed.
        examples: ["one two three"]
    output:
      type: object
      additionalProperties: false
      required: [words, lines, characters]
      properties:
        words: {{type: integer, minimum: 0, description: Runs of non-space characters.}}
        lines: {{type: integer, minimum: 0, description: Line count; a final line without a newline counts.}}
        characters: {{type: integer, minimum: 0, description: Unicode code points.}}
"""

BACKEND = '''\
"""Backends of the {name} server. Each receives the validated input model generated from the spec."""

from typing import Any

from lynxc.runtime.backend import backend
from lynxc.runtime.context import ToolContext


@backend(params={{"text"}}, caps={{"max_text_chars"}})
async def count_words(params: Any, ctx: ToolContext) -> dict[str, int]:
    text = params.text
    return {{"words": len(text.split()), "lines": len(text.splitlines()), "characters": len(text)}}
'''


def scaffold(project: Path, name: str) -> list[Path]:
    if not SERVER_NAME.match(name):
        raise ValueError(
            f"server name {name!r} must be lowercase letters, digits and dashes, starting with a letter"
        )
    module = name.replace("-", "_") + "_backend"
    spec_path = project / "specs" / f"{name}.yaml"
    backend_path = project / f"{module}.py"
    for path in (spec_path, backend_path, project / "specs" / name):
        if path.exists():
            raise ValueError(f"{path} already exists; nothing written")
    title = name.replace("-", " ").capitalize()
    write_text_atomic(spec_path, SPEC.format(name=name, title=title, module=module))
    write_text_atomic(backend_path, BACKEND.format(name=name))
    return [spec_path, backend_path]

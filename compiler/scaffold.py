"""`lynxc init NAME`: a server spec with one documented tool and its backend, ready to build."""

from __future__ import annotations

from pathlib import Path

from .cache import CACHE_DIR
from .files import write_text_atomic
from .lower.records_tools import DATA_DIR_ROOT
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
    # Calls and what must hold of their answers: listed in the generated README, run by `lynxc test`.
    examples:
      - name: two lines
        arguments: {{text: "one two\\nthree"}}
        expect:
          result: {{words: 3, lines: 2, characters: 13}}
      - name: empty text gives zeros
        arguments: {{text: ""}}
        expect:
          result: {{words: 0, lines: 0, characters: 0}}
      - name: the text is required
        arguments: {{}}
        expect:
          error: {{kind: invalid_arguments, field: text}}
"""

BACKEND = '''\
"""Backends of the {name} server. Each receives the validated input model generated from the spec."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lynxc.runtime.backend import backend
from lynxc.runtime.context import ToolContext

if TYPE_CHECKING:  # written by `lynxc build` from the spec: editors complete `params.` from it
    {model_import}


@backend(params={{"text"}}, caps={{"max_text_chars"}})
async def count_words(params: CountWordsInput, ctx: ToolContext) -> dict[str, int]:
    text = params.text
    return {{"words": len(text.split()), "lines": len(text.splitlines()), "characters": len(text)}}
'''
STORES_NOTE = (
    f"stores (records data, search indexes) go under {DATA_DIR_ROOT}/ unless a setting says otherwise "
    "(`lynxc config SERVER` shows them); .gitignore keeps them out of commits"
)
# Where stores go unless a setting says otherwise (records: data_dir), and what an interrupted
# write leaves, and the build cache: data and temporary files, never commits.
GITIGNORE = (
    f"{DATA_DIR_ROOT}/",
    f"{CACHE_DIR}/",
    "generated/.*",
    ".*.tmp",
    "__pycache__/",
)


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
    write_text_atomic(backend_path, BACKEND.format(name=name, model_import=_model_import(name)))
    written = [spec_path, backend_path]
    if _ignore_stores(project / ".gitignore"):
        written.append(project / ".gitignore")
    return written


def _model_import(name: str) -> str:
    """The import of the tool's input model for type checkers. A server folder named with a dash
    is no Python package name: there the editor is pointed at the file instead."""
    model = "from generated.{}.models.count_words import CountWordsInput"
    if name.isidentifier():
        return model.format(name)
    return (
        f"# generated/{name}/models/count_words.py holds CountWordsInput; '{name}' is no package\n"
        f"    # name, so add generated/{name} to your editor's extra paths and import it from there:\n"
        "    from models.count_words import CountWordsInput"
    )


def _ignore_stores(path: Path) -> bool:
    """Add to .gitignore (made if missing) the lines that keep stores and interrupted writes out
    of commits; False when it has them all already."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    missing = [line for line in GITIGNORE if line not in text.splitlines()]
    if not missing:
        return False
    lead = "" if not text or text.endswith("\n") else "\n"
    header = f"# lynxc: stores (records, indexes) go under {DATA_DIR_ROOT}/ unless settings say otherwise\n"
    write_text_atomic(path, text + lead + header + "\n".join(missing) + "\n")
    return True

"""Which file under `generated/<server>/models/` holds each tool's models, and the tool names
that would share one.

MCP tool names may hold '-' and '.', Python module names may not, so `read-file`, `read.file`
and `read_file` all map to `models/read_file.py`; and a case-insensitive file system (macOS,
Windows) keeps one file for `Search.py` and `search.py`. Two tools sharing a file would validate
one tool's calls against the other's model, so such names are refused, as is a tool whose file
would replace the models package itself (`__init__`)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..diagnostics import Diagnostic
from ..rules import diagnostic
from ..spec.load import ToolSource

PACKAGE_MODULE = "__init__"  # models/__init__.py makes the folder a package


def tool_module(tool_name: str) -> str:
    """The module (file stem under models/) of a tool's models: MCP names may hold '.' and '-'."""
    name = re.sub(r"\W", "_", tool_name)
    return f"tool_{name}" if name[0].isdigit() else name


def same_file(module: str) -> str:
    """What two module names must not share: a case-insensitive file system folds case."""
    return module.casefold()


def check_model_files(tools: Iterable[ToolSource]) -> list[Diagnostic]:
    """TOOL_NAME_COLLISION at the later of two tools whose models would share a file, naming both,
    and at a tool whose models would replace models/__init__.py. Identical names are
    TOOL_NAME_DUPLICATE's, not reported again here."""
    owners: dict[str, str] = {}
    found = []
    for source in tools:
        name = source.tool.name
        if not name:
            continue  # TOOL_NAME_INVALID says what is wrong with it
        module = tool_module(name)
        span = source.doc.span((*source.base, "name"))
        if same_file(module) == same_file(PACKAGE_MODULE):
            found.append(
                diagnostic(
                    "TOOL_NAME_COLLISION",
                    f"tool '{name}' would write models/{module}.py, which makes the models folder a package",
                    span,
                    "rename the tool",
                )
            )
            continue
        other = owners.setdefault(same_file(module), name)
        if other != name:
            found.append(
                diagnostic(
                    "TOOL_NAME_COLLISION",
                    f"tools '{other}' and '{name}' {_shared_file(tool_module(other), module)}",
                    span,
                    f"rename '{name}' or '{other}'",
                )
            )
    return found


def _shared_file(first: str, second: str) -> str:
    if first == second:
        return f"would both write models/{first}.py ('-' and '.' become '_' in a module name)"
    return (
        f"would write models/{first}.py and models/{second}.py, one file where letter case is not "
        "told apart (macOS, Windows)"
    )

"""The tools and settings a server with resources gets without declaring them.

They are written once, in spec format, in `records_tools.yaml` beside this module, and go
through the same parsing and lowering as a user's tools: the same checks, the same wire form,
the same lint. Which tools a server gets follows the capabilities its resources allow; every
sentence of the definitions that quotes a tool the server does not get is left out, so no
description points at a tool that is not there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources as package_files
from typing import Any

from ..spec.load import ToolSource
from ..spec.models import SchemaNode, ServerFile, Tool
from ..spec.parse import parse_document
from ..spec.source import SourceDoc, parse_yaml

RECORDS_TOOLS_FILE = "records_tools.yaml"
# How diagnostics and generated headers name the packaged file: the same on every machine, so a
# build stays byte-identical wherever lynxc is installed.
RECORDS_TOOLS_DISPLAY = f"lynxc:{RECORDS_TOOLS_FILE}"
# Each synthesized tool, and the capability some resource must allow for it (None: always).
SYNTHESIZED_TOOLS: Mapping[str, str | None] = {
    "discover_resources": None,
    "describe_resource": None,
    "search_records": "search",
    "query_records": "query",
    "get_record": "get_one",
}
DATA_DIR_SETTING = "data_dir"
EMBEDDER_SETTING = "embedder"
EMBEDDERS = ("minilm", "static")
DATA_DIR_ROOT = ".lynxc-data"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class RecordsTools:
    tools: tuple[ToolSource, ...]
    settings: Mapping[str, SchemaNode]  # the implied settings, by name, in order


def records_tools(capabilities: Iterable[str], server_name: str) -> RecordsTools:
    """The tools a server whose resources allow `capabilities` gets, and the settings they read
    (data_dir defaulting to a folder of the server's own)."""
    allowed = set(capabilities)
    doc, spec = _packaged()
    present = {name for name, needs in SYNTHESIZED_TOOLS.items() if needs is None or needs in allowed}
    absent = set(SYNTHESIZED_TOOLS) - present
    tools = []
    for index, tool in enumerate(spec.tools):
        if tool.name in present:
            raw = doc.data["tools"][index]
            pruned = tool if not absent else Tool.model_validate(_without_mentions(raw, absent))
            tools.append(ToolSource(doc, pruned, ("tools", index)))
    settings = dict(spec.server.settings)
    settings[DATA_DIR_SETTING] = settings[DATA_DIR_SETTING].model_copy(
        update={"default": f"{DATA_DIR_ROOT}/{server_name}"}
    )
    return RecordsTools(tuple(tools), settings)


@cache
def _packaged() -> tuple[SourceDoc, ServerFile]:
    """The packaged definitions, read once. They are lynxc's own file: one that does not parse is
    a broken installation, raised, never blamed on the user's spec."""
    text = package_files.files(__package__).joinpath(RECORDS_TOOLS_FILE).read_text(encoding="utf-8")
    loaded = parse_yaml(text, RECORDS_TOOLS_DISPLAY)
    if loaded.value is None:
        raise RuntimeError("; ".join(d.render() for d in loaded.diagnostics))
    parsed = parse_document(loaded.value, ServerFile)
    if parsed.value is None:
        raise RuntimeError("; ".join(d.render() for d in parsed.diagnostics))
    return loaded.value, parsed.value


def _without_mentions(node: Any, absent: set[str]) -> Any:
    """`node` with every sentence that quotes an absent tool (`name`) left out of its texts; a
    text left empty goes away with its key."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            pruned = _without_mentions(value, absent)
            if pruned != "":
                out[key] = pruned
        return out
    if isinstance(node, list):
        return [_without_mentions(item, absent) for item in node]
    if isinstance(node, str) and any(f"`{name}`" in node for name in absent):
        kept = [s for s in _SENTENCE_END.split(node) if not any(f"`{name}`" in s for name in absent)]
        return " ".join(kept)
    return node

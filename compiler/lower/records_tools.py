"""The tools and settings a server with collections gets without declaring them.

They are written once, in spec format, in `records_tools.yaml` beside this module, and go
through the same parsing and lowering as a user's tools: the same checks, the same wire form,
the same lint. Which tools a server gets follows the capabilities its resources allow; every
sentence of the definitions that quotes a tool the server does not get is left out, so no
description points at a tool that is not there. Examples and optional parameters follow the
resources the same way (`records_examples`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources as package_files
from typing import Any

from ..ir import CollectionIR
from ..spec.load import ToolSource
from ..spec.models import SchemaNode, ServerFile, Tool
from ..spec.parse import parse_document
from ..spec.source import SourceDoc, parse_yaml
from .records_examples import MARKER, OPTIONAL_PARAMETERS, example_markers, fill_markers

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


def records_tools(resources: Sequence[CollectionIR], server_name: str) -> RecordsTools:
    """The tools a server declaring `resources` gets, with examples from those resources and
    only the parameters they can use, and the settings the tools read (data_dir defaulting to a
    folder of the server's own)."""
    allowed = {c for resource in resources for c in resource.capabilities}
    doc, spec = _packaged()
    present = {name for name, needs in SYNTHESIZED_TOOLS.items() if needs is None or needs in allowed}
    markers = example_markers(resources)
    unusable = {f"<<{name}>>" for name, value in markers.items() if value is None}
    left_out = {f"`{name}`" for name in set(SYNTHESIZED_TOOLS) - present} | unusable
    tools = []
    for index, tool in enumerate(spec.tools):
        if tool.name in present:
            raw = _without_parameters(doc.data["tools"][index], markers)
            pruned = _with_examples(_without_mentions(raw, left_out), markers)
            tools.append(ToolSource(doc, Tool.model_validate(pruned), ("tools", index)))
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


def _without_mentions(node: Any, left_out: set[str]) -> Any:
    """`node` with every sentence that holds one of `left_out` (an absent tool quoted as
    `name`, a marker this server has no example for) left out of its texts; a text left empty
    goes away with its key."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            pruned = _without_mentions(value, left_out)
            if pruned != "":
                out[key] = pruned
        return out
    if isinstance(node, list):
        return [_without_mentions(item, left_out) for item in node]
    if isinstance(node, str) and any(needle in node for needle in left_out):
        kept = [s for s in _SENTENCE_END.split(node) if not any(needle in s for needle in left_out)]
        return " ".join(kept)
    return node


def _without_parameters(tool: Mapping[str, Any], markers: Mapping[str, str | None]) -> dict[str, Any]:
    """The raw tool without the optional parameters this server's resources cannot use."""
    parameters = {
        name: node
        for name, node in (tool.get("parameters") or {}).items()
        if not (name in OPTIONAL_PARAMETERS and markers[name] is None)
    }
    return {**tool, "parameters": parameters} if "parameters" in tool else dict(tool)


def _with_examples(node: Any, markers: Mapping[str, str | None]) -> Any:
    """`node` with every marker in its texts replaced by this server's example."""
    if isinstance(node, dict):
        return {key: _with_examples(value, markers) for key, value in node.items()}
    if isinstance(node, list):
        return [_with_examples(item, markers) for item in node]
    if isinstance(node, str) and MARKER.search(node):
        return fill_markers(node, markers)
    return node

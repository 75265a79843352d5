"""What the compiler and the runtime agree on about MCP resources (issue 31): the generated
files' names, the hidden SQL tools' prefix, which MIME types are text; and the SDK's RFC 6570
parser loaded without the SDK. Light: the compiler imports it, and `lynxc build` loads no MCP SDK."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

RESOURCES_FILE = "resources.json"  # the two list answers
SOURCES_FILE = "resource_sources.json"  # how each resource is read
RESOURCE_FILES_DIR = "resource_files"  # where the build copies resource files
SQL_TOOL_PREFIX = "resource__"  # the hidden SQL tool that reads a resource (in sql.json only)
SDK_URI_TEMPLATE = "mcp.shared.uri_template"  # the SDK's RFC 6570 parser

_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/xml",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/javascript",
        "application/ecmascript",
        "application/sql",
        "application/graphql",
        "application/ld+json",
        "application/x-ndjson",
        "application/csv",
        "image/svg+xml",
    }
)


def is_text_mime(mime_type: str) -> bool:
    """Whether content of this MIME type is sent as text (else as a base64 blob)."""
    essence = mime_type.split(";", 1)[0].strip().lower()
    return (
        essence.startswith("text/") or essence in _TEXT_TYPES or essence.endswith(("+json", "+xml", "+yaml"))
    )


@cache
def uri_templates() -> ModuleType:
    """`mcp.shared.uri_template` (UriTemplate, InvalidUriTemplate): the SDK's own parser, so a
    template the build accepts is one the server matches alike. A served server has the SDK
    loaded and takes its module; the compiler loads that one file alone (it imports nothing but
    the standard library), not the SDK."""
    loaded = sys.modules.get(SDK_URI_TEMPLATE)
    if loaded is not None:
        return loaded
    found = importlib.util.find_spec("mcp")  # finds the package without importing it
    if found is None or found.origin is None:
        raise ImportError("the mcp SDK is not installed")
    path = Path(found.origin).parent.joinpath(*SDK_URI_TEMPLATE.split(".")[1:]).with_suffix(".py")
    spec = importlib.util.spec_from_file_location("lynxc_sdk_uri_template", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module

"""Lint of what a records server's descriptions name: a resource id (`shops/{shop}/items`) or a
field path (`capital.name`, `name.fr`) that none of its resources declares sends an agent after
something the server does not have, as when every records server quoted the bundled PEPs.

Only servers whose resources are known are checked (a spec, or a generated folder with its
collections.json); a saved tools/list says nothing of them. What counts as naming is kept narrow,
so prose is not mistaken for paths: a slash path of three segments or more, or with a
{placeholder}; a dotted path of lowercase names that is neither a path of the tool's own
schemas (`page.next_cursor`) nor a file or host name (`tools.json`, `peps.python.org`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .checks import LintFinding, ToolView

RULE = "RECORD_PATH_UNDECLARED"
SLASH_PATH = re.compile(r"(?<![\w.:/{}~-])[A-Za-z0-9_{][\w.~{}-]*(?:/[\w.~{}-]+)+")
# Lowercase names joined by dots, each after the first starting with a letter (not `v2.0`), a
# locale code allowed last (`name.pt-BR`); not a call or a longer dotted name (`os.path.join()`).
DOTTED_PATH = re.compile(r"(?<![\w./@$-])[a-z_][a-z0-9_]+(?:\.[a-z_][A-Za-z0-9_-]*)+(?!\.?[\w(/])")
PLACEHOLDER = re.compile(r"^\{[^{}]+\}$")
LOCALE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
# Last segments that make a dotted name a file or a host, not a field path.
NOT_A_FIELD = frozenset(
    {"json", "jsonl", "yaml", "yml", "py", "md", "txt", "csv", "gz", "toml", "html", "js", "ts"}
    | {"com", "org", "net", "io", "dev"}
)


def check_record_paths(
    view: ToolView, resources: Sequence[Mapping[str, Any]] | None
) -> Iterator[LintFinding]:
    """Findings for each resource id or field path `view`'s texts name that `resources` (the
    server's, None when unknown) do not declare."""
    if not resources:
        return
    ids = [str(r.get("id") or r.get("name")) for r in resources]
    paths = _field_paths(resources)
    tool = view.tool
    schema_paths = _schema_paths(tool.get("inputSchema")) | _schema_paths(tool.get("outputSchema"))
    for param, text in _texts(tool):
        for name in dict.fromkeys(_named(text)):
            if "/" in name:
                if _matches_an_id(name, ids):
                    continue
                known = "resource ids: " + ", ".join(ids)
            elif name in schema_paths or _resolves(name, paths):
                continue
            else:
                known = "field paths: " + ", ".join(list(paths)[:8]) + (", ..." if len(paths) > 8 else "")
            where = f"{param}: " if param else ""
            yield view.finding(
                RULE,
                f"{where}names '{name}', which none of the server's collections declares ({known})",
                param,
            )


def _named(text: str) -> Iterator[str]:
    for match in SLASH_PATH.finditer(text):
        token = match.group(0).rstrip(".")
        segments = token.split("/")
        if len(segments) >= 3 or any(PLACEHOLDER.match(s) for s in segments):
            yield token
    for match in DOTTED_PATH.finditer(SLASH_PATH.sub(" ", text)):
        token = match.group(0).rstrip(".")
        if "." in token and token.rsplit(".", 1)[1] not in NOT_A_FIELD:
            yield token


def _texts(tool: Mapping[str, Any]) -> Iterator[tuple[str | None, str]]:
    """The tool's description (param None) and every description of its schemas, under the
    top-level parameter it belongs to (None for the output schema)."""
    if isinstance(tool.get("description"), str):
        yield None, tool["description"]
    input_schema = tool.get("inputSchema")
    properties = input_schema.get("properties") if isinstance(input_schema, dict) else None
    for name, node in (properties or {}).items():
        for text in _descriptions(node):
            yield name, text
    yield from ((None, text) for text in _descriptions(tool.get("outputSchema")))


def _descriptions(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "description" and isinstance(value, str):
                yield value
            else:
                yield from _descriptions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _descriptions(item)


def _schema_paths(schema: Any) -> set[str]:
    """Every dotted chain of property names in a schema, from any object node down (`page`,
    `page.next_cursor`, `_sys.truncated`): a description may name its own tool's fields so."""
    found: set[str] = set()

    def chains(node: Any) -> set[str]:
        below: set[str] = set()
        if isinstance(node, dict):
            for name, child in (node.get("properties") or {}).items():
                below.add(name)
                below |= {f"{name}.{rest}" for rest in chains(child)}
            for key in ("items", "additionalProperties"):
                below |= chains(node.get(key))
            for key in ("anyOf", "oneOf", "allOf"):
                for option in node.get(key) or ():
                    below |= chains(option)
        return below

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            found.update(chains(node))
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for item in node:
                visit(item)

    visit(schema)
    return found


def _field_paths(resources: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Every field path of every resource (arrays stand for their elements), with its type."""
    paths: dict[str, str] = {}

    def walk(fields: Any, prefix: str) -> None:
        for f in fields or ():
            path = prefix + str(f.get("name"))
            node = f.get("items") if f.get("type") == "array" and f.get("items") else f
            paths.setdefault(path, str(node.get("type")))
            walk(node.get("fields"), path + ".")

    for resource in resources:
        walk(resource.get("fields"), "")
    return paths


def _resolves(name: str, paths: Mapping[str, str]) -> bool:
    if name in paths:
        return True
    head, _, locale = name.rpartition(".")
    return paths.get(head) == "localized" and LOCALE.match(locale) is not None


def _matches_an_id(name: str, ids: Sequence[str]) -> bool:
    """Whether `name` is a resource id, as written (a template) or filled in."""
    given = name.split("/")
    for resource_id in ids:
        template = resource_id.split("/")
        if len(template) == len(given) and all(
            part == value or PLACEHOLDER.match(part) for part, value in zip(template, given, strict=True)
        ):
            return True
    return False

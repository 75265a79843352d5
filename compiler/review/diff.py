"""Structural diff of two `tools/list` payloads, in the seeds' changelog notation.

One entry per changed field: `added`, `removed` or `changed`, a path such as
`Input schema / properties / top_k / description`, and the previous and new JSON values.
Every field of the tool object is compared (`SECTIONS`), and a field no MCP revision lynxc knows
defines changes as a whole under `Unknown field NAME`, so nothing a server publishes passes
unseen. Objects are compared key by key; arrays (`required`, `enum`, `anyOf`, `type` lists,
`icons`) and scalars as whole values. A schema that appears or disappears is `(root)` changing
from or to null; a schema given as `null` is no schema, the same as a missing one. Judging what
a change means is a separate step (`judge`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

Op = Literal["added", "removed", "changed"]
ROOT = "(root)"
TOOL = "(tool)"
SEPARATOR = " / "

# Wire field of a tool -> its section name in change paths: every field of the `Tool` object of
# the MCP revisions 2025-06-18 (title, outputSchema, annotations, _meta), 2025-11-25 (icons,
# execution) and 2026-07-28 (the same fields; execution left with tasks), schema/*/schema.ts in
# modelcontextprotocol/modelcontextprotocol. `name` is not among them: it is the match key, so a
# tool renamed is one removed and one added. `annotations.title` is judged within Annotations.
SECTIONS = (
    ("title", "Title"),
    ("description", "Description"),
    ("annotations", "Annotations"),
    ("inputSchema", "Input schema"),
    ("outputSchema", "Output schema"),
    ("icons", "Icons"),
    ("execution", "Execution"),
    ("_meta", "Meta"),
)
MATCH_KEY = "name"
KNOWN_FIELDS = frozenset({MATCH_KEY, *(field for field, _ in SECTIONS)})
SCHEMA_SECTIONS = {"Input schema": "inputSchema", "Output schema": "outputSchema"}
# Objects of independent keys: one absent (or null) is compared as empty, so adding `_meta` with
# two keys is two changes, each judged by what its key means (`Meta / ui / visibility`).
KEYED_SECTIONS = frozenset({"Execution", "Meta"})
# A field outside SECTIONS changes as a whole under this section prefix (`Unknown field payment`).
UNKNOWN_FIELD = "Unknown field "


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Change:
    op: Op
    tool: str  # "" for a change to a declared collection
    path: tuple[str, ...]
    before: Any = MISSING
    after: Any = MISSING
    # The collection's name when the change is to a declared collection (`review.collections`): its
    # path then starts with `Collection NAME`, so it reads whole without a tool before it.
    resource: str | None = None
    # True for a change to the server as a whole (its caller authentication, `review.auth`):
    # its path starts with `Server`, and like a resource's it names no tool.
    server: bool = False
    # The prompt's name when the change is to a prompt (`review.prompts`): path `Prompt NAME ...`.
    prompt: str | None = None
    # When the change is to an MCP resource (`review.mcp_resources`): ("uri", URI) for a static
    # resource, ("template", NAME) for a template; its path starts `Resource URI` or
    # `Resource template NAME`.
    mcp_resource: tuple[str, str] | None = None

    @property
    def path_text(self) -> str:
        return SEPARATOR.join(self.path)

    @property
    def of_tool(self) -> bool:
        """Whether the change is to a tool (not to a declared collection, a prompt, an MCP
        resource or the server)."""
        return self.resource is None and not self.server and self.prompt is None and self.mcp_resource is None

    @property
    def located(self) -> str:
        """`find_items: Input schema / properties / n`, `Collection peps / fields / status`, or
        `Server / auth / methods`."""
        return f"{self.tool}: {self.path_text}" if self.of_tool else self.path_text

    def to_json(self) -> dict[str, Any]:
        subject: dict[str, Any] = {"tool": self.tool}
        if self.resource is not None:
            subject = {"collection": self.resource}
        elif self.server:
            subject = {"scope": "server"}
        elif self.prompt is not None:
            subject = {"prompt": self.prompt}
        elif self.mcp_resource is not None:
            kind, key = self.mcp_resource
            subject = {"resourceTemplate": key} if kind == "template" else {"resourceUri": key}
        out: dict[str, Any] = {"op": self.op, **subject, "path": self.path_text}
        if self.before is not MISSING:
            out["before"] = self.before
        if self.after is not MISSING:
            out["after"] = self.after
        return out


def diff_tools(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]) -> list[Change]:
    """Changes from one tools list to another: tools matched by name, in name order."""
    old = {tool["name"]: tool for tool in before}
    new = {tool["name"]: tool for tool in after}
    changes: list[Change] = []
    for name in sorted(old.keys() | new.keys()):
        if name not in new:
            changes.append(Change("removed", name, (TOOL,), before=old[name]))
        elif name not in old:
            changes.append(Change("added", name, (TOOL,), after=new[name]))
        elif not _unchanged(old[name], new[name]):
            changes.extend(diff_tool(old[name], new[name]))
    return changes


def _unchanged(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Fast path for the many tools a release leaves alone: C-speed equality, confirmed by the
    JSON text because Python's equality says `True == 1`."""
    return old == new and json.dumps(old) == json.dumps(new)


def diff_tool(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    name = after["name"]
    changes: list[Change] = []
    for field, section in SECTIONS:
        old, new = before.get(field, MISSING), after.get(field, MISSING)
        if section in SCHEMA_SECTIONS:
            changes.extend(_diff_schema_root(name, section, old, new))
        elif section in KEYED_SECTIONS:
            changes.extend(_diff_values(name, (section,), _as_object(old), _as_object(new)))
        else:
            changes.extend(_diff_values(name, (section,), old, new))
    for field in sorted((before.keys() | after.keys()) - KNOWN_FIELDS):
        old, new = before.get(field, MISSING), after.get(field, MISSING)
        if not same_json(old, new):
            op: Op = "added" if old is MISSING else "removed" if new is MISSING else "changed"
            changes.append(Change(op, name, (UNKNOWN_FIELD + field,), before=old, after=new))
    return sorted(changes, key=lambda change: change.path)


def _as_object(value: Any) -> Any:
    return {} if value is MISSING or value is None else value


def _diff_schema_root(tool: str, section: str, old: Any, new: Any) -> Iterator[Change]:
    """A schema given as null is no schema, like a missing one: clients read both the same. A
    schema that appears, disappears or is not an object changes as a whole, from or to null."""
    old = MISSING if old is None else old
    new = MISSING if new is None else new
    if isinstance(old, dict) and isinstance(new, dict):
        yield from _diff_values(tool, (section,), old, new)
    elif not (old is MISSING and new is MISSING) and not same_json(old, new):
        old = None if old is MISSING else old
        new = None if new is MISSING else new
        yield Change("changed", tool, (section, ROOT), before=old, after=new)


def diff_schemas(tool: str, path: tuple[str, ...], old: Any, new: Any) -> list[Change]:
    """Changes between two schema nodes, with paths under `path` (the judge diffs the members of
    a combinator it pairs this way)."""
    return list(_diff_values(tool, path, old, new))


def _diff_values(tool: str, path: tuple[str, ...], old: Any, new: Any) -> Iterator[Change]:
    if old is MISSING and new is MISSING:
        return
    if old is MISSING:
        yield Change("added", tool, path, after=new)
    elif new is MISSING:
        yield Change("removed", tool, path, before=old)
    elif isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            yield from _diff_values(tool, (*path, key), old.get(key, MISSING), new.get(key, MISSING))
    elif not same_json(old, new):
        yield Change("changed", tool, path, before=old, after=new)


def same_json(old: Any, new: Any) -> bool:
    """JSON equality, which differs from Python's: `true` is not `1`."""
    if isinstance(old, bool) or isinstance(new, bool):
        return type(old) is type(new) and old == new
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(same_json(a, b) for a, b in zip(old, new, strict=True))
    if isinstance(old, dict) and isinstance(new, dict):
        return old.keys() == new.keys() and all(same_json(old[k], new[k]) for k in old)
    return old == new

"""Read the "Schema Changelog" section of a seed page into entries, and undo entries on a tool.

Pages list, per version, entries like

    changedInput schema / properties / top_k / description
    Previous value: -"old"New value: +"new"

with multi-line JSON values prefixed by '-' or '+' on every line.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

VERSION = re.compile(r"^Changed(\d+) schema fields? changed(v[^\s]+?)([A-Z][a-z]{2} \d{1,2}, \d{4})$")
ENTRY = re.compile(r"^(?:[-\u2022] ?)?(changed|added|removed)((?:Input|Output) schema.*)$")
SECTIONS = {"Input schema": "inputSchema", "Output schema": "outputSchema"}


@dataclass(frozen=True)
class SeedVersion:
    version: str
    date: str
    count: int
    entries: list[dict[str, Any]]


def parse_changelog(page: str) -> list[SeedVersion]:
    section = page.split("Schema Changelog", 1)[1].split("\nTDQS", 1)[0]
    versions: list[SeedVersion] = []
    current: list[list[str]] | None = None
    for line in section.splitlines():
        header = VERSION.match(line.strip())
        if header:
            current = []
            versions.append(SeedVersion(header[2], header[3], int(header[1]), current))  # type: ignore[arg-type]
            continue
        if current is None:
            continue
        if ENTRY.match(line.strip()):
            current.append([line.strip()])
        elif current:
            current[-1].append(line)
    return [SeedVersion(v.version, v.date, v.count, [_entry(lines) for lines in v.entries]) for v in versions]


def _entry(lines: list[str]) -> dict[str, Any]:
    op, path = ENTRY.match(lines[0]).groups()  # type: ignore[union-attr]
    body = "\n".join(line for line in lines[1:] if line.strip() != "```")
    entry: dict[str, Any] = {"op": op, "path": path}
    if op == "changed":
        previous, new = re.match(r"\s*Previous value: (.*)New value: (.*)", body, re.S).groups()  # type: ignore[union-attr]
        entry["before"], entry["after"] = _value(previous), _value(new)
    elif op == "added":
        entry["after"] = _value(re.search(r"Added value: (.*)", body, re.S)[1])  # type: ignore[index]
    else:
        entry["before"] = _value(re.search(r"Removed value: (.*)", body, re.S)[1])  # type: ignore[index]
    return entry


def _value(text: str) -> Any:
    """A value is the run of lines carrying the prefix ('-' previous or removed, '+' new or added)."""
    lines = text.strip().splitlines()
    prefix = lines[0][:1]
    taken = []
    for line in lines:
        if not line.startswith(prefix):
            break
        taken.append(line[1:])
    return json.loads("\n".join(taken))


def undo(tool: dict[str, Any], entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The tool as it was before `entries` were applied to it."""
    tool = copy.deepcopy(tool)
    for entry in reversed(entries):
        section, *rest = entry["path"].split(" / ")
        field = SECTIONS[section]
        if rest == ["(root)"]:
            if entry["before"] is None:
                tool.pop(field, None)
            else:
                tool[field] = copy.deepcopy(entry["before"])
            continue
        parent = tool[field]
        for key in rest[:-1]:
            parent = parent[key]
        if entry["op"] == "added":
            del parent[rest[-1]]
        else:
            parent[rest[-1]] = copy.deepcopy(entry["before"])
    return tool

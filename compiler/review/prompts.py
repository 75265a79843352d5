"""Diff and judge the prompts a server offers: the entries of its `prompts/list` answer.

Prompts are matched by name (a renamed prompt is one removed and one added: clients get it by
name), arguments by name within their prompt. One change per changed part, with a path such as
`Prompt summarize_pep / arguments / number / required` and the previous and new JSON values, the
way tool changes read. An argument without `required` is optional (MCP's default), so writing
`required: false` out is no change. Every other field of a prompt or an argument (`icons`,
`_meta`, fields of later MCP revisions) changes as a whole under its own name and is left to a
reviewer (PROMPT_CHANGED).

What breaks a client: a prompt it gets by name is gone, an argument it passes is gone (the
server refuses unknown arguments), or an argument it does not pass is now required.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..diagnostics import Span
from ..wire import ServerWire
from .diff import MISSING, Change, same_json
from .judge_context import Finding

PREFIX = "Prompt "
ARGUMENTS = "arguments"


def diff_prompts(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]) -> list[Change]:
    """Changes from one prompts list to another: prompts in name order, each one's changes in
    path order."""
    old = {str(p.get("name")): p for p in before}
    new = {str(p.get("name")): p for p in after}
    changes: list[Change] = []
    for name in sorted(old.keys() | new.keys()):
        head = (PREFIX + name,)
        if name not in new:
            changes.append(Change("removed", "", head, before=dict(old[name]), prompt=name))
        elif name not in old:
            changes.append(Change("added", "", head, after=dict(new[name]), prompt=name))
        else:
            found = _diff_prompt(name, head, old[name], new[name])
            changes.extend(sorted(found, key=lambda change: change.path))
    return changes


def _diff_prompt(
    name: str, head: tuple[str, ...], old: Mapping[str, Any], new: Mapping[str, Any]
) -> Iterator[Change]:
    for key in sorted((old.keys() | new.keys()) - {"name"}):
        before, after = _present(old, key), _present(new, key)
        if key == ARGUMENTS and _is_arguments(before) and _is_arguments(after):
            yield from _diff_arguments(name, (*head, ARGUMENTS), _arguments(before), _arguments(after))
        else:
            yield from _whole(name, (*head, key), before, after)


def _present(entry: Mapping[str, Any], key: str) -> Any:
    """A field's value, null read as absent (clients read both the same)."""
    value = entry.get(key, MISSING)
    return MISSING if value is None else value


def _is_arguments(value: Any) -> bool:
    return value is MISSING or (
        isinstance(value, list) and all(isinstance(a, dict) and isinstance(a.get("name"), str) for a in value)
    )


def _arguments(value: Any) -> dict[str, dict[str, Any]]:
    """Arguments by name, `required` written out (absent is false)."""
    if value is MISSING:
        return {}
    return {a["name"]: {"required": False, **{k: v for k, v in a.items() if v is not None}} for a in value}


def _diff_arguments(
    name: str, path: tuple[str, ...], old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]
) -> Iterator[Change]:
    for argument in sorted(old.keys() | new.keys()):
        where = (*path, argument)
        if argument not in new:
            yield Change("removed", "", where, before=old[argument], prompt=name)
        elif argument not in old:
            yield Change("added", "", where, after=new[argument], prompt=name)
        else:
            for key in sorted((old[argument].keys() | new[argument].keys()) - {"name"}):
                yield from _whole(
                    name, (*where, key), old[argument].get(key, MISSING), new[argument].get(key, MISSING)
                )


def _whole(name: str, path: tuple[str, ...], old: Any, new: Any) -> Iterator[Change]:
    if old is MISSING and new is MISSING:
        return
    if old is MISSING:
        yield Change("added", "", path, after=new, prompt=name)
    elif new is MISSING:
        yield Change("removed", "", path, before=old, prompt=name)
    elif not same_json(old, new):
        yield Change("changed", "", path, before=old, after=new, prompt=name)


def prompt_span(side: ServerWire, change: Change) -> Span | None:
    """Where a prompt change stands in a spec: its argument when still declared, else the prompt."""
    name = change.prompt or ""
    path = change.path[1:]
    if len(path) >= 2 and path[0] == ARGUMENTS:
        found = side.prompt_spans.get((name, path[1]))
        if found is not None:
            return found
    return side.prompt_spans.get((name, None))


# --- judging ------------------------------------------------------------------------------


def judge_prompt(change: Change) -> Finding:
    name = change.prompt or ""
    path = change.path[1:]
    if not path:
        if change.op == "removed":
            return Finding(change, "PROMPT_REMOVED", f"prompt '{name}' was removed: clients getting it fail")
        return Finding(change, "PROMPT_ADDED", f"prompt '{name}' was added")
    if path[0] == ARGUMENTS and len(path) >= 2:
        return _argument(change, name, path[1], path[2] if len(path) > 2 else None)
    if path[0] == "title":
        return Finding(change, "PROMPT_TITLE_CHANGED", f"prompt '{name}': title {change.op}")
    if path[0] == "description":
        return Finding(change, "PROMPT_DESCRIPTION_CHANGED", f"prompt '{name}': description {change.op}")
    return _other(change, name)


def _argument(change: Change, name: str, argument: str, attribute: str | None) -> Finding:
    who = f"prompt '{name}': argument '{argument}'"
    if attribute is None:
        if change.op == "removed":
            return Finding(
                change,
                "PROMPT_ARGUMENT_REMOVED",
                f"{who} was removed: clients passing it get an error",
            )
        if isinstance(change.after, dict) and change.after.get("required") is True:
            return Finding(
                change,
                "PROMPT_ARGUMENT_ADDED_REQUIRED",
                f"{who} was added as required: clients not passing it get an error",
            )
        return Finding(change, "PROMPT_ARGUMENT_ADDED_OPTIONAL", f"{who} was added as optional")
    if attribute == "required" and isinstance(change.after, bool) and isinstance(change.before, bool):
        if change.after:
            return Finding(
                change,
                "PROMPT_ARGUMENT_BECAME_REQUIRED",
                f"{who} is now required: clients not passing it get an error",
            )
        return Finding(change, "PROMPT_ARGUMENT_BECAME_OPTIONAL", f"{who} is now optional")
    if attribute == "title":
        return Finding(change, "PROMPT_TITLE_CHANGED", f"{who}: title {change.op}")
    if attribute == "description":
        return Finding(change, "PROMPT_DESCRIPTION_CHANGED", f"{who}: description {change.op}")
    return _other(change, name)


def _other(change: Change, name: str) -> Finding:
    """A field lynxc does not judge (icons, _meta, one of a later MCP revision): a reviewer must."""
    return Finding(
        change,
        "PROMPT_CHANGED",
        f"prompt '{name}': '{change.path[-1]}' {change.op}, a change lynxc cannot classify; review it",
    )

"""What one `lynxc load` command loads, in which order.

`lynxc load SERVER COLLECTION FILE...` loads one collection; `lynxc load SERVER NAME=FILE
NAME=FILE...` loads several, a name given once per file (or again for more files of it). A
nested collection's rows must name a loaded record of its parent, so parents load before their
children whatever the order on the command line; the others keep that order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


class PlanError(Exception):
    """The command names collections or files that cannot make a load plan."""


def targets(collection: str, files: Sequence[str]) -> list[tuple[str, list[str]]]:
    """[(collection, its files)] in the order first named. With `COLLECTION FILE...` one target;
    with `NAME=FILE...` every argument must be of that form."""
    if "=" not in collection:
        if not files:
            raise PlanError(f"give the files to load into {collection!r} (or NAME=FILE pairs)")
        if any("=" in f and not _exists(f) for f in files):
            raise PlanError("mixed forms: give either COLLECTION FILE... or NAME=FILE pairs for every file")
        return [(collection, list(files))]
    plan: dict[str, list[str]] = {}
    for argument in [collection, *files]:
        name, sep, path = argument.partition("=")
        if not sep or not name or not path:
            raise PlanError(f"{argument!r} is not NAME=FILE (with NAME=FILE pairs, every file is named)")
        plan.setdefault(name, []).append(path)
    return list(plan.items())


def dependency_order(
    plan: Sequence[tuple[str, list[str]]], parents: Mapping[str, Sequence[str]]
) -> list[str]:
    """The planned collections, each after the planned parents it names (`parents`: collection ->
    its parents' names); otherwise in the given order. PlanError on a cycle."""
    names = [name for name, _ in plan]
    planned = set(names)
    ordered: list[str] = []
    state: dict[str, str] = {}  # "visiting" | "done"

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "visiting":
            cycle = [*path[path.index(name) :], name]
            raise PlanError(f"the collections' parents form a cycle: {' -> '.join(cycle)}")
        state[name] = "visiting"
        for parent in parents.get(name, ()):
            if parent in planned:
                visit(parent, [*path, name])
        state[name] = "done"
        ordered.append(name)

    for name in names:
        visit(name, [])
    return ordered


def _exists(path: str) -> bool:
    from pathlib import Path

    return Path(path).exists()

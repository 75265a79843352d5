"""The tool a declared engine (SQL, HTTP) is called for, from its server's generated catalog
(sql.json, http.json): each engine's `@backend` function starts here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from lynxc.runtime.context import ToolContext
from lynxc.runtime.definition import ServerDefinition
from lynxc.runtime.errors import ToolError

C = TypeVar("C")


def declared_tool(
    ctx: ToolContext,
    catalog_of: Callable[[ServerDefinition], C],
    catalog_error: type[Exception],
    kind: str,
    file: str,
) -> tuple[C, Any]:
    """(the server's catalog, the tool's entry in it); a ToolError saying what to rebuild when
    either is missing or unreadable. `kind` names the tools ("a SQL"), `file` the catalog."""
    server = ctx.server
    if server is None:
        raise ToolError(f"no server definition: {kind.split()[-1]} tools run inside a generated server")
    try:
        catalog = catalog_of(server)
    except catalog_error as err:
        raise ToolError(f"the server's {file} cannot be read: {err} (run `lynxc build`)") from None
    tool = catalog.tools.get(ctx.tool)  # type: ignore[attr-defined]
    if tool is None:
        raise ToolError(f"{ctx.tool!r} is not {kind} tool of this server's {file} (run `lynxc build`)")
    return catalog, tool

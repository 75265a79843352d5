"""The stable MCP server a client connects to under `lynxc dev`: it forwards every request to
the current child (children.py) and, when a rebuild swaps the child, tells connected clients
that the list changed. Its sessions belong to the front, so they survive every swap."""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .children import Child

logger = logging.getLogger("lynxc.dev")


class _FrontServer(Server[Any]):
    """Announces `tools.listChanged` in the initialize answer (the SDK's default says false)."""

    def create_initialization_options(
        self, notification_options: Any = None, *args: Any, **kwargs: Any
    ) -> Any:
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True), *args, **kwargs
        )


class Front:
    """The front of one server. `child` is None until the first good build has started."""

    def __init__(self, name: str):
        self.name = name
        self.child: Child | None = None
        # Handshake-era connections, by connection: where list_changed goes. Modern-era clients
        # hear it on their `subscriptions/listen` stream (the bus) instead.
        self._sessions: dict[int, Any] = {}
        self._bus = InMemorySubscriptionBus()
        self._schemas: dict[str, dict[str, Any]] = {}
        self.server = _FrontServer(
            name,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self._bus),
            get_tool_input_schema=self._schemas.get,
        )

    async def swap(self, child: Child) -> Child | None:
        """Serve `child` from now on; returns the previous one (retire it). Connected clients
        are told when the tools they would list differ."""
        old, self.child = self.child, child
        info = child.initialize
        self.server.version = info.get("version") or ""
        self.server.title = info.get("title")
        self.server.instructions = info.get("instructions")
        self._schemas.clear()
        self._schemas.update({tool.name: tool.input_schema for tool in child.tools})
        if old is None or _wire(old.tools) != _wire(child.tools):
            await self.notify_tools_changed()
        return old

    async def notify_tools_changed(self) -> None:
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception:  # the client went away: forget it
                self._sessions.pop(key, None)
        await self._bus.publish(ToolsListChanged())

    def _remember(self, ctx: Any) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        # ServerSession is built per request; the connection behind it is what lasts.
        connection = getattr(ctx.session, "_connection", ctx.session)
        self._sessions.setdefault(id(connection), ctx.session)

    def _current(self) -> Child:
        if self.child is None:
            raise MCPError(
                types.INTERNAL_ERROR,
                f"lynxc dev: {self.name} has no good build yet; fix the errors lynxc dev shows",
            )
        return self.child

    async def _list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._remember(ctx)
        if self.child is None:
            return types.ListToolsResult(tools=[])
        async with self.child.use() as client:
            # The cursor only: the caller's `_meta` may carry its protocol era's envelope, which
            # is not the child's (the child always speaks the handshake era).
            return await client.list_tools(cursor=params.cursor if params else None)

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        self._remember(ctx)
        meta = params.meta or {}
        wants_progress = meta.get("progress_token", meta.get("progressToken")) is not None

        async def progress(value: float, total: float | None = None, message: str | None = None) -> None:
            await ctx.session.report_progress(value, total, message)

        child = self._current()
        async with child.use() as client:
            try:
                return await client.call_tool(
                    params.name, params.arguments, progress_callback=progress if wants_progress else None
                )
            except MCPError:
                raise  # the child's own protocol answer (an unknown tool: -32602), passed on
            except Exception as err:
                logger.warning("%s: forwarding tools/call failed: %s", self.name, err)
                return types.CallToolResult(
                    content=[types.TextContent(text=f"lynxc dev: the {self.name} server stopped: {err}")],
                    is_error=True,
                )


def _wire(tools: list[types.Tool]) -> list[dict[str, Any]]:
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]

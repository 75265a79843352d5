"""The servers behind the dev front: each build of a server runs as its own `lynxc serve`
subprocess over stdio, talked to through the SDK's client. A fresh process per build is what
makes an edited backend module take effect (an in-process reload would keep stale imports)."""

from __future__ import annotations

import logging
import math
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskStatus
from mcp import Client, StdioServerParameters

# The lynxc of this interpreter, however it was installed (a venv script, a wheel, editable).
LYNXC = (sys.executable, "-c", "from lynxc.compiler.cli import main; main()")
# A child that does not answer initialize and tools/list within this long is a failed start.
START_TIMEOUT = 60.0
logger = logging.getLogger("lynxc.dev")


def lynxc_argv(project: Path, *words: str) -> list[str]:
    return [*LYNXC, "--project", str(project), *words]


class Child:
    """One running build of one server. Calls borrow it (`use`); once retired it stops as soon
    as the last borrowed call has finished, so a call in flight during a swap completes."""

    def __init__(self, project: Path, server: str, settings: Sequence[str], generation: int):
        self.project = project
        self.server = server
        self.settings = tuple(settings)
        self.generation = generation
        self.client: Client | None = None
        self.tools: list[types.Tool] = []
        self.initialize: dict[str, Any] = {}
        self._in_flight = 0
        self._retired = False
        self._stop = anyio.Event()

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Start the process, initialize it and list its tools, report started, then hold it
        until retired. Run it in a task group with `start`: a failed start raises there."""
        argv = lynxc_argv(self.project, "serve", self.server, "--transport", "stdio")
        for item in self.settings:
            argv += ["--set", item]
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=dict(os.environ), cwd=str(self.project)
        )
        started = False
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + START_TIMEOUT) as deadline:
                async with Client(params, mode="legacy", cache=None) as client:
                    self.client = client
                    self.tools = await _all_tools(client)
                    info = client.server_info
                    self.initialize = {
                        "version": info.version if info else "",
                        "title": getattr(info, "title", None),
                        "instructions": client.instructions,
                    }
                    deadline.deadline = math.inf
                    started = True
                    task_status.started()
                    await self._stop.wait()
        except Exception as err:
            if not started:
                raise
            # A child that died on its own, or whose pipe broke while stopping: nothing to stop.
            logger.info("%s build %d ended: %s", self.server, self.generation, err)
        if not started:
            raise TimeoutError(f"no answer to initialize and tools/list within {START_TIMEOUT:.0f} s")

    @asynccontextmanager
    async def use(self) -> AsyncIterator[Client]:
        """Borrow the child for one request."""
        if self.client is None:
            raise RuntimeError("the child has not started")
        self._in_flight += 1
        try:
            yield self.client
        finally:
            self._in_flight -= 1
            if self._retired and self._in_flight == 0:
                self._stop.set()

    def retire(self) -> None:
        """Stop once no request uses it any more (at once when none does)."""
        self._retired = True
        if self._in_flight == 0:
            self._stop.set()


async def _all_tools(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools

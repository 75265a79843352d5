"""The servers behind the dev front: each build of a server runs as its own `lynxc serve`
subprocess over stdio, talked to through the SDK's client. A fresh process per build is what
makes an edited backend module take effect (an in-process reload would keep stale imports).

Each child starts as a warm spare (spare.py) before it is needed: its process is spawned and
its client's `initialize` waits until the build it will serve is ready and `go` tells it so."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

from .spare import make_fifo, send, spare_argv

# The lynxc of this interpreter, however it was installed (a venv script, a wheel, editable).
LYNXC = (sys.executable, "-c", "from lynxc.compiler.cli import main; main()")
# A child that does not answer initialize and tools/list within this long is a failed start.
START_TIMEOUT = 60.0
logger = logging.getLogger("lynxc.dev")


def lynxc_argv(project: Path, *words: str) -> list[str]:
    return [*LYNXC, "--project", str(project), *words]


class Child:
    """One build of one server. Calls borrow it (`use`); once retired it stops as soon as the
    last borrowed call has finished, so a call in flight during a swap completes."""

    def __init__(self, project: Path, server: str, settings: Sequence[str], fifo_folder: Path, number: int):
        self.project = project
        self.server = server
        self.settings = tuple(settings)
        self.fifo = make_fifo(fifo_folder, f"serve-{number}")
        self.generation = 0
        self.client: Client | None = None
        self.tools: list[types.Tool] = []
        self.initialize: dict[str, Any] = {}
        self.failure: BaseException | None = None
        self._settled = anyio.Event()  # started, or failed to
        self._in_flight = 0
        self._retired = False
        self._stop = anyio.Event()
        self._scope = anyio.CancelScope()

    async def run(self) -> None:
        """Spawn the spare and hold the server until retired. Never raises: a failed start is
        `failure`, which `go` reports."""
        argv = spare_argv("serve", self.fifo)
        params = StdioServerParameters(
            command=argv[0], args=argv[1:], env=dict(os.environ), cwd=str(self.project)
        )
        with self._scope:
            try:
                async with Client(params, mode="legacy", cache=None) as client:  # waits for `go`
                    self.client = client
                    self.tools = await _all_tools(client)
                    info = client.server_info
                    self.initialize = {
                        "version": info.version if info else "",
                        "title": getattr(info, "title", None),
                        "instructions": client.instructions,
                    }
                    self._settled.set()
                    await self._stop.wait()
            except Exception as err:
                if not self._settled.is_set():
                    self.failure = err
                else:  # died on its own, or its pipe broke while stopping: nothing left to stop
                    logger.info("%s build %d ended: %s", self.server, self.generation, err)
            finally:
                self._settled.set()
                self.fifo.unlink(missing_ok=True)

    async def go(self, generation: int) -> None:
        """Serve the build just made: raises when the server does not start."""
        self.generation = generation
        argv = ["--project", str(self.project), "serve", self.server, "--transport", "stdio"]
        for item in self.settings:
            argv += ["--set", item]
        if not await send(self.fifo, argv, START_TIMEOUT):
            self.failure = self.failure or TimeoutError("the warm process never became ready")
        with anyio.move_on_after(START_TIMEOUT):
            await self._settled.wait()
        if not self._settled.is_set():
            self.failure = TimeoutError(f"no answer to initialize within {START_TIMEOUT:.0f} s")
        if self.failure is not None:
            self._scope.cancel()
            raise self.failure

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
        """Stop once no request uses it any more (at once when none does, or it never started)."""
        self._retired = True
        if self.client is None:
            self._scope.cancel()
        elif self._in_flight == 0:
            self._stop.set()

    async def dismiss(self) -> None:
        """A spare never used: let it exit on its own (it may not be listening yet: then cancel)."""
        if self.client is None and not await send(self.fifo, None, 0.0):
            self._scope.cancel()
        self.retire()


async def _all_tools(client: Client) -> list[types.Tool]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    while True:
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools

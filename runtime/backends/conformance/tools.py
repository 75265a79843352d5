"""The fixture tools of the MCP conformance suite (`@modelcontextprotocol/conformance`), as the
suite's server scenarios name and describe them: each answers with the text the scenario
expects, and the slow ones pause about 50 ms between steps as the scenarios ask, so a client sees
progress and log messages arrive during the call, not after it."""

from __future__ import annotations

from typing import Any

import anyio

from lynxc.runtime.backend import backend
from lynxc.runtime.client_logging import LEVELS
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

STEP_SECONDS = 0.05  # the scenarios' "~50ms delay" between steps

SIMPLE_TEXT = "This is a simple text response for testing."
ERROR_TEXT = "This tool intentionally returns an error for testing"
LOG_STEPS = ("Tool execution started", "Tool processing data", "Tool execution completed")


def _text(result: dict[str, Any]) -> str:
    return result["text"]


@backend(params=set(), render_text=_text)
async def simple_text(params: Any, ctx: ToolContext) -> dict[str, Any]:
    return {"text": SIMPLE_TEXT}


@backend(params=set())
async def error_handling(params: Any, ctx: ToolContext) -> dict[str, Any]:
    raise ToolError(ERROR_TEXT)


@backend(params=set(), render_text=_text)
async def with_progress(params: Any, ctx: ToolContext) -> dict[str, Any]:
    for step, progress in enumerate((0, 50, 100)):
        if step:
            await anyio.sleep(STEP_SECONDS)
        if ctx.progress_requested:
            await ctx.report_progress(progress, 100, f"step {step + 1} of 3")
    return {"text": "Progress test completed: 3 steps of 100."}


@backend(params=set(), render_text=_text)
async def with_logging(params: Any, ctx: ToolContext) -> dict[str, Any]:
    for step, message in enumerate(LOG_STEPS):
        if step:
            await anyio.sleep(STEP_SECONDS)
        await ctx.log("info", message)
    return {"text": f"Logging test completed: {len(LOG_STEPS)} messages at info."}


@backend(params=set(), render_text=_text)
async def every_level(params: Any, ctx: ToolContext) -> dict[str, Any]:
    """One message at each of the eight levels; the answer says which the client asked for."""
    sent = [level for level in LEVELS if ctx.logs(level)]
    for level in LEVELS:
        await ctx.log(level, f"a message at {level}", level=level)
    return {"text": f"sent at: {', '.join(sent) or 'none (the client asked for no log messages)'}"}

"""call_http: the backend of every HTTP tool (`backend: {http: ...}` in a spec; IR name `http.call`).

A call finds its tool in the server's http.json (`ctx.server.http_catalog()`), builds the
request from the caller's arguments (request.py), adds the credentials (credentials.py) and
sends it over the server's pool (pool.py, transport.py), all within one deadline, the
`http_timeout_seconds` setting, retries included (retries.py). The answer becomes the structured
result (results.py); anything else is a tool error naming the method and the path, never the
URL, and quoting the answer only with the call's secrets masked. A cancelled MCP request cancels
the task running this, and with it the HTTP request (anyio cancels httpx's awaits).

This module stays light to import (`lynxc build` reads the declaration): httpx loads with
exchange.py and pool.py, on the first call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import anyio

from lynxc.runtime.arguments import published_arguments
from lynxc.runtime.backend import backend
from lynxc.runtime.backends.declared import declared_tool
from lynxc.runtime.context import ToolContext
from lynxc.runtime.errors import ToolError

from .catalog import RETRIES_SETTING, TIMEOUT_SETTING, CatalogError, HttpCatalog, HttpTool
from .request import build_request, check_base_url

DEFAULT_TIMEOUT_SECONDS = 30.0
DEFAULT_RETRIES = 2
DEFAULT_MAX_RESPONSE_BYTES = 1_048_576


@backend(
    params=None,
    caps={"max_response_bytes", "max_output_json_bytes"},
    required_caps=set(),
    settings={TIMEOUT_SETTING, RETRIES_SETTING},
)
async def call_http(params: Any, ctx: ToolContext) -> dict[str, Any]:
    from .exchange import Call, exchange  # httpx, loaded by the first call only
    from .pool import pool_for

    catalog, tool = _tool(ctx)
    settings = ctx.settings
    request = build_request(
        tool, _base_url(catalog, settings), catalog.server.headers, published_arguments(params)
    )
    seconds = _timeout(catalog, settings)
    call = Call(
        tool=tool,
        auth=catalog.server.auth,
        settings=settings,
        request=request,
        cap=_cap(ctx.caps),
        retries=_retries(catalog, settings),
        deadline=anyio.current_time() + seconds,
    )
    try:
        with anyio.fail_after(seconds):
            return await exchange(pool_for(ctx.server), call, ctx.log)
    except TimeoutError:
        raise ToolError(
            f"{request.shown} did not answer within {seconds:g} s (setting "
            f"{catalog.server.timeout_setting!r}, retries included)"
        ) from None


def _tool(ctx: ToolContext) -> tuple[HttpCatalog, HttpTool]:
    return declared_tool(ctx, lambda server: server.http_catalog(), CatalogError, "an HTTP", "http.json")


def _base_url(catalog: HttpCatalog, settings: Mapping[str, Any]) -> str:
    source = catalog.server.base_url
    if source.setting is None:
        url, where = source.value or "", "the spec's base_url"
    else:
        url, where = settings.get(source.setting), f"setting {source.setting!r}"
        if not isinstance(url, str) or not url:
            raise ToolError(f"the API's base URL is not set: set the setting {source.setting!r}")
    check_base_url(url, where)
    return url


def _timeout(catalog: HttpCatalog, settings: Mapping[str, Any]) -> float:
    name = catalog.server.timeout_setting
    value = settings.get(name, DEFAULT_TIMEOUT_SECONDS)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ToolError(f"setting {name!r}: {value!r} is not a positive number of seconds")
    return float(value)


def _retries(catalog: HttpCatalog, settings: Mapping[str, Any]) -> int:
    name = catalog.server.retries_setting
    value = settings.get(name, DEFAULT_RETRIES)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ToolError(f"setting {name!r}: {value!r} is not a count of retries (0 or more)")
    return value


def _cap(caps: Mapping[str, int]) -> int:
    return int(caps.get("max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES))

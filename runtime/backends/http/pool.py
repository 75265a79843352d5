"""One httpx connection pool (and OAuth 2 token cache) per served server, made on its first call.

Keyed by the server definition object and by the event loop: an httpx pool's connections
belong to the loop that opened them, and a process may run one loop after another (tests do;
`lynxc serve` runs one). The entry keeps its definition, so an id is not reused while it lives.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from dataclasses import dataclass, field
from typing import Any

import httpx

from .credentials import TokenCache


@dataclass
class ServerPool:
    definition: Any
    client: httpx.AsyncClient
    tokens: TokenCache = field(default_factory=TokenCache)


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, ServerPool]] = (
    weakref.WeakKeyDictionary()
)


def pool_for(definition: Any) -> ServerPool:
    loop = asyncio.get_running_loop()
    pools = _pools.setdefault(loop, {})
    pool = pools.get(id(definition))
    if pool is None or pool.definition is not definition:
        # httpx's INFO line quotes each request's URL, an API key in the query included: an
        # operator turning logging up must not see credentials (runtime/serve.py logs WARNING).
        logging.getLogger("httpx").setLevel(logging.WARNING)
        client = httpx.AsyncClient(
            follow_redirects=False,  # transport.send follows same-origin redirects itself
            timeout=None,  # the call's deadline (anyio.fail_after) bounds everything, retries included
        )
        pool = pools[id(definition)] = ServerPool(definition, client)
    return pool


async def close_pools() -> None:
    """Close this loop's pools (tests; a server just exits)."""
    pools = _pools.pop(asyncio.get_running_loop(), {})
    for pool in pools.values():
        await pool.client.aclose()

"""Resource subscriptions (issue 31), in both protocol eras, and the change notifications.

- Handshake era (2025-xx): `resources/subscribe` / `resources/unsubscribe` hold, per session,
  the URIs it watches; a change is sent to that session as `notifications/resources/updated`
  (`session.send_resource_updated`).
- 2026-07-28: `subscriptions/listen` is the SDK's `ListenHandler` over an
  `InMemorySubscriptionBus`; a change is published as `ResourceUpdated(uri)` and the handler
  delivers it on every stream that asked for that URI.

Either way, a URI the server cannot read is refused with -32602 "Resource not found" (data
{"uri": uri}), so a typo is not a subscription that never fires.

What can change while the server runs is the records a `lynxc load` (another process) writes:
while anyone is subscribed, a watcher looks at the store's pointer (CURRENT.json, a stat) every
POLL_SECONDS; when the pointer of a collection that a record resource reads has moved, it
computes the records that changed between the two versions (their `_hash`,
records/changes.py) and notifies exactly the URIs of those records (`pep://8` when PEP 8
changed, not `pep://9`). Static resources (files, texts) change only with a rebuild; SQL and
function resources are not watched (their data is not lynxc's to version).
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Mapping
from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

from .resources import RECORDS_CHANGES, RECORDS_STORE, ResourceNotFound, ResourceReader, _engine

logger = logging.getLogger("lynxc.runtime")

POLL_SECONDS = 1.0
MAX_URIS_PER_CONNECTION = 1000  # a client cannot make the server hold an unbounded set


class Subscriptions:
    def __init__(
        self, reader: ResourceReader, settings: Mapping[str, Any], *, poll_seconds: float = POLL_SECONDS
    ):
        self.reader = reader
        self.settings = settings
        self.poll_seconds = poll_seconds
        self.bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self.bus)
        self._listeners = 0  # open listen streams that name at least one URI
        # handshake era: connection -> the URIs it watches (one that ends is forgotten)
        self._sessions: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        self._watcher: asyncio.Task[None] | None = None
        # collection -> (its resource's URI template, the variable), for record resources
        self._watched: dict[str, list[tuple[Any, str]]] = {}
        for template, entry in reader.templated():
            if entry["kind"] == "record":
                self._watched.setdefault(entry["collection"], []).append((template, entry["variable"]))

    # handshake era ----------------------------------------------------------------------------

    async def subscribe(self, ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        self._check(uri)
        watched = self._sessions.setdefault(_connection(ctx), set())
        if uri not in watched and len(watched) >= MAX_URIS_PER_CONNECTION:
            raise MCPError(
                types.INVALID_PARAMS,
                f"this connection already watches {MAX_URIS_PER_CONNECTION} URIs, the most it may; "
                "unsubscribe from some first",
            )
        watched.add(uri)
        self._start()
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        uris = self._sessions.get(_connection(ctx))
        if uris is not None:
            uris.discard(str(params.uri))
        return types.EmptyResult()

    # 2026-07-28 -------------------------------------------------------------------------------

    async def listen(self, ctx: Any, params: types.SubscriptionsListenRequestParams) -> Any:
        uris = list(params.notifications.resource_subscriptions or ())
        if len(uris) > MAX_URIS_PER_CONNECTION:
            raise MCPError(
                types.INVALID_PARAMS, f"a listen stream watches at most {MAX_URIS_PER_CONNECTION} URIs"
            )
        for uri in uris:
            self._check(uri)
        if not uris:
            return await self._listen(ctx, params)
        self._listeners += 1
        self._start()
        try:
            return await self._listen(ctx, params)
        finally:
            self._listeners -= 1

    def close(self) -> None:
        self._listen.close()
        if self._watcher is not None:
            self._watcher.cancel()

    # the watcher ------------------------------------------------------------------------------

    def _check(self, uri: str) -> None:
        if self.reader.match(uri) is None:
            raise ResourceNotFound(uri)

    def _wanted(self) -> bool:
        return self._listeners > 0 or any(self._sessions.values())

    def _start(self) -> None:
        if not self._watched or (self._watcher is not None and not self._watcher.done()):
            return
        self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        store = _store(self.settings)
        if store is None:
            return
        # The pointer is a file, or one GET on object storage (data_dir s3://...): read off the loop.
        seen = await anyio.to_thread.run_sync(_states, store, self._watched)
        while self._wanted():
            await asyncio.sleep(self.poll_seconds)
            try:
                now = await anyio.to_thread.run_sync(_states, store, self._watched)
            except Exception as err:  # a pointer mid-replace or unreadable: look again later
                logger.warning("resource subscriptions: cannot read the records store: %s", err)
                continue
            for collection, state in now.items():
                before = seen.get(collection)
                if _same(before, state):
                    continue
                try:
                    await self._notify(store, collection, before, state)
                except Exception:
                    logger.exception("resource subscriptions: notifying a change of %s failed", collection)
            seen = now

    async def _notify(self, store: Any, collection: str, before: Any, after: Any) -> None:
        changed_keys = _engine(RECORDS_CHANGES, "changed_keys")
        keys = await changed_keys(store, before, after)
        uris = {
            template.expand({variable: key})
            for template, variable in self._watched[collection]
            for key in keys
        }
        for session, watched in list(self._sessions.items()):
            for uri in sorted(uris & watched):
                try:
                    await session.send_resource_updated(uri)
                except Exception:  # the session ended: forget it
                    self._sessions.pop(session, None)
                    break
        for uri in sorted(uris):
            await self.bus.publish(ResourceUpdated(uri))


def _connection(ctx: Any) -> Any:
    """The client's connection: the SDK builds a ServerSession per request (a proxy over the
    connection), so a subscription is kept by the connection it came on, and notified on its
    standalone channel (`Connection.send_resource_updated`)."""
    return getattr(ctx.session, "_connection", ctx.session)


def _store(settings: Mapping[str, Any]) -> Any:
    data_dir = settings.get("data_dir")
    if not data_dir:
        return None
    RecordStore = _engine(RECORDS_STORE, "RecordStore")
    return RecordStore.for_dir(data_dir, settings.get("data_storage"))


def _states(store: Any, collections: Mapping[str, Any]) -> dict[str, Any]:
    current = store.current()
    return {name: current.resources.get(name) for name in collections}


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return (a.table, a.version) == (b.table, b.version)

"""The backend interface: a named, typed, async function plus what it understands.

    @backend(params={"query", "path"}, caps={"max_matches"}, settings={"workspaces"})
    async def search(params: SearchInput, ctx: ToolContext) -> SearchOutput: ...

The compiler reads the declaration to reject a spec that binds a tool to a backend that cannot
honour it; the host calls the function with the validated input model.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .context import ToolContext

BackendFn = Callable[[Any, ToolContext], Awaitable[Any]]
F = TypeVar("F", bound=BackendFn)

# Built-in backends by name. Targets are import paths, so naming a backend imports nothing.
BUILTIN_BACKENDS: Mapping[str, str] = {
    "dot.search_project_text": "lynxc.runtime.backends.dot_harness.search:search_project_text",
    "dot.read_project_text": "lynxc.runtime.backends.dot_harness.read:read_project_text",
    "dot.list_project_files": "lynxc.runtime.backends.dot_harness.listing:list_project_files",
    "agent.grep": "lynxc.runtime.backends.agent_tool.grep:grep",
    "agent.glob": "lynxc.runtime.backends.agent_tool.glob:glob",
    "agent.read": "lynxc.runtime.backends.agent_tool.read:read",
    "lynx.list_sources": "lynxc.runtime.backends.lynx.tools:list_sources",
    "lynx.search": "lynxc.runtime.backends.lynx.tools:search_tool",
    "lynx.deep_search": "lynxc.runtime.backends.lynx.tools:deep_search",
    "records.discover_resources": "lynxc.runtime.backends.records.tools:discover_resources",
    "records.describe_resource": "lynxc.runtime.backends.records.tools:describe_resource",
    "records.search_records": "lynxc.runtime.backends.records.tools:search_records",
    "records.query_records": "lynxc.runtime.backends.records.tools:query_records",
    "records.get_record": "lynxc.runtime.backends.records.tools:get_record",
    "sql.query": "lynxc.runtime.backends.sql.tools:run_sql",
    "http.call": "lynxc.runtime.backends.http.tools:call_http",
    "groundhog.search": "lynxc.runtime.backends.groundhog.tools:search",
    "groundhog.read_url": "lynxc.runtime.backends.groundhog.tools:read_url",
    "groundhog.research": "lynxc.runtime.backends.groundhog.tools:research",
    "groundhog.status": "lynxc.runtime.backends.groundhog.tools:status",
    "conformance.simple_text": "lynxc.runtime.backends.conformance.tools:simple_text",
    "conformance.error_handling": "lynxc.runtime.backends.conformance.tools:error_handling",
    "conformance.with_progress": "lynxc.runtime.backends.conformance.tools:with_progress",
    "conformance.with_logging": "lynxc.runtime.backends.conformance.tools:with_logging",
    "conformance.every_level": "lynxc.runtime.backends.conformance.tools:every_level",
}


@dataclass(frozen=True)
class BackendInfo:
    """What a backend honours. `None` for params means any parameter (a user function that
    reads whatever its spec declares); required sets must be declared by the spec."""

    params: frozenset[str] | None = None
    required_params: frozenset[str] = frozenset()
    caps: frozenset[str] = frozenset()
    required_caps: frozenset[str] = frozenset()
    settings: frozenset[str] = frozenset()
    render_text: Callable[[Any], str] | None = field(default=None, compare=False)


def backend(
    *,
    params: set[str] | None = None,
    required_params: set[str] = frozenset(),
    caps: set[str] = frozenset(),
    required_caps: set[str] | None = None,
    settings: set[str] = frozenset(),
    render_text: Callable[[Any], str] | None = None,
) -> Callable[[F], F]:
    """Declare a function as a lynxc backend. By default every cap it knows is required."""

    def mark(fn: F) -> F:
        fn.__lynxc_backend__ = BackendInfo(  # type: ignore[attr-defined]
            params=frozenset(params) if params is not None else None,
            required_params=frozenset(required_params),
            caps=frozenset(caps),
            required_caps=frozenset(caps if required_caps is None else required_caps),
            settings=frozenset(settings),
            render_text=render_text,
        )
        return fn

    return mark


def resolve_target(name: str) -> str | None:
    """A built-in name or a 'package.module:function' path -> the import target."""
    if name in BUILTIN_BACKENDS:
        return BUILTIN_BACKENDS[name]
    module_name, colon, attr = name.partition(":")
    dotted = module_name.split(".")
    return name if colon and attr.isidentifier() and all(part.isidentifier() for part in dotted) else None


def declaration(fn: Any) -> BackendInfo | None:
    """What `@backend` recorded on `fn`, or None: an undecorated function is no backend."""
    info = getattr(fn, "__lynxc_backend__", None)
    return info if isinstance(info, BackendInfo) else None


def load_backend(target: str) -> tuple[BackendFn, BackendInfo]:
    """Import a backend target. Raises ImportError/AttributeError/TypeError with a clear message;
    a function that is not declared with `@backend`, or not `async def`, is refused too (the
    compiler refuses such a spec; this guards a generated server edited by hand)."""
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    fn = getattr(module, attr)
    if not callable(fn):
        raise TypeError(f"{target} is not callable")
    info = declaration(fn)
    if info is None:
        raise TypeError(f"{target} is not declared as a lynxc backend (@backend)")
    if not inspect.iscoroutinefunction(fn):
        raise TypeError(f"{target} is not an async function")
    return fn, info

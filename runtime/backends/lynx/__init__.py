"""lynx-mcp's backends: indexed hybrid retrieval over code and docs on LanceDB: its sources,
chunking, chunk table, indexer, ranking, tools and start-up checks. Imports lynxc.runtime
(backend, context, errors) and the shared parts of lynxc.runtime.backends (vendored, and the
retrieval package's embedders and identifier splitting), never another server's package."""

from .startup import check_settings, check_settings_deferred

__all__ = ["check_settings", "check_settings_deferred"]

"""The lynx-mcp backends: indexed hybrid retrieval over code and docs (work in progress:
embedders and chunking so far; indexing and search on LanceDB come next)."""

from .startup import check_settings

__all__ = ["check_settings"]

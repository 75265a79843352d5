"""The lynx-mcp backends: indexed hybrid retrieval over code and docs (work in progress:
embedders and chunking so far; indexing and search on LanceDB come next)."""

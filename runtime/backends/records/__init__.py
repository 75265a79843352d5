"""Declared records: the backends of the five tools lynxc synthesizes for a server that declares
`resources:` (discover_resources, describe_resource, search_records, query_records, get_record)
and the store `lynxc load` fills.

definitions (collections.json as dataclasses), store and loader (the LanceDB store and how it is
filled), filters (filter arguments -> SQL), search (the four search types), query (filter, sort,
page), cursors (page cursors pinned to a table version), shape (locales, truncation, populate)
and tools (the backends). Imports lynxc.runtime and the shared retrieval package, never another
server's package; LanceDB, DuckDB, pyarrow and the embedders load inside the calls that use them.
"""

"""Retrieval shared by the servers that search by keyword and by embedding (lynx-mcp, and the
records server next): the offline embedders (`embedders`: int8 MiniLM on onnxruntime, a static
model) and identifier splitting for BM25 (`identifiers`). What belongs to one server (its table
schema, chunking, ranking) stays in that server's package.

Imports the standard library and its heavy libraries (numpy, onnxruntime, tokenizers; loaded
only when `embedders` is, at call time), never a server's package and nothing else of
lynxc.runtime. This file imports nothing, so naming the package loads nothing."""

"""The indexer's use of malloc (glibc): fewer heaps, and freed memory handed back between steps.

An index run's peak is the sum of what its steps hold at once: onnxruntime's buffers while it
embeds, LanceDB's while it writes a batch and while it compacts the table. Memory one step
freed stays in glibc's heaps, counted in the process's RSS, unless it is handed back; and glibc
gives threads that allocate at the same time heaps of their own (up to 8 per core), each keeping
what its threads freed. Where malloc is not glibc's (macOS, musl) these are no-ops.
"""

from __future__ import annotations

from functools import cache
from typing import Any

# Heaps for the whole process: LanceDB's and onnxruntime's thread pools spread an index run over
# many, 60-100 MB of its peak (measured); two (the cores here) cost no time.
MALLOC_ARENAS = 2
# Blocks from this size get a mapping of their own, unmapped when freed. glibc's default starts
# at 128 KB and rises to 32 MB as large blocks are freed, after which LanceDB's Arrow buffers and
# join tables come from the heaps and leave them fragmented: the RSS of a 25,000-chunk run grew
# by 80 MB over its batches and peaked 100 MB higher in the final compaction (measured; the
# fixed threshold cost no measurable time).
MMAP_THRESHOLD = 256 * 1024
M_ARENA_MAX = -8  # mallopt's parameter numbers, from glibc's malloc.h
M_MMAP_THRESHOLD = -3


@cache
def _libc() -> Any | None:
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


@cache
def tune_malloc() -> None:
    """For this process, from now on: at most MALLOC_ARENAS heaps (those already made stay), and
    blocks from MMAP_THRESHOLD up mapped on their own."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(M_ARENA_MAX, MALLOC_ARENAS)
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def release_free_memory() -> None:
    """Hand the memory freed inside glibc's heaps back to the system (malloc_trim), so that one
    step's leftovers are not counted again under the next step's peak."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)

"""How much of a resource search by meaning covers: after `lynxc load --embed later`, records
have no vector until `lynxc embed` runs. Semantic search ranks only records with a vector (a
null vector is never a neighbour), so a search that uses meaning says what it could not see."""

from __future__ import annotations

from .store import ResourceState

MEANING_MODES = ("semantic", "hybrid", "vector_boosted")


def meaning_coverage(
    state: ResourceState | None, resource: str, table: str, version: int, applied: str, server: str
) -> str | None:
    """A note for execution_info when the ranking used vectors and some records of the version
    read (`table`, `version`) have none; None otherwise (or when the pointer moved on since a
    cursor's version: its count is not known)."""
    if state is None or applied not in MEANING_MODES or (state.table, state.version) != (table, version):
        return None
    missing = state.missing_vectors
    if not missing:
        return None
    return (
        f"meaning covers {state.records - missing} of {state.records} records (the other {missing} "
        f"have no vectors yet and are found by keyword only); run `lynxc embed {server} {resource}` "
        "to embed them"
    )

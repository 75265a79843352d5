"""Search filters (`file_glob`, `extensions`, `path_contains`) as one SQL condition that LanceDB
applies inside each query, before ranking, so a filter never empties a page that has matches
further down."""

from __future__ import annotations

from dataclasses import dataclass

from .globs import check_glob, glob_sql


@dataclass(frozen=True)
class Filters:
    file_glob: str | None = None
    extensions: tuple[str, ...] = ()
    path_contains: str | None = None

    def __post_init__(self) -> None:
        if self.file_glob is not None:
            check_glob(self.file_glob, "file_glob")  # a bad pattern fails before any search runs

    def where(self) -> str | None:
        clauses = []
        if self.file_glob is not None:
            clauses.append(glob_sql(self.file_glob, "path", "file_glob"))
        if self.extensions:
            ends = [_like_clause("%" + _escape("." + e.lstrip("."))) for e in self.extensions]
            clauses.append("(" + " OR ".join(ends) + ")")
        if self.path_contains:
            clauses.append(_like_clause("%" + _escape(self.path_contains) + "%"))
        return " AND ".join(clauses) or None


def _like_clause(pattern: str) -> str:
    return f"path LIKE {_sql_string(pattern)} ESCAPE '\\'"


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")

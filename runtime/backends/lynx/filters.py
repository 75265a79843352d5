"""Search filters (`file_glob`, `extensions`, `path_contains`) as one SQL condition that LanceDB
applies inside each query, before ranking, so a filter never empties a page that has matches
further down."""

from __future__ import annotations

from dataclasses import dataclass

from .store import sql_quote


@dataclass(frozen=True)
class Filters:
    file_glob: str | None = None
    extensions: tuple[str, ...] = ()
    path_contains: str | None = None

    def where(self) -> str | None:
        clauses = []
        if self.file_glob:
            pattern = _like(self.file_glob)
            if "/" in self.file_glob:
                clauses.append(_like_clause(pattern))
            else:  # a name pattern matches at the top level or in any folder, as in .gitignore
                top, nested = _like_clause(pattern), _like_clause("%/" + pattern)
                clauses.append(f"({top} OR {nested})")
        if self.extensions:
            ends = [_like_clause("%" + _escape("." + e.lstrip("."))) for e in self.extensions]
            clauses.append("(" + " OR ".join(ends) + ")")
        if self.path_contains:
            clauses.append(_like_clause("%" + _escape(self.path_contains) + "%"))
        return " AND ".join(clauses) or None


def _like_clause(pattern: str) -> str:
    return f"path LIKE {sql_quote(pattern)} ESCAPE '\\'"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _like(glob: str) -> str:
    """A glob as a LIKE pattern: `*` and `**` match any run of characters, `?` one."""
    return _escape(glob).replace("**", "*").replace("*", "%").replace("?", "_")

"""`lynxc docs`: where the site goes and how it gets there.

The whole site is built in a hidden sibling folder and swapped in at once (files.replace_tree),
so a kill -9 at any instant leaves the old site or the new one. Every site carries a marker file
(render.MARKER); a non-empty folder without one is someone else's and is never replaced."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from ..files import replace_tree
from ..ir import ServerIR
from ..spec.discover import discover_specs
from ..spec.load import load_spec
from ..suggest import did_you_mean
from .model import server_doc
from .render import MARKER, render_site

DEFAULT_OUT = "site"


class DocsUsageError(Exception):
    """A request `lynxc docs` refuses before writing anything (exit 2), said in one line."""


def out_folder(project: Path, out: Path | None) -> Path:
    return out if out is not None else project / DEFAULT_OUT


def check_out(out: Path) -> None:
    """Refuse a target that is not a site lynxc wrote: a file, or a non-empty folder with no
    marker."""
    if out.is_symlink():
        raise DocsUsageError(f"{out} is a symbolic link; give --out the folder itself")
    if out.exists() and not out.is_dir():
        raise DocsUsageError(f"{out} is not a folder; give --out a folder for the site")
    try:
        foreign = out.is_dir() and not (out / MARKER).is_file() and any(out.iterdir())
    except OSError as err:  # a folder we may not list (permissions): said, not a traceback
        raise DocsUsageError(f"cannot read {out}: {err.strerror}") from None
    if foreign:
        raise DocsUsageError(
            f"{out} is not empty and was not written by `lynxc docs` (no {MARKER} in it); "
            "refusing to replace it: give --out a new or empty folder"
        )


def spec_paths(project: Path, asked: Sequence[str]) -> list[Path]:
    """The specs to build: those that define the servers asked for, or all of them when none is
    asked or when a spec cannot be read far enough to know its name (the build then reports
    it). An unknown name is a DocsUsageError, said before anything is compiled."""
    paths = discover_specs(project / "specs")
    if not asked:
        return paths
    names: dict[str, Path] = {}
    for path in paths:
        loaded = load_spec(path).value
        if loaded is None:
            return paths
        names.setdefault(loaded.server.server.name, path)
    for name in asked:
        if name not in names:
            raise DocsUsageError(_unknown(name, names))
    return sorted({names[name] for name in asked})


def _unknown(name: str, known: Iterable[str]) -> str:
    known = sorted(known)
    hint = did_you_mean(name, known)
    return f"no server {name!r}{': ' + hint if hint else ''} (known: {', '.join(known) or 'none'})"


def select(servers: Sequence[ServerIR], asked: Iterable[str]) -> list[ServerIR]:
    """The servers asked for by name (all when none is), or DocsUsageError naming the known ones."""
    asked = list(dict.fromkeys(asked))
    by_name = {server.name: server for server in servers}
    for name in asked:
        if name not in by_name:
            raise DocsUsageError(_unknown(name, by_name))
    chosen = [by_name[name] for name in asked] if asked else list(servers)
    return sorted(chosen, key=lambda s: s.name)


def site_files(project: Path, servers: Sequence[ServerIR]) -> dict[str, str]:
    return render_site([server_doc(server, project) for server in servers])


def write_site(out: Path, files: dict[str, str]) -> None:
    """Put the site in `out` all at once (checked by check_out first). A folder that cannot be
    made or written (a file in its path, no permission, a read-only disk) is a DocsUsageError,
    said in one line: the old site, if any, is left as it was."""
    check_out(out)
    try:
        replace_tree(out, files)
    except OSError as err:
        raise DocsUsageError(f"cannot write the site to {out}: {err.strerror or err}") from None

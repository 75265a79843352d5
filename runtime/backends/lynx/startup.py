"""lynx-mcp's start-up checks: `index_dir` must be a folder (or a URI), and the index must have
been built by the configured embedder.

An index built with one embedder and searched with another fails at the first dense query with
a raw LanceDB error ("No vector column found ... dimension 384"); checked here, `lynxc index`
refuses to write and a server answers every call with which embedder each side means. The index
does not record its embedder, so the check compares vector widths, which differ between the
embedders there are. That check loads LanceDB (seconds to import) and opens the index, so it is
deferred (runtime/startup_checks.py): a server answers `initialize` and `tools/list` first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any


def check_settings(settings: Mapping[str, Any]) -> list[str]:
    """What the settings alone tell, at once: a local `index_dir` that exists but is no folder."""
    from .location import is_uri

    directory = settings.get("index_dir")
    if not directory or is_uri(directory) or not os.path.exists(directory) or os.path.isdir(directory):
        return []
    kind = "a file, not a folder" if os.path.isfile(directory) else "not a folder"
    return [f"setting 'index_dir': {directory!r} is {kind}"]


def check_settings_deferred(settings: Mapping[str, Any]) -> list[str]:
    """Whether the index's vectors are as wide as the configured embedder's."""
    from .location import describe_error, is_uri, location_from_settings

    directory = settings.get("index_dir")
    remote = bool(directory) and is_uri(directory)
    if not remote and (not directory or not os.path.isdir(directory)):
        return []  # nothing indexed yet (`list_sources` and the searches say so), or not a folder
    from lynxc.runtime.backends.retrieval.embedders import DIMENSIONS

    from .store import Store

    embedder = settings.get("embedder", "minilm")
    if embedder not in DIMENSIONS:
        return []  # not one of ours: the first search names the known ones
    location = location_from_settings(settings)
    try:
        widths = Store(location).vector_dimensions()
    except Exception as err:  # a damaged or unreachable index must not stop the report of the others
        return [
            location.redact(
                f"setting 'index_dir': cannot read the index {directory!r}: {describe_error(err)}"
            )
        ]
    wanted = DIMENSIONS[embedder]
    return [
        f"setting 'embedder': the index {directory!r} holds {width}-d vectors for source {source!r}"
        f"{_built_with(width)}, but embedder {embedder!r} makes {wanted}-d vectors: "
        + _remedy(width, directory)
        for source, width in sorted(widths.items())
        if width != wanted
    ]


def _matching(width: int) -> list[str]:
    from lynxc.runtime.backends.retrieval.embedders import DIMENSIONS

    return [name for name, dimension in DIMENSIONS.items() if dimension == width]


def _built_with(width: int) -> str:
    names = _matching(width)
    return f" (built with {' or '.join(repr(n) for n in names)})" if names else ""


def _remedy(width: int, directory: str) -> str:
    rebuild = f"delete {directory!r} and run `lynxc index` again with this embedder"
    names = _matching(width)
    return f"use --set embedder={names[0]}, or {rebuild}" if len(names) == 1 else rebuild

"""Write an import as a folder spec (`server.yaml` beside one file per tool), as YAML a person
edits: block style, long text folded, keys in the order a reader expects. The folder appears
whole or not at all: written to a temporary sibling, then renamed into place."""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarstring import FoldedScalarString

from .importer import ImportResult

WIDTH = 96
_FOLD_AT = 72  # strings longer than this are written folded (`>-`), wrapped at WIDTH


class SpecExists(Exception):
    """The spec folder exists and --force was not given."""


def render_files(result: ImportResult, header: str = "") -> dict[str, str]:
    """File name -> text, in a stable order."""
    server = {"lynxc": 1, "server": result.server}
    comment = [f"# {line}" if line else "#" for line in header.splitlines()]
    if result.skipped:
        comment.append("# Operations not imported:")
        comment += [f"#   {s.operation}: {s.reason}" for s in result.skipped]
    files = {"server.yaml": ("\n".join(comment) + "\n" if comment else "") + _dump(server)}
    for name, tool in sorted(result.tools.items()):
        files[f"{name}.yaml"] = _dump({"lynxc": 1, "tool": tool})
    return files


def _dump(data: dict[str, Any]) -> str:
    yaml = YAML(typ="rt")
    yaml.width = WIDTH
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.default_flow_style = False
    yaml.Representer = _Representer
    out = io.StringIO()
    yaml.dump(_fold(data), out)
    return out.getvalue()


def _null(representer: Any, _: None) -> Any:
    return representer.represent_scalar("tag:yaml.org,2002:null", "null")  # `default: null`, not `default:`


class _Representer(RoundTripRepresenter):
    """Round-trip YAML, with null written as `null` (ruamel writes nothing after the colon), and
    no anchors: a value the document shares (one default under two $refs) is written twice."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


_Representer.add_representer(type(None), _null)


def _fold(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _fold(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_fold(v) for v in value]
    if isinstance(value, str) and len(value) > _FOLD_AT and _foldable(value):
        folded = FoldedScalarString(value)
        folded.fold_pos = _fold_positions(value)  # type: ignore[attr-defined]
        return folded
    return value


def _foldable(text: str) -> bool:
    # A folded block keeps text exactly only without line breaks, tabs and edge spaces.
    return text == text.strip() and "\n" not in text and "\t" not in text and "  " not in text


def _fold_positions(text: str) -> list[int]:
    positions, line_start, last_space = [], 0, -1
    for index, char in enumerate(text):
        if char == " ":
            if index - line_start > WIDTH - 8 and last_space > line_start:
                positions.append(last_space)
                line_start = last_space + 1
            last_space = index
    return positions


def write_spec(specs_dir: Path, name: str, files: dict[str, str], *, force: bool) -> Path:
    target = specs_dir / name
    if target.exists() and not force:
        raise SpecExists(f"{target} exists; give --force to replace it")
    specs_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.import-", dir=specs_dir))
    try:
        for file_name, text in files.items():
            (staging / file_name).write_text(text, encoding="utf-8")
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{name}.replaced-", dir=specs_dir))
            os.replace(target, old / name)
            os.replace(staging, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target

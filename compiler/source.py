"""Read YAML keeping positions, so every node of a spec knows its `file:line:col`.

The result is plain Python data (dict, list, str, int, float, bool, None) plus a table
from each node's path (a tuple of keys and indexes) to where its value, and for mapping
entries its key, stand in the file.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError

from .diagnostics import Diagnostic, Result, Span
from .rules import diagnostic

NodePath = tuple[str | int, ...]


@dataclass(frozen=True)
class SourceDoc:
    """One YAML document with the position of every node."""

    file: str
    text: str
    data: Any
    value_spans: dict[NodePath, Span]
    key_spans: dict[NodePath, Span]

    def span(self, path: NodePath, *, key: bool = False) -> Span:
        """Where `path` stands; falls back to the nearest enclosing node that has a place."""
        first, second = (self.key_spans, self.value_spans) if key else (self.value_spans, self.key_spans)
        for end in range(len(path), -1, -1):
            prefix = path[:end]
            if prefix in first:
                return first[prefix]
            if prefix in second:
                return second[prefix]
        return Span(self.file)


def load_yaml(path: Path, display: str) -> Result[SourceDoc]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        return Result(None, (diagnostic("YAML_SYNTAX", f"not UTF-8 text ({err.reason})", Span(display)),))
    return parse_yaml(text, display)


def parse_yaml(text: str, display: str) -> Result[SourceDoc]:
    yaml = YAML(typ="rt")
    try:
        root = yaml.load(text)
    except DuplicateKeyError as err:
        return Result(None, (_marked(err, display, "YAML_DUPLICATE_KEY", _duplicate_message(err)),))
    except MarkedYAMLError as err:
        problem = err.problem or err.context or "invalid YAML"
        return Result(None, (_marked(err, display, "YAML_SYNTAX", problem),))
    if root is None:
        return Result(
            None, (diagnostic("SPEC_FILE_EMPTY", "the file holds no YAML document", Span(display)),)
        )
    value_spans: dict[NodePath, Span] = {(): Span(display, 1, 1)}
    key_spans: dict[NodePath, Span] = {}
    data = _plain(root, (), display, value_spans, key_spans)
    return Result(SourceDoc(display, text, data, value_spans, key_spans))


def _marked(err: MarkedYAMLError, display: str, rule_id: str, message: str) -> Diagnostic:
    mark = err.problem_mark or err.context_mark
    span = Span(display, mark.line + 1, mark.column + 1) if mark else Span(display)
    return diagnostic(rule_id, message, span)


def _duplicate_message(err: DuplicateKeyError) -> str:
    # ruamel's problem text is 'found duplicate key "name" with value ...'; keep the key part.
    problem = (err.problem or "duplicate key").split(" with value")[0]
    return problem.replace("found ", "", 1)


def _plain(
    node: Any,
    path: NodePath,
    display: str,
    value_spans: dict[NodePath, Span],
    key_spans: dict[NodePath, Span],
) -> Any:
    if isinstance(node, CommentedMap):
        out: dict[str, Any] = {}
        for key, value in node.items():
            child = (*path, str(key))
            key_line, key_col = node.lc.key(key)
            key_spans[child] = Span(display, key_line + 1, key_col + 1)
            value_line, value_col = node.lc.value(key)
            value_spans[child] = Span(display, value_line + 1, value_col + 1)
            out[str(key)] = _plain(value, child, display, value_spans, key_spans)
        return out
    if isinstance(node, CommentedSeq):
        items = []
        for index, value in enumerate(node):
            child = (*path, index)
            line, col = node.lc.item(index)
            value_spans[child] = Span(display, line + 1, col + 1)
            items.append(_plain(value, child, display, value_spans, key_spans))
        return items
    return _scalar(node)


def _scalar(node: Any) -> Any:
    if node is None or isinstance(node, bool):
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    if isinstance(node, datetime.date):
        return node.isoformat()
    return str(node)

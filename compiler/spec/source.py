"""Read YAML keeping positions, so every node of a spec knows its `file:line:col`.

The result is plain Python data (dict, list, str, int, float, bool, None) plus a table
from each node's path (a tuple of keys and indexes) to where its value, and for mapping
entries its key, stand in the file.

ruamel parses and composes the document into nodes; this module turns the nodes into data
itself, so that it can refuse, with a place, what a spec must never hold: nesting or aliases
that would exhaust the stack or the memory of later stages, tags that name Python objects,
numbers JSON cannot carry and strings too long for documentation (see `limits`). Merge keys
(`<<: *defaults`) are resolved here too: written keys win over merged ones, earlier merged
mappings over later ones, and a merged key keeps the place where it is written.
"""

from __future__ import annotations

import datetime
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError

from ..diagnostics import Diagnostic, Result, Span
from ..limits import MAX_ALIAS_NODES, MAX_NESTING_DEPTH, MAX_SPEC_BYTES, MAX_STRING_CHARS
from ..rules import diagnostic

if TYPE_CHECKING:
    from ..cache import Store

YAML_ENTRY = "yaml"  # the cache's entries of parsed spec files

NodePath = tuple[str | int, ...]

_CORE = "tag:yaml.org,2002:"
_MERGE = _CORE + "merge"
_TIMESTAMP = _CORE + "timestamp"
_FLOAT64_MAX = 1.7976931348623157e308
# ruamel's reader of each scalar type a spec may hold: YAML's core types, and dates, which read as
# ISO text. Any other tag (`!!python/object/apply:...`, `!!binary`,
# `!custom`) names something a spec has no use for.
_SCALAR_READERS = {
    _CORE + "str": "construct_yaml_str",
    _CORE + "int": "construct_yaml_int",
    _CORE + "float": "construct_yaml_float",
    _CORE + "bool": "construct_yaml_bool",
    _CORE + "null": "construct_yaml_null",
    _TIMESTAMP: "construct_yaml_timestamp",
}
_COLLECTION_TAGS = {MappingNode: _CORE + "map", SequenceNode: _CORE + "seq"}


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


def too_large(size: int, span: Span, what: str) -> Diagnostic | None:
    """SPEC_TOO_LARGE when `size` bytes exceed the limit; checked before anything is read."""
    if size <= MAX_SPEC_BYTES:
        return None
    return diagnostic(
        "SPEC_TOO_LARGE",
        f"{what} {_kib(size)}, over the limit of {_kib(MAX_SPEC_BYTES)}",
        span,
        "a server's spec holds definitions, not data; split it, or shorten what grew",
    )


def load_yaml(path: Path, display: str, cache: Store | None = None) -> Result[SourceDoc]:
    try:
        refused = too_large(path.stat().st_size, Span(display), "the file holds")
        if refused is not None:
            return Result(None, (refused,))
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        return Result(None, (diagnostic("YAML_SYNTAX", f"not UTF-8 text ({err.reason})", Span(display)),))
    except OSError as err:
        reason = err.strerror or type(err).__name__
        return Result(
            None, (diagnostic("SPEC_NOT_FOUND", f"cannot read the file ({reason})", Span(display)),)
        )
    return parse_yaml(text, display, cache)


def parse_yaml(text: str, display: str, cache: Store | None = None) -> Result[SourceDoc]:
    """The document in `text`, named `display` in its spans. A `cache` keeps a document whose
    values JSON holds exactly (no timestamps, no integer keys), by its text and name."""
    if cache is None:
        return _parse_yaml(text, display)
    key = {"text": text, "file": display}
    kept = cache.get(YAML_ENTRY, key, lambda payload: _doc_from_payload(payload, text, display))
    if kept is not None:
        return Result(kept)
    parsed = _parse_yaml(text, display)
    payload = _doc_payload(parsed.value) if parsed.value is not None else None
    if payload is not None:
        cache.put(YAML_ENTRY, key, payload)
    return parsed


def _doc_payload(doc: SourceDoc) -> dict[str, Any] | None:
    try:
        if not _exact(json.loads(json.dumps(doc.data, allow_nan=False)), doc.data):
            return None
    except (ValueError, TypeError, RecursionError):
        return None
    spans = [doc.value_spans, doc.key_spans]
    if not all(_json_path(path) for table in spans for path in table):
        return None
    return {
        "data": doc.data,
        "values": [[list(path), [s.file, s.line, s.col]] for path, s in doc.value_spans.items()],
        "keys": [[list(path), [s.file, s.line, s.col]] for path, s in doc.key_spans.items()],
    }


def _doc_from_payload(payload: Any, text: str, display: str) -> SourceDoc | None:
    try:
        values = {tuple(path): Span(*span) for path, span in payload["values"]}
        keys = {tuple(path): Span(*span) for path, span in payload["keys"]}
        return SourceDoc(display, text, payload["data"], values, keys)
    except (KeyError, TypeError, ValueError):  # not what parse_yaml writes: a miss
        return None


def _json_path(path: NodePath) -> bool:
    return all(type(part) in (str, int) for part in path)


def _exact(copy: Any, value: Any) -> bool:
    """Whether `copy` is `value` with the same types all the way down (1 is not 1.0 nor True)."""
    if type(copy) is not type(value):
        return False
    if isinstance(value, dict):
        return list(copy) == list(value) and all(type(k) is str and _exact(copy[k], value[k]) for k in value)
    if isinstance(value, list):
        return len(copy) == len(value) and all(_exact(c, v) for c, v in zip(copy, value, strict=True))
    return bool(copy == value)


def _parse_yaml(text: str, display: str) -> Result[SourceDoc]:
    refused = too_large(len(text.encode("utf-8")), Span(display), "the file holds")
    if refused is not None:
        return Result(None, (refused,))
    yaml = YAML(typ="rt")
    yaml.Composer = _GuardedComposer
    try:
        root = yaml.compose(text)
    except _Refused as err:
        return Result(None, (diagnostic(err.rule_id, err.message, _mark_span(err.mark, display), err.hint),))
    except MarkedYAMLError as err:
        problem = err.problem or err.context or "invalid YAML"
        return Result(None, (_marked(err, display, "YAML_SYNTAX", problem),))
    except ReaderError as err:
        return Result(
            None, (diagnostic("YAML_SYNTAX", _reader_message(err), _offset_span(text, err, display)),)
        )
    except YAMLError as err:  # anything else ruamel refuses is still a syntax problem, never a traceback
        return Result(None, (diagnostic("YAML_SYNTAX", str(err).splitlines()[0], Span(display)),))
    if root is None:
        return Result(None, (_empty(display),))
    converter = _Converter(display, yaml.constructor)
    data = converter.convert(root, ())
    if converter.diagnostics:
        return Result(None, tuple(dict.fromkeys(converter.diagnostics)))  # merges may repeat one
    if data is None:
        return Result(None, (_empty(display),))
    return Result(SourceDoc(display, text, data, converter.value_spans, converter.key_spans))


class _Refused(Exception):
    """A document the composer stops reading: too deep, too many alias expansions, a bad tag."""

    def __init__(self, rule_id: str, message: str, mark: Any, hint: str | None = None):
        super().__init__(message)
        self.rule_id, self.message, self.mark, self.hint = rule_id, message, mark, hint


class _GuardedComposer(Composer):
    """ruamel's composer, measuring as it goes. Each node's expanded size and depth are known
    when it is complete, so an alias is refused the moment using it would exceed a limit,
    without expanding anything: checking costs one step per node written in the file."""

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader)
        self.warn_double_anchors = False  # redefining an anchor is valid YAML, not worth a warning
        self._level = 0
        self._open_anchors: set[str] = set()
        self._measures: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded nodes, depth)
        self._alias_nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.parser.peek_event()
        if isinstance(event, AliasEvent):
            return self._compose_alias(event, parent, index)
        self._level += 1
        if self._level > MAX_NESTING_DEPTH:
            raise _Refused(
                "YAML_NESTING_TOO_DEEP",
                f"the document nests deeper than {MAX_NESTING_DEPTH} levels",
                event.start_mark,
                "flatten the structure; a schema rarely needs more than a few levels",
            )
        anchor = event.anchor
        if anchor is not None:
            self._open_anchors.add(anchor)
        node = super().compose_node(parent, index)
        if anchor is not None:
            self._open_anchors.discard(anchor)
        self._level -= 1
        _check_tag(node)
        self._measures[id(node)] = self._measure(node)
        return node

    def _compose_alias(self, event: AliasEvent, parent: Any, index: Any) -> Any:
        name = event.anchor
        if name in self._open_anchors:
            raise _Refused(
                "YAML_ALIAS_BUDGET_EXCEEDED",
                f"alias '*{name}' stands inside the node it names, so it expands without end",
                event.start_mark,
                "an alias may repeat a finished node, not the one that contains it",
            )
        node = super().compose_node(parent, index)  # an undefined alias is ruamel's ComposerError
        nodes, depth = self._measures[id(node)]
        if self._level + depth > MAX_NESTING_DEPTH:
            raise _Refused(
                "YAML_NESTING_TOO_DEEP",
                f"alias '*{name}' expands to nesting deeper than {MAX_NESTING_DEPTH} levels",
                event.start_mark,
            )
        self._alias_nodes += nodes
        if self._alias_nodes > MAX_ALIAS_NODES:
            raise _Refused(
                "YAML_ALIAS_BUDGET_EXCEEDED",
                f"aliases expand to more than {MAX_ALIAS_NODES:,} nodes by '*{name}'",
                event.start_mark,
                "aliases may share a fragment a few times, not multiply it; write the repeated parts out",
            )
        return node

    def _measure(self, node: Node) -> tuple[int, int]:
        if isinstance(node, MappingNode):
            children = [child for pair in node.value for child in pair]
        elif isinstance(node, SequenceNode):
            children = node.value
        else:
            return 1, 1
        measures = [self._measures[id(child)] for child in children]
        return 1 + sum(n for n, _ in measures), 1 + max((d for _, d in measures), default=0)


def _check_tag(node: Node) -> None:
    tag = str(node.tag)
    allowed = (
        tag in _SCALAR_READERS or tag == _MERGE
        if isinstance(node, ScalarNode)
        else (tag == _COLLECTION_TAGS.get(type(node)))
    )
    if not allowed:
        shown = "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag
        raise _Refused(
            "YAML_TAG_UNSUPPORTED",
            f"the tag '{shown}' is not supported: a spec holds plain data",
            node.start_mark,
            "remove the tag (quote the value if it should stay text)",
        )


@dataclass
class _Converter:
    """Composed nodes -> plain data and the place of every node; problems as diagnostics."""

    display: str
    constructor: Any  # ruamel's, for scalars only: their reading stays exactly ruamel's
    value_spans: dict[NodePath, Span] = field(default_factory=dict)
    key_spans: dict[NodePath, Span] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.value_spans[()] = Span(self.display, 1, 1)

    def convert(self, node: Node, path: NodePath) -> Any:
        if isinstance(node, MappingNode):
            out: dict[str, Any] = {}
            for key, (key_node, value_node) in self._entries(node).items():
                child = (*path, key)
                self.key_spans[child] = self._span(key_node)
                self.value_spans[child] = self._span(value_node)
                out[key] = self.convert(value_node, child)
            return out
        if isinstance(node, SequenceNode):
            items = []
            for index, value_node in enumerate(node.value):
                child = (*path, index)
                self.value_spans[child] = self._span(value_node)
                items.append(self.convert(value_node, child))
            return items
        return self._scalar(node)

    def _entries(self, node: MappingNode) -> dict[str, tuple[Node, Node]]:
        """Keys in order: written ones where written, merged ones where `<<` stands."""
        written: dict[str, tuple[Node, Node]] = {}
        order: list[str | Node] = []  # a written key, or the value of a merge key
        for key_node, value_node in node.value:
            if _is_merge(key_node):
                order.append(value_node)
                continue
            key = self._key(key_node)
            if key is None:
                continue
            if key in written:
                self._report("YAML_DUPLICATE_KEY", f'duplicate key "{key}"', key_node)
                continue
            written[key] = (key_node, value_node)
            order.append(key)
        entries: dict[str, tuple[Node, Node]] = {}
        for item in order:
            if isinstance(item, str):
                entries[item] = written[item]
                continue
            for source in self._merge_sources(item):
                for key, entry in self._entries(source).items():
                    if key not in written and key not in entries:
                        entries[key] = entry
        return entries

    def _merge_sources(self, node: Node) -> list[MappingNode]:
        sources = node.value if isinstance(node, SequenceNode) else [node]
        if all(isinstance(source, MappingNode) for source in sources):
            return sources
        self._report(
            "YAML_SYNTAX",
            "a merge key '<<' takes a mapping or a list of mappings (such as '<<: *defaults')",
            node,
        )
        return []

    def _key(self, node: Node) -> str | None:
        if isinstance(node, ScalarNode):
            return str(self._scalar(node))
        self._report("SPEC_VALUE_INVALID", "a mapping key must be a plain value, not a mapping or list", node)
        return None

    def _scalar(self, node: ScalarNode) -> Any:
        tag = str(node.tag)
        if tag == _MERGE:
            return node.value  # '<<' as a value (not a key) is plain text
        if getattr(node.ctag, "handle", None):  # written with a tag (`!!str 3`): read as if implicit
            node = ScalarNode(tag, node.value, node.start_mark, node.end_mark, style=node.style)
        try:
            value = getattr(self.constructor, _SCALAR_READERS[tag])(node)
        except (ValueError, OverflowError) as err:
            if tag == _TIMESTAMP:
                return str(node.value)  # looks like a date but is none (2024-13-45): keep the text
            if tag == _CORE + "int" and node.value.lstrip("+-").replace("_", "").isdigit():
                self._not_finite(node)  # more digits than Python reads (4,300): far beyond a double
            else:
                self._report("YAML_SYNTAX", f"cannot read {node.value[:40]!r}: {err}", node)
            return None
        if value is None:
            return None
        if isinstance(value, bool):
            return value
        if isinstance(value, int):
            if abs(value) > _FLOAT64_MAX:
                self._not_finite(node)
            return int(value)
        if isinstance(value, float):
            if not math.isfinite(value):
                self._not_finite(node)
            return float(value)
        if isinstance(value, datetime.date):
            return value.isoformat()
        text = str(value)
        if len(text) > MAX_STRING_CHARS:
            self._report(
                "SPEC_STRING_TOO_LONG",
                f"a string of {len(text):,} characters is over the limit of {MAX_STRING_CHARS:,}",
                node,
                "clients show descriptions to the model on every turn; keep them short",
            )
        return text

    def _not_finite(self, node: ScalarNode) -> None:
        shown = node.value if len(node.value) <= 24 else node.value[:20] + "..."
        self._report(
            "NUMBER_NOT_FINITE",
            f"{shown} is not a finite number JSON can carry (NaN, Infinity or beyond ±1.8e308)",
            node,
            "write the bound you mean, or leave the keyword out",
        )

    def _report(self, rule_id: str, message: str, node: Node, hint: str | None = None) -> None:
        self.diagnostics.append(diagnostic(rule_id, message, self._span(node), hint))

    def _span(self, node: Node) -> Span:
        return _mark_span(node.start_mark, self.display)


def _is_merge(node: Node) -> bool:
    return isinstance(node, ScalarNode) and str(node.tag) == _MERGE


def _mark_span(mark: Any, display: str) -> Span:
    return Span(display, mark.line + 1, mark.column + 1) if mark is not None else Span(display)


def _marked(err: MarkedYAMLError, display: str, rule_id: str, message: str) -> Diagnostic:
    return diagnostic(rule_id, message, _mark_span(err.problem_mark or err.context_mark, display))


def _reader_message(err: ReaderError) -> str:
    return str(err).splitlines()[0]


def _offset_span(text: str, err: ReaderError, display: str) -> Span:
    position = err.position if isinstance(err.position, int) else 0
    before = text[:position]
    return Span(display, before.count("\n") + 1, position - (before.rfind("\n") + 1) + 1)


def _empty(display: str) -> Diagnostic:
    return diagnostic("SPEC_FILE_EMPTY", "the file holds no YAML document", Span(display))


def _kib(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MiB" if size >= 1024 * 1024 else f"{size / 1024:.0f} KiB"

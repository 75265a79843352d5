"""A document and the files its `$ref`s reach: resolve a reference (local, or to a relative file)
to the value, the file it lives in and its JSON pointer, within a bound on files and hops."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from lynxc.runtime.wire_values import pointed_value

from .errors import OpenAPIError
from .source import is_url, join, parse, read_text

MAX_FILES = 64  # a document split over more files than this is more likely a loop of names
MAX_REF_HOPS = 32  # a chain of bare $refs longer than this never reaches a value


@dataclass(frozen=True)
class Located:
    """A value of the document and where it is: the file and the JSON pointer inside it."""

    value: Any
    file: str
    pointer: str

    def child(self, *keys: str | int) -> Located:
        value = self.value
        for key in keys:
            value = value[key]
        return Located(value, self.file, self.pointer + "".join("/" + escape(k) for k in keys))

    def get(self, key: str, default: Any = None) -> Any:
        return self.value.get(key, default) if isinstance(self.value, dict) else default


def escape(key: str | int) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


@dataclass
class Document:
    location: str
    root: Any
    files: dict[str, Any] = field(default_factory=dict)
    label: str = ""  # the source as the user named it, for messages

    def __post_init__(self) -> None:
        self.files.setdefault(self.location, self.root)

    def at(self, *keys: str | int) -> Located:
        return Located(self.root, self.location, "").child(*keys)

    def follow(self, node: Located) -> Located:
        """`node` itself, or what its chain of `$ref`s leads to (a loop is the document's error)."""
        seen: list[str] = []
        while isinstance(node.value, dict) and isinstance(node.value.get("$ref"), str):
            key = f"{node.file}#{node.pointer}"
            if key in seen or len(seen) >= MAX_REF_HOPS:
                chain = " -> ".join(s.rpartition("#")[2] or "/" for s in [*seen, key])
                raise OpenAPIError(self.display(node.file), node.pointer, f"$ref cycle: {chain}")
            seen.append(key)
            node = self.resolve(node)
        return node

    def resolve(self, node: Located) -> Located:
        ref = node.value["$ref"]
        where = node.pointer + "/$ref"
        file_part, _, fragment = ref.partition("#")
        target = node.file
        if file_part:
            if is_url(file_part) and not is_url(node.file):
                raise OpenAPIError(
                    self.display(node.file),
                    where,
                    f"$ref {ref!r} names a URL; a local document may refer to relative files only",
                )
            if urlsplit(file_part).scheme and not is_url(file_part):
                raise OpenAPIError(
                    self.display(node.file), where, f"$ref {ref!r}: only relative files and http(s) are read"
                )
            target = join(node.file, file_part)
        root = self._file(target, node, where)
        pointer = unquote(fragment)
        if pointer and not pointer.startswith("/"):
            raise OpenAPIError(self.display(node.file), where, f"$ref {ref!r} is not a JSON pointer")
        try:
            value = pointed_value(root, pointer)
        except LookupError:
            raise OpenAPIError(self.display(node.file), where, f"$ref {ref!r} points to nothing") from None
        return Located(value, target, pointer)

    def _file(self, target: str, node: Located, where: str) -> Any:
        if target not in self.files:
            if len(self.files) >= MAX_FILES:
                raise OpenAPIError(self.display(node.file), where, f"$refs reach more than {MAX_FILES} files")
            try:
                self.files[target] = parse(read_text(target), target)
            except OpenAPIError as err:
                raise OpenAPIError(
                    self.display(node.file), where, f"$ref {node.value['$ref']!r}: {err}"
                ) from None
        return self.files[target]

    def display(self, file: str) -> str:
        return (self.label or self.location) if file == self.location else file

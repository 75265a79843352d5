"""The rows of one input file of `lynxc load`, whatever its format, one at a time.

Formats, by file name (each may end in `.gz`):

- `.jsonl` / `.ndjson`: one JSON object per line; blank lines are skipped.
- `.json`: an array of objects, or an object with exactly one array member holding them
  (`{"items": [...], "version": 3}`); the other members are ignored.
- `.csv`: a header row naming top-level fields, then one record per row. Cells are converted
  by the field's declared type (integer, number, boolean, reference to an integer key); an
  empty cell is an absent field; array, object and localized fields hold JSON text.
- `.parquet`: columns named like top-level fields; a null is an absent field.

`read_rows` yields (line, row): the line where the record starts (the row number for Parquet)
and either the row (a dict) or a BadRow saying why it is not one. A bad row is reported with
the others and never stops the reading; only a file that cannot be read at all (missing, not
gzip, JSON that does not parse as a whole) raises FileError.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import shutil
import tempfile
import zlib
from collections.abc import Generator, Iterator, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import IO, Any

from lynxc.runtime.wire_values import json_kind

from .definitions import Field, Resource

MAX_LINE_BYTES = 16 * 1024 * 1024  # one record's JSON line (and one CSV cell)
PARQUET_BATCH = 1024
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet"}
_JSON_CELL_TYPES = frozenset({"array", "object", "localized"})
_WHITESPACE = " \t\n\r"


class FileError(Exception):
    """An input file that cannot be read at all; the message names the file."""


@dataclass(frozen=True)
class BadRow:
    """Why one row is not a record: `FILE:LINE: {message}`."""

    message: str


Row = tuple[int, "dict[str, Any] | BadRow"]


def file_format(path: str) -> str:
    """'jsonl', 'json', 'csv' or 'parquet', from the file name; FileError for anything else."""
    name = path[:-3] if path.endswith(".gz") else path
    suffix = os.path.splitext(name)[1].lower()
    if suffix not in FORMATS:
        raise FileError(
            f"{path}: unknown file type {suffix or '(none)'!r} "
            "(expected .jsonl, .ndjson, .json, .csv or .parquet, each optionally .gz)"
        )
    return FORMATS[suffix]


def check_readable(path: str) -> None:
    """Fail early, before any work, on a file that is not there or not a file."""
    file_format(path)
    if not os.path.exists(path):
        raise FileError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise FileError(f"{path}: not a regular file")
    if not os.access(path, os.R_OK):
        raise FileError(f"{path}: permission denied")


def read_rows(path: str, resource: Resource, key_types: Mapping[str, str]) -> Iterator[Row]:
    """Every row of `path`. `key_types` maps each resource name to its key's type, so a CSV
    cell of a reference to an integer key becomes an integer."""
    kind = file_format(path)
    try:
        if kind == "parquet":
            yield from _parquet_rows(path)
            return
        with _open_binary(path) as handle:
            if kind == "jsonl":
                yield from _jsonl_rows(handle)
            elif kind == "json":
                yield from _json_rows(path, handle)
            else:
                yield from _csv_rows(path, handle, resource, key_types)
    except (OSError, EOFError, zlib.error) as err:  # gzip raises BadGzipFile (an OSError), EOFError
        raise FileError(f"{path}: {_reason(err)}") from None
    except UnicodeDecodeError as err:
        raise FileError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None


def _reason(err: BaseException) -> str:
    if isinstance(err, gzip.BadGzipFile):
        return "not gzip data, though the name ends in .gz"
    if isinstance(err, OSError) and err.strerror:
        return err.strerror[0].lower() + err.strerror[1:]
    if isinstance(err, EOFError):
        return "the compressed file is truncated"
    return str(err) or type(err).__name__


def _open_binary(path: str) -> IO[bytes]:
    if path.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def _jsonl_rows(handle: IO[bytes]) -> Iterator[Row]:
    line_number = 0
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        line_number += 1
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # skip the rest of the line, bounded reads
                line = handle.readline(MAX_LINE_BYTES)
            yield line_number, BadRow(f"line longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB")
            continue
        line = line.rstrip(b"\r\n")
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except UnicodeDecodeError as err:
            yield line_number, BadRow(f"not UTF-8 text ({err.reason} at byte {err.start})")
            continue
        except json.JSONDecodeError as err:
            yield line_number, BadRow(f"invalid JSON: {err.msg} (column {err.colno})")
            continue
        yield line_number, _object(value)


def _object(value: Any) -> dict[str, Any] | BadRow:
    if isinstance(value, dict):
        return value
    return BadRow(f"not a JSON object but {json_kind(value)}")


class _Text:
    """A JSON document scanned value by value, with the line of each position."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text
        self.decoder = json.JSONDecoder()
        self._line, self._line_at = 1, 0

    def line(self, pos: int) -> int:
        if pos >= self._line_at:
            self._line += self.text.count("\n", self._line_at, pos)
        else:
            self._line = 1 + self.text.count("\n", 0, pos)
        self._line_at = pos
        return self._line

    def skip(self, pos: int) -> int:
        text = self.text
        while pos < len(text) and text[pos] in _WHITESPACE:
            pos += 1
        return pos

    def error(self, pos: int, message: str) -> FileError:
        line = self.line(pos)
        column = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return FileError(f"{self.path}:{line}:{column}: invalid JSON: {message}")

    def value(self, pos: int) -> tuple[Any, int]:
        try:
            return self.decoder.raw_decode(self.text, pos)
        except json.JSONDecodeError as err:
            raise self.error(err.pos, err.msg) from None

    def expect(self, pos: int, chars: str) -> str:
        if pos >= len(self.text) or self.text[pos] not in chars:
            found = repr(self.text[pos]) if pos < len(self.text) else "the end of the file"
            raise self.error(pos, f"expected {' or '.join(repr(c) for c in chars)}, found {found}")
        return self.text[pos]


def _json_rows(path: str, handle: IO[bytes]) -> Iterator[Row]:
    doc = _Text(path, handle.read().decode("utf-8-sig"))
    pos = doc.skip(0)
    if doc.expect(pos, "[{") == "[":
        end = yield from _json_array(doc, pos)
    else:
        end = yield from _json_object_with_list(doc, pos)
    end = doc.skip(end)
    if end < len(doc.text):
        raise doc.error(end, "extra data after the document")


def _json_array(doc: _Text, pos: int) -> Generator[Row, None, int]:
    """The elements of the array whose '[' is at `pos`, one decoded at a time; returns the
    position after its ']'."""
    pos = doc.skip(pos + 1)
    if pos < len(doc.text) and doc.text[pos] == "]":
        return pos + 1
    while True:
        value, end = doc.value(pos)
        yield doc.line(pos), _object(value)
        pos = doc.skip(end)
        if doc.expect(pos, ",]") == "]":
            return pos + 1
        pos = doc.skip(pos + 1)


def _json_object_with_list(doc: _Text, pos: int) -> Generator[Row, None, int]:
    """The records of the one array member of the object at `pos`; returns where it ends."""
    found: str | None = None
    pos = doc.skip(pos + 1)
    if pos < len(doc.text) and doc.text[pos] == "}":
        raise FileError(f"{doc.path}: the top-level object holds no list of records")
    while True:
        doc.expect(pos, '"')
        name, pos = doc.value(pos)
        pos = doc.skip(pos)
        doc.expect(pos, ":")
        pos = doc.skip(pos + 1)
        if pos < len(doc.text) and doc.text[pos] == "[":
            if found is not None:
                raise FileError(
                    f"{doc.path}: the top-level object holds two lists, {found!r} and {name!r}: "
                    "which one holds the records? (keep one, or use a top-level array)"
                )
            found = name
            pos = yield from _json_array(doc, pos)
        else:
            _, pos = doc.value(pos)
        pos = doc.skip(pos)
        if doc.expect(pos, ",}") == "}":
            if found is None:
                raise FileError(f"{doc.path}: the top-level object holds no list of records")
            return pos + 1
        pos = doc.skip(pos + 1)


def _csv_rows(
    path: str, handle: IO[bytes], resource: Resource, key_types: Mapping[str, str]
) -> Iterator[Row]:
    csv.field_size_limit(MAX_LINE_BYTES)
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", newline="")
    reader = csv.reader(text)
    try:
        header = next(reader)
    except StopIteration:
        return  # an empty file: no records
    except csv.Error as err:
        raise FileError(f"{path}:1: unreadable CSV header: {err}") from None
    header = [name.strip() for name in header]
    duplicated = sorted({name for name in header if header.count(name) > 1})
    if duplicated:
        raise FileError(f"{path}:1: the header names {', '.join(map(repr, duplicated))} more than once")
    fields = [resource.field(name) for name in header]
    while True:
        line = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            yield line, BadRow(f"unreadable CSV row: {err}")
            continue
        if not any(cell.strip() for cell in cells):
            continue  # a blank line
        if len(cells) != len(header):
            yield line, BadRow(f"{len(cells)} cells, but the header has {len(header)} columns")
            continue
        row: dict[str, Any] = {}
        problem = None
        for name, field, cell in zip(header, fields, cells, strict=True):
            if cell == "":
                continue
            value, problem = _cell(name, field, cell, key_types)
            if problem is not None:
                break
            row[name] = value
        yield line, (BadRow(problem) if problem is not None else row)


def _cell(name: str, field: Field | None, cell: str, key_types: Mapping[str, str]) -> tuple[Any, str | None]:
    """A CSV cell as the value its field's type expects. A cell that does not convert stays
    text, so the record's validation reports it with the field's own message."""
    kind = field.type if field is not None else "string"
    if kind == "reference":
        kind = key_types.get(field.to or "", "string") if field is not None else "string"
    if kind in _JSON_CELL_TYPES:
        try:
            return json.loads(cell), None
        except json.JSONDecodeError as err:
            return None, f"{name}: a {kind} cell holds JSON text: {err.msg} (character {err.pos + 1})"
    text = cell.strip()
    try:
        if kind == "integer":
            return int(text), None
        if kind == "number":
            return (int(text) if text.lstrip("+-").isdigit() else float(text)), None
    except ValueError:
        return cell, None
    if kind == "boolean" and text.lower() in ("true", "false"):
        return text.lower() == "true", None
    if kind == "enum" and field is not None and field.values:
        for value in field.values:  # enum of numbers: the cell names one
            if not isinstance(value, str) and json.dumps(value) == text:
                return value, None
    return cell, None


def _parquet_rows(path: str) -> Iterator[Row]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryFile() if path.endswith(".gz") else nullcontext() as spool:
        source: Any = path
        if spool is not None:  # Parquet reads its footer first: it needs a seekable file
            with gzip.open(path, "rb") as compressed:
                shutil.copyfileobj(compressed, spool, 1024 * 1024)
            spool.seek(0)
            source = spool
        try:
            parquet = pq.ParquetFile(source)
            number = 0
            for batch in parquet.iter_batches(batch_size=PARQUET_BATCH):
                for row in batch.to_pylist():
                    number += 1
                    yield number, _without_nulls(row)
        except (pa.ArrowException, ValueError) as err:
            raise FileError(f"{path}: unreadable Parquet ({err})") from None


def _without_nulls(value: Any) -> Any:
    """Parquet has a cell for every column of every row: a null is an absent field."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value

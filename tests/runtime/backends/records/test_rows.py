"""Reading the rows of `lynxc load`'s input files: each format, line numbers, CSV cells typed by
the declaration, bad rows reported (never a crash), unreadable files named."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from lynxc.runtime.backends.records import rows as rows_module
from lynxc.runtime.backends.records.definitions import parse_resources
from lynxc.runtime.backends.records.rows import BadRow, FileError, check_readable, read_rows

RESOURCES = parse_resources(
    json.dumps(
        {
            "format": 1,
            "resources": [
                {
                    "name": "things",
                    "id": "things",
                    "key": "id",
                    "fields": [
                        {"name": "id", "type": "integer", "required": True},
                        {"name": "label", "type": "string"},
                        {"name": "score", "type": "number"},
                        {"name": "ok", "type": "boolean"},
                        {"name": "level", "type": "enum", "values": [1, 2, "high"]},
                        {"name": "tags", "type": "array", "items": {"name": "items", "type": "string"}},
                        {"name": "name", "type": "localized"},
                        {"name": "owner", "type": "reference", "to": "people"},
                        {"name": "boss", "type": "reference", "to": "things"},
                    ],
                    "schema": {},
                    "model": "records_things",
                },
                {
                    "name": "people",
                    "id": "people",
                    "key": "pid",
                    "fields": [{"name": "pid", "type": "string", "required": True}],
                    "schema": {},
                    "model": "records_people",
                },
            ],
        }
    )
)
THINGS = RESOURCES.by_name("things")
KEY_TYPES = {"things": "integer", "people": "string"}


def read(path: Path) -> list[tuple[int, Any]]:
    assert THINGS is not None
    return list(read_rows(str(path), THINGS, KEY_TYPES))


def test_jsonl_rows_and_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": 1}\n\n  \n[1]\n{"id": \n"text"\n{"id": 2, "label": "é"}\n')
    assert read(path) == [
        (1, {"id": 1}),
        (4, BadRow("not a JSON object but an array")),
        (5, BadRow("invalid JSON: Expecting value (column 8)")),
        (6, BadRow("not a JSON object but a string")),
        (7, {"id": 2, "label": "é"}),
    ]


def test_a_line_over_the_limit_is_a_bad_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rows_module, "MAX_LINE_BYTES", 64)
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": 1}\n{"id": 2, "label": "' + "x" * 500 + '"}\n{"id": 3}\n')
    assert read(path) == [(1, {"id": 1}), (2, BadRow("line longer than 0 MiB")), (3, {"id": 3})]
    assert rows_module.MAX_LINE_BYTES == 64


def test_json_array_and_object_with_one_list(tmp_path: Path) -> None:
    array = tmp_path / "a.json"
    array.write_text('[\n  {"id": 1},\n  {"id": 2,\n   "label": "x"}, 7\n]\n')
    assert read(array) == [
        (2, {"id": 1}),
        (3, {"id": 2, "label": "x"}),
        (4, BadRow("not a JSON object but an integer")),
    ]
    wrapped = tmp_path / "w.json"
    wrapped.write_text('{"version": 3, "meta": {"a": [1]},\n "items": [{"id": 1},\n {"id": 2}], "n": null}')
    assert read(wrapped) == [(2, {"id": 1}), (3, {"id": 2})]
    (tmp_path / "e.json").write_text("[]")
    assert read(tmp_path / "e.json") == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"id": 1},\n {"id": }]', "e.json:2:9: invalid JSON: Expecting value"),
        ('[{"id": 1}] x', "e.json:1:13: invalid JSON: extra data after the document"),
        ('[{"id": 1}', "e.json:1:11: invalid JSON: expected ',' or ']', found the end of the file"),
        ('"hello"', "e.json:1:1: invalid JSON: expected '[' or '{', found '\"'"),
        ('{"a": 1}', "e.json: the top-level object holds no list of records"),
        ('{"a": [], "b": []}', "e.json: the top-level object holds two lists, 'a' and 'b'"),
    ],
)
def test_json_documents_that_do_not_parse(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "e.json"
    path.write_text(text)
    with pytest.raises(FileError) as caught:
        read(path)
    assert str(caught.value).startswith(f"{tmp_path}/{message}")


def test_csv_cells_follow_the_declared_types(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text(
        "id,label,score,ok,level,tags,name,owner,boss,extra\n"
        '1,hello,2.5,TRUE,2,"[""a""]","{""fr"": ""Bonjour""}",p1,7,x\n'
        "\n"
        "2,,,,,,,,,\n"
        'x,"multi\nline",3,maybe,high,,,,,\n'
        "4,short\n"
        '5,,,,,"[not json",,,,\n'
    )
    assert read(path) == [
        (
            2,
            {
                "id": 1,
                "label": "hello",
                "score": 2.5,
                "ok": True,
                "level": 2,
                "tags": ["a"],
                "name": {"fr": "Bonjour"},
                "owner": "p1",
                "boss": 7,
                "extra": "x",
            },
        ),
        (4, {"id": 2}),  # empty cells: absent fields
        (
            5,
            {"id": "x", "label": "multi\nline", "score": 3, "ok": "maybe", "level": "high"},
        ),  # left to validation
        (7, BadRow("2 cells, but the header has 10 columns")),
        (8, BadRow("tags: a array cell holds JSON text: Expecting value (character 2)")),
    ]


def test_csv_header_problems(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("id,label,id\n1,a,1\n")
    with pytest.raises(FileError, match=r"t\.csv:1: the header names 'id' more than once"):
        read(path)
    (tmp_path / "empty.csv").write_text("")
    assert read(tmp_path / "empty.csv") == []


def test_parquet_nulls_are_absent_fields(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist(
        [
            {"id": 1, "label": None, "tags": ["a", "b"], "name": {"fr": "x"}},
            {"id": 2, "label": "b", "tags": None},
        ]
    )
    pq.write_table(table, tmp_path / "t.parquet")
    expected = [(1, {"id": 1, "tags": ["a", "b"], "name": {"fr": "x"}}), (2, {"id": 2, "label": "b"})]
    assert read(tmp_path / "t.parquet") == expected
    (tmp_path / "t.parquet.gz").write_bytes(gzip.compress((tmp_path / "t.parquet").read_bytes()))
    assert read(tmp_path / "t.parquet.gz") == expected
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(FileError, match=r"bad\.parquet: unreadable Parquet"):
        read(tmp_path / "bad.parquet")


def test_gzip_of_every_text_format(tmp_path: Path) -> None:
    for name, text in [("t.jsonl.gz", '{"id": 1}\n'), ("t.json.gz", '[{"id": 1}]'), ("t.csv.gz", "id\n1\n")]:
        (tmp_path / name).write_bytes(gzip.compress(text.encode()))
        assert read(tmp_path / name) == [(2 if name == "t.csv.gz" else 1, {"id": 1})]
    (tmp_path / "bad.jsonl.gz").write_bytes(b"plain text")
    with pytest.raises(FileError, match=r"bad.jsonl.gz: not gzip data, though the name ends in .gz"):
        read(tmp_path / "bad.jsonl.gz")
    (tmp_path / "cut.jsonl.gz").write_bytes(gzip.compress(b'{"id": 1}\n' * 1000)[:-30])
    with pytest.raises(FileError, match=r"cut\.jsonl\.gz: the compressed file is truncated"):
        read(tmp_path / "cut.jsonl.gz")


def test_unreadable_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(FileError, match=r"t.xml: unknown file type '.xml' \(expected .jsonl, .ndjson"):
        check_readable(str(tmp_path / "t.xml"))
    with pytest.raises(FileError, match=r"nope\.jsonl: no such file"):
        check_readable(str(tmp_path / "nope.jsonl"))
    with pytest.raises(FileError, match=r"dir\.csv: not a regular file"):
        (tmp_path / "dir.csv").mkdir()
        check_readable(str(tmp_path / "dir.csv"))
    (tmp_path / "latin.jsonl").write_bytes(b'{"id": 1, "label": "\xe9"}\n')
    assert read(tmp_path / "latin.jsonl") == [
        (1, BadRow("not UTF-8 text (invalid continuation byte at byte 20)"))
    ]
    (tmp_path / "latin.csv").write_bytes(b"id,label\n1,\xe9\n")
    with pytest.raises(FileError, match=r"latin\.csv: not UTF-8 text"):
        read(tmp_path / "latin.csv")

"""records/distributed.py without a cluster: how input files are cut into the blocks shipped to
Ray workers (every line in exactly one block, numbered as in the file), and the store's location
helpers for a folder and an object-store URI. The Ray load itself: tests/e2e/test_records_ray.py."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from lynxc.runtime.backends.records import distributed
from lynxc.runtime.backends.records.rows import FileError, _jsonl_rows
from lynxc.runtime.backends.records.store import (
    lance_uri,
    load_lock,
    spill_dir,
    store_location,
)


def lines_of(blocks: list[distributed.Block]) -> list[tuple[int, object]]:
    import io

    found = []
    for block in blocks:
        found += [(block.first_line + n, row) for n, row in _jsonl_rows(io.BytesIO(block.data))]
    return found


@pytest.mark.parametrize("compressed", [False, True])
def test_jsonl_blocks_cover_every_line_once_with_the_files_line_numbers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compressed: bool
) -> None:
    monkeypatch.setattr(distributed, "MIN_BLOCK_BYTES", 100)
    text = "".join(f'{{"n": {i}, "pad": "{"x" * (i % 37)}"}}\n' if i % 11 else "\n" for i in range(500))
    text += '{"n": "last, no newline"}'
    path = tmp_path / ("rows.jsonl.gz" if compressed else "rows.jsonl")
    if compressed:
        with gzip.open(path, "wt") as handle:
            handle.write(text)
    else:
        path.write_text(text)
    blocks = list(distributed._blocks([str(path)], workers=2))
    assert len(blocks) > 4 and all(not b.whole and b.path == str(path) for b in blocks)
    with gzip.open(path, "rb") if compressed else open(path, "rb") as handle:
        expected = list(_jsonl_rows(handle))
    assert lines_of(blocks) == expected
    assert expected[-1] == (501, {"n": "last, no newline"})


def test_other_formats_travel_whole_and_a_broken_gzip_is_a_file_error(tmp_path: Path) -> None:
    csv = tmp_path / "rows.csv"
    csv.write_text("n\n1\n2\n")
    broken = tmp_path / "rows.jsonl.gz"
    broken.write_bytes(b"not gzip at all")
    (block,) = distributed._blocks([str(csv)], workers=2)
    assert block.whole and block.data == csv.read_bytes() and block.index == 0
    with pytest.raises(FileError, match=r"rows\.jsonl\.gz: not gzip data"):
        list(distributed._blocks([str(broken)], workers=2))


def test_a_folder_and_a_uri_as_store_locations(tmp_path: Path) -> None:
    folder = store_location(str(tmp_path / "store"))
    assert not folder.remote and lance_uri(folder) == str(tmp_path / "store" / "lance")
    assert spill_dir(folder) == tmp_path / "store" / "tmp"
    remote = store_location("s3://bucket/prefix/", {"endpoint": "http://127.0.0.1:1"})
    assert remote.remote and lance_uri(remote) == "s3://bucket/prefix/lance"
    assert remote.storage_options() == {"endpoint": "http://127.0.0.1:1"}
    assert not str(spill_dir(remote)).startswith("s3:")
    with load_lock(folder) as lease:  # a folder's lock is flock: no lease to check
        assert lease is None

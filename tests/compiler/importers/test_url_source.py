"""A document fetched over HTTP (a local server the test starts), its relative $refs too."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lynxc.compiler.importers.openapi import OpenAPIError, import_document

from .helpers import get, openapi


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # the test's output stays the test's
        pass


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(tmp_path)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_document_and_its_relative_refs_over_http(tmp_path: Path, served: str) -> None:
    (tmp_path / "defs").mkdir()
    (tmp_path / "defs" / "pet.json").write_text(
        json.dumps({"Pet": {"type": "object", "properties": {"id": {"type": "integer"}}}})
    )
    (tmp_path / "api.json").write_text(
        json.dumps(openapi({"/pet": {"get": get({"$ref": "defs/pet.json#/Pet"})}}))
    )
    result = import_document(f"{served}/api.json", "pets")
    assert result.tools["get_pet"]["output"] == {"type": "object", "properties": {"id": {"type": "integer"}}}


def test_a_missing_url_is_one_clear_error(served: str) -> None:
    with pytest.raises(OpenAPIError) as caught:
        import_document(f"{served}/nothing.json", "pets")
    assert str(caught.value) == f"{served}/nothing.json: answered 404 File not found"


def test_a_local_document_may_not_reach_for_urls(tmp_path: Path, served: str) -> None:
    (tmp_path / "api.json").write_text(
        json.dumps(openapi({"/pet": {"get": get({"$ref": f"{served}/x.json#/Pet"})}}))
    )
    with pytest.raises(OpenAPIError, match="names a URL; a local document may refer to relative files only"):
        import_document(str(tmp_path / "api.json"), "pets")

"""A call's request from its arguments: each value goes where http.json puts it, and none can
change the request's shape (path traversal, header injection)."""

from __future__ import annotations

from typing import Any

import pytest

from lynxc.runtime.backends.http.catalog import Body, HttpTool
from lynxc.runtime.backends.http.request import (
    build_request,
    check_base_url,
    fill_path,
    header_pairs,
    join_url,
    query_pairs,
)
from lynxc.runtime.errors import ToolError
from tests.runtime.backends.http.engine import parsed_tool


def tool(**changes: Any) -> HttpTool:
    return parsed_tool(**{"path": "/files/{name}", "path_params": {"name": "name"}, **changes})


@pytest.mark.parametrize(
    ("value", "segment"),
    [
        ("report.txt", "report.txt"),
        ("../x", "..%2Fx"),
        ("a/b", "a%2Fb"),
        ("%2e%2e", "%252e%252e"),
        ("what?x=1", "what%3Fx%3D1"),
        ("frag#ment", "frag%23ment"),
        ("a b", "a%20b"),
        ("...", "..."),
        (7, "7"),
        (True, "true"),
        (2.5, "2.5"),
    ],
)
def test_a_path_value_is_one_encoded_segment(value: Any, segment: str) -> None:
    assert fill_path(tool(), {"name": value}) == f"/files/{segment}"


@pytest.mark.parametrize("value", ["..", ".", ""])
def test_a_dot_segment_or_empty_path_value_is_refused(value: str) -> None:
    with pytest.raises(ToolError, match=r"^name: .* cannot be a path segment \(it would change the path\)"):
        fill_path(tool(), {"name": value})


def test_a_renamed_placeholder_reads_its_parameter() -> None:
    renamed = tool(path="/pets/{petId}/toys/{toy}", path_params={"petId": "pet_id", "toy": "toy"})
    assert fill_path(renamed, {"pet_id": 7, "toy": "ball"}) == "/pets/7/toys/ball"


def test_query_arrays_repeat_booleans_are_words_and_none_is_left_out() -> None:
    q = tool(query={"tag": "tags", "page[size]": "page_size", "deleted": "deleted", "q": "q"})
    pairs = query_pairs(q, {"tags": ["a", "b c"], "page_size": 10, "deleted": False, "q": None})
    assert pairs == [("tag", "a"), ("tag", "b c"), ("page[size]", "10"), ("deleted", "false")]
    url = join_url("https://api.example.com/v1/", "/pets", pairs)
    assert url == "https://api.example.com/v1/pets?tag=a&tag=b%20c&page%5Bsize%5D=10&deleted=false"


def test_a_base_url_query_is_kept() -> None:
    assert join_url("https://h/api?version=2", "/x", [("a", "&=")]) == "https://h/api/x?version=2&a=%26%3D"


@pytest.mark.parametrize("value", ["ok\r\nX-Injected: 1", "line\nbreak", "nul\x00", "bell\x07"])
def test_a_header_value_with_a_control_character_is_refused_naming_the_parameter(value: str) -> None:
    h = tool(headers={"X-Trace-Id": "trace_id"})
    with pytest.raises(ToolError, match=r"^trace_id: a header value cannot hold a line break.*X-Trace-Id"):
        header_pairs(h, {"trace_id": value})


def test_header_values() -> None:
    h = tool(headers={"X-Trace-Id": "trace_id", "X-Dry-Run": "dry", "X-None": "absent"})
    assert header_pairs(h, {"trace_id": "a\tb", "dry": True, "absent": None}) == [
        ("X-Trace-Id", "a\tb"),
        ("X-Dry-Run", "true"),
    ]


def test_bodies_fields_object_or_one_parameter() -> None:
    fields = tool(
        method="POST", path="/pets", path_params={}, body=Body(fields={"name": "pet_name", "tag": "tag"})
    )
    request = build_request(fields, "http://h", {"User-Agent": "a/1"}, {"pet_name": "Rex", "tag": None})
    assert request.content == b'{"name":"Rex"}'
    assert request.headers == [("User-Agent", "a/1"), ("Content-Type", "application/json")]
    assert request.shown == "POST /pets"
    whole = tool(method="PUT", path="/pets", path_params={}, body=Body(param="payload"))
    assert build_request(whole, "http://h", {}, {"payload": [1, {"é": 2}]}).content == '[1,{"é":2}]'.encode()
    assert build_request(whole, "http://h", {}, {"payload": None}).content is None


def test_the_shown_request_has_no_host_and_no_query() -> None:
    q = tool(query={"q": "q"})
    request = build_request(q, "https://user:pw@api.example.com/v1", {}, {"name": "a b", "q": "secret-ish"})
    assert request.shown == "GET /files/a%20b"
    assert request.url == "https://user:pw@api.example.com/v1/files/a%20b?q=secret-ish"


@pytest.mark.parametrize("url", ["ftp://h/x", "/relative", "http://", "not a url", "http://h:99999/"])
def test_a_base_url_must_be_absolute_http(url: str) -> None:
    with pytest.raises(ToolError, match=r"^setting 'api_url' is not an absolute http:// or https:// URL$"):
        check_base_url(url, "setting 'api_url'")

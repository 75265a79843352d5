"""The pure parts of an answer's handling: retry waits, Retry-After, the result pointer and wrap,
excerpts with secrets masked."""

from __future__ import annotations

import pytest

from lynxc.runtime.backends.http.catalog import Auth
from lynxc.runtime.backends.http.credentials import secret_values
from lynxc.runtime.backends.http.redaction import excerpt, redact_secrets
from lynxc.runtime.backends.http.results import json_result, pointed, status_error, text_result
from lynxc.runtime.backends.http.retries import backoff, retry_after, retry_wait
from lynxc.runtime.errors import ToolError
from tests.runtime.backends.http.engine import parsed_tool as tool


def test_backoff_doubles_from_half_a_second() -> None:
    assert [backoff(n) for n in range(4)] == [0.5, 1, 2, 4]


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after("3") == 3.0
    assert retry_after(None) is None and retry_after("soon") is None and retry_after("-1") is None
    now = 1_445_412_480.0  # Wed, 21 Oct 2015 07:28:00 GMT
    assert retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now) == 10.0
    assert retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now) == 0.0  # in the past: at once


def test_retry_wait_only_for_later_statuses_and_within_the_deadline() -> None:
    assert retry_wait(503, "2", 0, remaining=5) == 2.0
    assert retry_wait(503, "9", 0, remaining=5) is None  # does not fit: the answer stands
    assert retry_wait(429, None, 1, remaining=5) == 1.0
    assert retry_wait(502, None, 3, remaining=3) is None  # a 4 s backoff does not fit either
    for status in (500, 501, 404, 200):
        assert retry_wait(status, "0", 0, remaining=5) is None


def test_pointer_escapes_and_indexes() -> None:
    document = {"a/b": {"m~n": [10, {"k": "v"}]}}
    assert pointed(document, "/a~1b/m~0n/1/k", "GET /x") == "v"
    assert pointed(document, "/a~1b/m~0n/0", "GET /x") == 10
    with pytest.raises(ToolError, match=r"^GET /x answered JSON without the value at /a~1b/m~0n/2 "):
        pointed(document, "/a~1b/m~0n/2", "GET /x")


def test_json_results_are_objects_or_wrapped() -> None:
    assert json_result(tool(), b'{"a": 1}', "application/json", "GET /x", []) == {"a": 1}
    assert json_result(tool(), b"", "", "GET /x", []) == {}  # 204 No Content
    assert json_result(tool(wrap="items"), b"[1, 2]", "", "GET /x", []) == {"items": [1, 2]}
    assert json_result(tool(result="/n", wrap="n"), b'{"n": 3}', "", "GET /x", []) == {"n": 3}
    with pytest.raises(
        ToolError, match=r"^GET /x answered JSON that is an array, not an object .*set `wrap`"
    ):
        json_result(tool(), b"[1]", "", "GET /x", [])
    with pytest.raises(
        ToolError, match=r"^GET /x answered a body that is not JSON \(text/html\): <b>k-\*\*\*</b>$"
    ):
        json_result(tool(), b"<b>k-SECRET</b>", "text/html", "GET /x", ["SECRET"])


def test_text_results_decode_with_the_charset() -> None:
    assert text_result("é".encode("latin-1"), "text/plain; charset=latin-1", "latin-1") == {
        "text": "é",
        "content_type": "text/plain; charset=latin-1",
    }
    assert text_result(b"\xff ok", "text/plain", "no-such-charset")["text"] == "\ufffd ok"


def test_excerpts_mask_secrets_before_cutting() -> None:
    secret = "s" * 10
    body = ("x" * 295 + secret).encode()
    assert excerpt(body, [secret]) == "x" * 295 + "***"
    assert excerpt(("y" * 400).encode(), []) == "y" * 299 + "…"
    assert excerpt(b"line one\n\n  line two", []) == "line one line two"
    assert redact_secrets("ab abc", ["ab", "abc"]) == "*** ***"
    assert redact_secrets("postgresql://u:pw@h/db", []) == "postgresql://u:***@h/db"
    message = str(status_error("GET /x", 404, "Not Found", b"", []))
    assert message == "GET /x answered 404 Not Found"


def test_secrets_include_the_forms_they_travel_in() -> None:
    basic = Auth(kind="basic", username="u", password="p")
    assert secret_values(basic, {"u": "alice", "p": None}) == ["alice", "alice"]  # no pair to mask
    values = secret_values(Auth(kind="basic", username="u", password="p"), {"u": "alice", "p": "p w"})
    assert set(values) == {"alice", "p w", "p%20w", "YWxpY2U6cCB3"}
    assert secret_values(None, {"x": "y"}) == []

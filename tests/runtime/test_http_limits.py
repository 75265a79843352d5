"""Streamable HTTP limits: idle sessions expire, a session cap and a bound per client, deadlines
for a trickled request head or body, and which Host headers DNS-rebinding protection accepts
for each bind address.

Servers bind 127.0.0.1 only; the wildcard bind is checked in-process without binding. Waits are
bounded; no test asserts how long anything took."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import time
from contextlib import AbstractContextManager

import httpx
import pytest

from lynxc.runtime.cli import add_serve_arguments, run_serve
from lynxc.runtime.definition import load_definition
from tests.conftest import ROOT, http_process, lynxc_command

PROTOCOL = "2025-06-18"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def server(*options: str) -> AbstractContextManager[tuple[int, subprocess.Popen]]:
    """`lynxc serve dot-harness --transport http` on 127.0.0.1 with extra options."""
    return http_process(options=options)


def open_session(client: httpx.Client, port: int) -> str:
    response = client.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers=ACCEPT)
    assert response.status_code == 200, response.text
    return response.headers["mcp-session-id"]


def ping(client: httpx.Client, port: int, session: str) -> int:
    headers = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": PROTOCOL}
    return client.post(f"http://127.0.0.1:{port}/mcp", json=PING, headers=headers).status_code


def wait_until_expired(client: httpx.Client, port: int, sessions: list[str], idle: float) -> list[str]:
    """Asking about a session keeps it alive, so each is asked once, after a longer wait than
    the one before; returns the sessions found expired (the one that answered 404, and all
    opened before it, are asked again: none may be left)."""
    for i, session in enumerate(reversed(sessions)):
        time.sleep(idle * 1.5)
        if ping(client, port, session) == 404:
            older = sessions[: len(sessions) - i - 1]
            return [session] + [s for s in older if ping(client, port, s) == 404]
    return []


# Sessions -----------------------------------------------------------------------------------


def test_idle_sessions_expire_and_answer_404() -> None:
    with server("--session-idle-timeout", "1") as (port, _), httpx.Client() as client:
        sessions = [open_session(client, port) for _ in range(6)]
        assert ping(client, port, sessions[0]) == 200  # alive while in use
        expired = wait_until_expired(client, port, sessions, idle=1)
    assert expired and set(expired) >= set(sessions[: sessions.index(expired[0]) + 1])


def test_sessions_beyond_the_cap_are_refused() -> None:
    with server("--max-sessions", "2") as (port, _), httpx.Client() as client:
        kept = [open_session(client, port) for _ in range(2)]
        refused = client.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers=ACCEPT)
        assert refused.status_code == 503
        assert all(ping(client, port, s) == 200 for s in kept)


def test_one_client_cannot_take_every_session() -> None:
    """Past its bound a client is refused (429) a new session; another client (another remote
    address: 127.0.0.2 is loopback too) opens its own, and the first keeps those it holds."""
    url_of = "http://127.0.0.1:{}/mcp".format
    other_address = httpx.HTTPTransport(local_address="127.0.0.2")
    with (
        server("--max-sessions-per-client", "3") as (port, _),
        httpx.Client() as first,
        httpx.Client(transport=other_address) as second,
    ):
        held = [open_session(first, port) for _ in range(3)]
        refused = first.post(url_of(port), json=INITIALIZE, headers=ACCEPT)
        assert refused.status_code == 429
        assert "--max-sessions-per-client" in refused.json()["error"]["message"]
        assert [open_session(second, port) for _ in range(3)]
        assert all(ping(first, port, session) == 200 for session in held)
        # A request of the 2026-07-28 era opens no session: it is served at the bound.
        modern = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
        listed = first.post(
            url_of(port),
            json={**PING, "method": "tools/list", "params": {"_meta": MODERN_META}},
            headers=modern,
        )
        assert listed.status_code == 200, listed.text
        # Ending a session gives its place back.
        ended = first.delete(
            url_of(port), headers={**ACCEPT, "mcp-session-id": held[0], "mcp-protocol-version": PROTOCOL}
        )
        assert ended.status_code == 200
        assert open_session(first, port)


def test_an_expired_session_gives_its_place_back() -> None:
    with (
        server("--max-sessions-per-client", "1", "--session-idle-timeout", "1") as (port, _),
        httpx.Client() as client,
    ):
        opened = open_session(client, port)
        assert client.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers=ACCEPT).status_code == 429
        assert wait_until_expired(client, port, [opened], idle=1) == [opened]
        assert open_session(client, port)


def test_an_authenticated_caller_is_one_client_at_any_address() -> None:
    """Once a server authenticates callers, the bound follows the identity, not the address."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken

    from lynxc.runtime.http_sessions import client_key

    def caller(address: str, client_id: str) -> dict:
        token = AccessToken(token="t", client_id=client_id, scopes=[], subject="alice")
        return {"client": (address, 40000), "user": AuthenticatedUser(token)}

    assert client_key(caller("10.0.0.1", "app")) == client_key(caller("10.0.0.2", "app"))
    assert client_key(caller("10.0.0.1", "app")) != client_key(caller("10.0.0.1", "other"))
    assert client_key({"client": ("10.0.0.1", 1)}) != client_key({"client": ("10.0.0.2", 1)})
    assert client_key({"client": ("10.0.0.1", 1)}) == client_key({"client": ("10.0.0.1", 2)})


# Request deadlines --------------------------------------------------------------------------


def trickle(port: int, opening: bytes, drip: bytes, limit: float = 30) -> bytes | None:
    """Send `opening`, then `drip` a byte every 0.2 s; everything the server sent if it closed
    the connection within `limit` seconds, None if it was still open."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(0.2)
        sock.sendall(opening)
        received = b""
        deadline = time.monotonic() + limit
        for byte in (drip[i : i + 1] for i in range(len(drip))):
            if time.monotonic() > deadline:
                return None
            try:
                sock.sendall(byte)
                chunk = sock.recv(4096)
            except TimeoutError:
                continue
            except OSError:  # reset by the server
                return received
            if not chunk:
                return received
            received += chunk
        return None


def head(port: int, length: int) -> bytes:
    return (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\naccept: {ACCEPT['accept']}\r\n"
        f"content-type: application/json\r\ncontent-length: {length}\r\n\r\n"
    ).encode()


def test_a_trickled_request_head_is_cut_off_with_408() -> None:
    with server("--header-timeout", "1") as (port, _):
        received = trickle(port, b"POST /mcp HTTP/1.1\r\n", b"x-slow: " + b"a" * 1000)
    assert received is not None, "the connection was still open"
    assert received.startswith(b"HTTP/1.1 408 Request Timeout\r\n")


def test_a_connection_that_sends_nothing_is_closed() -> None:
    with server("--header-timeout", "1") as (port, _), socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(30)
        assert sock.recv(4096) == b""


def test_a_trickled_body_is_cut_off() -> None:
    with server("--body-timeout", "1") as (port, process):
        received = trickle(port, head(port, 4000), b"{" * 4000)
        assert received is not None, "the connection was still open"
        with httpx.Client() as client:  # the server goes on serving
            open_session(client, port)
        process.terminate()
        assert "Traceback" not in process.communicate(timeout=10)[1]


def test_an_open_event_stream_outlives_the_request_deadlines() -> None:
    """The deadlines cover reading a request, never the response: a GET stream stays open."""
    with server("--header-timeout", "1", "--body-timeout", "1") as (port, _), httpx.Client() as client:
        session = open_session(client, port)
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(
                f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\naccept: text/event-stream\r\n"
                f"mcp-session-id: {session}\r\nmcp-protocol-version: {PROTOCOL}\r\n\r\n".encode()
            )
            sock.settimeout(10)
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
            sock.settimeout(3)  # three times both deadlines
            with pytest.raises(TimeoutError):
                sock.recv(4096)  # nothing to say, and not closed


# Host names and binding off loopback ----------------------------------------------------------


def test_allowed_host_adds_a_name_and_others_are_still_refused() -> None:
    with server("--allowed-host", "mcp.example.test") as (port, _), httpx.Client() as client:

        def status(host: str) -> int:
            headers = {**ACCEPT, "host": host}
            return client.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers=headers).status_code

        assert status(f"mcp.example.test:{port}") == 200
        assert status(f"127.0.0.1:{port}") == 200
        assert status(f"attacker.example:{port}") == 421


def serve_in_process(monkeypatch: pytest.MonkeyPatch, *argv: str) -> dict:
    """Run `lynxc serve dot-harness` up to uvicorn, which is replaced: nothing is bound."""
    import uvicorn

    started: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: started.update(app=app, **options))
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    monkeypatch.chdir(ROOT)
    for name in [n for n in os.environ if n.startswith("LYNXC_")]:
        monkeypatch.delenv(name)
    assert run_serve(load_definition(ROOT / "generated/dot-harness"), parser.parse_args(argv)) == 0
    return started


@pytest.mark.parametrize("bind", ["0.0.0.0", "::"])
def test_a_wildcard_bind_warns_and_serves_loopback_names(
    bind: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from starlette.testclient import TestClient

    started = serve_in_process(
        monkeypatch, "--transport", "http", "--host", bind, "--allowed-host", "10.1.2.3"
    )
    warning = capsys.readouterr().err.splitlines()[0]
    assert warning.startswith(
        f"lynxc: warning: --host {bind} listens on every network interface: other machines"
    )
    assert "only requests whose Host header names 127.0.0.1, localhost, [::1], 10.1.2.3 are served" in warning
    assert "--allowed-host" in warning
    assert started["host"] == bind and started["http"].header_timeout == 10

    with TestClient(started["app"]) as client:

        def status(host: str) -> int:
            return client.post("/mcp", json=INITIALIZE, headers={**ACCEPT, "host": host}).status_code

        # A client on this machine, or through a container's port mapping, sends a loopback name.
        assert status("localhost:8765") == 200
        assert status("10.1.2.3:8765") == 200
        assert status("rebound.attacker.example:8765") == 421
        assert status(f"{bind}:8765") == 421


def test_a_loopback_bind_says_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    serve_in_process(monkeypatch, "--transport", "http")
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (
            ("--session-idle-timeout", "0"),
            "--session-idle-timeout must be a positive number of seconds, got 0.0",
        ),
        (("--header-timeout", "nan"), "--header-timeout must be a positive number of seconds, got nan"),
        (("--max-sessions", "0"), "--max-sessions must be at least 1"),
        (("--max-sessions-per-client", "0"), "--max-sessions-per-client must be at least 1"),
        (("--allowed-host", "a/b"), "--allowed-host 'a/b': expected a host name or address"),
    ],
)
def test_bad_http_options_are_usage_errors(option: tuple[str, str], message: str) -> None:
    done = subprocess.run(lynxc_command("serve", "dot-harness", *option), capture_output=True, text=True)
    assert done.returncode == 2 and message in done.stderr


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("MCP.Example.test", "mcp.example.test"),
        ("example.test:8443", "example.test:8443"),
        ("fe80::1", "[fe80::1]"),
        ("[::1]:8765", "[::1]:8765"),
        ("10.1.2.3", "10.1.2.3"),
    ],
)
def test_allowed_host_names_take_the_form_of_host_headers(text: str, name: str) -> None:
    from lynxc.runtime.http_hosts import host_name

    assert host_name(text) == name


@pytest.mark.parametrize("text", ["", "http://x", "a b", "x:port", "[::1", "[::1]x"])
def test_text_that_is_no_host_name_is_refused(text: str) -> None:
    from lynxc.runtime.http_hosts import host_name

    with pytest.raises(ValueError, match="--allowed-host"):
        host_name(text)

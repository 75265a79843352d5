"""`lynxc serve` for a server that authenticates its callers (issue 27): what stops a start, what
the HTTP app is wired with, and where audit lines go. uvicorn.run is replaced so the app is built
exactly as for serving, without listening; requests go through Starlette's test client."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from lynxc.runtime.auth.api_keys import add_key
from lynxc.runtime.cli import add_serve_arguments, run_serve
from lynxc.runtime.definition import ServerDefinition, load_definition
from lynxc.runtime.http_hosts import exposure_warning

DESK = Path(__file__).resolve().parents[2] / "generated" / "support-desk"


def serve(
    monkeypatch: pytest.MonkeyPatch, definition: ServerDefinition, *argv: str
) -> tuple[int, dict[str, Any]]:
    started: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: started.update(app=app, **options))
    for name in [n for n in os.environ if n.startswith("LYNXC_")]:
        monkeypatch.delenv(name)
    parser = argparse.ArgumentParser()
    add_serve_arguments(parser)
    monkeypatch.chdir(DESK.parents[1])
    return run_serve(definition, parser.parse_args(list(argv))), started


def test_http_needs_the_issuer_resource_and_keys_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, started = serve(monkeypatch, load_definition(DESK), "--transport", "http")
    assert status == 2 and not started
    err = capsys.readouterr().err
    for setting in ("oauth_issuer", "oauth_resource", "api_keys_file"):
        assert f"the setting {setting!r}, which is not set" in err
    status, _ = serve(
        monkeypatch,
        load_definition(DESK),
        "--transport", "http",
        "--set", "oauth_issuer=http://auth.example.com/realms/x",  # plain http elsewhere
        "--set", "oauth_resource=http://127.0.0.1:8765/mcp",
        "--set", f"api_keys_file={tmp_path / 'missing.json'}",
    )  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2 and "must be an https:// URL" in err and "Traceback" not in err


def test_stdio_needs_none_of_them_and_audits_on_stderr(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    served: dict[str, Any] = {}
    monkeypatch.setattr(
        "lynxc.runtime.serve.serve", lambda definition, settings, **options: served.update(options)
    )
    status, _ = serve(monkeypatch, load_definition(DESK))
    assert status == 0 and served["transport"] == "stdio"
    assert served["audit_log"] == "-" and served["authenticator"] is None
    status, _ = serve(monkeypatch, load_definition(DESK), "--audit-log", "off")
    assert served["audit_log"] is None


def test_an_unopenable_audit_log_stops_the_start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, _ = serve(monkeypatch, load_definition(DESK), "--audit-log", str(tmp_path / "no" / "audit.log"))
    assert status == 2
    assert "--audit-log" in capsys.readouterr().err and not (tmp_path / "no").exists()


def test_a_stdio_only_server_refuses_http(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stdio_only = replace(load_definition(DESK), auth=None, transports=("stdio",))
    status, started = serve(monkeypatch, stdio_only, "--transport", "http")
    assert status == 2 and not started
    assert "served on stdio only (server.transports in its spec), not http" in capsys.readouterr().err


def test_the_http_app_authenticates_and_publishes_its_metadata(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from starlette.testclient import TestClient

    keys = tmp_path / "keys.json"
    key = add_key(keys, "ops", ["orders:read", "orders:admin"], {"email": "ops@example.com"})
    status, started = serve(
        monkeypatch,
        load_definition(DESK),
        "--transport", "http", "--host", "0.0.0.0",
        "--set", "oauth_issuer=https://auth.example.com/realms/shop",
        "--set", "oauth_resource=https://desk.example.com/mcp",
        "--set", f"api_keys_file={keys}",
        "--audit-log", str(tmp_path / "audit.log"),
    )  # fmt: skip
    assert status == 0
    err = capsys.readouterr().err
    # Reachable from other machines, and authenticated: the warning is about plain HTTP now.
    assert "unencrypted unless TLS ends in front" in err and "with no authentication" not in err
    with TestClient(started["app"], base_url="http://127.0.0.1") as client:
        metadata = client.get("/.well-known/oauth-protected-resource/mcp").json()
        assert metadata["resource"] == "https://desk.example.com/mcp"
        assert metadata["authorization_servers"] == ["https://auth.example.com/realms/shop"]
        refused = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == (
            'Bearer resource_metadata="https://desk.example.com/.well-known/oauth-protected-resource/mcp"'
        )
        client_info = {"name": "t", "version": "0"}
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client_info}
        accepted = client.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
            headers={"authorization": f"Bearer {key}", "accept": "application/json, text/event-stream"},
        )
        assert accepted.status_code == 200, accepted.text
    lines = [json.loads(line) for line in (tmp_path / "audit.log").read_text().splitlines()]
    assert [(line["event"], line["status"], line["outcome"]) for line in lines] == [
        ("http", 401, "unauthenticated")
    ]


def test_exposure_warning_without_auth_is_unchanged() -> None:
    warning = exposure_warning("0.0.0.0", ["127.0.0.1"])
    assert warning is not None and "with no authentication" in warning
    assert exposure_warning("127.0.0.1", ["127.0.0.1"], authenticated=True) is None

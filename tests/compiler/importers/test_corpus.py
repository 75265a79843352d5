"""Every document of the corpus imports; what each imports and skips, with the reasons, checked
against a reading of the document."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from lynxc.compiler.importers.openapi import import_document, render_files

from .helpers import CORPUS

_JWT_BODY = "its request body is application/jwt, and HTTP tools send JSON"
# document -> (tools imported, {skipped operation: reason})
EXPECTED: dict[str, tuple[list[str], dict[str, str]]] = {
    "1forge.com__0.0.1.yaml": (["get_quotes", "get_symbols"], {}),
    "1password.com__events__1.0.0.yaml": (
        ["get_auth_introspect", "get_item_usages", "get_sign_in_attempts"],
        {},
    ),
    "1password.com__events__1.2.0.yaml": (
        [
            "get_audit_events",
            "get_auth_introspect",
            "get_auth_introspect_v2",
            "get_item_usages",
            "get_sign_in_attempts",
        ],
        {},
    ),
    "1password.local__connect__1.3.0.yaml": (
        [
            "create_vault_item",
            "delete_vault_item",
            "get_api_activity",
            "get_details_of_file_by_id",
            "get_heartbeat",
            "get_item_files",
            "get_prometheus_metrics",
            "get_server_health",
            "get_vault_by_id",
            "get_vault_item_by_id",
            "get_vault_items",
            "get_vaults",
            "patch_vault_item",
            "update_vault_item",
        ],
        {
            "GET /vaults/{vaultUuid}/items/{itemUuid}/files/{fileUuid}/content (DownloadFileByID)": (
                "its 200 response is application/octet-stream, neither JSON nor text"
            )
        },
    ),
    "6-dot-authentiqio.appspot.com__6.yaml": (
        [
            "get_key_pk",
            "head_key_pk",
            "key_revoke",
            "key_revoke_nosecret",
            "sign_confirm",
            "sign_delete",
            "sign_retrieve",
            "sign_retrieve_head",
        ],
        {
            "POST /key (key_register)": _JWT_BODY,
            "POST /key/{PK} (key_update)": _JWT_BODY,
            "POST /login (push_login_request)": _JWT_BODY,
            "POST /scope (sign_request)": _JWT_BODY,
            "PUT /key/{PK} (key_bind)": _JWT_BODY,
            "PUT /scope/{job} (sign_update)": "its 200 response is application/jwt, neither JSON nor text",
        },
    ),
    "adyen.com__DataProtectionService__1.yaml": (["post_request_subject_erasure"], {}),
    "apis.guru__2.1.0.yaml": (["get_api", "get_metrics", "get_provider", "get_service_api", "list_apis"], {}),
    "apis.guru__2.2.0.yaml": (
        [
            "get_api",
            "get_metrics",
            "get_provider",
            "get_providers",
            "get_service_api",
            "get_services",
            "list_apis",
        ],
        {},
    ),
    "medium.com__1.0.0.yaml": (
        [
            "get_me",
            "get_publications_publication_id_contributors",
            "get_users_user_id_publications",
            "post_publications_publication_id_posts",
            "post_users_author_id_posts",
        ],
        {},
    ),
    "twilio.com__twilio_frontline_v1__1.55.0.yaml": (
        ["fetch_user"],
        {
            "POST /v1/Users/{Sid} (UpdateUser)": (
                "its request body is a form (application/x-www-form-urlencoded), and HTTP tools send JSON"
            )
        },
    ),
    "xero.com__xero-identity__2.9.4.yaml": (
        [],
        {
            f"{op}": "its security needs 'OAuth2': OAuth 2 flow authorizationCode needs a person's consent; "
            "lynxc sends client credentials only"
            for op in ("DELETE /Connections/{id} (deleteConnection)", "GET /Connections (getConnections)")
        },
    ),
    "xkcd.com__1.0.0.yaml": (["get_comic_id_info_0_json", "get_info_0_json"], {}),
}


def test_every_document_of_the_corpus_has_its_expectation() -> None:
    assert sorted(p.name for p in CORPUS.glob("*.yaml")) == sorted(EXPECTED)


@pytest.mark.parametrize("document", sorted(EXPECTED))
def test_imported_and_skipped_per_document(document: str) -> None:
    result = import_document(str(CORPUS / document), "api")
    tools, skipped = EXPECTED[document]
    assert sorted(result.tools) == tools
    assert {s.operation: s.reason for s in result.skipped} == skipped


@pytest.mark.parametrize("document", sorted(EXPECTED))
def test_written_yaml_reads_back_as_the_import(document: str) -> None:
    result = import_document(str(CORPUS / document), "api")
    yaml = YAML(typ="safe", pure=True)
    for name, text in render_files(result).items():
        data = yaml.load(text)
        assert data["lynxc"] == 1
        if name == "server.yaml":
            assert data["server"] == result.server
        else:
            assert data["tool"] == result.tools[name.removesuffix(".yaml")]


@pytest.mark.parametrize("document", sorted(EXPECTED))
def test_import_is_deterministic(document: str) -> None:
    first = render_files(import_document(str(CORPUS / document), "api"))
    second = render_files(import_document(str(CORPUS / document), "api"))
    assert first == second and list(first) == list(second)


def test_security_schemes_of_the_corpus_become_server_auth() -> None:
    def auth(document: str) -> dict | None:
        return import_document(str(CORPUS / document), "api").server["http"].get("auth")

    assert auth("1password.local__connect__1.3.0.yaml") == {"bearer": {"token": {"setting": "api_token"}}}
    # medium: an API key in the Authorization header, or OAuth 2 accessCode: the key is sendable
    assert auth("medium.com__1.0.0.yaml") == {
        "api_key": {"in": "header", "name": "Authorization", "value": {"setting": "api_api_key"}}
    }
    # adyen accepts basic or an API key, each alone: basic is listed first
    assert auth("adyen.com__DataProtectionService__1.yaml") == {
        "basic": {"username": {"setting": "api_username"}, "password": {"setting": "api_password"}}
    }
    assert auth("xkcd.com__1.0.0.yaml") is None


def test_base_urls_of_the_corpus() -> None:
    def default(document: str) -> str | None:
        return import_document(str(CORPUS / document), "api").server["settings"]["api_url"].get("default")

    assert default("1forge.com__0.0.1.yaml") == "https://1forge.com/forex-quotes"  # 2.0 host + basePath
    assert default("xkcd.com__1.0.0.yaml") == "http://xkcd.com"
    assert default("apis.guru__2.2.0.yaml") == "https://api.apis.guru/v2"


def test_import_time_of_the_largest_document() -> None:
    """The figure the bench reports; here only a bound far above it, so a regression shows."""
    import time

    largest = max(CORPUS.glob("*.yaml"), key=lambda p: p.stat().st_size)
    started = time.perf_counter()
    render_files(import_document(str(largest), "api"))
    assert time.perf_counter() - started < 10


def test_cli_writes_the_folder_spec(tmp_path: Path) -> None:
    import io

    from lynxc.compiler.importers.openapi.command import run_import

    out, err = io.StringIO(), io.StringIO()
    document = CORPUS / "apis.guru__2.2.0.yaml"
    run_import(tmp_path, str(document), "apis", out=out, err=err)
    written = sorted(p.name for p in (tmp_path / "specs" / "apis").iterdir())
    assert written == sorted([f"{t}.yaml" for t in EXPECTED[document.name][0]] + ["server.yaml"])
    assert out.getvalue().startswith("7 operation(s) imported, 0 skipped\n")
    assert not [p for p in (tmp_path / "specs").iterdir() if p.name.startswith(".")]  # no staging left

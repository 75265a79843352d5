"""The try-it routes of `lynxc dev --transport http` without a browser: the routes themselves
(Starlette's test client over `tryit_routes`), then a real `lynxc dev` process whose MCP endpoints
answer exactly as before beside the pages."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from mcp import Client
from starlette.applications import Starlette
from starlette.testclient import TestClient

from lynxc.compiler.dev.tryit import ASSETS, CONTENT_SECURITY_POLICY, asset_files, tryit_routes
from tests.e2e.test_dev import dev_http, project  # noqa: F401 (fixture)

pytestmark = pytest.mark.anyio


@pytest.fixture
def web() -> TestClient:
    return TestClient(Starlette(routes=tryit_routes(["alpha", "beta-2"])))


def test_index_links_every_served_server(web: TestClient) -> None:
    answer = web.get("/")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert '<a href="/alpha/">alpha</a>' in answer.text
    assert '<a href="/beta-2/">beta-2</a>' in answer.text


def test_page_of_a_server(web: TestClient) -> None:
    answer = web.get("/beta-2/")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "text/html; charset=utf-8"
    assert "script-src 'self'" in answer.headers["content-security-policy"]
    assert "unsafe" not in answer.headers["content-security-policy"]
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert 'data-endpoint="/beta-2/mcp"' in answer.text
    assert '<script type="module" src="/-/tryit.js"></script>' in answer.text
    # Nothing inline: the policy would refuse it.
    assert re.search(r"<script>|<style|\sstyle=|\son\w+=", answer.text) is None
    assert "http://" not in answer.text and "https://" not in answer.text
    redirect = web.get("/alpha", follow_redirects=False)
    assert (redirect.status_code, redirect.headers["location"]) == (308, "/alpha/")


def test_unknown_server_is_404_with_the_name_escaped(web: TestClient) -> None:
    answer = web.get("/nope/")
    assert answer.status_code == 404
    assert "<code>nope</code>" in answer.text and '<a href="/alpha/">alpha</a>' in answer.text
    hostile = web.get("/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E/")
    assert hostile.status_code == 404
    assert "<img" not in hostile.text and "&lt;img src=x onerror=alert(1)&gt;" in hostile.text
    assert web.get("/nope", follow_redirects=False).status_code == 404
    assert web.get("/" + "x" * 5000 + "/").text.count("x") < 400  # a huge name is cut


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("tryit.js", "text/javascript; charset=utf-8"),
        ("form.js", "text/javascript; charset=utf-8"),
        ("mcp.js", "text/javascript; charset=utf-8"),
        ("tryit.css", "text/css; charset=utf-8"),
        ("vendor/json-schema/index.js", "text/javascript; charset=utf-8"),
        ("vendor/json-schema/LICENSE", "text/plain; charset=utf-8"),
        ("vendor/json-schema/SOURCE.txt", "text/plain; charset=utf-8"),
    ],
)
def test_assets_are_served_with_their_content_type(web: TestClient, path: str, content_type: str) -> None:
    answer = web.get(f"/-/{path}")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == content_type
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.content == (ASSETS / path).read_bytes()


@pytest.mark.parametrize(
    "path", ["nope.js", "page.html.j2", "../tryit.py", "%2E%2E/tryit.py", "vendor/../../command.py", ""]
)
def test_only_the_listed_assets_are_served(web: TestClient, path: str) -> None:
    assert web.get(f"/-/{path}").status_code == 404


def test_every_module_import_of_the_scripts_is_a_served_asset() -> None:
    files = asset_files()
    for name, path in files.items():
        if not name.endswith(".js"):
            continue
        for target in re.findall(r"""(?:from|import)\s*['"](\.[^'"]+)['"]""", path.read_text()):
            resolved = (Path(name).parent / target).as_posix()
            resolved = re.sub(r"(^|/)\./", r"\1", resolved)
            assert resolved in files, f"{name} imports {target}, which is not served"
    licence = (ASSETS / "vendor/json-schema/LICENSE").read_text()
    assert "MIT License" in licence
    assert "@cfworker/json-schema 4.1.6" in (ASSETS / "vendor/json-schema/SOURCE.txt").read_text()


async def test_dev_serves_the_pages_beside_unchanged_mcp_endpoints(project: Path) -> None:  # noqa: F811
    with dev_http(project) as (dev, url):
        base = url.removesuffix("/mcp")
        assert f"serving demo on {base}/demo/mcp (try it: {base}/demo/)" in dev.text
        async with httpx.AsyncClient() as http:
            page = await http.get(f"{base}/demo/")
            assert page.status_code == 200 and 'data-endpoint="/demo/mcp"' in page.text
            assert (await http.get(f"{base}/")).status_code == 200
            assert (await http.get(f"{base}/other/")).status_code == 404
            script = await http.get(f"{base}/-/tryit.js")
            assert script.headers["content-type"] == "text/javascript; charset=utf-8"
            # What the page's fetch() sends: its own origin passes the DNS-rebinding check,
            # another site's does not.
            initialize = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
            headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
            same = await http.post(f"{base}/demo/mcp", json=initialize, headers={**headers, "Origin": base})
            assert same.status_code == 200 and same.headers.get("mcp-session-id")
            foreign = await http.post(
                f"{base}/demo/mcp", json=initialize, headers={**headers, "Origin": "http://evil.example"}
            )
            assert foreign.status_code == 403
        for endpoint in (url, f"{base}/demo/mcp"):
            async with Client(endpoint, mode="legacy") as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                assert names == ["count_words"]
                result = await client.call_tool("count_words", {"text": "a b"})
                assert result.structured_content == {"words": 2, "lines": 1, "characters": 3}

"""A records server unlike the bundled one, end to end: a product catalogue (no localized field,
no nested resource, no reference) built with `lynxc build` in a project of its own, loaded with
`lynxc load` and served to a real MCP client. Its tools quote only its own declarations, offer
no locales, parents or populate, and answer every call without them; `lynxc lint` passes it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.compiler.test_collections import CATALOGUE
from tests.conftest import LYNXC, settings_args, stdio_client

pytestmark = pytest.mark.anyio

PRODUCTS = [
    {"sku": "T-1", "name": "Claw hammer", "category": "tools", "price": 12.5, "tags": ["steel"]},
    {"sku": "G-1", "name": "Watering can", "category": "garden", "price": 9.0, "blurb": "Ten litres."},
    {"sku": "K-1", "name": "Chef knife", "category": "kitchen", "price": 40.0, "tags": []},
]


def lynxc(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LYNXC, "--project", str(project), *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    project = tmp_path_factory.mktemp("shop")
    (project / "specs").mkdir()
    (project / "specs" / "shop.yaml").write_text(CATALOGUE)
    built = lynxc(project, "build")
    assert built.returncode == 0, built.stderr
    rows = project / "products.jsonl"
    rows.write_text("".join(json.dumps(row) + "\n" for row in PRODUCTS))
    settings = {"data_dir": str(project / "store")}
    loaded = lynxc(project, "load", "shop", "products", str(rows), *settings_args(settings))
    assert loaded.returncode == 0, loaded.stderr
    return project, settings


def test_the_built_catalogue_quotes_nothing_it_lacks_and_lints_clean(shop: tuple[Path, dict]) -> None:
    project, _ = shop
    text = (project / "generated" / "shop" / "tools.json").read_text()
    assert "pep" not in text.lower()
    for borrowed in ("name.fr", "capital.name", "author.bio"):
        assert borrowed not in text, borrowed
    linted = lynxc(project, "lint", "--fail-on", "warning")
    assert linted.returncode == 0, linted.stdout + linted.stderr


async def test_the_served_catalogue_answers_without_the_parameters_it_does_not_offer(
    shop: tuple[Path, dict],
) -> None:
    project, settings = shop
    async with stdio_client("shop", settings, project=project) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        queried = await client.call_tool(
            "query_records",
            {"resource_id": "products", "filters": [{"field": "price", "op": "lt", "value": 20}]},
        )
        searched = await client.call_tool(
            "search_records", {"resource_id": "products", "query": "hammer", "search_type": "text"}
        )
        fetched = await client.call_tool("get_record", {"resource_id": "products", "record_id": "G-1"})
        populate = await client.call_tool(
            "get_record", {"resource_id": "products", "record_id": "G-1", "populate": ["tags"]}
        )
    for tool in listed.values():
        assert not {"locales", "parents", "populate"} & set(tool.input_schema["properties"]), tool.name
    for result in (queried, searched, fetched):
        assert not result.is_error, result.content[0].text
    # The default sort is by name: Claw hammer, then Watering can.
    assert [item["id"] for item in queried.structured_content["items"]] == ["T-1", "G-1"]
    assert [item["id"] for item in searched.structured_content["items"]] == ["T-1"]
    assert fetched.structured_content["data"]["blurb"] == "Ten litres."
    assert populate.is_error and "populate" in populate.content[0].text

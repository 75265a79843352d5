"""A document that cannot be imported is one clear error naming the file and the JSON pointer:
exit 1 (2 for a usage error), no traceback, nothing written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import LYNXC

from .helpers import CORPUS, get, openapi

OBJ = {"type": "object"}


def run_import(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LYNXC, "--project", str(project), "import", "openapi", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=project,  # SOURCE is relative to where lynxc runs
    )


def _cyclic() -> str:
    schemas = {"A": {"$ref": "#/components/schemas/B"}, "B": {"$ref": "#/components/schemas/A"}}
    ref = {"$ref": "#/components/schemas/A"}
    return json.dumps(openapi({"/x": {"get": get(ref)}}, components={"schemas": schemas}))


CASES = {
    "not_yaml": ("paths: [unclosed\n  - {", "doc.yaml: is not valid YAML or JSON: "),
    "not_openapi": (
        "name: a shopping list\nitems: [milk]\n",
        "doc.yaml: is not an OpenAPI 3.0, 3.1 or Swagger 2.0 document",
    ),
    "openapi_2": (
        "openapi: 2.0.0\npaths: {}\n",
        "doc.yaml: is not an OpenAPI 3.0, 3.1 or Swagger 2.0 document (it says '2.0.0')",
    ),
    "no_paths": (
        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\n",
        "doc.yaml#/paths: is missing or not an object",
    ),
    "ref_to_nowhere": (
        json.dumps(openapi({"/x": {"get": get({"$ref": "#/components/schemas/Gone"})}})),
        "doc.yaml#/paths/~1x/get/responses/200/content/application~1json/schema/$ref: "
        "$ref '#/components/schemas/Gone' points to nothing",
    ),
    "ref_to_missing_file": (
        json.dumps(openapi({"/x": {"get": get({"$ref": "other.yaml#/Pet"})}})),
        "$ref 'other.yaml#/Pet': ",
    ),
    "cyclic_ref": (
        _cyclic(),
        "doc.yaml#/components/schemas/A: $ref cycle: "
        "/paths/~1x/get/responses/200/content/application~1json/schema"
        " -> /components/schemas/A -> /components/schemas/B -> /components/schemas/A",
    ),
    "bad_parameter": (
        json.dumps(openapi({"/x": {"get": {"parameters": [{"in": "query"}], **get(OBJ)}}})),
        "doc.yaml#/paths/~1x/get/parameters/0: a parameter needs a name and an `in`",
    ),
    "deep": ("[" * 5000 + "]" * 5000, "doc.yaml: "),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_document_is_one_clear_error(tmp_path: Path, case: str) -> None:
    text, message = CASES[case]
    (tmp_path / "doc.yaml").write_text(text, encoding="utf-8")
    done = run_import(tmp_path, "doc.yaml", "--name", "api")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lynxc import openapi: ") and message in lines[0], lines
    assert not (tmp_path / "specs").exists()


def test_huge_document_is_refused_before_it_is_read(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    with huge.open("w") as out:
        out.write("openapi: 3.0.0\npaths: {}\nx-padding: '")
        out.write("x" * (8 * 1024 * 1024))
        out.write("'\n")
    done = run_import(tmp_path, str(huge), "--name", "api")
    assert done.returncode == 1 and "bytes, over the 8,388,608-byte limit" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "specs").exists()


def test_missing_file_and_bad_name(tmp_path: Path) -> None:
    missing = run_import(tmp_path, "nowhere.yaml", "--name", "api")
    assert missing.returncode == 1 and missing.stderr == "lynxc import openapi: nowhere.yaml: no such file\n"
    bad = run_import(tmp_path, str(CORPUS / "xkcd.com__1.0.0.yaml"), "--name", "Bad_Name")
    assert bad.returncode == 2 and "--name server name 'Bad_Name'" in bad.stderr


def test_nothing_importable_writes_nothing(tmp_path: Path) -> None:
    done = run_import(tmp_path, str(CORPUS / "xero.com__xero-identity__2.9.4.yaml"), "--name", "xero")
    assert done.returncode == 1 and "no operation could be imported; nothing written" in done.stderr
    assert "0 operation(s) imported, 2 skipped" in done.stdout
    assert not (tmp_path / "specs").exists()


def test_existing_spec_needs_force(tmp_path: Path) -> None:
    from lynxc.compiler.importers.openapi import import_document, render_files, write_spec
    from lynxc.compiler.importers.openapi.writer import SpecExists

    files = render_files(import_document(str(CORPUS / "xkcd.com__1.0.0.yaml"), "xkcd"))
    (tmp_path / "specs" / "xkcd").mkdir(parents=True)
    (tmp_path / "specs" / "xkcd" / "mine.yaml").write_text("kept")
    with pytest.raises(SpecExists):
        write_spec(tmp_path / "specs", "xkcd", files, force=False)
    assert (tmp_path / "specs" / "xkcd" / "mine.yaml").read_text() == "kept"
    done = run_import(tmp_path, str(CORPUS / "xkcd.com__1.0.0.yaml"), "--name", "xkcd")
    assert done.returncode == 2 and "exists; give --force to replace it" in done.stderr
    write_spec(tmp_path / "specs", "xkcd", files, force=True)
    assert sorted(p.name for p in (tmp_path / "specs" / "xkcd").iterdir()) == sorted(files)
    assert [p.name for p in (tmp_path / "specs").iterdir()] == ["xkcd"]  # no staging or old copy left


def test_relative_file_refs_are_followed(tmp_path: Path) -> None:
    from lynxc.compiler.importers.openapi import import_document

    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "pet.yaml").write_text(
        "Pet:\n  type: object\n  properties:\n    owner: {$ref: '#/Owner'}\n"
        "Owner:\n  type: object\n  properties:\n    name: {type: string}\n"
    )
    (tmp_path / "doc.json").write_text(
        json.dumps(openapi({"/pet": {"get": get({"$ref": "schemas/pet.yaml#/Pet"})}}))
    )
    tool = import_document(str(tmp_path / "doc.json"), "pets").tools["get_pet"]
    assert tool["output"]["properties"]["owner"]["properties"] == {"name": {"type": "string"}}

"""Import small documents written inline, as the mapping tests need them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lynxc.compiler.importers.openapi import ImportResult, import_document
from tests.conftest import DATA

CORPUS = DATA / "openapi"


def openapi(paths: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"openapi": "3.0.3", "info": {"title": "T", "version": "1.0.0"}, "paths": paths, **extra}


def imported(tmp_path: Path, document: dict[str, Any], name: str = "t", **options: Any) -> ImportResult:
    source = tmp_path / "doc.json"
    source.write_text(json.dumps(document), encoding="utf-8")
    return import_document(str(source), name, **options)


def get(schema: dict[str, Any], status: str = "200") -> dict[str, Any]:
    """An operation answering `schema` as JSON."""
    return {"responses": {status: {"description": "ok", "content": {"application/json": {"schema": schema}}}}}

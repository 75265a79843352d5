"""Read a document (a file or an http(s) URL) within a size and time bound, and parse it as JSON
or YAML into plain data. Dates stay strings: a document's examples are data, not Python dates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from ruamel.yaml import YAML
from ruamel.yaml.constructor import SafeConstructor
from ruamel.yaml.error import YAMLError

from .errors import OpenAPIError

MAX_DOCUMENT_BYTES = 8 * 1024 * 1024  # the largest public API documents are a few MB
FETCH_TIMEOUT_SECONDS = 30.0


class _PlainConstructor(SafeConstructor):
    """YAML's core types only: a timestamp stays the text it was written as."""


_PlainConstructor.add_constructor("tag:yaml.org,2002:timestamp", SafeConstructor.construct_yaml_str)


def is_url(location: str) -> bool:
    return urlsplit(location).scheme in ("http", "https")


def join(base: str, relative: str) -> str:
    """The location of `relative` (a $ref's file part) seen from the document at `base`."""
    if is_url(base):
        return urljoin(base, relative)
    return str((Path(base).parent / relative).resolve())


def read_text(location: str) -> str:
    data = _fetch(location) if is_url(location) else _read_file(location)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise OpenAPIError(location, "", f"is not UTF-8 text (byte {err.start})") from None


def parse(text: str, location: str) -> Any:
    if text.lstrip().startswith(("{", "[")):
        try:
            return json.loads(text)
        except (json.JSONDecodeError, RecursionError) as err:
            if not isinstance(err, json.JSONDecodeError):
                raise OpenAPIError(location, "", "nests too deeply to read") from None
            # JSON is YAML too; a document that only looks like JSON gets YAML's reading below
    yaml = YAML(typ="safe", pure=True)
    yaml.Constructor = _PlainConstructor
    try:
        return yaml.load(text)
    except YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise OpenAPIError(location, "", f"is not valid YAML or JSON: {problem}{where}") from None
    except RecursionError:
        raise OpenAPIError(location, "", "nests too deeply to read") from None


def _read_file(location: str) -> bytes:
    path = Path(location)
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise OpenAPIError(location, "", "is not a file")
        if size > MAX_DOCUMENT_BYTES:
            raise OpenAPIError(location, "", f"is {size:,} bytes, over the {MAX_DOCUMENT_BYTES:,}-byte limit")
        return path.read_bytes()
    except FileNotFoundError:
        raise OpenAPIError(location, "", "no such file") from None
    except OSError as err:
        raise OpenAPIError(location, "", f"cannot be read: {err.strerror}") from None


def _fetch(url: str) -> bytes:
    import httpx  # only an import from a URL needs it

    try:
        with (
            httpx.Client(timeout=FETCH_TIMEOUT_SECONDS, follow_redirects=True, max_redirects=5) as client,
            client.stream(
                "GET", url, headers={"Accept": "application/json, application/yaml, */*"}
            ) as answer,
        ):
            if answer.status_code != 200:
                raise OpenAPIError(url, "", f"answered {answer.status_code} {answer.reason_phrase}")
            chunks, size = [], 0
            for chunk in answer.iter_bytes():
                size += len(chunk)
                if size > MAX_DOCUMENT_BYTES:
                    raise OpenAPIError(url, "", f"is over the {MAX_DOCUMENT_BYTES:,}-byte limit")
                chunks.append(chunk)
            return b"".join(chunks)
    except httpx.HTTPError as err:
        raise OpenAPIError(url, "", f"cannot be fetched: {type(err).__name__}: {err}") from None

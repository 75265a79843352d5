"""`lynxc keys add|list|revoke` as a user runs them, in-process against real keys files: the key
is printed once and stored only as its hash, and every mistake is one line and an exit status."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from lynxc.compiler.cli import main
from lynxc.runtime.auth.api_keys import ApiKeyVerifier, hash_key
from lynxc.runtime.auth.refusals import AuthRefused

KEY = re.compile(r"lynxc_[A-Za-z0-9_-]{43}")


@dataclass
class Done:
    status: int
    out: str
    err: str


Lynxc = Callable[..., Done]


@pytest.fixture
def lynxc(capsys: pytest.CaptureFixture[str]) -> Lynxc:
    """`lynxc ARGV...` in this process: its exit status and what it printed."""

    def run(*argv: str) -> Done:
        with pytest.raises(SystemExit) as exited:
            main(list(argv))
        out, err = capsys.readouterr()
        done = Done(exited.value.code, out, err)
        assert "Traceback" not in done.err
        return done

    return run


def one_error(done: Done, status: int) -> str:
    """The single `lynxc keys:` line a refused command prints, nothing on stdout."""
    assert (done.status, done.out) == (status, ""), done
    assert done.err.count("\n") == 1 and done.err.startswith("lynxc keys: "), done.err
    return done.err


def made_key(done: Done) -> str:
    assert done.status == 0, done.err
    assert KEY.fullmatch(done.out.removesuffix("\n")) and done.out.count("\n") == 1, done.out
    return done.out.strip()


def test_add_prints_the_key_once_and_stores_only_its_hash(lynxc: Lynxc, tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    done = lynxc(
        "keys", "add", "ci-bot", "--file", str(keys), "--scope", "tools:read", "--scope", "tools:write",
        "--claim", "team=ops",
    )  # fmt: skip
    key = made_key(done)
    stored = keys.read_text()
    assert key not in stored and hash_key(key) in stored
    assert "cannot be shown again" in done.err and "Authorization: Bearer <key>" in done.err
    assert key not in done.err
    caller = ApiKeyVerifier(keys).authenticate(key)
    assert caller.method == "api_key" and caller.subject == "ci-bot"
    assert caller.scopes == {"tools:read", "tools:write"} and dict(caller.claims) == {"team": "ops"}


def test_a_second_key_is_added_beside_the_first_and_a_name_is_used_once(lynxc: Lynxc, tmp_path: Path) -> None:
    keys = str(tmp_path / "keys.json")
    first = made_key(lynxc("keys", "add", "ci-bot", "--file", keys))
    second = made_key(lynxc("keys", "add", "nightly", "--file", keys, "--scope", "reports"))
    verifier = ApiKeyVerifier(Path(keys))
    assert verifier.authenticate(first).subject == "ci-bot"
    assert verifier.authenticate(second).scopes == {"reports"}
    before = Path(keys).read_bytes()
    again = one_error(lynxc("keys", "add", "ci-bot", "--file", keys), 1)
    assert "a key named 'ci-bot' exists already" in again and Path(keys).read_bytes() == before


@pytest.mark.parametrize(
    ("argv", "status", "said"),
    [
        (["bad name"], 1, "a key name must be 1-64 letters, digits or ._@-, not 'bad name'"),
        (["k", "--scope", "read write"], 2, "--scope 'read write': a scope is one or more printable ASCII"),
        (["k", "--scope", ""], 2, "--scope '': a scope is"),
        (["k", "--scope", 'say"hi'], 2, "RFC 6749 scope-token"),
        (["k", "--claim", "team"], 2, "--claim takes K=V, got 'team'"),
        (["k", "--claim", "=ops"], 2, "--claim takes K=V, got '=ops'"),
        (["k", "--claim", "team=a", "--claim", "team=b"], 2, "--claim team given twice"),
        (["k", "--claim", "sub=alice"], 2, "--claim sub: not allowed (a key's subject is its NAME)"),
        (["k", "--claim", "scope=admin"], 2, "--claim scope: not allowed (a key's scopes are given"),
    ],
    ids=["name", "scope-space", "scope-empty", "scope-quote", "claim-no-equals", "claim-no-name",
         "claim-twice", "claim-sub", "claim-scope"],
)  # fmt: skip
def test_bad_arguments_are_one_line_and_write_nothing(
    lynxc: Lynxc, tmp_path: Path, argv: list[str], status: int, said: str
) -> None:
    keys = tmp_path / "keys.json"
    assert said in one_error(lynxc("keys", "add", *argv, "--file", str(keys)), status)
    assert not keys.exists()


@pytest.mark.parametrize(
    ("value", "claim"),
    [
        ("42", 42),
        ("1.5", 1.5),
        ("true", True),
        ("null", None),
        ('["admin", "ops"]', ["admin", "ops"]),
        ('{"region": "eu"}', {"region": "eu"}),
        ('"42"', "42"),
        ("ops", "ops"),
        ("", ""),
        ("a=b", "a=b"),
        ("[unclosed", "[unclosed"),
        ("NaN", "NaN"),  # Python's JSON reader takes these; JSON has no such numbers
        ("1e999", "1e999"),
    ],
)
def test_a_claim_value_is_json_when_it_parses_else_text(
    lynxc: Lynxc, tmp_path: Path, value: str, claim: object
) -> None:
    keys = tmp_path / "keys.json"
    key = made_key(lynxc("keys", "add", "k", "--file", str(keys), "--claim", f"c={value}"))
    assert dict(ApiKeyVerifier(keys).authenticate(key).claims) == {"c": claim}
    json.loads(keys.read_text(), parse_constant=pytest.fail)  # strict JSON: no NaN or Infinity written


def generated_server(project: Path, name: str, meta: dict[str, object] | None) -> None:
    """A generated tools.json as the compiler writes it, with `_meta` only when given."""
    folder = project / "generated" / name
    folder.mkdir(parents=True)
    document: dict[str, object] = {"_generated": "by lynxc", "tools": []}
    if meta is not None:
        document["_meta"] = meta
    (folder / "tools.json").write_text(json.dumps(document))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    scopes = {"lynxc/auth": {"scopes_supported": ["tools:read", "tools:write", "admin"]}}
    generated_server(tmp_path, "wiki", scopes)
    generated_server(tmp_path, "open-data", None)
    generated_server(tmp_path, "odd", {"lynxc/auth": {"scopes_supported": "tools:read"}})
    return tmp_path


def test_server_scopes_are_checked_before_a_key_is_made(lynxc: Lynxc, project: Path) -> None:
    keys = project / "keys.json"
    base = ["--project", str(project), "keys", "add", "bot", "--file", str(keys), "--server"]
    key = made_key(lynxc(*base, "wiki", "--scope", "tools:read", "--scope", "admin"))
    assert ApiKeyVerifier(keys).authenticate(key).scopes == {"tools:read", "admin"}
    before = keys.read_bytes()

    typo = one_error(lynxc(*base, "wiki", "--scope", "tools:raed"), 2)
    assert "server wiki has no scope 'tools:raed' (did you mean 'tools:read'?" in typo
    assert "scopes: admin, tools:read, tools:write" in typo
    unknown = one_error(lynxc(*base, "wiki", "--scope", "delete"), 2)
    assert "has no scope 'delete' (scopes: admin" in unknown
    no_auth = one_error(lynxc(*base, "open-data", "--scope", "tools:read"), 2)
    assert "server open-data declares no auth" in no_auth
    missing = one_error(lynxc(*base, "wikki", "--scope", "tools:read"), 2)
    assert "no generated server 'wikki'" in missing and "did you mean 'wiki'?" in missing
    odd = one_error(lynxc(*base, "odd"), 1)
    assert "scopes_supported is not a list of strings" in odd
    (project / "generated/wiki/tools.json").write_text("{not json")
    broken = one_error(lynxc(*base, "wiki"), 1)
    assert "tools.json: not valid JSON" in broken
    assert keys.read_bytes() == before  # no refused add wrote anything


def test_list_shows_everything_but_the_hash(lynxc: Lynxc, tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    first = made_key(lynxc("keys", "add", "ci-bot", "--file", str(keys), "--scope", "tools:read"))
    made_key(lynxc("keys", "add", "nightly", "--file", str(keys), "--claim", "tier=2"))
    lynxc("keys", "revoke", "ci-bot", "--file", str(keys))
    stored = json.loads(keys.read_text())["keys"]

    text = lynxc("keys", "list", "--file", str(keys))
    assert text.status == 0 and text.err == ""
    lines = text.out.splitlines()
    assert lines[0].split() == ["NAME", "SCOPES", "CLAIMS", "CREATED", "REVOKED"]
    assert lines[1].split() == ["ci-bot", "tools:read", "-", stored[0]["created"], stored[0]["revoked"]]
    assert lines[2].split() == ["nightly", "-", '{"tier":', "2}", stored[1]["created"], "-"]

    listed = lynxc("keys", "list", "--file", str(keys), "--format", "json")
    assert json.loads(listed.out) == {
        "keys": [
            {key: value for key, value in entry.items() if key != "hash"} | {"revoked": entry.get("revoked")}
            for entry in stored
        ]
    }
    for done in (text, listed):
        assert "sha256" not in done.out and first not in done.out
        assert all(entry["hash"].removeprefix("sha256:") not in done.out for entry in stored)


def test_list_says_when_there_are_no_keys(lynxc: Lynxc, tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text('{"keys": []}\n')
    empty = lynxc("keys", "list", "--file", str(keys))
    assert (empty.status, empty.out) == (0, "") and f"{keys} holds no API keys" in empty.err
    assert json.loads(lynxc("keys", "list", "--file", str(keys), "--format", "json").out) == {"keys": []}
    missing = one_error(lynxc("keys", "list", "--file", str(tmp_path / "nope.json")), 1)
    assert "nope.json: does not exist" in missing


def test_a_revoked_key_is_refused(lynxc: Lynxc, tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    key = made_key(lynxc("keys", "add", "ci-bot", "--file", str(keys)))
    verifier = ApiKeyVerifier(keys)
    assert verifier.authenticate(key).subject == "ci-bot"
    done = lynxc("keys", "revoke", "ci-bot", "--file", str(keys))
    assert (done.status, done.out) == (0, "") and "revoked key 'ci-bot'" in done.err
    with pytest.raises(AuthRefused, match="API key 'ci-bot' was revoked"):
        verifier.authenticate(key)
    revoked_at = json.loads(keys.read_text())["keys"][0]["revoked"]
    again = lynxc("keys", "revoke", "ci-bot", "--file", str(keys))
    assert again.status == 0 and f"already revoked at {revoked_at}" in again.err
    typo = one_error(lynxc("keys", "revoke", "ci-bto", "--file", str(keys)), 1)
    assert "no key named 'ci-bto'; did you mean 'ci-bot'?" in typo
    missing = tmp_path / "elsewhere" / "keys.json"
    assert "does not exist" in one_error(lynxc("keys", "revoke", "ci-bot", "--file", str(missing)), 1)
    assert not missing.parent.exists()  # a revoke never creates the file or its folder


@pytest.mark.parametrize(
    "verb", [["add", "new-key"], ["list"], ["list", "--format", "json"], ["revoke", "ci-bot"]]
)
@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"keys": [', "not valid JSON"),
        ('{"keys": {}}', 'expected an object {"keys": [...]}'),
        ('{"keys": [{"name": "ci-bot", "hash": "md5:00"}]}', "keys[0].hash must be 'sha256:'"),
    ],
    ids=["truncated", "not-a-list", "bad-hash"],
)
def test_a_corrupt_file_is_one_line_and_left_untouched(
    lynxc: Lynxc, tmp_path: Path, verb: list[str], content: str, said: str
) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(content)
    error = one_error(lynxc("keys", *verb, "--file", str(keys)), 1)
    assert error.startswith(f"lynxc keys: API keys file {keys}: ") and said in error
    assert keys.read_text() == content


def test_usage_errors_exit_2(lynxc: Lynxc, tmp_path: Path) -> None:
    assert lynxc("keys").status == 2
    assert lynxc("keys", "add", "k").status == 2  # --file is required
    assert lynxc("keys", "list", "--file", "k.json", "--format", "yaml").status == 2
    assert "add" in lynxc("keys", "--help").out

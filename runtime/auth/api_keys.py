"""API keys for deployments without an identity provider: a JSON file of hashed keys.

A key is `lynxc_` and 43 base64url characters (256 random bits from `secrets`): the prefix lets
secret scanners and a `grep` find one that leaked into a repository or a log. It is shown once,
when made, and the file keeps only its SHA-256. A plain fast hash is enough here, unlike for
passwords: with 256 random bits there is nothing to guess, so a slow, salted hash (bcrypt,
scrypt) would only make every request slower without making a stolen file any more useful.

The file (`{"keys": [{name, hash, scopes, claims, created, revoked?}]}`) is changed only by
writing a complete new file beside it, fsyncing it and renaming it over the old one: a writer
killed at any instant (kill -9, power loss) leaves either the old file or the new one, never a
torn one. Writers take a lock on a sidecar file, so two `keys add` at once cannot lose a key.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .caller import Caller, frozen_claims
from .refusals import AuthRefused

if TYPE_CHECKING:  # `lynxc keys` reads and writes keys without loading the MCP SDK
    from mcp.server.auth.provider import AccessToken

KEY_PREFIX = "lynxc_"
_KEY_BYTES = 32  # 256 bits
_MAX_KEY_LENGTH = 256
_MAX_FILE_BYTES = 16 * 1024 * 1024
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
_HASH = re.compile(r"sha256:[0-9a-f]{64}")
_FIELDS = {"name", "hash", "scopes", "claims", "created", "revoked"}


class KeysFileError(Exception):
    """The keys file cannot be used; the message names the file and what is wrong with it."""


@dataclass(frozen=True)
class ApiKeyEntry:
    name: str
    hash: str
    scopes: tuple[str, ...] = ()
    claims: Mapping[str, Any] = field(default_factory=dict)
    created: str = ""
    revoked: str | None = None

    def as_json(self) -> dict[str, Any]:
        entry = {
            "name": self.name,
            "hash": self.hash,
            "scopes": list(self.scopes),
            "claims": dict(self.claims),
            "created": self.created,
        }
        if self.revoked is not None:
            entry["revoked"] = self.revoked
        return entry


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(_KEY_BYTES)


def hash_key(key: str) -> str:
    return "sha256:" + hashlib.sha256(key.encode()).hexdigest()


def read_keys(path: Path) -> list[ApiKeyEntry]:
    """The file's entries, or KeysFileError saying which file and what is wrong in it."""
    try:
        with path.open("rb") as file:
            data = file.read(_MAX_FILE_BYTES + 1)
    except OSError as error:
        raise KeysFileError(f"API keys file {path}: cannot be read ({error.strerror})") from None
    if len(data) > _MAX_FILE_BYTES:
        raise KeysFileError(f"API keys file {path}: larger than {_MAX_FILE_BYTES} bytes")
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise KeysFileError(f"API keys file {path}: not valid JSON ({str(error)[:100]})") from None
    return _entries(path, document)


def _entries(path: Path, document: object) -> list[ApiKeyEntry]:
    def fail(problem: str) -> KeysFileError:
        return KeysFileError(f"API keys file {path}: {problem}")

    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise fail('expected an object {"keys": [...]}')
    entries: list[ApiKeyEntry] = []
    seen: set[str] = set()
    for index, raw in enumerate(document["keys"]):
        where = f"keys[{index}]"
        if not isinstance(raw, dict):
            raise fail(f"{where} is not an object")
        unknown = set(raw) - _FIELDS
        if unknown:
            raise fail(f"{where} has unknown fields {sorted(unknown)}")
        name, digest = raw.get("name"), raw.get("hash")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise fail(f"{where}.name must be 1-64 letters, digits or ._@- (starting with a letter or digit)")
        if name in seen:
            raise fail(f"{where}: the name {name!r} is used twice")
        seen.add(name)
        if not isinstance(digest, str) or not _HASH.fullmatch(digest):
            raise fail(f"{where}.hash must be 'sha256:' and 64 hex digits")
        scopes, claims = raw.get("scopes", []), raw.get("claims", {})
        if not isinstance(scopes, list) or not all(isinstance(scope, str) and scope for scope in scopes):
            raise fail(f"{where}.scopes must be a list of non-empty strings")
        if not isinstance(claims, dict):
            raise fail(f"{where}.claims must be an object")
        created, revoked = raw.get("created", ""), raw.get("revoked")
        if not isinstance(created, str) or not (revoked is None or isinstance(revoked, str)):
            raise fail(f"{where}.created and .revoked must be strings")
        entries.append(ApiKeyEntry(name, digest, tuple(scopes), claims, created, revoked))
    return entries


def add_key(path: Path, name: str, scopes: list[str], claims: Mapping[str, Any] | None = None) -> str:
    """Make a key named `name`, store its hash, and return the key: the only time it is seen."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"a key name must be 1-64 letters, digits or ._@-, not {name!r}")
    key = generate_key()
    with _locked(path):
        entries = read_keys(path) if path.exists() else []
        if any(entry.name == name for entry in entries):
            raise KeysFileError(f"API keys file {path}: a key named {name!r} exists already")
        entries.append(ApiKeyEntry(name, hash_key(key), tuple(scopes), dict(claims or {}), _now()))
        _write(path, entries)
    return key


def revoke_key(path: Path, name: str) -> None:
    """Mark a key revoked (kept, not deleted, so its name cannot be reused by mistake)."""
    with _locked(path):
        entries = read_keys(path)
        if not any(entry.name == name for entry in entries):
            raise KeysFileError(f"API keys file {path}: no key named {name!r}")
        _write(
            path,
            [
                ApiKeyEntry(e.name, e.hash, e.scopes, e.claims, e.created, e.revoked or _now())
                if e.name == name
                else e
                for e in entries
            ],
        )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _write(path: Path, entries: list[ApiKeyEntry]) -> None:
    # Temporary files of writers killed mid-write: every writer holds the lock while its own
    # exists, so under the lock any that are left belong to no one.
    for leftover in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(OSError):
            leftover.unlink()
    text = json.dumps({"keys": [entry.as_json() for entry in entries]}, indent=2) + "\n"
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w") as file:  # mkstemp's file is 0600: only the owner reads hashes
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    # The rename is durable only once the directory entry is on disk too.
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


class ApiKeyVerifier:
    """Checks presented keys against the file, reading it again whenever it changes on disk (so
    a key added or revoked takes effect without a restart)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stamp = self._stat()
        self._entries = read_keys(path)  # a bad file fails at startup, naming itself

    def _stat(self) -> tuple[int, int, int]:
        try:
            stat = os.stat(self.path)
        except OSError as error:
            raise KeysFileError(f"API keys file {self.path}: cannot be read ({error.strerror})") from None
        return stat.st_ino, stat.st_mtime_ns, stat.st_size

    def _current(self) -> list[ApiKeyEntry]:
        try:
            stamp = self._stat()
            if stamp != self._stamp:
                self._entries, self._stamp = read_keys(self.path), stamp
        except KeysFileError as error:
            # Refuse every key rather than keep serving a list that may hold a revoked key.
            raise AuthRefused(str(error), "temporarily_unavailable") from None
        return self._entries

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            caller = self.authenticate(token)
        except AuthRefused:
            return None
        # API keys are not issued for a resource: they only ever work on the server that made them.
        return caller.access_token(token, None)

    def authenticate(self, key: str) -> Caller:
        if not key:
            raise AuthRefused("no API key")
        if len(key) > _MAX_KEY_LENGTH:
            raise AuthRefused(f"API key longer than {_MAX_KEY_LENGTH} characters")
        if not key.startswith(KEY_PREFIX):
            raise AuthRefused(f"not a lynxc API key (they start with {KEY_PREFIX})")
        digest = hash_key(key)
        match: ApiKeyEntry | None = None
        # Every entry is compared, in constant time, so the time taken says nothing about which
        # entry (or how much of one) a guess matched.
        for entry in self._current():
            if hmac.compare_digest(entry.hash, digest):
                match = entry
        if match is None:
            raise AuthRefused("unknown API key")
        if match.revoked is not None:
            raise AuthRefused(f"API key {match.name!r} was revoked")
        return Caller(
            method="api_key",
            subject=match.name,
            scopes=frozenset(match.scopes),
            claims=frozen_claims(match.claims),
        )

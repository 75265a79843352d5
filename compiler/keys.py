"""`lynxc keys add|list|revoke`: a server's API keys, kept hashed in a keys file.

The file itself (format, hashing, locking, atomic writes) belongs to the runtime's
`auth/api_keys.py`; this module turns command-line words into its calls and its answers into
lines. The runtime module loads the MCP SDK, so it is imported only when a `keys` verb runs:
`lynxc --help` stays light.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .suggest import did_you_mean

if TYPE_CHECKING:
    from lynxc.runtime.auth.api_keys import ApiKeyEntry

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# RFC 6749 §3.3 scope-token: printable ASCII but for space, '"' and '\'. A space would split one
# scope into two in a token's `scope` claim, so a key could never be matched against it.
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
# The key's subject is its name (what an audit line names); a `sub` claim would contradict it.
_RESERVED_CLAIMS = {
    "sub": "a key's subject is its NAME",
    # A key's scopes are its --scope options; a claim of this name would grant nothing.
    "scope": "a key's scopes are given with --scope",
    "scp": "a key's scopes are given with --scope",
}


class KeysUsageError(Exception):
    """An argument of `lynxc keys` is wrong (exit 2); nothing was written."""


def add_keys_arguments(keys: argparse.ArgumentParser) -> None:
    commands = keys.add_subparsers(title="commands", metavar="COMMAND", required=True)

    add = commands.add_parser(
        "add",
        help="make a key: printed once on stdout, stored only as a hash",
        description="Make an API key named NAME, store its SHA-256 hash in FILE, and print the key "
        "once on stdout (only the key, so `KEY=$(lynxc keys add ...)` works).",
    )
    add.add_argument("name", metavar="NAME", help="the key's name: its subject in audit lines")
    _file_argument(add)
    add.add_argument(
        "--scope", dest="scopes", action="append", default=[], metavar="SCOPE", help="repeatable"
    )
    add.add_argument(
        "--claim",
        dest="claims",
        action="append",
        default=[],
        metavar="K=V",
        help="a claim the key carries; V is JSON when it parses as JSON, else a string; repeatable",
    )
    add.add_argument(
        "--server",
        metavar="SERVER",
        help="check each --scope against the scopes generated/SERVER/ declares",
    )
    add.set_defaults(keys_command=_add)

    listing = commands.add_parser("list", help="show the keys of FILE (never their hashes)")
    _file_argument(listing)
    listing.add_argument("--format", choices=("text", "json"), default="text")
    listing.set_defaults(keys_command=_list)

    revoke = commands.add_parser("revoke", help="mark a key revoked: it stops working at once")
    revoke.add_argument("name", metavar="NAME")
    _file_argument(revoke)
    revoke.set_defaults(keys_command=_revoke)


def _file_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--file", type=Path, required=True, metavar="FILE", help="the API keys file")


def run_keys(args: argparse.Namespace) -> int:
    from lynxc.runtime.auth.api_keys import KeysFileError

    try:
        return args.keys_command(args)
    except KeysUsageError as error:
        _say(str(error))
        return EXIT_USAGE
    except (KeysFileError, ValueError) as error:
        _say(str(error))
        return EXIT_FAILED
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        _say(f"{where}{error.strerror or error}")
        return EXIT_FAILED


def _say(message: str) -> None:
    print(f"lynxc keys: {message}", file=sys.stderr)


def _add(args: argparse.Namespace) -> int:
    from lynxc.runtime.auth.api_keys import add_key

    scopes = checked_scopes(args.scopes)
    claims = parsed_claims(args.claims)
    if args.server is not None:
        check_server_scopes(args.project, args.server, scopes)
    key = add_key(args.file, args.name, scopes, claims)
    print(key)
    _say(f"made key {args.name!r}; {args.file} keeps only its SHA-256 hash, so it cannot be shown again")
    _say("clients send it in the HTTP header `Authorization: Bearer <key>`")
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    entries = _existing_keys(args.file)
    if args.format == "json":
        print(json.dumps({"keys": [_listed(entry) for entry in entries]}, indent=2, ensure_ascii=False))
    elif entries:
        print(_table(entries))
    if not entries:
        _say(f"{args.file} holds no API keys")
    return EXIT_OK


def _revoke(args: argparse.Namespace) -> int:
    from lynxc.runtime.auth.api_keys import KeysFileError, revoke_key

    entries = _existing_keys(args.file)
    entry = next((entry for entry in entries if entry.name == args.name), None)
    if entry is None:
        hint = did_you_mean(args.name, [entry.name for entry in entries])
        raise KeysFileError(
            f"API keys file {args.file}: no key named {args.name!r}{'; ' + hint if hint else ''}"
        )
    if entry.revoked is not None:
        _say(f"key {args.name!r} was already revoked at {entry.revoked}")
        return EXIT_OK
    revoke_key(args.file, args.name)
    _say(f"revoked key {args.name!r}: servers reading {args.file} refuse it from now on")
    return EXIT_OK


def _existing_keys(path: Path) -> list[ApiKeyEntry]:
    """The file's entries. A missing file is said as such, and not created (as `add` would)."""
    from lynxc.runtime.auth.api_keys import KeysFileError, read_keys

    if not path.exists():
        raise KeysFileError(
            f"API keys file {path}: does not exist (`lynxc keys add NAME --file {path}` makes it)"
        )
    return read_keys(path)


def checked_scopes(scopes: list[str]) -> list[str]:
    """The --scope values in order, each once, or KeysUsageError naming the one that is no scope."""
    for scope in scopes:
        if not _SCOPE_TOKEN.fullmatch(scope):
            raise KeysUsageError(
                f"--scope {scope!r}: a scope is one or more printable ASCII characters other than "
                "space, '\"' and '\\' (RFC 6749 scope-token)"
            )
    return list(dict.fromkeys(scopes))


def parsed_claims(items: list[str]) -> dict[str, Any]:
    """--claim K=V values: V as JSON when it is JSON (numbers, booleans, lists, objects), else
    the text itself, so `--claim team=ops` needs no JSON quotes."""
    claims: dict[str, Any] = {}
    for item in items:
        name, equals, text = item.partition("=")
        if not equals or not name:
            raise KeysUsageError(f"--claim takes K=V, got {item!r}")
        if name in _RESERVED_CLAIMS:
            raise KeysUsageError(f"--claim {name}: not allowed ({_RESERVED_CLAIMS[name]})")
        if name in claims:
            raise KeysUsageError(f"--claim {name} given twice")
        claims[name] = _claim_value(text)
    return claims


def _claim_value(text: str) -> Any:
    def finite(number: str) -> float:
        value = float(number)
        if not math.isfinite(value):  # 1e999: JSON has no infinity, so the file could not hold it
            raise ValueError(number)
        return value

    def no_constant(name: str) -> Any:
        raise ValueError(name)  # NaN, Infinity: not JSON, only Python's reading of it

    try:
        return json.loads(text, parse_float=finite, parse_constant=no_constant)
    except (ValueError, RecursionError):
        return text


def check_server_scopes(project: Path, server: str, scopes: Iterable[str]) -> None:
    """KeysUsageError unless SERVER is built and declares every one of `scopes`."""
    declared = declared_scopes(project, server)
    for scope in scopes:
        if scope not in declared:
            hint = did_you_mean(scope, declared)
            known = f"scopes: {', '.join(sorted(declared))}" if declared else "it declares none"
            said = f"{hint} " if hint else ""
            raise KeysUsageError(f"--scope {scope}: server {server} has no scope {scope!r} ({said}{known})")


def declared_scopes(project: Path, server: str) -> list[str]:
    """The scopes generated/SERVER/tools.json declares in `_meta["lynxc/auth"].scopes_supported`."""
    generated = project / "generated"
    path = generated / server / "tools.json"
    if not path.is_file():
        built = sorted(p.parent.name for p in generated.glob("*/tools.json"))
        hint = did_you_mean(server, built)
        raise KeysUsageError(
            f"--server {server}: no generated server {server!r} in {generated}"
            + (f"; {hint}" if hint else f" (built: {', '.join(built)})" if built else "")
        )
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError too
        raise ValueError(
            f"{path}: not valid JSON ({str(error)[:100]}); rebuild it with `lynxc build`"
        ) from None
    meta = document.get("_meta") if isinstance(document, dict) else None
    auth = meta.get("lynxc/auth") if isinstance(meta, dict) else None
    if auth is None:
        raise KeysUsageError(f"server {server} declares no auth: it takes no API keys ({path})")
    scopes = auth.get("scopes_supported", []) if isinstance(auth, dict) else None
    if not isinstance(scopes, list) or not all(isinstance(scope, str) for scope in scopes):
        raise ValueError(f'{path}: _meta["lynxc/auth"].scopes_supported is not a list of strings')
    return scopes


def _listed(entry: ApiKeyEntry) -> dict[str, Any]:
    """What `list` shows of an entry: everything but the hash."""
    return {
        "name": entry.name,
        "scopes": list(entry.scopes),
        "claims": dict(entry.claims),
        "created": entry.created,
        "revoked": entry.revoked,
    }


def _table(entries: list[ApiKeyEntry]) -> str:
    rows = [("NAME", "SCOPES", "CLAIMS", "CREATED", "REVOKED")]
    for entry in entries:
        claims = _claims_cell(entry.claims) if entry.claims else "-"
        scopes = " ".join(_cell(scope) for scope in entry.scopes) or "-"
        revoked = _cell(entry.revoked) if entry.revoked is not None else "-"
        rows.append((entry.name, scopes, claims, _cell(entry.created) or "-", revoked))
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    )


def _claims_cell(claims: Mapping[str, Any]) -> str:
    shown = json.dumps(dict(claims), ensure_ascii=False, separators=(", ", ": "))
    return shown if shown.isprintable() else json.dumps(dict(claims))  # \u escapes, as for _cell


def _cell(text: str) -> str:
    """Text from the file as one table cell: quoted when it holds a space or a control character
    (a hand-edited file must not be able to shift the columns or drive the terminal)."""
    return text if text.isprintable() and " " not in text else json.dumps(text)

"""Command-line serving, shared by `lynxc serve` and a generated `python server.py`."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import TYPE_CHECKING

from .defaults import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_HOST,
    DEFAULT_MAX_SESSIONS,
    DEFAULT_MAX_SESSIONS_PER_CLIENT,
    DEFAULT_PAGE_SIZE,
    DEFAULT_PORT,
    DEFAULT_SESSION_IDLE_TIMEOUT,
    HttpOptions,
)
from .settings import ENV_PREFIX, SettingsError, unknown_environment

if TYPE_CHECKING:
    from .definition import ServerDefinition


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="default: stdio")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"HTTP bind address (default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--page-size",
        type=int,
        default=DEFAULT_PAGE_SIZE,
        help=f"entries per page of tools/list, prompts/list and the resource lists (default {DEFAULT_PAGE_SIZE})",
    )
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"a server setting (JSON for non-string values); also read from {ENV_PREFIX}<NAME>",
    )
    parser.add_argument(
        "--audit-log",
        metavar="PATH",
        default=None,
        help="append one JSON line per tool call (time, caller, tool, outcome, duration, result "
        "bytes; never arguments or credentials) to PATH, or - for stderr, or off (default: stderr "
        "for a server that authenticates its callers, off otherwise)",
    )
    http = parser.add_argument_group("HTTP transport")
    http.add_argument(
        "--allowed-host",
        dest="allowed_hosts",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="also serve requests whose Host header names this (DNS-rebinding protection refuses "
        "others); the bind address's own names are always allowed, loopback's for 0.0.0.0 and ::",
    )
    http.add_argument(
        "--session-idle-timeout",
        type=float,
        default=DEFAULT_SESSION_IDLE_TIMEOUT,
        metavar="SECONDS",
        help="close a session with no request in flight for this long; its client gets 404 and "
        f"starts a new one (default {DEFAULT_SESSION_IDLE_TIMEOUT})",
    )
    http.add_argument(
        "--max-sessions",
        type=int,
        default=DEFAULT_MAX_SESSIONS,
        metavar="N",
        help=f"refuse a new session (503) while this many are open (default {DEFAULT_MAX_SESSIONS})",
    )
    http.add_argument(
        "--max-sessions-per-client",
        type=int,
        default=DEFAULT_MAX_SESSIONS_PER_CLIENT,
        metavar="N",
        help="refuse a client a new session (429) while it holds this many: its authenticated "
        "identity, else its remote address, which clients behind one proxy or on this machine share "
        f"(default {DEFAULT_MAX_SESSIONS_PER_CLIENT})",
    )
    http.add_argument(
        "--header-timeout",
        type=float,
        default=DEFAULT_HEADER_TIMEOUT,
        metavar="SECONDS",
        help=f"close a connection whose request head takes longer (default {DEFAULT_HEADER_TIMEOUT})",
    )
    http.add_argument(
        "--body-timeout",
        type=float,
        default=DEFAULT_BODY_TIMEOUT,
        metavar="SECONDS",
        help=f"close a connection whose request body takes longer (default {DEFAULT_BODY_TIMEOUT})",
    )


def run_serve(definition: ServerDefinition, args: argparse.Namespace) -> int:
    from .startup_checks import serving_checks, startup_settings

    for warning in unknown_environment(definition.settings_schema):
        print(f"lynxc serve: warning: {warning}", file=sys.stderr)
    problems = _usage_problems(args)
    settings = {}
    try:
        settings = startup_settings(definition, args.settings, os.getcwd())
    except SettingsError as err:
        problems += err.problems
    if args.transport not in definition.transports:
        problems.append(
            f"server {definition.name} is served on {' and '.join(definition.transports)} only "
            f"(server.transports in its spec), not {args.transport}"
        )
    authenticator = None
    if not problems and args.transport == "http" and definition.auth is not None:
        from .auth.config import authenticator_for

        authenticator, auth_problems = authenticator_for(definition.auth, settings, os.getcwd())
        problems += auth_problems
    audit_log = _audit_target(args.audit_log, definition)
    if audit_log not in (None, "-"):
        problems += _audit_problems(audit_log)
    if not problems:  # e.g. one login to a Postgres database: a refused one is a start-up problem
        problems += serving_checks(definition, settings, _note)
    if problems:
        for problem in problems:
            print(f"lynxc serve: {problem}", file=sys.stderr)
        return 2
    from .serve import serve  # the MCP SDK loads only when a server really starts

    serve(
        definition,
        settings,
        transport=args.transport,
        host=args.host,
        port=args.port,
        page_size=args.page_size,
        http=HttpOptions(
            session_idle_timeout=args.session_idle_timeout,
            max_sessions=args.max_sessions,
            max_sessions_per_client=args.max_sessions_per_client,
            header_timeout=args.header_timeout,
            body_timeout=args.body_timeout,
            allowed_hosts=tuple(args.allowed_hosts),
        ),
        authenticator=authenticator,
        audit_log=audit_log,
    )
    return 0


def _audit_problems(path: str) -> list[str]:
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError as error:
        return [f"--audit-log {path}: cannot be opened for appending ({error.strerror})"]
    os.close(descriptor)
    return []


def _audit_target(flag: str | None, definition: ServerDefinition) -> str | None:
    if flag is None:
        return "-" if definition.auth is not None else None
    return None if flag == "off" else flag


def _note(text: str) -> None:
    print(f"lynxc serve: {text}", file=sys.stderr, flush=True)


def _usage_problems(args: argparse.Namespace) -> list[str]:
    from .http_hosts import host_name

    problems = []
    if args.page_size < 1:
        problems.append("--page-size must be at least 1")
    if args.max_sessions < 1:
        problems.append("--max-sessions must be at least 1")
    if args.max_sessions_per_client < 1:
        problems.append("--max-sessions-per-client must be at least 1")
    for flag in ("session_idle_timeout", "header_timeout", "body_timeout"):
        seconds = getattr(args, flag)
        if not (math.isfinite(seconds) and seconds > 0):
            problems.append(f"--{flag.replace('_', '-')} must be a positive number of seconds, got {seconds}")
    for flag, name in [("--host", args.host), *(("--allowed-host", name) for name in args.allowed_hosts)]:
        try:
            host_name(name, flag)
        except ValueError as err:
            problems.append(str(err))
    return problems


def main(definition: ServerDefinition, argv: list[str] | None = None) -> None:
    """`python generated/<server>/server.py`, from any working directory."""
    from .definition import DefinitionError

    parser = argparse.ArgumentParser(
        prog=f"{definition.name}", description=f"Serve the MCP server {definition.name}."
    )
    add_serve_arguments(parser)
    args = parser.parse_args(argv)
    try:
        definition.check_files()
    except DefinitionError as err:
        print(f"{definition.name}: {err}", file=sys.stderr)
        sys.exit(2)
    # A user's backends (`package.module:function`) import relative to the project root, as
    # under `lynxc serve`; the generated folder sits at <project>/generated/<server>/.
    project = str(definition.folder.parents[1])
    if project not in sys.path:
        sys.path.insert(0, project)
    sys.exit(run_serve(definition, args))

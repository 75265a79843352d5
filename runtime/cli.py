"""Command-line serving, shared by `lynxc serve` and a generated `python server.py`."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .defaults import DEFAULT_HOST, DEFAULT_PAGE_SIZE, DEFAULT_PORT
from .settings import ENV_PREFIX, SettingsError, parse_assignments, resolve_settings

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
        help=f"tools per tools/list page (default {DEFAULT_PAGE_SIZE})",
    )
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"a server setting (JSON for non-string values); also read from {ENV_PREFIX}<NAME>",
    )


def run_serve(definition: ServerDefinition, args: argparse.Namespace) -> int:
    try:
        settings = resolve_settings(definition.settings_schema, parse_assignments(args.settings))
    except SettingsError as err:
        print(f"lynxc serve: {err}", file=sys.stderr)
        return 2
    if args.page_size < 1:
        print("lynxc serve: --page-size must be at least 1", file=sys.stderr)
        return 2
    from .serve import serve  # the MCP SDK loads only when a server really starts

    serve(
        definition,
        settings,
        transport=args.transport,
        host=args.host,
        port=args.port,
        page_size=args.page_size,
    )
    return 0


def main(definition: ServerDefinition, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=f"{definition.name}", description=f"Serve the MCP server {definition.name}."
    )
    add_serve_arguments(parser)
    sys.exit(run_serve(definition, parser.parse_args(argv)))

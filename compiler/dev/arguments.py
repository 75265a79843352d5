"""The options of `lynxc dev`, apart from the loop itself so that building the command line
loads nothing heavy."""

from __future__ import annotations

import argparse


def add_dev_arguments(parser: argparse.ArgumentParser) -> None:
    from lynxc.runtime.defaults import DEFAULT_HOST, DEFAULT_PORT

    parser.add_argument(
        "servers", nargs="*", metavar="SERVER", help="servers to serve (default: every spec in specs/)"
    )
    parser.add_argument(
        "--transport",
        choices=("http", "stdio"),
        default="http",
        help="default: http, which also serves a try-it page per server at /SERVER/ (index at /)",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"HTTP bind address (default {DEFAULT_HOST})")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"HTTP port (default {DEFAULT_PORT})")
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a setting, given to every build and every server; repeatable",
    )

"""Warm spares: `lynxc` processes started ahead of need, which import what a build or a server
needs (about 0.4 s and 0.5 s of each start here) and then wait for their command line. A save
then costs the build and the server's own work, not the interpreter's imports.

Freshness is kept: a spare imports lynxc, the MCP SDK and their dependencies only, never the
user's modules, so a backend edited a second ago is imported as it is now when the command runs.
A spare waits on a FIFO (its stdin is the MCP protocol's, for a server), reads one JSON line,
the argv, and runs `lynxc` with it in the same process: the `-c` program below."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# What each kind of spare imports while it waits: the modules `lynxc build` and `lynxc serve`
# would import first anyway.
WARM = {
    "build": ("lynxc.compiler.build", "lynxc.compiler.diagnostics"),
    "serve": (
        "lynxc.runtime.cli",
        "lynxc.runtime.serve",
        "lynxc.runtime.host",
        "lynxc.runtime.stdio",
        "lynxc.runtime.startup_checks",
    ),
}


def spare_argv(kind: str, fifo: Path) -> list[str]:
    program = (
        "from lynxc.compiler.dev.spare import wait; argv = wait(); "
        "from lynxc.compiler.cli import main; main(argv)"
    )
    return [sys.executable, "-c", program, kind, str(fifo)]


def wait() -> list[str]:
    """In the spare: import, then block until the command line arrives (exit quietly if the
    FIFO is closed without one: `lynxc dev` stopped)."""
    import importlib

    kind, fifo = sys.argv[1], sys.argv[2]
    _end_with_parent()
    for module in WARM[kind]:
        importlib.import_module(module)
    with open(fifo, encoding="utf-8") as reader:
        line = reader.readline()
    if not line.strip():
        sys.exit(0)
    argv = json.loads(line)
    sys.argv = ["lynxc", *argv]
    return argv


def _end_with_parent() -> None:
    """A spare waits on its FIFO, where it would never notice `lynxc dev` killed (kill -9):
    Linux ends it then (PR_SET_PDEATHSIG). A served child also ends at its stdin's EOF."""
    if sys.platform != "linux":
        return
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)
    if os.getppid() == 1:  # the parent was gone before the line above
        sys.exit(0)


async def send(fifo: Path, argv: list[str] | None, timeout: float) -> bool:
    """From `lynxc dev`: hand a waiting spare its command line (None: tell it to exit). False
    when no spare opened the FIFO within `timeout` seconds (one that died while importing)."""
    import anyio

    data = (json.dumps(argv) + "\n" if argv is not None else "\n").encode()
    with anyio.move_on_after(timeout):
        while True:
            try:  # non-blocking: ENXIO until the spare has opened its end
                descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                await anyio.sleep(0.005)
                continue
            try:
                os.write(descriptor, data)  # one short write: atomic on a pipe
            finally:
                os.close(descriptor)
            return True
    return False


def make_fifo(folder: Path, name: str) -> Path:
    path = folder / name
    os.mkfifo(path, 0o600)
    return path

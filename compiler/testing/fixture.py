"""A server's test fixture made concrete: its settings with {spec_dir} and {tmp} filled in, the
command line's --set values over them, and its setup commands run."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..ir import ServerIR

# The lynxc of this interpreter, whatever its console script is called or wherever it lives.
LYNXC = [sys.executable, "-c", "from lynxc.compiler.cli import main; main()"]
SETUP_TIMEOUT_SECONDS = 600


def spec_dir(server: ServerIR) -> Path:
    """The folder of the server's spec (of server.yaml, or of the one-file spec)."""
    return Path(server.spec_files[0].path).resolve().parent


def fill(value: Any, folder: Path, tmp: Path) -> Any:
    """`value` with every {spec_dir} and {tmp} in its strings replaced."""
    if isinstance(value, str):
        return value.replace("{spec_dir}", str(folder)).replace("{tmp}", str(tmp))
    if isinstance(value, list):
        return [fill(item, folder, tmp) for item in value]
    if isinstance(value, dict):
        return {key: fill(item, folder, tmp) for key, item in value.items()}
    return value


def setting_args(server: ServerIR, tmp: Path, overrides: Mapping[str, str]) -> list[str]:
    """`--set NAME=VALUE` flags: the fixture's settings (as JSON), then the overrides the
    server declares (as given, which `lynxc serve` reads as it reads any --set)."""
    declared = {setting.name for setting in server.settings}
    settings = server.test_fixture.settings if server.test_fixture is not None else {}
    args: list[str] = []
    for name, value in fill(settings, spec_dir(server), tmp).items():
        if name not in overrides:
            args += ["--set", f"{name}={json.dumps(value)}"]
    for name, value in overrides.items():
        if name in declared:
            args += ["--set", f"{name}={value}"]
    return args


def run_setup(
    project: Path, server: ServerIR, folder: Path, tmp: Path, overrides: Mapping[str, str]
) -> str | None:
    """Run the fixture's setup commands in order; what went wrong, or None. The server's name
    among a command's arguments stands for `folder`, the generated folder the test serves."""
    if server.test_fixture is None:
        return None
    settings = setting_args(server, tmp, overrides)
    for step in server.test_fixture.setup:
        args = [str(fill(arg, spec_dir(server), tmp)) for arg in step.lynxc]
        given = [str(folder) if arg == server.name else arg for arg in args]
        command = [*LYNXC, "--project", str(project), *given, *settings]
        try:
            done = subprocess.run(
                command, cwd=project, capture_output=True, text=True, timeout=SETUP_TIMEOUT_SECONDS
            )
        except subprocess.TimeoutExpired:
            return f"{step.span}: setup `lynxc {' '.join(args)}` ran over {SETUP_TIMEOUT_SECONDS} s"
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip()[-2000:]
            return f"{step.span}: setup `lynxc {' '.join(args)}` exited {done.returncode}:\n{tail}"
    return None

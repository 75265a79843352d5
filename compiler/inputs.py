"""What `lynxc diff` and `lynxc lint` read: each input is a spec file or folder, a folder of specs,
a generated `tools.json`, a saved `tools/list` answer, `git:REF[:PATH]` (specs at a git ref), or
`release:[SERVER[@VERSION]]` (released baselines in schema-changelog/), turned into the wire form
of its servers (`wire.Side`).

Declared records come with the servers of a spec (from the IR) and of a generated folder (its
collections.json; none when it has no such file). A JSON file given alone is a tools/list answer,
which cannot say what a server declares: its resources are unknown and not compared.

Prompts and MCP resources (issue 31) come the same way: from a spec's IR, from a generated
folder's prompts.json and resources.json (an MCP one: `resources` with URIs, `resourceTemplates`;
none when absent), and from a released baseline that keeps them. A saved answer carries them
when it holds `prompts` or MCP `resources`/`resourceTemplates` beside `tools` (the list answers
merged into one file); otherwise they are unknown and not compared, like records."""

from __future__ import annotations

import io
import json
import re
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from .diagnostics import Diagnostic
from .limits import MAX_SCHEMA_DEPTH, MAX_TOOLS_LIST_BYTES
from .wire import (
    ServerWire,
    Side,
    auth_of_payload,
    is_mcp_resources,
    mcp_resources_from_payload,
    prompts_from_payload,
    resources_from_document,
    wire_from_ir,
)

GIT_PREFIX = "git:"
RELEASE_PREFIX = "release:"
_SERVER_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")
COLLECTIONS_FILE = "collections.json"
# Where a folder generated before issue 31 kept its declared records (now MCP resources).
LEGACY_COLLECTIONS_FILE = "resources.json"
# The MCP resources and the prompts a generated folder offers (issue 31).
RESOURCES_FILE = "resources.json"
PROMPTS_FILE = "prompts.json"


class DiffInputError(Exception):
    """An input that cannot be read; the message names it and says why."""


def load_side(arg: str, project: Path) -> Side:
    if arg.startswith(RELEASE_PREFIX):
        return _load_releases(arg, project)
    if arg.startswith(GIT_PREFIX):
        ref, _, inner = arg[len(GIT_PREFIX) :].partition(":")
        if not ref or ref.startswith("-"):  # git would read `git:--output=x` as an option
            raise DiffInputError(f"{arg}: expected git:REF[:PATH] with a branch, tag or commit as REF")
        if not inner and _ref_without_specs(project, ref):
            # The commit before a project's first spec (a repository's first lynxc pull request):
            # nothing was there, so every server of the other side is new, not an unreadable base.
            return Side({})
        with _checkout(project, ref, inner or "specs") as root:
            return _load_path(root / (inner or "specs"), f"{arg}")
    path = Path(arg)
    if not path.exists():
        raise DiffInputError(f"{arg}: no such file or folder (or use git:REF for a git ref)")
    return _load_path(path, arg)


def default_base(project: Path) -> str:
    """What `lynxc diff` compares with when no BASE is given: the released contract (`release:`,
    every released server's latest baseline) once any server has a release, else `git:HEAD`."""
    from .review.versions import released_servers

    return RELEASE_PREFIX if released_servers(project) else f"{GIT_PREFIX}HEAD"


def _load_releases(arg: str, project: Path) -> Side:
    """`release:` is the latest released baseline of every released server, `release:SERVER`
    that server's, `release:SERVER@VERSION` the baseline of that version. A baseline carries
    its version, so `lynxc diff` can judge a breaking change by the version that follows it."""
    from .review.changelog import CHANGELOG_DIR, load_releases
    from .review.versions import released_servers

    server, _, version = arg[len(RELEASE_PREFIX) :].partition("@")
    if server and not _SERVER_NAME.match(server):
        raise DiffInputError(f"{arg}: expected release:[SERVER[@VERSION]] with a server name")
    names = [server] if server else released_servers(project)
    if not names:
        raise DiffInputError(f"{arg}: no server has a release in {CHANGELOG_DIR}/ (`lynxc release SERVER`)")
    servers: dict[str, ServerWire] = {}
    for name in names:
        releases, problems = load_releases(project, name)
        if problems:
            raise DiffInputError(f"{arg}: {problems[0].span.file}: {problems[0].message}")
        if not releases:
            where = f"{CHANGELOG_DIR}/{name}/"
            raise DiffInputError(f"{arg}: {name} has no release in {where} (`lynxc release {name}`)")
        chosen = next((r for r in releases if r.version == version), None) if version else releases[-1]
        if chosen is None:
            listed = ", ".join(r.version for r in releases)
            raise DiffInputError(f"{arg}: {name} has no release {version} (released: {listed})")
        origin = f"release:{name}@{chosen.version}"
        servers[name] = chosen.wire(name, origin, chosen.version)
    return Side(servers)


def _released_baseline(path: Path, label: str) -> Side | None:
    """A baseline file of schema-changelog/<server>/ that releases.json lists, read as the release
    it is (named by its server, with its version); None for any other JSON file."""
    from .review.changelog import CHANGELOG_DIR, RELEASES_FILE

    folder = path.resolve().parent
    if folder.parent.name != CHANGELOG_DIR or not (folder / RELEASES_FILE).is_file():
        return None
    try:
        listed = json.loads((folder / RELEASES_FILE).read_text(encoding="utf-8"))["releases"]
        versions = {item["version"] for item in listed}
    except (OSError, ValueError, KeyError, TypeError):
        return None  # read as a plain tools/list answer, which says what is wrong with it
    if path.stem not in versions:
        return None
    side = _load_releases(f"{RELEASE_PREFIX}{folder.name}@{path.stem}", folder.parent.parent)
    return Side({name: replace(wire, origin=label) for name, wire in side.servers.items()})


def _load_path(path: Path, label: str) -> Side:
    if path.is_file() and path.suffix == ".json":
        released = _released_baseline(path, label)
        return released or Side({_json_name(path): _load_json(path, label)})
    # The spec front end (pydantic, ruamel) loads only for spec inputs: JSON sides start fast.
    from .spec.load import SERVER_FILE, YAML_SUFFIXES, discover_specs

    if (path.is_file() and path.suffix in YAML_SUFFIXES) or (path / SERVER_FILE).is_file():
        return _load_specs([path], label)
    if (path / "tools.json").is_file():
        wire = _load_json(path / "tools.json", label)
        resources = _load_resources(path, label)
        prompts, mcp = _load_surface(path, label)
        return Side({path.name: replace(wire, resources=resources, prompts=prompts, mcp_resources=mcp)})
    specs = discover_specs(path)
    if specs:
        return _load_specs(specs, label)
    raise DiffInputError(f"{label}: holds no spec, tools.json or tools/list JSON")


def _load_specs(paths: list[Path], label: str) -> Side:
    from .lower.server import compile_spec

    servers: dict[str, ServerWire] = {}
    diagnostics: list[Diagnostic] = []
    for path in paths:
        # A side may predate issue 31 (git:BASE of the pull request that renames): its records
        # under `resources:` are read as `collections:`, so the two sides still compare.
        result = compile_spec(path, check_backends=False, legacy_records=True)
        diagnostics.extend(result.diagnostics)
        if result.value is not None:
            servers[result.value.name] = wire_from_ir(result.value, label)
    return Side(servers, tuple(diagnostics))


def _json_name(path: Path) -> str:
    # generated/<server>/tools.json is named by its folder; a saved answer by its file name.
    return path.parent.name if path.name == "tools.json" else path.stem


def _load_surface(folder: Path, label: str) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, Any]]]]:
    """A generated folder's prompts (prompts.json) and MCP resources (resources.json once it
    lists MCP resources); a folder without them offers none."""
    prompts: list[dict[str, Any]] = []
    if (folder / PROMPTS_FILE).is_file():
        shown = f"{label}: {PROMPTS_FILE}"
        try:
            prompts = prompts_from_payload(_read_json(folder / PROMPTS_FILE, shown, "a prompts.json"))
        except ValueError as err:
            raise DiffInputError(f"{shown}: {err}") from None
    mcp: dict[str, list[dict[str, Any]]] = {"resources": [], "resourceTemplates": []}
    if (folder / RESOURCES_FILE).is_file():
        shown = f"{label}: {RESOURCES_FILE}"
        data = _read_json(folder / RESOURCES_FILE, shown, "a resources.json")
        if is_mcp_resources(data):
            try:
                mcp = mcp_resources_from_payload(data)
            except ValueError as err:
                raise DiffInputError(f"{shown}: {err}") from None
    return prompts, mcp


def _load_resources(folder: Path, label: str) -> list[dict[str, Any]]:
    """The declared records of a generated folder's collections.json (or, from a build before
    issue 31, its resources.json when that holds records); a folder without one has none."""
    path = folder / COLLECTIONS_FILE
    if not path.is_file():
        legacy = folder / LEGACY_COLLECTIONS_FILE
        if not legacy.is_file():
            return []
        shown = f"{label}: {LEGACY_COLLECTIONS_FILE}"
        data = _read_json(legacy, shown, "a resources.json")
        if not (isinstance(data, dict) and "format" in data):
            return []  # MCP resources, not records
    else:
        shown = f"{label}: {COLLECTIONS_FILE}"
        data = _read_json(path, shown, "a collections.json")
    try:
        return resources_from_document(data)
    except ValueError as err:
        raise DiffInputError(f"{shown}: {err}") from None


def _read_json(path: Path, label: str, what: str) -> Any:
    """A JSON file within the size and depth limits, or a DiffInputError naming it."""
    try:
        size = path.stat().st_size
        if size > MAX_TOOLS_LIST_BYTES:
            raise DiffInputError(
                f"{label}: {size / 2**20:.1f} MiB is over the limit of {MAX_TOOLS_LIST_BYTES // 2**20} MiB "
                f"for {what}"
            )
        data = json.loads(path.read_text(encoding="utf-8"), parse_constant=_refuse_constant)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, ValueError) as err:
        raise DiffInputError(f"{label}: not readable JSON ({err})") from None
    except RecursionError:
        data = None  # reported below with the depth limit
    if data is None or _deeper_than(data, MAX_SCHEMA_DEPTH):
        raise DiffInputError(f"{label}: nests deeper than {MAX_SCHEMA_DEPTH} levels; no tool schema does")
    return data


def _load_json(path: Path, label: str) -> ServerWire:
    data = _read_json(path, label, "a tools/list answer")
    if isinstance(data, dict) and isinstance(data.get("result"), dict):
        data = data["result"]  # a whole JSON-RPC response
    auth = None
    if isinstance(data, dict) and "tools" in data:
        tools = data["tools"]
        auth = auth_of_payload(data)
    elif isinstance(data, dict) and "inputSchema" in data:
        tools = [data]
    else:
        tools = data
    if not isinstance(tools, list) or not all(
        isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools
    ):
        raise DiffInputError(f'{label}: expected a tools/list answer ({{"tools": [...]}}) or a list of tools')
    prompts, mcp = _saved_surface(data, label)
    return ServerWire(_json_name(path), tools, label, auth=auth, prompts=prompts, mcp_resources=mcp)


def _saved_surface(
    data: Any, label: str
) -> tuple[list[dict[str, Any]] | None, dict[str, list[dict[str, Any]]] | None]:
    """What a saved answer says beside its tools: its `prompts` (a prompts/list answer merged in)
    and its MCP resources (`resources` with URIs, `resourceTemplates`); None for each it leaves out,
    which is then not compared."""
    if not isinstance(data, dict):
        return None, None
    try:
        prompts = prompts_from_payload(data) if "prompts" in data else None
        mcp = mcp_resources_from_payload(data) if is_mcp_resources(data) else None
    except ValueError as err:
        raise DiffInputError(f"{label}: {err}") from None
    return prompts, mcp


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # NaN and Infinity: Python's json accepts them


def _deeper_than(value: Any, limit: int) -> bool:
    """Iteratively, so a deep document cannot exhaust the stack of the check itself."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def _ref_without_specs(project: Path, ref: str) -> bool:
    """Whether `ref` names a commit that has no specs/ folder (relative to the project). A ref
    that names no commit is not such a ref: reading it fails with git's own message."""

    def git_succeeds(*args: str) -> bool:
        try:
            return subprocess.run(["git", "-C", str(project), *args], capture_output=True).returncode == 0
        except FileNotFoundError:
            return False

    if not git_succeeds("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"):
        return False
    return not git_succeeds("cat-file", "-e", f"{ref}:./specs")


@contextmanager
def _checkout(project: Path, ref: str, inner: str) -> Iterator[Path]:
    """The files under `inner` at git `ref`, extracted into a temporary folder."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(project), "archive", "--format=tar", ref, "--", inner],
            capture_output=True,
            check=True,
        ).stdout
    except FileNotFoundError:
        raise DiffInputError("git is not installed") from None
    except subprocess.CalledProcessError as err:
        message = err.stderr.decode(errors="replace").strip().splitlines()
        raise DiffInputError(f"git:{ref}: {message[-1] if message else 'git archive failed'}") from None
    with tempfile.TemporaryDirectory(prefix="lynxc-diff-") as folder:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        yield Path(folder)

"""What `lynxc diff` and `lynxc lint` read: each input is a spec file or folder, a folder of specs,
a generated `tools.json`, a saved `tools/list` answer, or `git:REF[:PATH]` (specs at a git ref),
turned into the wire form of its servers (`wire.Side`).

Declared records come with the servers of a spec (from the IR) and of a generated folder (its
resources.json; none when it has no such file). A JSON file given alone is a tools/list answer,
which cannot say what a server declares: its resources are unknown and not compared."""

from __future__ import annotations

import io
import json
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
from .wire import ServerWire, Side, auth_of_payload, resources_from_document, wire_from_ir

GIT_PREFIX = "git:"
RESOURCES_FILE = "resources.json"


class DiffInputError(Exception):
    """An input that cannot be read; the message names it and says why."""


def load_side(arg: str, project: Path) -> Side:
    if arg.startswith(GIT_PREFIX):
        ref, _, inner = arg[len(GIT_PREFIX) :].partition(":")
        if not ref or ref.startswith("-"):  # git would read `git:--output=x` as an option
            raise DiffInputError(f"{arg}: expected git:REF[:PATH] with a branch, tag or commit as REF")
        with _checkout(project, ref, inner or "specs") as root:
            return _load_path(root / (inner or "specs"), f"{arg}")
    path = Path(arg)
    if not path.exists():
        raise DiffInputError(f"{arg}: no such file or folder (or use git:REF for a git ref)")
    return _load_path(path, arg)


def _load_path(path: Path, label: str) -> Side:
    if path.is_file() and path.suffix == ".json":
        return Side({_json_name(path): _load_json(path, label)})
    # The spec front end (pydantic, ruamel) loads only for spec inputs: JSON sides start fast.
    from .spec.load import SERVER_FILE, YAML_SUFFIXES, discover_specs

    if (path.is_file() and path.suffix in YAML_SUFFIXES) or (path / SERVER_FILE).is_file():
        return _load_specs([path], label)
    if (path / "tools.json").is_file():
        wire = _load_json(path / "tools.json", label)
        resources = _load_resources(path / RESOURCES_FILE, label)
        return Side({path.name: replace(wire, resources=resources)})
    specs = discover_specs(path)
    if specs:
        return _load_specs(specs, label)
    raise DiffInputError(f"{label}: holds no spec, tools.json or tools/list JSON")


def _load_specs(paths: list[Path], label: str) -> Side:
    from .lower.server import compile_spec

    servers: dict[str, ServerWire] = {}
    diagnostics: list[Diagnostic] = []
    for path in paths:
        result = compile_spec(path, check_backends=False)
        diagnostics.extend(result.diagnostics)
        if result.value is not None:
            servers[result.value.name] = wire_from_ir(result.value, label)
    return Side(servers, tuple(diagnostics))


def _json_name(path: Path) -> str:
    # generated/<server>/tools.json is named by its folder; a saved answer by its file name.
    return path.parent.name if path.name == "tools.json" else path.stem


def _load_resources(path: Path, label: str) -> list[dict[str, Any]]:
    """The resources of a generated folder's resources.json; a folder without one has none."""
    if not path.is_file():
        return []
    shown = f"{label}: {RESOURCES_FILE}"
    data = _read_json(path, shown, "a resources.json")
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
    return ServerWire(_json_name(path), tools, label, auth=auth)


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

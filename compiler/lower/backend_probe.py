"""Read what each backend declares (`@backend`), without letting its code into the compiler.

Built-in backends are lynxc's own: their modules import nothing heavy at import time, so they
are read in this process, at no cost. A user backend (`package.module:function`) is imported in
a child Python process that answers with its declaration as JSON. Whatever the module does at
import time happens there: `sys.exit(7)` is reported instead of ending the build with exit 7,
an import that loops ends when it has used its CPU time (a sleep or a deadlock, after a
wide wall-clock backstop), a crash of the interpreter is a message, and its prints
and side effects on `sys.modules` stay out of the compiler. One child reads every user backend
of a server, in about a tenth of a second plus the imports themselves.

The child runs `child_main` below with the compiler's `sys.path`, so a target resolves exactly
as it would in process (the project root that `lynxc build` puts first included).
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import os
import signal
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lynxc.runtime.backend import BUILTIN_BACKENDS, BackendInfo, declaration, load_backend

from ..depfile import BUILD_INPUT_EVENT, own_files, state_of, unchanged
from ..fingerprint import package_roots
from ..limits import BACKEND_IMPORT_CPU_SECONDS, BACKEND_IMPORT_WALL_SECONDS

if TYPE_CHECKING:
    from ..cache import Store

# The child takes the compiler's `sys.path` before importing anything of lynxc: both then see
# the same modules, whichever way lynxc and the project are installed.
_CHILD = (
    "import json, sys; request = json.loads(sys.stdin.readline()); sys.path[:] = request['sys_path']; "
    "from lynxc.compiler.lower.backend_probe import child_main; child_main(request)"
)
_INFO_FIELDS = ("params", "required_params", "caps", "required_caps", "settings")
# Module names that are never a user's backend: the standard library (`os:system`,
# `builtins:eval`, `subprocess:run`) and the running program.
_NOT_BACKENDS = frozenset(sys.stdlib_module_names) | {"__main__"}
_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError", "AttributeError")
PROBE_ENTRY = "backend-probe"  # the cache's entries of user backends' declarations


@dataclass(frozen=True)
class Declaration:
    """What reading one backend found: its declaration, or the rule it breaks and why."""

    info: BackendInfo | None
    rule_id: str | None = None
    message: str | None = None
    hint: str | None = None


def refused_target(target: str) -> Declaration | None:
    """A target no spec may bind, known without importing anything (checked by every verb)."""
    module_name = target.partition(":")[0]
    if target in BUILTIN_BACKENDS.values() or module_name.split(".")[0] not in _NOT_BACKENDS:
        return None
    return Declaration(
        None,
        "BACKEND_NOT_ALLOWED",
        f"'{target}' is a function of Python itself, not a lynxc backend",
        "bind a built-in backend, or an async function of your project declared with @backend",
    )


def read_declarations(
    targets: Iterable[str],
    *,
    cpu_seconds: float = BACKEND_IMPORT_CPU_SECONDS,
    wall_seconds: float = BACKEND_IMPORT_WALL_SECONDS,
    cache: Store | None = None,
) -> dict[str, Declaration]:
    """The declaration of each target: built-ins in process, the rest in one child process (or
    from `cache`, when none of the project's modules that child imported has changed)."""
    found: dict[str, Declaration] = {}
    user: list[str] = []
    for target in dict.fromkeys(targets):
        refused = refused_target(target)
        if refused is not None:
            found[target] = refused
        elif target in BUILTIN_BACKENDS.values():
            found[target] = _read_builtin(target)
        else:
            user.append(target)
    if user and cache is None:
        found.update(_read_in_child(user, cpu_seconds, wall_seconds)[0])
    elif user and cache is not None:
        found.update(_read_through(cache, user, cpu_seconds, wall_seconds))
    return found


def _read_through(
    cache: Store, targets: list[str], cpu_seconds: float, wall_seconds: float
) -> dict[str, Declaration]:
    """_read_in_child, kept with the states of the project's files the child imported. Only a
    probe that read every target is kept: a failure may be a timeout, which is no property of
    the files."""
    key = {"targets": targets, "sys_path": sys.path, "python": sys.executable}
    kept = cache.get(PROBE_ENTRY, key, _kept_declarations)
    if kept is not None:
        modules, found = kept
        for file in modules:  # what the build read, as the child would have told it
            sys.audit(BUILD_INPUT_EVENT, file)
        return found
    found, imported = _read_in_child(targets, cpu_seconds, wall_seconds)
    if all(found.get(target) is not None and found[target].info is not None for target in targets):
        modules = {file: state_of(file) for file in own_files(imported, map(str, package_roots()))}
        answers = {target: _listed_info(found[target].info) for target in targets}
        cache.put(PROBE_ENTRY, key, {"modules": modules, "answers": answers})
    return found


def _listed_info(info: BackendInfo | None) -> dict[str, Any]:
    assert info is not None
    return {name: _listed(getattr(info, name)) for name in _INFO_FIELDS}


def _kept_declarations(payload: Any) -> tuple[list[str], dict[str, Declaration]] | None:
    try:
        modules = payload["modules"]
        if not isinstance(modules, dict) or not unchanged(modules):
            return None
        found = {target: Declaration(_backend_info(info)) for target, info in payload["answers"].items()}
        return list(modules), found
    except (KeyError, TypeError, ValueError):  # not what _read_through writes: a miss
        return None


def _read_builtin(target: str) -> Declaration:
    try:
        _, info = load_backend(target)
    except Exception as err:  # a broken installation is reported, never raised
        return Declaration(None, "BACKEND_IMPORT_FAILED", f"cannot load backend '{target}': {err}")
    return Declaration(info)


def _read_in_child(
    targets: list[str], cpu_seconds: float, wall_seconds: float
) -> tuple[dict[str, Declaration], list[str]]:
    """The declarations the child read, and the source files of every module it imported."""
    request = json.dumps({"sys_path": sys.path, "targets": targets}).encode() + b"\n"
    posix = os.name == "posix"
    with subprocess.Popen(
        [sys.executable, "-c", _CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=posix,  # its own process group: a timeout ends whatever it started
        preexec_fn=_cpu_limit(cpu_seconds) if posix else None,
    ) as child:  # leaving the block closes the pipes and reaps the child, whatever happened
        timed_out = False
        try:
            out, err = child.communicate(request, timeout=wall_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill(child, posix)
            try:
                out, err = child.communicate(timeout=5)
            except subprocess.TimeoutExpired as late:  # something escaped the group and holds the pipe
                out, err = late.stdout or b"", b""
    answers, started = _parse(out)
    imported = _imported_files(out)
    for file in imported:  # the build read them, in the child: see depfile.py
        sys.audit(BUILD_INPUT_EVENT, file)
    found = {target: _declaration(target, answers[target]) for target in targets if target in answers}
    unread = [target for target in targets if target not in answers]
    if not unread:
        return found, imported
    culprit = started if started in unread else unread[0]
    over_cpu = posix and child.returncode == -signal.SIGXCPU
    if timed_out or over_cpu:
        found[culprit] = Declaration(
            None,
            "BACKEND_IMPORT_TIMEOUT",
            f"importing backend '{culprit}' "
            + (
                f"used over {cpu_seconds:g} s of CPU time"
                if over_cpu
                else f"did not finish within {wall_seconds:g} s"
            ),
            "a backend module should import quickly: load models and open connections on the first call",
        )
    elif started == culprit:
        found[culprit] = Declaration(
            None,
            "BACKEND_IMPORT_FAILED",
            f"cannot load backend '{culprit}': importing it ended the Python process "
            f"({_ending(child.returncode)})",
        )
    else:  # the child failed before it read any backend: its own error says why
        reason = (err or b"").decode(errors="replace").strip().splitlines()
        for target in unread:
            found[target] = Declaration(
                None,
                "BACKEND_IMPORT_FAILED",
                f"cannot load backend '{target}': the process that reads backends failed "
                f"({reason[-1] if reason else _ending(child.returncode)})",
            )
    # Targets after the one that stopped the child stay unread: the build fails on that one,
    # and the next build reads them.
    return found, imported


def _cpu_limit(seconds: float) -> Any:
    """In the child, before Python starts: the kernel ends it with SIGXCPU once it has used
    `seconds` of CPU time (work, which a loaded machine does not stretch)."""
    import resource

    limit = max(1, math.ceil(seconds))

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))

    return apply


def _kill(child: subprocess.Popen[bytes], posix: bool) -> None:
    try:
        if posix:
            os.killpg(child.pid, signal.SIGKILL)
        else:
            child.kill()
    except ProcessLookupError:
        pass


def _parse(out: bytes) -> tuple[dict[str, dict[str, Any]], str | None]:
    """The child's answers by target, and the last target it started reading."""
    answers: dict[str, dict[str, Any]] = {}
    started = None
    for line in out.decode(errors="replace").splitlines():
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(message, dict) or not isinstance(message.get("target"), str):
            continue
        if message.get("start"):
            started = message["target"]
        else:
            answers[message["target"]] = message
    return answers, started


def _imported_files(out: bytes) -> list[str]:
    """The source files of the modules the child had imported once it read every backend."""
    for line in out.decode(errors="replace").splitlines():
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(message, dict) and isinstance(message.get("modules"), list):
            return [file for file in message["modules"] if isinstance(file, str)]
    return []


def _declaration(target: str, answer: Mapping[str, Any]) -> Declaration:
    raised = answer.get("raised")
    if raised is not None:
        return Declaration(
            None, "BACKEND_IMPORT_FAILED", f"cannot load backend '{target}': {_raised(raised)}"
        )
    if not answer.get("callable"):
        return Declaration(
            None, "BACKEND_IMPORT_FAILED", f"cannot load backend '{target}': {target} is not callable"
        )
    info = answer.get("info")
    if not isinstance(info, dict):
        return Declaration(
            None,
            "BACKEND_NOT_DECLARED",
            f"'{target}' is not declared as a lynxc backend",
            "decorate it with @backend(...) from lynxc.runtime.backend",
        )
    if not answer.get("async"):
        return Declaration(
            None,
            "BACKEND_NOT_ASYNC",
            f"backend '{target}' is not an async function",
            "define it with 'async def': the host awaits every backend",
        )
    return Declaration(_backend_info(info))


def _raised(raised: Mapping[str, Any]) -> str:
    kind, text = raised.get("type"), raised.get("message", "")
    if kind == "SystemExit":
        return f"importing it called sys.exit({raised.get('code')!r})"
    if kind in _IMPORT_ERRORS:
        return text  # 'No module named ...', as Python words it
    return f"importing it raised {kind}: {text}" if text else f"importing it raised {kind}"


def _ending(returncode: int | None) -> str:
    if returncode is not None and returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


# The child ---------------------------------------------------------------------------------


def child_main(request: Mapping[str, Any]) -> None:
    """Read each of `request["targets"]`; answer one JSON line per target on stdout, after a line
    saying which target it starts on (so a parent that has to stop it knows which import hung
    or ended the process)."""
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    # User code writes where nobody reads: its prints must neither mix with the answers nor
    # fill a pipe the parent does not drain.
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    for target in request["targets"]:
        _answer(answers, {"target": target, "start": True})
        _answer(answers, {"target": target, **_inspect_target(target)})
    # What a backend's declaration was read from, for the build cache (the parent keeps the
    # project's files, not the interpreter's or lynxc's).
    modules = sorted(
        {
            file
            for module in list(sys.modules.values())
            if isinstance(file := getattr(module, "__file__", None), str)
        }
    )
    _answer(answers, {"modules": modules})
    answers.close()
    os._exit(0)  # not atexit handlers nor non-daemon threads a backend module may have started


def _answer(stream: Any, message: dict[str, Any]) -> None:
    stream.write(json.dumps(message) + "\n")
    stream.flush()


def _inspect_target(target: str) -> dict[str, Any]:
    module_name, _, attr = target.partition(":")
    try:
        fn = getattr(importlib.import_module(module_name), attr)
        info = declaration(fn)
        is_async = inspect.iscoroutinefunction(fn)
        is_callable = callable(fn)
    except BaseException as err:  # SystemExit and KeyboardInterrupt too: user code, reported
        return {"raised": _describe(err)}
    fields = None
    if info is not None:
        fields = {name: _listed(getattr(info, name)) for name in _INFO_FIELDS}
    return {"callable": is_callable, "async": is_async, "info": fields}


def _describe(err: BaseException) -> dict[str, Any]:
    described: dict[str, Any] = {"type": type(err).__name__, "message": str(err)}
    if isinstance(err, SystemExit):
        described["code"] = err.code if isinstance(err.code, int | str | None) else repr(err.code)
    return described


def _listed(value: Any) -> list[str] | None:
    return None if value is None else sorted(str(item) for item in value)


def _backend_info(info: dict[str, Any]) -> BackendInfo:
    """A backend's declaration from its JSON form (the probe's answer, or a cached one)."""
    return BackendInfo(
        params=frozenset(info["params"]) if info["params"] is not None else None,
        required_params=frozenset(info["required_params"]),
        caps=frozenset(info["caps"]),
        required_caps=frozenset(info["required_caps"]),
        settings=frozenset(info["settings"]),
    )

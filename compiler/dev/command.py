"""`lynxc dev [SERVER...]`: build, serve behind a stable front, and on every burst of saves
rebuild and swap in the new build, keeping the last good one while an edit is broken.

One loop, one direction: watch (watch.py) -> `lynxc build` as a subprocess (its diagnostics go
straight to stderr, in its own format) -> for each server, start a new child (children.py) and
swap it into its front (front.py) -> retire the old child once its calls are done."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process, TaskGroup

from .children import Child, lynxc_argv
from .front import Front
from .spare import make_fifo, send, spare_argv
from .tryit import tryit_routes
from .watch import watch

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
# How long after a swap the next spares start warming (a person saves again seconds later).
SPARE_DELAY = 0.5


def run_dev(args: argparse.Namespace) -> int:
    project: Path = args.project.resolve()
    servers, problem = _servers(project, list(args.servers), args.transport)
    if problem:
        print(f"lynxc dev: {problem}", file=sys.stderr)
        return EXIT_USAGE
    listening = None
    if args.transport == "http":
        try:  # bound before anything starts, so that a busy port is one clear line
            listening = socket.create_server(
                (args.host, args.port), family=socket.AF_INET6 if ":" in args.host else socket.AF_INET
            )
        except OSError as err:
            print(f"lynxc dev: cannot listen on {args.host}:{args.port}: {err.strerror}", file=sys.stderr)
            return EXIT_FAILED
    loop = DevLoop(project, servers, tuple(args.settings), explicit=bool(args.servers))
    with contextlib.suppress(KeyboardInterrupt):
        anyio.run(loop.run, args.transport, args.host, args.port, listening)
    return loop.exit_code


def _servers(project: Path, named: list[str], transport: str) -> tuple[list[str], str | None]:
    specs = project / "specs"
    found = sorted(
        {p.stem for p in specs.glob("*.y*ml") if p.suffix in (".yaml", ".yml")}
        | {p.name for p in specs.iterdir() if p.is_dir() and not p.name.startswith(".")}
        if specs.is_dir()
        else set()
    )
    for name in named:
        if name not in found:
            known = f" (specs: {', '.join(found)})" if found else ""
            return [], f"no spec for server {name!r} in {specs}{known}"
    servers = named or found
    if not servers:
        return [], f"no specs found in {specs} (`lynxc init NAME` writes one)"
    if transport == "stdio" and len(servers) != 1:
        return [], f"--transport stdio serves exactly one server; name one of: {', '.join(servers)}"
    return servers, None


class DevLoop:
    def __init__(self, project: Path, servers: list[str], settings: tuple[str, ...], *, explicit: bool):
        self.project = project
        self.servers = servers
        self.settings = settings
        self.explicit = explicit
        self.fronts = {name: Front(name) for name in servers}
        self.exit_code = EXIT_OK
        self._stop = anyio.Event()
        self._generation = 0
        self._children: TaskGroup | None = None
        self._fifos = Path(tempfile.mkdtemp(prefix="lynxc-dev-"))
        self._spares: dict[str, Child] = {}  # per server, the warm process of its next build
        self._spawned = 0
        self._build_spare: tuple[Process, Path] | None = None

    async def run(self, transport: str, host: str, port: int, listening: socket.socket | None) -> None:
        async with anyio.create_task_group() as children:
            self._children = children
            try:
                for name in self.servers:
                    self._new_spare(name)
                async with anyio.create_task_group() as group:
                    group.start_soon(self._signals, group)
                    await self._rebuild(set())
                    group.start_soon(watch, self.project, self._stop, self._rebuild)
                    if transport == "stdio":
                        await self._serve_stdio()
                    else:
                        assert listening is not None
                        await self._serve_http(host, port, listening)
                    self._stop.set()
                    group.cancel_scope.cancel()
            finally:
                self._stop.set()
                with anyio.CancelScope(shield=True):
                    await self._stop_spares()
                for front in self.fronts.values():
                    if front.child is not None:
                        front.child.retire()
                children.cancel_scope.cancel()  # every child's process is ended by its client
        shutil.rmtree(self._fifos, ignore_errors=True)

    def _warm_later(self, name: str | None) -> None:
        """Start the next spare of server `name` (None: of the build) once the swap is over:
        spares starting at once would take the CPU from the new server's first requests."""
        assert self._children is not None
        self._children.start_soon(self._warm, name)

    async def _warm(self, name: str | None) -> None:
        await anyio.sleep(SPARE_DELAY)
        if self._stop.is_set():
            return
        if name is None:
            if self._build_spare is None:
                self._build_spare = await self._spawn_build_spare()
        elif name not in self._spares:
            self._new_spare(name)

    def _new_spare(self, name: str) -> None:
        assert self._children is not None
        self._spawned += 1
        spare = Child(self.project, name, self.settings, self._fifos, self._spawned)
        self._children.start_soon(spare.run)
        self._spares[name] = spare

    async def _stop_spares(self) -> None:
        for spare in self._spares.values():
            await spare.dismiss()
        if self._build_spare is not None:
            process, fifo = self._build_spare
            if not await send(fifo, None, 0.0):
                process.terminate()
            with anyio.move_on_after(10):
                await process.wait()
            if process.returncode is None:
                process.kill()

    async def _build(self, words: list[str]) -> int:
        """`lynxc build WORDS...` in the warm build process, then warm the next one. Its
        diagnostics go straight to our stderr, exactly as `lynxc build` prints them; its summary
        line too: on stdio, our stdout is the protocol's."""
        if self._build_spare is None:
            self._build_spare = await self._spawn_build_spare()
        process, fifo = self._build_spare
        self._build_spare = None
        if await send(fifo, ["--project", str(self.project), "build", *words], 60.0):
            code = await process.wait()
        else:  # the spare died while importing (it said why on stderr): a plain process then
            process.terminate()
            done = await anyio.run_process(
                lynxc_argv(self.project, "build", *words), check=False, stdout=sys.stderr, stderr=sys.stderr
            )
            code = done.returncode
        return code  # the next spare is spawned once the servers have started (see _rebuild)

    async def _spawn_build_spare(self) -> tuple[Process, Path]:
        self._spawned += 1
        fifo = make_fifo(self._fifos, f"build-{self._spawned}")
        process = await anyio.open_process(
            spare_argv("build", fifo),
            stdin=subprocess.DEVNULL,
            stdout=sys.stderr,
            stderr=sys.stderr,
            cwd=self.project,
        )
        return process, fifo

    async def _signals(self, group: TaskGroup) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
            async for _ in received:
                _say("stopping")
                self._stop.set()
                group.cancel_scope.cancel()
                return

    async def _rebuild(self, changed: set[Path]) -> None:
        servers = self._affected(changed)
        if changed:
            shown = sorted(_relative(self.project, path) for path in changed)
            more = f" (+{len(shown) - 3} more)" if len(shown) > 3 else ""
            if not servers:
                _say(f"changed: {', '.join(shown[:3])}{more}; no served server is built from it")
                return
            _say(f"changed: {', '.join(shown[:3])}{more}; rebuilding {', '.join(servers)}")
        words = self._spec_paths(servers)
        for item in self.settings:
            words += ["--set", item]
        started = time.perf_counter()
        try:
            await self._build_and_start(servers, words, started)
        finally:
            self._warm_later(None)

    async def _build_and_start(self, servers: list[str], words: list[str], started: float) -> None:
        code = await self._build(words)
        if code != 0:
            serving = [name for name, front in self.fronts.items() if front.child is not None]
            still = (
                f"still serving the last good build of {', '.join(serving)}"
                if serving
                else "nothing served yet"
            )
            _say(f"build failed; {still}; fix the errors above and save")
            return
        built = time.perf_counter() - started
        self._generation += 1
        async with anyio.create_task_group() as group:  # the servers start side by side
            for name in servers:
                group.start_soon(self._start, name, built)

    def _affected(self, changed: set[Path]) -> list[str]:
        """The served servers a change can affect: a spec's own server; for anything else (a
        backend module, an SQL file, data) every server, as any of them may use it."""
        if not changed:
            return list(self.servers)
        owners = set()
        for path in changed:
            owner = _spec_owner(self.project, path)
            if owner is None:
                return list(self.servers)
            owners.add(owner)
        return [name for name in self.servers if name in owners]

    async def _start(self, name: str, built: float) -> None:
        if name not in self._spares:  # saved again before its spare was due: start one now
            self._new_spare(name)
        child = self._spares.pop(name)
        started = time.perf_counter()
        try:
            await child.go(self._generation)
        except Exception as err:  # its own stderr said why (a setting, a port); keep the old one
            front = self.fronts[name]
            keep = "keeping the last good build" if front.child is not None else "nothing served yet"
            _say(f"{name}: the new build did not start ({_reason(err)}); {keep}")
            self._warm_later(name)
            return
        old = await self.fronts[name].swap(child)
        if old is not None:
            old.retire()
        took = f"built in {built:.1f} s, started in {time.perf_counter() - started:.1f} s"
        _say(f"{name}: serving build {child.generation} ({len(child.tools)} tools; {took})")
        self._warm_later(name)

    def _spec_paths(self, servers: list[str]) -> list[str]:
        if not self.explicit and servers == self.servers:
            return []  # every spec: the same build `lynxc build` makes
        specs = self.project / "specs"
        paths = []
        for name in servers:
            for candidate in (specs / name, specs / f"{name}.yaml", specs / f"{name}.yml"):
                if candidate.exists():
                    paths.append(str(candidate))
        return paths

    async def _serve_stdio(self) -> None:
        from lynxc.runtime.stdio import stdio_transport

        (front,) = self.fronts.values()
        server = front.server
        async with stdio_transport() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    async def _serve_http(self, host: str, port: int, listening: socket.socket) -> None:
        import uvicorn
        from starlette.applications import Starlette
        from starlette.routing import Route

        routes: list[Route] = []
        async with AsyncExitStack() as managers:
            for name, front in self.fronts.items():
                app = front.server.streamable_http_app(
                    streamable_http_path=f"/{name}/mcp",
                    host=host,
                    transport_security=_security(host),
                    session_idle_timeout=None,  # a dev session lasts as long as its client
                )
                endpoint = app.routes[-1].endpoint  # type: ignore[attr-defined]
                routes.append(Route(f"/{name}/mcp", endpoint=endpoint))
                if len(self.fronts) == 1:
                    routes.append(Route("/mcp", endpoint=endpoint))
                await managers.enter_async_context(front.server.session_manager.run())
            routes += tryit_routes(self.fronts)  # the try-it pages, after the MCP endpoints
            config = uvicorn.Config(
                Starlette(routes=routes), host=host, port=port, log_level="warning", lifespan="off"
            )
            server = _QuietUvicorn(config)
            base = f"http://{_url_host(host)}:{port}"
            for name in self.fronts:
                _say(f"serving {name} on {base}/{name}/mcp (try it: {base}/{name}/)")
            if len(self.fronts) == 1:
                _say(f"  (also on {base}/mcp)")
            else:
                _say(f"  (every server's page: {base}/)")
            _say("watching for changes; Ctrl-C stops")
            try:
                await server.serve(sockets=[listening])
            finally:
                server.should_exit = True


class _QuietUvicorn:
    """uvicorn's server without its own signal handling: `lynxc dev` handles SIGINT and SIGTERM
    itself, so that it can stop its children before it exits."""

    def __new__(cls, config: Any) -> Any:
        import uvicorn

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

        return Server(config)


def _security(host: str) -> Any:
    from mcp.server.transport_security import TransportSecuritySettings

    from lynxc.runtime.http_hosts import allowed_hosts, allowed_origins, served_names

    names = served_names(host, [])
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=allowed_hosts(names),
        allowed_origins=allowed_origins(names),
    )


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _spec_owner(project: Path, path: Path) -> str | None:
    """The server whose spec `path` is (specs/NAME.yaml, specs/NAME/...), or None."""
    parts = Path(_relative(project, path)).parts
    if len(parts) < 2 or parts[0] != "specs":
        return None
    if len(parts) == 2:
        name, suffix = parts[1].rsplit(".", 1) if "." in parts[1] else (parts[1], "")
        return name if suffix in ("yaml", "yml") else None
    return parts[1]


def _relative(project: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(project).as_posix()
    except ValueError:
        return str(path)


def _reason(err: BaseException) -> str:
    if isinstance(err, BaseExceptionGroup):
        return "; ".join(_reason(inner) for inner in err.exceptions)
    return f"{type(err).__name__}: {err}" if str(err) else type(err).__name__


def _say(text: str) -> None:
    print(f"lynxc dev: {text}", file=sys.stderr, flush=True)

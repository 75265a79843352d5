"""Run the examples of built servers, and fuzz their tools, against `lynxc serve SERVER
--transport stdio` processes through the MCP SDK's client."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from lynxc.runtime.errors import crashed_prefix, invalid_result_prefix, unsendable_result_prefix

from ..diagnostics import Span
from ..files import GENERATED_DIR
from ..ir import ServerIR, ToolIR
from .expectations import Answer, error_kind, mismatches
from .fixture import LYNXC, run_setup, setting_args

START_TIMEOUT_SECONDS = 120
CALL_TIMEOUT_SECONDS = 120
FUZZ_FAILURES_SHOWN = 5  # per tool; the rest are counted


@dataclass
class CaseResult:
    """One example, or the fuzzing of one tool, and what went wrong with it."""

    server: str
    tool: str
    name: str
    span: Span | None
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    arguments: dict[str, Any] | None = None
    skipped: str | None = None  # why it did not run

    @property
    def status(self) -> str:
        return "SKIPPED" if self.skipped is not None else ("PASSED" if self.passed else "FAILED")

    @property
    def id(self) -> str:
        return f"{self.server}::{self.tool}::{self.name}"

    @property
    def passed(self) -> bool:
        return not self.problems


@dataclass(frozen=True)
class FuzzOptions:
    count: int  # argument sets drawn per tool (0: no fuzzing)
    seed: int
    side_effects: bool = False  # also fuzz tools that may write (readOnlyHint not true)


@dataclass(frozen=True)
class Plan:
    project: Path
    overrides: Mapping[str, str]
    keyword: str | None
    fuzz: FuzzOptions
    files: Mapping[str, str]  # the build's output, {path under the project: text}


def run_servers(
    plan: Plan, servers: Sequence[ServerIR], report: Callable[[CaseResult], None]
) -> list[CaseResult]:
    """Every selected example and fuzz case of `servers`, one server process at a time."""
    results: list[CaseResult] = []
    for server in servers:
        for result in anyio.run(_run_server, plan, server, report):
            results.append(result)
    return results


def fuzzable(tool: ToolIR, side_effects: bool) -> str | None:
    """Why `tool` is not fuzzed, or None when it is. Tools that reach the outside world are never
    fuzzed; tools that may write only when asked (MCP's defaults: a tool without readOnlyHint
    may write, without destructiveHint may destroy)."""
    hints = dict(tool.annotations)
    if hints.get("openWorldHint") is True:
        return "openWorldHint: its calls leave this machine"
    if not side_effects and (not hints.get("readOnlyHint", False) or hints.get("destructiveHint") is True):
        return "may have side effects (readOnlyHint is not true); --fuzz-side-effects includes it"
    return None


async def _run_server(plan: Plan, server: ServerIR, report: Callable[[CaseResult], None]) -> list[CaseResult]:
    examples = [e for e in server.examples if _selected(plan.keyword, f"{server.name}::{e.tool}::{e.name}")]
    fuzzed = [
        t
        for t in server.tools
        if plan.fuzz.count > 0 and _selected(plan.keyword, f"{server.name}::{t.name}::fuzz")
    ]
    if not examples and not fuzzed:
        return []
    results: list[CaseResult] = []

    def done(result: CaseResult) -> None:
        results.append(result)
        report(result)

    with tempfile.TemporaryDirectory(prefix=f"lynxc-test-{server.name}-") as tmp_name:
        tmp = Path(tmp_name)
        started = time.monotonic()
        folder = _write_generated(plan.files, server, tmp)
        problem = await anyio.to_thread.run_sync(run_setup, plan.project, server, folder, tmp, plan.overrides)
        if problem is not None:
            done(CaseResult(server.name, "(setup)", "setup", None, [problem], time.monotonic() - started))
            return results
        errlog_path = tmp / "server-stderr.log"
        with open(errlog_path, "w+", encoding="utf-8") as errlog:
            try:
                async with AsyncExitStack() as stack:
                    try:
                        client = await stack.enter_async_context(
                            _client(plan.project, server, folder, tmp, plan.overrides, errlog)
                        )
                    except Exception as err:  # a server that cannot start: one clear failure
                        done(_start_failure(server, err, errlog_path, time.monotonic() - started))
                        return results
                    session = _Session(client)
                    for example in examples:
                        done(await _run_example(session, server, example))
                    for tool in fuzzed:
                        done(await _fuzz_tool(session, server, tool, plan.fuzz))
            except Exception as err:  # the connection's own teardown failed: the server died
                done(
                    CaseResult(
                        server.name,
                        "(server)",
                        "shutdown",
                        None,
                        [f"the server ended badly: {_describe(err)}"],
                    )
                )
    return results


class _Session:
    """A client session that remembers whether its server is gone."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.gone: str | None = None

    async def call(self, tool: str, arguments: dict[str, Any]) -> Answer:
        from mcp import MCPError

        if self.gone is not None:
            return Answer(protocol_error=f"the server is gone ({self.gone})")
        try:
            with anyio.fail_after(CALL_TIMEOUT_SECONDS):
                result = await self.client.call_tool(tool, arguments)
        except MCPError as err:
            return Answer(protocol_error=f"JSON-RPC error {err.error.code}: {err.error.message}")
        except TimeoutError:
            self.gone = f"no answer within {CALL_TIMEOUT_SECONDS} s"
            return Answer(protocol_error=self.gone)
        except Exception as err:
            self.gone = _describe(err)
            return Answer(protocol_error=f"the connection failed: {self.gone}")
        text = "".join(getattr(block, "text", "") for block in result.content)
        return Answer(is_error=bool(result.is_error), structured=result.structured_content, text=text)

    async def alive(self) -> str | None:
        """None when the server still answers tools/list; else what happened."""
        if self.gone is not None:
            return self.gone
        try:
            with anyio.fail_after(30):
                await self.client.list_tools()
        except Exception as err:
            self.gone = _describe(err) or "no answer to tools/list"
        return self.gone


def _write_generated(files: Mapping[str, str], server: ServerIR, tmp: Path) -> Path:
    """The server's generated files, as this build made them, under `tmp`: the server runs from
    there, so a test never changes the project's generated/ nor depends on it being current."""
    prefix = f"{GENERATED_DIR}/{server.name}/"
    for relative, text in files.items():
        if relative.startswith(prefix):
            target = tmp / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
    return tmp / GENERATED_DIR / server.name


def _client(
    project: Path, server: ServerIR, folder: Path, tmp: Path, overrides: Mapping[str, str], errlog: Any
) -> Any:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    args = [
        *LYNXC[1:],
        "--project",
        str(project),
        "serve",
        str(folder),
        "--transport",
        "stdio",
        *setting_args(server, tmp, overrides),
    ]
    params = StdioServerParameters(command=LYNXC[0], args=args, env=dict(os.environ), cwd=str(project))
    # The read timeout bounds the start (initialize) too: a server that hangs is a failure.
    return Client(stdio_client(params, errlog=errlog), read_timeout_seconds=START_TIMEOUT_SECONDS)


async def _run_example(session: _Session, server: ServerIR, example: Any) -> CaseResult:
    started = time.monotonic()
    answer = await session.call(example.tool, example.arguments)
    return CaseResult(
        server.name,
        example.tool,
        example.name,
        example.span,
        mismatches(example.tool, example.expect, answer),
        time.monotonic() - started,
        example.arguments,
    )


async def _fuzz_tool(session: _Session, server: ServerIR, tool: ToolIR, options: FuzzOptions) -> CaseResult:
    from .fuzz import near_misses, valid_arguments

    started = time.monotonic()
    case = CaseResult(server.name, tool.name, "fuzz", tool.span)
    skipped = fuzzable(tool, options.side_effects)
    if skipped is not None:
        case.skipped = skipped
        return case
    schema = tool.published_input_schema
    output = json.loads(tool.output_schema_json) if tool.output_schema_json else None
    try:
        drawn = await anyio.to_thread.run_sync(valid_arguments, schema, options.count, options.seed)
    except Exception as err:
        case.problems.append(f"cannot draw arguments from the inputSchema: {_describe(err)}")
        return case
    misses = near_misses(schema, drawn[0], options.seed) if drawn else []
    failures: list[str] = []
    for arguments in drawn:
        answer = await session.call(tool.name, arguments)
        failures += [
            f"{p}\n  arguments: {_json(arguments)}" for p in _valid_call_problems(tool, answer, output)
        ]
    for miss in misses:
        answer = await session.call(tool.name, miss.arguments)
        problem = _near_miss_problem(tool, miss.field, answer)
        if problem is not None:
            failures.append(
                f"near-miss ({miss.what} of {miss.field}): {problem}\n  arguments: {_json(miss.arguments)}"
            )
    gone = await session.alive()
    if gone is not None:
        failures.append(f"the server died: {gone}")
    case.name = f"fuzz ({len(drawn)} drawn, {len(misses)} near-misses)"
    case.problems = failures[:FUZZ_FAILURES_SHOWN] + (
        [f"... and {len(failures) - FUZZ_FAILURES_SHOWN} more"] if len(failures) > FUZZ_FAILURES_SHOWN else []
    )
    if failures:
        case.problems.append(
            f"reproduce: lynxc test {server.name} -k '{tool.name}::fuzz' "
            f"--fuzz {options.count} --seed {options.seed}"
        )
    case.seconds = time.monotonic() - started
    return case


def _valid_call_problems(tool: ToolIR, answer: Answer, output: dict[str, Any] | None) -> list[str]:
    """What must hold of a call with arguments the inputSchema accepts: an answer (no protocol
    error), no crash reported by the host, and a result inside the outputSchema."""
    if answer.protocol_error is not None:
        return [f"protocol error: {answer.protocol_error}"]
    if answer.is_error:
        if error_kind(tool.name, answer.text) == "invalid_arguments":
            return [f"arguments the inputSchema accepts were refused: {answer.text}"]
        if answer.text.startswith(invalid_result_prefix(tool.name)):
            return [f"the result breaks the outputSchema (the host withheld it): {answer.text}"]
        if answer.text.startswith((crashed_prefix(tool.name), unsendable_result_prefix(tool.name))):
            return [f"the tool crashed: {answer.text}"]
        return []  # a refusal the tool chose (no such file, say) is an answer
    if output is not None:
        import jsonschema

        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(output).iter_errors(answer.structured)
        )
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path)
            return [f"the result breaks the outputSchema at /{where}: {error.message}"]
    return []


def _near_miss_problem(tool: ToolIR, field_name: str, answer: Answer) -> str | None:
    if answer.protocol_error is not None:
        return f"protocol error: {answer.protocol_error}"
    if not answer.is_error:
        return "accepted arguments the inputSchema refuses"
    if field_name not in answer.text:
        return f"the refusal does not name {field_name!r}: {answer.text}"
    return None


def _start_failure(server: ServerIR, err: BaseException, errlog: Path, seconds: float) -> CaseResult:
    stderr = errlog.read_text(encoding="utf-8", errors="replace").strip()
    lines = [f"the server did not start: {_describe(err) or type(err).__name__}"]
    if stderr:
        lines.append("its stderr:\n" + "\n".join("  " + line for line in stderr.splitlines()[-20:]))
    return CaseResult(server.name, "(server)", "start", None, lines, seconds)


def _describe(err: BaseException) -> str:
    """An exception in one line; an exception group by its first leaf."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _selected(keyword: str | None, case_id: str) -> bool:
    return keyword is None or keyword.lower() in case_id.lower()


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)

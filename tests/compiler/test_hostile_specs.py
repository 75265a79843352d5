"""Hostile or broken specs too large or too slow for the golden corpus (tests/compiler/malformed):
each ends in a `file:line:col: error RULE_ID` diagnostic, promptly, for every verb that reads
specs. Time is never asserted (the machine is shared); a generous subprocess timeout turns a
hang into a failure instead."""

from __future__ import annotations

import os
import re
import subprocess
import types
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from lynxc.compiler.build import build
from lynxc.compiler.limits import MAX_SPEC_BYTES, MAX_STRING_CHARS, MAX_TOOLS
from lynxc.compiler.lower import backend_probe
from lynxc.compiler.lower.backend_probe import read_declarations
from lynxc.compiler.lower.server import compile_spec
from lynxc.compiler.spec.load import discover_specs
from lynxc.compiler.spec.source import parse_yaml
from lynxc.compiler.wire import wire_tool
from lynxc.runtime.backend import load_backend
from tests.conftest import LYNXC, ROOT

CORPUS = Path(__file__).parent / "malformed"
HEAD = "lynxc: 1\nserver: {name: demo, version: 1.0.0}\ntools:\n"
TOOL = (
    "  - name: t{i}\n"
    "    backend: tests.fixtures.backends:echo\n"
    "    description: {{purpose: Echo the given text back unchanged.}}\n"
)
DIAGNOSTIC = re.compile(r"^(?P<place>.+?):(?P<line>\d+):(?P<col>\d+): error (?P<rule>[A-Z_]+): ", re.M)


def hostile_cases(folder: Path) -> dict[str, tuple[Path, str]]:
    """name -> (spec, the rule it must be refused under)."""
    deep = folder / "deep.yaml"
    deep.write_text("lynxc: 1\nserver: " + "[" * 100_000 + "]" * 100_000 + "\n")
    many = folder / "many-tools.yaml"
    text = HEAD + "".join(TOOL.format(i=i) for i in range(40_000))
    many.write_text(text + "#" * (10_000_000 - len(text)) + "\n")
    description = folder / "long-description.yaml"
    description.write_text(HEAD + TOOL.format(i=0).replace("Echo the given", "word " * 2_000_000))
    return {
        "alias-bomb": (CORPUS / "yaml-alias-bomb.yaml", "YAML_ALIAS_BUDGET_EXCEEDED"),
        "deep-brackets": (deep, "YAML_NESTING_TOO_DEEP"),
        "10MB-of-tools": (many, "SPEC_TOO_LARGE"),
        "10MB-description": (description, "SPEC_TOO_LARGE"),
    }


VERBS = {
    "build": lambda spec: ["build", str(spec)],
    "build --check": lambda spec: ["build", "--check", str(spec)],
    "lint": lambda spec: ["lint", str(spec)],
    "diff": lambda spec: ["diff", str(spec), str(spec)],
}


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    return hostile_cases(tmp_path_factory.mktemp("hostile"))


@pytest.mark.parametrize("verb", VERBS)
@pytest.mark.parametrize("case", ["alias-bomb", "deep-brackets", "10MB-of-tools", "10MB-description"])
def test_every_verb_refuses_promptly_with_a_diagnostic(
    cases: dict[str, tuple[Path, str]], case: str, verb: str, tmp_path: Path
) -> None:
    spec, rule = cases[case]
    # Before the limits, these ran for minutes or ended in a RecursionError traceback.
    done = subprocess.run(
        [LYNXC, "--project", str(tmp_path), *VERBS[verb](spec)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=tmp_path,
    )
    assert done.returncode in (1, 2), done.stderr
    assert "Traceback" not in done.stderr
    found = [m for m in DIAGNOSTIC.finditer(done.stderr) if m["rule"] == rule]
    assert found, done.stderr
    assert found[0]["place"].endswith(spec.name)


def test_a_folder_of_too_many_tool_files_is_refused_before_reading_them(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "server.yaml").write_text("lynxc: 1\nserver: {name: demo, version: 1.0.0}\n")
    for i in range(MAX_TOOLS + 1):
        (folder / f"t{i}.yaml").write_text("this file is never read: {[")  # YAML_SYNTAX if it were
    result = compile_spec(folder)
    assert [d.rule_id for d in result.diagnostics] == ["TOOLS_TOO_MANY"]


def test_a_folder_is_measured_as_a_whole(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "server.yaml").write_text("lynxc: 1\nserver: {name: demo, version: 1.0.0}\n")
    for i in range(3):  # each file is under the limit; together they are not
        (folder / f"t{i}.yaml").write_text("# padding\n" * (MAX_SPEC_BYTES // 20))
    result = compile_spec(folder)
    assert [d.rule_id for d in result.diagnostics] == ["SPEC_TOO_LARGE"]
    assert "the 4 files of the spec hold" in result.diagnostics[0].message


def test_one_tool_over_the_limit_is_refused_where_it_starts(tmp_path: Path) -> None:
    spec = tmp_path / "demo.yaml"
    spec.write_text(HEAD + "".join(TOOL.format(i=i) for i in range(MAX_TOOLS + 1)))
    result = compile_spec(spec, check_backends=False)
    assert [d.render() for d in result.diagnostics] == [
        f"{spec}:{4 + 3 * MAX_TOOLS}:5: error TOOLS_TOO_MANY: the server declares {MAX_TOOLS + 1} tools, "
        f"over the limit of {MAX_TOOLS}\n  hint: models choose better among fewer tools: split the server, "
        "or merge tools that differ by a parameter"
    ]


def test_a_string_over_the_limit_is_refused_where_it_is_written(tmp_path: Path) -> None:
    spec = tmp_path / "demo.yaml"
    spec.write_text(HEAD + TOOL.format(i=0).replace("Echo the given", "x" * MAX_STRING_CHARS))
    result = compile_spec(spec, check_backends=False)
    assert [(d.rule_id, d.span.line, d.span.col) for d in result.diagnostics] == [
        ("SPEC_STRING_TOO_LONG", 6, 28)
    ]


MERGED = """\
lynxc: 1
server: {name: demo, version: 1.0.0}
tools:
  - &echo
    name: echo
    backend: tests.fixtures.backends:echo
    description: {purpose: Echo the given text back unchanged.}
    parameters: &params
      text: {type: string, required: true, description: Text to echo.}
  - <<: *echo
    name: shout
    parameters:
      <<: *params
      loud: {type: boolean, default: false, description: Whether to shout.}
"""


def test_merge_keys_are_resolved_as_yaml_defines_them(tmp_path: Path) -> None:
    """`<<: *anchor` once ended in a KeyError traceback; now written keys win, merged ones keep
    the place where they are written."""
    spec = tmp_path / "demo.yaml"
    spec.write_text(MERGED)
    result = compile_spec(spec)
    assert result.value is not None, [d.render() for d in result.diagnostics]
    echo, shout = (wire_tool(tool) for tool in result.value.tools)
    assert shout["name"] == "shout" and shout["description"] == echo["description"]
    assert list(shout["inputSchema"]["properties"]) == ["text", "loud"]
    assert shout["inputSchema"]["properties"]["text"] == echo["inputSchema"]["properties"]["text"]
    assert result.value.tools[1].params[0].span == result.value.tools[0].params[0].span  # line 9

    spec.write_text(MERGED.replace("text: {type: string", "text: {type: strnig"))
    problems = compile_spec(spec).diagnostics
    # Both tools have the problem; both point at where it is written.
    assert [(d.rule_id, d.span.line, d.span.col) for d in problems] == [("PARAM_TYPE_UNKNOWN", 9, 20)] * 2


@pytest.mark.parametrize(
    "case",
    sorted(
        p
        for p in CORPUS.glob("*.yaml")
        if p.stem.startswith(("yaml-", "number-", "schema-", "cap-max", "pattern-", "param-default-backtr"))
    ),
    ids=lambda p: p.stem,
)
def test_lint_and_diff_refuse_them_too(case: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`lynxc lint` and `lynxc diff` compile specs without importing backends: the same front end
    must refuse every spec problem that needs no backend."""
    monkeypatch.chdir(CORPUS)
    result = compile_spec(Path(case.name), check_backends=False)
    assert result.value is None
    assert {d.rule_id for d in result.diagnostics} <= set(
        re.findall(r"error ([A-Z_]+):", (CORPUS / f"{case.stem}.expected").read_text())
    )


# Backends ------------------------------------------------------------------------------------


def test_a_backend_module_that_sleeps_on_import_times_out() -> None:
    # 5 s: the healthy module must be read before the hang even on a loaded machine (the child
    # starts Python and imports lynxc first); the hanging one sleeps for an hour, using no CPU
    # time: the wall-clock backstop ends it.
    found = read_declarations(
        ["tests.fixtures.backends:echo", "tests.fixtures.misbehaving.sleeps:echo"], wall_seconds=5
    )
    assert found["tests.fixtures.backends:echo"].info is not None  # read before the hang
    hung = found["tests.fixtures.misbehaving.sleeps:echo"]
    assert (hung.rule_id, hung.message) == (
        "BACKEND_IMPORT_TIMEOUT",
        "importing backend 'tests.fixtures.misbehaving.sleeps:echo' did not finish within 5 s",
    )


def test_a_backend_import_is_bounded_by_its_work_not_by_the_machines_load() -> None:
    """A module that waits 3 s while importing (a heavy import on a busy machine) is read with
    a 2 s budget: the budget counts CPU time. One that loops is ended when it has used it."""
    found = read_declarations(
        ["tests.fixtures.misbehaving.slow:echo", "tests.fixtures.misbehaving.spins:echo"], cpu_seconds=2
    )
    assert found["tests.fixtures.misbehaving.slow:echo"].info is not None
    spinning = found["tests.fixtures.misbehaving.spins:echo"]
    assert (spinning.rule_id, spinning.message) == (
        "BACKEND_IMPORT_TIMEOUT",
        "importing backend 'tests.fixtures.misbehaving.spins:echo' used over 2 s of CPU time",
    )


def test_sys_exit_on_import_is_reported_not_obeyed(tmp_path: Path) -> None:
    """`lynxc build` once ended with the backend's exit code 7 and no message."""
    spec = tmp_path / "demo.yaml"
    spec.write_text((CORPUS / "backend-import-exits.yaml").read_text())
    done = subprocess.run(
        [LYNXC, "build", "--check", str(spec)], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 1
    assert (
        f"{spec}:7:14: error BACKEND_IMPORT_FAILED: cannot load backend "
        "'tests.fixtures.misbehaving.exits:echo': importing it called sys.exit(7)"
    ) in done.stderr


def test_prints_of_a_backend_module_do_not_reach_the_answer() -> None:
    found = read_declarations(["tests.fixtures.misbehaving.prints:echo"])
    assert found["tests.fixtures.misbehaving.prints:echo"].info is not None


def test_builtin_backends_are_read_without_a_child_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_child(*args: object, **kwargs: object) -> None:
        raise AssertionError("a child process was started")

    # Only the probe's own subprocess module is replaced: a Postgres spec's build starts its
    # ephemeral database as a child process, which is not a backend being read.
    probe_subprocess = types.SimpleNamespace(**vars(subprocess))
    probe_subprocess.Popen = no_child
    monkeypatch.setattr(backend_probe, "subprocess", probe_subprocess)
    for spec in discover_specs(ROOT / "specs"):
        result = compile_spec(spec)
        assert result.value is not None, [d.render() for d in result.diagnostics]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("tests.fixtures.hostile_backends:undeclared", "is not declared as a lynxc backend (@backend)"),
        ("tests.fixtures.hostile_backends:not_async", "is not an async function"),
    ],
)
def test_the_runtime_refuses_what_the_compiler_refuses(target: str, message: str) -> None:
    """A generated server edited by hand to bind such a function fails that tool, clearly."""
    with pytest.raises(TypeError, match=re.escape(message)):
        load_backend(target)


# A recursive output schema: supported end to end ---------------------------------------------

TREE = """\
lynxc: 1
server: {name: tree, version: 1.0.0}
tools:
  - name: tree
    backend: tests.fixtures.hostile_backends:tree
    description: {purpose: Return a tree of the given depth.}
    parameters:
      depth: {type: integer, required: true, minimum: 0, maximum: 50, description: Levels.}
      broken: {type: boolean, default: false, description: Break a name deep inside.}
    output:
      type: object
      required: [root]
      properties:
        root: {$ref: "#/$defs/Node"}
      $defs:
        Node:
          type: object
          required: [name, children]
          properties:
            name: {type: string}
            children: {type: array, items: {$ref: "#/$defs/Node"}}
"""


@pytest.mark.anyio
async def test_a_recursive_type_builds_serves_and_validates(tmp_path: Path) -> None:
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "tree.yaml").write_text(TREE)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    built = subprocess.run(
        [LYNXC, "--project", str(tmp_path), "build"], capture_output=True, text=True, env=env, timeout=120
    )
    assert built.returncode == 0, built.stderr
    models = (tmp_path / "generated" / "tree" / "models" / "tree.py").read_text()
    assert "children: list[Node]" in models
    params = StdioServerParameters(command=LYNXC, args=["--project", str(tmp_path), "serve", "tree"], env=env)
    async with Client(params) as client:
        good = await client.call_tool("tree", {"depth": 40})
        bad = await client.call_tool("tree", {"depth": 3, "broken": True})
    assert not good.is_error
    node, depth = good.structured_content["root"], 0
    while node["children"]:
        node, depth = node["children"][0], depth + 1
    assert depth == 40 and node["name"] == "leaf"
    assert bad.is_error
    assert "root/children/0/name: 5 is not of type 'string'" in bad.content[0].text


def test_every_stage_follows_the_deepest_schema_the_limits_allow(tmp_path: Path) -> None:
    """The nesting limit keeps every stage (ruamel, pydantic, jsonschema, the model generator)
    far from Python's recursion limit: the deepest output schema it lets through builds."""

    def spec(levels: int) -> str:
        schema = "{type: string}"
        for level in range(levels):
            schema = f"{{type: object, properties: {{x{level}: {schema}}}}}"
        return HEAD + TOOL.format(i=0) + f"    output: {schema}\n"

    deepest = next(n for n in range(1, 200) if not parse_yaml(spec(n + 1), "deep.yaml").ok)
    assert deepest >= 25  # 64 YAML levels, two per schema level
    path = tmp_path / "deep.yaml"
    path.write_text(spec(deepest))
    output = build(tmp_path, [path])
    assert output.servers and not output.diagnostics, [d.render() for d in output.diagnostics]
    assert "x0: str | None = None" in output.files["generated/demo/models/t0.py"]

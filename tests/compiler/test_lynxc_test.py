"""`lynxc test` end to end (issue 29): the command as a user runs it (a real subprocess), on a
small project of its own whose Python backends the tests plant bugs in, and once over every
bundled server, as CI runs it. Each run builds, starts `lynxc serve` processes and talks to them
through the MCP SDK's client: nothing is mocked."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import LYNXC, ROOT
from tests.fixtures.postgres import pagila_db, postgres_server  # noqa: F401

BACKENDS = """\
from typing import Any

from lynxc.runtime.backend import backend


@backend()
async def double(params: Any, ctx: Any) -> dict[str, Any]:
    if params.n >= 7:  # the planted bug: a result outside the output schema
        return {"value": "many"}
    return {"value": params.n * 2}


@backend()
async def divide(params: Any, ctx: Any) -> dict[str, Any]:
    return {"value": 100 // params.n}  # the planted crash: n = 0


@backend()
async def shout(params: Any, ctx: Any) -> dict[str, Any]:
    return {"text": params.text.upper()}


shout_loudly = shout
"""

TOOL = """\
  - name: {name}
    backend: shop.tools:{name}
    annotations: {{readOnlyHint: {read_only}, openWorldHint: false}}
    description:
      purpose: {purpose}
    parameters:
{parameters}
    output:
      type: object
      additionalProperties: false
      required: [{key}]
      properties:
        {key}: {{type: {kind}}}
"""

SPEC_HEAD = """\
lynxc: 1
server:
  name: shop
  version: 1.0.0
  settings:
    price_list: {type: string, format: file-path, default: prices.txt, description: The price list.}
"""


def tool(name: str, purpose: str, parameters: str, key: str, kind: str, read_only: bool = True) -> str:
    return TOOL.format(
        name=name,
        purpose=purpose,
        parameters=parameters,
        key=key,
        kind=kind,
        read_only="true" if read_only else "false",
    )


DOUBLE = tool(
    "double",
    "Double a small number and return it.",
    "      n: {type: integer, required: true, minimum: 0, maximum: 10, description: The number.}",
    "value",
    "integer",
)
DIVIDE = tool(
    "divide",
    "Divide one hundred by a small number, rounding down.",
    "      n: {type: integer, required: true, minimum: 0, maximum: 10, description: The divisor.}",
    "value",
    "integer",
)
SHOUT = tool(
    "shout",
    "Return the text in capital letters.",
    "      text: {type: string, required: true, minLength: 1, maxLength: 10, description: The text.}",
    "text",
    "string",
)
EXAMPLES = """\
    examples:
      - name: two doubled
        arguments: {n: 2}
        expect:
          result: {value: 4}
      - name: three doubled, wrongly expected
        arguments: {n: 3}
        expect:
          result: {value: 5}
      - name: eleven is out of range
        arguments: {n: 11}
        expect:
          error: {kind: invalid_arguments, field: n}
"""


def make_project(root: Path, tools: str, head: str = SPEC_HEAD) -> Path:
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "tools.py").write_text(BACKENDS)
    (root / "specs").mkdir()
    (root / "specs" / "shop.yaml").write_text(head + "tools:\n" + tools)
    (root / "prices.txt").write_text("apples 3\n")
    return root


def lynxc_test(project: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [LYNXC, "test", *args], cwd=project, capture_output=True, text=True, timeout=timeout
    )


def test_examples_pass_and_fail_with_a_readable_diff_junit_xml_and_github_annotations(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", DOUBLE + EXAMPLES + SHOUT)
    junit = tmp_path / "out" / "junit.xml"
    done = lynxc_test(project, "--format", "github", "--junit-xml", str(junit))
    out = done.stdout
    assert done.returncode == 1, done.stderr + out
    assert "PASSED shop::double::two doubled (specs/shop.yaml:22:9)" in out
    assert "FAILED shop::double::three doubled, wrongly expected (specs/shop.yaml:26:9)" in out
    assert "PASSED shop::double::eleven is out of range (specs/shop.yaml:30:9)" in out
    assert '  arguments: {"n": 3}\n  - result.value: expected 5, got 6\n' in out
    assert "\n2 passed, 1 failed in " in out
    assert "Traceback" not in done.stderr + out
    assert not (project / "generated").exists()  # the test serves its own copy of the build

    annotation = next(line for line in out.splitlines() if line.startswith("::error "))
    assert annotation.startswith(
        "::error file=specs/shop.yaml,line=26,col=9,title=lynxc test shop%3A%3Adouble%3A%3Athree doubled%2C "
        "wrongly expected::"
    )
    assert "%0A  - result.value: expected 5, got 6" in annotation

    suites = ET.parse(junit).getroot()
    assert suites.tag == "testsuites" and suites.get("tests") == "3" and suites.get("failures") == "1"
    (suite,) = suites.findall("testsuite")
    assert suite.get("name") == "shop" and suite.get("failures") == "1"
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert set(cases) == {"two doubled", "three doubled, wrongly expected", "eleven is out of range"}
    failed = cases["three doubled, wrongly expected"]
    assert failed.get("classname") == "shop.double" and failed.get("file") == "specs/shop.yaml"
    assert failed.get("line") == "26"
    (failure,) = failed.findall("failure")
    assert failure.get("message") == "result.value: expected 5, got 6"
    assert cases["two doubled"].find("failure") is None

    only = lynxc_test(project, "-k", "two doubled")
    assert only.returncode == 0, only.stdout
    assert "\n1 passed in " in only.stdout and "FAILED" not in only.stdout


def test_a_server_that_cannot_start_is_one_clear_failure(tmp_path: Path) -> None:
    head = SPEC_HEAD + '  test:\n    settings: {price_list: "{tmp}/no-such-file.txt"}\n'
    project = make_project(tmp_path / "p", DOUBLE + EXAMPLES, head=head)
    done = lynxc_test(project)
    assert done.returncode == 1
    assert "FAILED shop::(server)::start" in done.stdout
    assert "the server did not start" in done.stdout and "price_list" in done.stdout
    assert "\n0 passed, 1 failed in " in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_fuzzing_finds_the_planted_bugs_and_prints_their_arguments(tmp_path: Path) -> None:
    writes = tool(
        "shout_loudly",
        "Return the text in capital letters, and remember it.",
        "      text: {type: string, required: true, description: The text.}",
        "text",
        "string",
        read_only=False,
    )
    project = make_project(tmp_path / "p", DOUBLE + DIVIDE + SHOUT + writes)
    done = lynxc_test(project, "--fuzz", "12", "--seed", "3")
    out = done.stdout
    assert done.returncode == 1, done.stderr + out
    assert "FAILED shop::double::fuzz (11 drawn, " in out  # 0 to 10: eleven distinct argument sets
    assert "FAILED shop::divide::fuzz (11 drawn, " in out
    assert "PASSED shop::shout::fuzz (12 drawn, " in out
    assert "SKIPPED shop::shout_loudly::fuzz" in out and "--fuzz-side-effects" in out
    assert (
        "the result breaks the outputSchema (the host withheld it): 'double' produced an invalid result"
        in out
    )
    assert "the tool crashed: 'divide' failed: ZeroDivisionError" in out
    assert '\n      arguments: {"n": 0}\n' in out  # what made divide crash
    assert "reproduce: lynxc test shop -k 'divide::fuzz' --fuzz 12 --seed 3" in out
    assert "Traceback" not in out + done.stderr
    assert not (project / ".hypothesis").exists()  # hypothesis's caches stay out of the project


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", DOUBLE)
    unknown = lynxc_test(project, "shpo")
    assert unknown.returncode == 2 and "no server or spec named 'shpo' (servers: shop)" in unknown.stderr
    bad = lynxc_test(project, "--set", "colour=red")
    assert bad.returncode == 2 and "no server of this run declares a setting named 'colour'" in bad.stderr


def test_a_server_needing_a_setting_nobody_gave_is_skipped_naming_it(tmp_path: Path) -> None:
    head = SPEC_HEAD + "    token: {type: string, minLength: 1, description: The API token.}\n"
    project = make_project(tmp_path / "p", DOUBLE + EXAMPLES, head=head)
    done = lynxc_test(project)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SKIPPED shop::(server)::start: needs --set token=..." in done.stdout
    assert "\n0 passed, 1 skipped in " in done.stdout
    assert "usage: lynxc test" in lynxc_test(project, "--help").stdout


BUNDLED = sorted(path.stem for path in (ROOT / "specs").iterdir() if not path.name.startswith("."))


@pytest.mark.parametrize("server", BUNDLED)
def test_every_bundled_server_passes_its_examples(server: str, request: pytest.FixtureRequest) -> None:
    """The CI requirement: `lynxc test` over the repository's own servers (one case each, so the
    workers share them out), pagila against the tests' seeded database, the others from their
    data in the repository; with a little fuzzing of every local read-only tool (seeded: the same
    arguments every run)."""
    settings = ["--set", f"database_url={request.getfixturevalue('pagila_db')}"] if server == "pagila" else []
    done = lynxc_test(ROOT, server, *settings, "--fuzz", "5", timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "FAILED" not in done.stdout
    # only the tools whose calls leave this machine are not fuzzed
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert all(line.startswith("SKIPPED groundhog::") and "openWorldHint" in line for line in skipped), (
        skipped
    )
    servers = {
        line.split("::")[0].split()[-1] for line in done.stdout.splitlines() if line.startswith("PASSED")
    }
    assert servers == {server}


def test_the_bundled_servers_all_carry_examples() -> None:
    assert set(BUNDLED) == {
        "agent-tool",
        "conformance",
        "countries-sql",
        "countries-sqlite",
        "dot-harness",
        "foxnose-knowledge",
        "groundhog",
        "lynx-mcp",
        "pagila",
        "support-desk",
    }
    for server in BUNDLED:
        text = "".join(path.read_text() for path in (ROOT / "specs" / server).rglob("*.yaml"))
        assert "examples:" in text, server


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

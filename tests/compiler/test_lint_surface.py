"""Lint of prompts and MCP resources (compiler/lint/surface.py): what each rule catches and lets
pass, where a finding points in a spec (file:line:col, an argument's own line), and the
server-level `lint: suppress`. Every rule also has its bad/good fixture pair in lint_rules/
(test_lint.py). The IR's prompts and resources are built here (the spec front end that fills
them is not on this branch yet); a spec's own server-level suppressions are read from a spec."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lynxc.compiler.diagnostics import Span
from lynxc.compiler.ir import McpResourceIR, PromptIR, canonical_json
from lynxc.compiler.lint.linter import lint_server
from lynxc.compiler.lint.render import render_json, render_text
from lynxc.compiler.lower.server import compile_spec
from lynxc.compiler.wire import ServerWire, wire_from_ir

SPEC = Path(__file__).parent / "diff_rules/TOOL_REMOVED/after.yaml"


def prompt(description: str, *arguments: tuple[str, str]) -> dict[str, Any]:
    return {
        "name": "summarize_pep",
        "description": description,
        "arguments": [{"name": n, "description": d, "required": True} for n, d in arguments],
    }


def rules(prompts: list[dict[str, Any]] | None = None, mcp: dict[str, Any] | None = None) -> list[str]:
    result = lint_server(ServerWire("s", [], "inline", prompts=prompts, mcp_resources=mcp))
    return sorted(f.rule_id for f in result.findings)


GOOD = "Ask for a summary of one PEP: its motivation and decision. Use it before citing a PEP."


@pytest.mark.parametrize(
    ("description", "expected"),
    [
        (GOOD, []),
        ("Ask for a summary of PEP {{ number }} in the chosen {style}.", ["PROMPT_ARGUMENT_UNDECLARED"]),
        ("Ask for a summary; pass the argument `lang` to choose.", ["PROMPT_ARGUMENT_UNDECLARED"]),
        ("Ask for a summary of PEP {{ number }}: pass `number` as digits.", []),  # declared
        ("Ask for a summary of the PEP at pep://{pep_number}.", []),  # a resource's URI, not a quote
        ("Summaries.", ["PROMPT_DESCRIPTION_TOO_SHORT", "PROMPT_USAGE_UNDESCRIBED"]),
        ("FIXME: Ask for a summary of one PEP.", ["PROMPT_PLACEHOLDER_TEXT"]),
        ("   ", ["PROMPT_DESCRIPTION_MISSING"]),
    ],
)
def test_prompt_descriptions(description: str, expected: list[str]) -> None:
    assert rules([prompt(description, ("number", "The PEP number, e.g. 8."))]) == expected


@pytest.mark.parametrize(
    ("argument", "expected"),
    [
        ("The PEP number, e.g. 8.", []),
        ("", ["PROMPT_ARGUMENT_DESCRIPTION_MISSING"]),
        ("The number.", ["PROMPT_ARGUMENT_DESCRIPTION_RESTATES_NAME"]),
        ("TBD", ["PROMPT_PLACEHOLDER_TEXT"]),
        ("The PEP number; with {style} set, also a style.", ["PROMPT_ARGUMENT_UNDECLARED"]),
    ],
)
def test_prompt_argument_descriptions(argument: str, expected: list[str]) -> None:
    assert rules([prompt(GOOD, ("number", argument))]) == expected


def mcp(description: str, uri_template: str | None = None) -> dict[str, Any]:
    if uri_template is None:
        return {"resources": [{"uri": "docs://guide", "name": "guide", "description": description}]}
    return {"resourceTemplates": [{"uriTemplate": uri_template, "name": "pep", "description": description}]}


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        (mcp("The user guide in Markdown: read it before the first call."), []),
        (mcp("One PEP as JSON, by its {number}.", "pep://{number}"), []),
        (mcp("One PEP as JSON, by its {pep}.", "pep://{number}"), ["RESOURCE_VARIABLE_UNDECLARED"]),
        # A URI of another template is not a quote of this one's variables.
        (mcp("One PEP as JSON; its text is also at text://{id}.", "pep://{number}"), []),
        (mcp("The guide."), ["RESOURCE_CONTENT_UNDESCRIBED", "RESOURCE_DESCRIPTION_TOO_SHORT"]),
        (mcp("A guide for new people to start."), ["RESOURCE_CONTENT_UNDESCRIBED"]),
        (mcp("XXX the user guide in Markdown."), ["RESOURCE_PLACEHOLDER_TEXT"]),
        (mcp(""), ["RESOURCE_DESCRIPTION_MISSING"]),
    ],
)
def test_resource_descriptions(resource: dict[str, Any], expected: list[str]) -> None:
    assert rules(mcp=resource) == expected


def test_unknown_prompts_and_resources_are_not_linted() -> None:
    assert rules(None, None) == []


def spec_server(tmp_path: Path, suppress: str = "") -> ServerWire:
    """A spec's server, with a prompt and a template of poor descriptions declared at known lines."""
    spec = tmp_path / "server.yaml"
    text = SPEC.read_text().replace(
        "server: {name: rules, version: 1.0.0}", f"server: {{name: rules, version: 1.0.0{suppress}}}"
    )
    spec.write_text(text)
    result = compile_spec(spec, check_backends=False)
    assert result.value is not None, [d.render() for d in result.diagnostics]
    entry = prompt("Summaries.", ("number", "The number."))
    template = {"uriTemplate": "pep://{number}", "name": "pep", "description": "One PEP, by {id}."}
    ir = replace(
        result.value,
        prompts=(
            PromptIR(
                "summarize_pep",
                canonical_json(entry),
                Span(str(spec), 9, 3),
                (("number", Span(str(spec), 12, 7)),),
                "{}",
            ),
        ),
        mcp_resources=(McpResourceIR("pep", True, canonical_json(template), Span(str(spec), 20, 3), "{}"),),
    )
    return wire_from_ir(ir, str(spec))


def test_findings_point_at_the_prompt_its_argument_and_the_resource(tmp_path: Path) -> None:
    result = lint_server(spec_server(tmp_path))
    shown = render_text([result], score=False)
    spec = tmp_path / "server.yaml"
    assert (
        f"{spec}:9:3: warning PROMPT_DESCRIPTION_TOO_SHORT: prompt 'summarize_pep': description has 1 word"
        in shown
    )
    assert (
        f"{spec}:12:7: warning PROMPT_ARGUMENT_DESCRIPTION_RESTATES_NAME: "
        "prompt 'summarize_pep': argument 'number'" in shown
    )
    assert f"{spec}:20:3: error RESOURCE_VARIABLE_UNDECLARED: resource template 'pep': quotes 'id'" in shown
    located = {
        f["rule"]: f["location"]
        for f in json.loads(render_json([result], score=False))["servers"][0]["findings"]
    }
    assert located["PROMPT_ARGUMENT_DESCRIPTION_RESTATES_NAME"] == {
        "file": str(spec),
        "line": 12,
        "column": 7,
    }


def test_server_level_suppressions_apply_to_prompts_and_resources(tmp_path: Path) -> None:
    suppress = (
        ", lint: {suppress: [{rule: PROMPT_DESCRIPTION_TOO_SHORT, reason: the title says it},"
        " {rule: RESOURCE_VARIABLE_UNDECLARED, reason: id is the number}]}"
    )
    result = lint_server(spec_server(tmp_path, suppress))
    assert {s.finding.rule_id: s.reason for s in result.suppressed} == {
        "PROMPT_DESCRIPTION_TOO_SHORT": "the title says it",
        "RESOURCE_VARIABLE_UNDECLARED": "id is the number",
    }
    assert "PROMPT_DESCRIPTION_TOO_SHORT" not in {f.rule_id for f in result.findings}
    assert "PROMPT_ARGUMENT_DESCRIPTION_RESTATES_NAME" in {f.rule_id for f in result.findings}


SURFACE_SPEC = """\
lynxc: 1
server:
  name: surface
  version: 1.0.0
  lint: {suppress: [{rule: RESOURCE_DESCRIPTION_TOO_SHORT, reason: the URI says it}]}
tools:
- name: echo
  backend: tests.fixtures.backends:echo
  description: {purpose: Echo the text it is given.}
prompts:
- name: summarize_pep
  description: Summaries.
  arguments:
    number: {description: The number., required: true, sample: "8"}
  messages:
  - {role: user, text: "Summarize PEP {{ number }}."}
resources:
- {name: hello, uri: "t://hi", description: A greeting., mime_type: text/plain, text: hi}
"""


def test_lynxc_lint_prints_spec_lines_of_prompts(tmp_path: Path) -> None:
    """Through the spec front end: prompts since PROMPTS was merged, resources once RESOURCES is
    (the same checks run above on IR built in the test)."""
    from tests.fixtures.git_repo import lynxc

    spec = tmp_path / "specs/surface/server.yaml"
    spec.parent.mkdir(parents=True)
    spec.write_text(SURFACE_SPEC)
    compiled = compile_spec(spec, check_backends=False)
    assert compiled.value is not None, [d.render() for d in compiled.diagnostics]
    if not compiled.value.prompts:
        pytest.skip("the spec front end does not lower prompts on this branch yet")
    done = lynxc(tmp_path, "lint", "specs/surface")
    where = re.compile(r"specs/surface/server\.yaml:(\d+):\d+: warning (PROMPT_\w+)")
    lines = {rule: int(line) for line, rule in where.findall(done.stdout)}
    # The prompt's line, and the argument's own line below it (within the prompt's entry).
    assert (
        11 <= lines["PROMPT_DESCRIPTION_TOO_SHORT"] < lines["PROMPT_ARGUMENT_DESCRIPTION_RESTATES_NAME"] <= 14
    )
    if compiled.value.mcp_resources:  # once RESOURCES is merged
        assert "suppressed RESOURCE_DESCRIPTION_TOO_SHORT: the URI says it" in done.stdout

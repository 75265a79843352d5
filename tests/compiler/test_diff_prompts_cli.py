"""`lynxc diff` over two git revisions of a spec that declares prompts and MCP resources, as a
pull request's CI runs it: breaking changes fail, GitHub annotations point at the spec lines.

The spec's prompts and resources reach the IR through the lowering of PROMPTS and RESOURCES
(issue 31): the prompt is judged since PROMPTS was merged, the template once RESOURCES is (the
same checks run on generated folders and IR built in the tests: test_diff_prompts_release.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lynxc.compiler.lower.server import compile_spec
from tests.fixtures.git_repo import commit, git, lynxc

SPEC = """\
lynxc: 1
server: {name: surface, version: 1.0.0}
tools:
- name: echo
  backend: tests.fixtures.backends:echo
  description: {purpose: Echo the text it is given.}
prompts:
- name: summarize_pep
  description: Ask for a summary of one PEP, its motivation and its decision.
  arguments:
    number: {description: "The PEP number, e.g. 8.", required: true, sample: "8"}
    style: {description: "How to write it: brief or detailed.", required: STYLE_REQUIRED, sample: brief}
  messages:
  - {role: user, text: "Summarize PEP {{ number }} ({{ style }})."}
resources:
- {name: hello, uri: "t://hi", description: A greeting as plain text., mime_type: text/plain, text: hi}
- name: data
  uri_template: "DATA_TEMPLATE"
  description: The data of one item as JSON, by its id.
  mime_type: application/json
  text: '{"id": "{{ id }}"}'
  variables: {id: {description: "The item's id, e.g. 7.", sample: "7"}}
"""


def write(project: Path, *, style_required: bool, template: str) -> Path:
    spec = project / "specs/surface/server.yaml"
    spec.parent.mkdir(parents=True, exist_ok=True)
    text = SPEC.replace("STYLE_REQUIRED", "true" if style_required else "false")
    spec.write_text(text.replace("DATA_TEMPLATE", template))
    return spec


def test_a_pull_request_that_narrows_a_template_and_requires_an_argument(tmp_path: Path) -> None:
    project = tmp_path / "repo"
    spec = write(project, style_required=False, template="test://template/{id}/data")
    compiled = compile_spec(spec, check_backends=False)
    assert compiled.value is not None, [d.render() for d in compiled.diagnostics]
    if not compiled.value.prompts:
        pytest.skip("the spec front end does not lower prompts on this branch yet")
    # MCP resources reach the IR once RESOURCES is merged; until then only the prompt is judged.
    resources = bool(compiled.value.mcp_resources)
    git(project, "init", "-q", "-b", "main")
    commit(project, "surface 1.0.0")
    write(project, style_required=True, template="test://template/{id}/data.json")
    commit(project, "require style, narrow data")
    done = lynxc(project, "diff", "git:HEAD~1", "git:HEAD", "--format", "json")
    assert done.returncode == 1, done.stderr
    findings = json.loads(done.stdout)["servers"][0]["findings"]
    expected = [("PROMPT_ARGUMENT_BECAME_REQUIRED", "Prompt summarize_pep / arguments / style / required")]
    if resources:
        expected.append(("RESOURCE_TEMPLATE_NARROWED", "Resource template data / uriTemplate"))
    assert [(f["rule"], f["path"]) for f in findings] == expected
    github = lynxc(project, "diff", "git:HEAD~1", "specs", "--format", "github").stdout
    assert "::error file=specs/surface/server.yaml,line=12," in github  # the argument's line
    if resources:
        assert "::error file=specs/surface/server.yaml,line=17," in github  # the template's entry

"""Prompts and completion sources lowered from spec snippets (issue 31): every PROMPT_* and
COMPLETION_* rule, good and bad, with the file:line:col it reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from lynxc.compiler.lower.completions import check_completions, prompt_sites, resource_sites
from lynxc.compiler.lower.prompts import PromptSource, lower_prompts
from lynxc.compiler.spec.source import parse_yaml
from lynxc.compiler.spec.surface import Prompt, Resource

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)


class Item:
    def __init__(self, doc, model, base, kind):
        self.doc, self.base = doc, base
        setattr(self, kind, model)


def parsed(text: str, name: str = "spec.yaml"):
    doc = parse_yaml(text, name).value
    assert doc is not None
    prompts = [
        PromptSource(doc, Prompt.model_validate(p), ("prompts", i))
        for i, p in enumerate(doc.data.get("prompts", []))
    ]
    resources = [
        Item(doc, Resource.model_validate(r), ("resources", i), "resource")
        for i, r in enumerate(doc.data.get("resources", []))
    ]
    return doc, prompts, resources


def lowered(text: str, spec_dir: Path = Path(".")):
    _, prompts, resources = parsed(text)
    return lower_prompts(prompts, [r.resource for r in resources], spec_dir)


def found(diagnostics) -> list[tuple[str, str]]:
    return [(d.rule_id, str(d.span)) for d in diagnostics]


GOOD = """\
prompts:
  - name: summarize_pep
    title: Summarize a PEP
    description: Ask for a summary of one PEP.
    arguments:
      number: {description: "The PEP number, e.g. 8.", required: true, sample: "8"}
      focus: {description: "What to stress.", complete: {values: [motivation, rationale]}}
    messages:
      - {role: user, text: "Summarize PEP {{ number }}{% if focus %}, stressing its {{ focus }}{% endif %}."}
      - {role: user, resource: "pep://{{ number }}"}
resources:
  - {name: pep, uri_template: "pep://{number}", description: One PEP., mime_type: application/json,
     record: {collection: peps}}
"""


def test_a_good_prompt_lowers_to_its_list_entry_and_rendering():
    prompts, diagnostics = lowered(GOOD)
    assert diagnostics == []
    (prompt,) = prompts
    assert prompt.wire == {
        "name": "summarize_pep",
        "title": "Summarize a PEP",
        "description": "Ask for a summary of one PEP.",
        "arguments": [
            {"name": "number", "description": "The PEP number, e.g. 8.", "required": True},
            {"name": "focus", "description": "What to stress.", "required": False},
        ],
    }
    assert prompt.render["arguments"] == {"number": {"required": True}, "focus": {"required": False}}
    assert [m.get("resource") for m in prompt.render["messages"]] == [None, "pep://{{ number }}"]
    assert str(prompt.span) == "spec.yaml:2:11"


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        (  # a name outside the MCP rule
            "prompts:\n  - {name: 'bad name', description: d, messages: [{text: hi}]}\n",
            [("PROMPT_NAME_INVALID", "spec.yaml:2:12")],
        ),
        (  # declared twice
            "prompts:\n  - {name: p, description: d, messages: [{text: hi}]}\n"
            "  - {name: p, description: d, messages: [{text: hi}]}\n",
            [("PROMPT_NAME_DUPLICATE", "spec.yaml:3:12")],
        ),
        (  # an argument a template cannot name
            "prompts:\n  - name: p\n    description: d\n"
            "    arguments: {not: {description: x}, 2x: {description: y}}\n"
            "    messages: [{text: '{{ 1 }}'}]\n",
            [
                ("PROMPT_ARGUMENT_NAME_INVALID", "spec.yaml:4:17"),
                ("PROMPT_ARGUMENT_NAME_INVALID", "spec.yaml:4:40"),
                ("PROMPT_ARGUMENT_UNUSED", "spec.yaml:4:17"),
                ("PROMPT_ARGUMENT_UNUSED", "spec.yaml:4:40"),
            ],
        ),
        (  # two kinds in one message
            "prompts:\n  - name: p\n    description: d\n    messages:\n      - {text: hi, resource: 'x://y'}\n",
            [("PROMPT_MESSAGE_INVALID", "spec.yaml:5:9")],
        ),
        (  # an undeclared argument, with a suggestion
            "prompts:\n  - name: p\n    description: d\n    arguments: {number: {description: n}}\n"
            "    messages: [{text: 'PEP {{ numbr }}'}]\n",
            [("PROMPT_ARGUMENT_UNDECLARED", "spec.yaml:5:23"), ("PROMPT_ARGUMENT_UNUSED", "spec.yaml:4:17")],
        ),
        (  # a declared argument no message uses: a warning
            "prompts:\n  - name: p\n    description: d\n    arguments: {number: {description: n}}\n"
            "    messages: [{text: 'hello'}]\n",
            [("PROMPT_ARGUMENT_UNUSED", "spec.yaml:4:17")],
        ),
        (  # the classic sandbox escape is refused at build
            "prompts:\n  - name: p\n    description: d\n"
            "    messages: [{text: \"{{ ''.__class__.__mro__ }}\"}]\n",
            [("PROMPT_TEMPLATE_UNSAFE", "spec.yaml:4:23"), ("PROMPT_TEMPLATE_UNSAFE", "spec.yaml:4:23")],
        ),
        (  # through an item, too
            "prompts:\n  - name: p\n    description: d\n    arguments: {a: {description: x}}\n"
            "    messages: [{text: \"{{ a['__class__'] }}\"}]\n",
            [("PROMPT_TEMPLATE_UNSAFE", "spec.yaml:5:23")],
        ),
        (  # a template that does not render with its samples
            "prompts:\n  - name: p\n    description: d\n    arguments: {n: {description: x, sample: abc}}\n"
            "    messages: [{text: '{{ (n | int) + n }}'}]\n",
            [("PROMPT_RENDER_FAILED", "spec.yaml:5:23")],
        ),
        (  # a loop whose output would not fit an answer: stopped at the limit
            "prompts:\n  - name: p\n    description: d\n"
            "    messages: [{text: '{% for i in range(99999) %}{{ range(99) | list }}{% endfor %}'}]\n",
            [("PROMPT_RENDER_FAILED", "spec.yaml:4:23")],
        ),
        (  # renders with its sample, not with the optional argument left out (empty)
            "prompts:\n  - name: p\n    description: d\n    arguments: {n: {description: x, sample: '2'}}\n"
            "    messages: [{text: '{{ 10 / (n | int) }}'}]\n",
            [("PROMPT_RENDER_FAILED", "spec.yaml:5:23")],
        ),
        (  # a resource message naming nothing the server serves
            "prompts:\n  - name: p\n    description: d\n    arguments: {n: {description: x, sample: '8'}}\n"
            "    messages: [{resource: 'pep://{{ n }}'}]\n"
            "resources:\n"
            "  - {name: g, uri: 'docs://guide', description: d, mime_type: text/plain, text: hi}\n",
            [("PROMPT_RESOURCE_UNKNOWN", "spec.yaml:5:27")],
        ),
        (  # an image that is not there
            "prompts:\n  - name: p\n    description: d\n"
            "    messages: [{image: {file: missing.png, mime_type: image/png}}]\n",
            [("PROMPT_IMAGE_INVALID", "spec.yaml:4:31")],
        ),
        (  # an image type that is not an image
            "prompts:\n  - name: p\n    description: d\n"
            "    messages: [{image: {file: logo.png, mime_type: text/plain}}]\n",
            [("PROMPT_IMAGE_INVALID", "spec.yaml:4:31")],
        ),
    ],
)
def test_each_prompt_rule_is_reported_where_it_is_broken(snippet, expected, tmp_path):
    (tmp_path / "logo.png").write_bytes(PNG)
    _, diagnostics = lowered(snippet, tmp_path)
    assert sorted(found(diagnostics)) == sorted(expected)


def test_a_template_syntax_error_is_reported_at_its_line_inside_a_block():
    snippet = (
        "prompts:\n  - name: p\n    description: d\n    arguments: {a: {description: x}}\n    messages:\n"
        "      - text: |\n          First line {{ a }}\n          second {{ a + }} broken\n          third\n"
    )
    _, diagnostics = lowered(snippet)
    assert found(diagnostics) == [("PROMPT_TEMPLATE_SYNTAX", "spec.yaml:8:11")]
    assert "template syntax" in diagnostics[0].message


def test_a_syntax_error_on_one_line_is_at_the_value():
    snippet = "prompts:\n  - name: p\n    description: d\n    messages: [{text: 'a {{ b'}]\n"
    _, diagnostics = lowered(snippet)
    assert found(diagnostics) == [("PROMPT_TEMPLATE_SYNTAX", "spec.yaml:4:23")]


def test_an_image_is_embedded_and_a_large_one_refused(tmp_path):
    (tmp_path / "logo.png").write_bytes(PNG)
    (tmp_path / "big.png").write_bytes(b"\x89PNG" + b"\0" * (1 << 20))
    good = (
        "prompts:\n  - name: p\n    description: d\n"
        "    messages: [{image: {file: logo.png, mime_type: image/png}}]\n"
    )
    (prompt,), diagnostics = lowered(good, tmp_path)
    assert diagnostics == []
    assert prompt.render["messages"][0]["image"]["mime_type"] == "image/png"
    big = good.replace("logo.png", "big.png")
    _, diagnostics = lowered(big, tmp_path)
    assert [d.rule_id for d in diagnostics] == ["PROMPT_IMAGE_INVALID"]
    assert "over the limit" in diagnostics[0].message
    escape = good.replace("logo.png", "../outside.png")
    _, diagnostics = lowered(escape, tmp_path)
    assert "inside it" in diagnostics[0].message


def test_the_sample_is_the_first_completion_value_when_none_is_given():
    snippet = (
        "prompts:\n  - name: p\n    description: d\n"
        "    arguments: {n: {description: x, complete: {values: ['12']}}}\n"
        "    messages: [{text: '{{ n | int(strict) + 1 }}'}]\n"
    )
    # int on a non-number fails: the sample is '12', not 'sample', so it renders
    prompts, diagnostics = lowered(snippet.replace("int(strict)", "int"))
    assert diagnostics == [] and len(prompts) == 1


COLLECTIONS = {"peps": {"number": "integer", "title": "string", "body": "text", "authors": "array"}}


def checked(text: str, collections=COLLECTIONS, source=None):
    _, prompts, resources = parsed(text)
    sites, problems = resource_sites(resources)
    result = check_completions([*prompt_sites(prompts), *sites], collections, source, check_functions=False)
    return result, problems + result.diagnostics


def test_completion_sources_lower_into_completions_json():
    text = (
        "prompts:\n  - name: p\n    description: d\n    arguments:\n"
        "      n: {description: x, complete: {collection: peps, field: number}}\n"
        "      k: {description: y, complete: {values: [a, b]}}\n"
        "      f: {description: z, complete: {function: 'tests.fixtures.completions:colours'}}\n"
        "    messages: [{text: '{{ n }}{{ k }}{{ f }}'}]\n"
        "resources:\n  - name: pep\n    uri_template: 'pep://{number}'\n    description: d\n"
        "    mime_type: application/json\n    record: {collection: peps}\n"
        "    variables: {number: {complete: {collection: peps, field: number}}}\n"
    )
    result, diagnostics = checked(text)
    assert diagnostics == []
    assert result.document == {
        "prompts": {
            "p": {
                "n": {"collection": "peps", "field": "number"},
                "k": {"values": ["a", "b"]},
                "f": {"function": "tests.fixtures.completions:colours"},
            }
        },
        "resources": {"pep://{number}": {"number": {"collection": "peps", "field": "number"}}},
    }


@pytest.mark.parametrize(
    ("complete", "rule"),
    [
        ("{values: []}", "COMPLETION_SOURCE_INVALID"),
        ("{}", "COMPLETION_SOURCE_INVALID"),
        ("{values: [a], sql: 'SELECT 1'}", "COMPLETION_SOURCE_INVALID"),
        ("{values: [a], field: x}", "COMPLETION_SOURCE_INVALID"),
        ("{collection: peps}", "COMPLETION_SOURCE_INVALID"),
        ("{collection: pep, field: number}", "COMPLETION_COLLECTION_UNKNOWN"),
        ("{collection: peps, field: nmber}", "COMPLETION_FIELD_INVALID"),
        ("{collection: peps, field: authors}", "COMPLETION_FIELD_INVALID"),
        ("{collection: peps, field: body}", "COMPLETION_FIELD_INVALID"),
        ("{function: not-a-target}", "COMPLETION_FUNCTION_INVALID"),
        ("{sql: 'SELECT 1'}", "COMPLETION_SQL_INVALID"),  # no SQL data
    ],
)
def test_each_completion_rule(complete, rule):
    text = (
        "prompts:\n  - name: p\n    description: d\n    arguments:\n"
        f"      n: {{description: x, complete: {complete}}}\n    messages: [{{text: '{{{{ n }}}}'}}]\n"
    )
    _, diagnostics = checked(text)
    assert [d.rule_id for d in diagnostics] == [rule]
    assert str(diagnostics[0].span).startswith("spec.yaml:5:")


def test_a_completed_variable_must_be_the_templates():
    text = (
        "resources:\n  - name: pep\n    uri_template: 'pep://{number}'\n    description: d\n"
        "    mime_type: application/json\n    record: {collection: peps}\n"
        "    variables: {numbr: {complete: {values: ['8']}}}\n"
    )
    _, diagnostics = checked(text)
    assert found(diagnostics) == [("COMPLETION_VARIABLE_UNKNOWN", "spec.yaml:7:17")]
    assert "number" in (diagnostics[0].hint or "")


def test_the_completions_document_is_json():
    result, _ = checked(
        "prompts:\n  - name: p\n    description: d\n    arguments:\n"
        "      n: {description: x, complete: {values: [a]}}\n    messages: [{text: '{{ n }}'}]\n"
    )
    assert json.loads(json.dumps(result.document))["prompts"]["p"]["n"] == {"values": ["a"]}


SQL_SPEC = """\
lynxc: 1
server:
  name: sqlp
  version: 1.0.0
  duckdb:
    views:
      countries: {reader: read_json, setting: countries_file, options: {format: newline_delimited},
                  sample: countries.jsonl.gz}
  settings:
    countries_file: {type: string, default: countries.jsonl.gz, description: The data.}
tools:
  - name: count_countries
    description: {purpose: Count the countries.}
    backend: {sql: "SELECT count(*) AS n FROM countries", result: one}
prompts:
  - name: p
    description: d
    arguments:
      region: {description: r}
      code:
        description: c
        complete:
          sql: COMPLETION
    messages: [{text: "{{ code }} {{ region }}"}]
"""


@pytest.mark.parametrize(
    ("statement", "problem"),
    [
        ("SELECT cca3 FROM countries WHERE cca3 ILIKE $value || '%' AND region = $region", None),
        ("SELECT cca3, region FROM countries", "returns 2 columns"),
        ("SELECT cca3 FROM countries WHERE cca3 = $valeu", "binds $valeu"),
        ("SELECT cca3 FROM nowhere", "fails: Catalog Error"),
        ("SELEC cca3", "fails: Parser Error"),
    ],
)
def test_a_sql_completion_is_checked_against_the_declared_data(tmp_path, statement, problem):
    from lynxc.compiler.lower.server import compile_spec

    shutil.copy(Path(__file__).parents[2] / "specs/countries-sql/data/countries.jsonl.gz", tmp_path)
    spec = tmp_path / "sqlp.yaml"
    spec.write_text(SQL_SPEC.replace("COMPLETION", json.dumps(statement)))
    result = compile_spec(spec, check_backends=False)
    errors = [d for d in result.diagnostics if d.severity == "error"]
    if problem is None:
        assert errors == [] and result.value is not None
        source = json.loads(result.value.completions_json)["prompts"]["p"]["code"]
        assert source["params"] == ["value", "region"]
        assert source["statement"].endswith("LIMIT 101")
    else:
        assert [d.rule_id for d in errors] == ["COMPLETION_SQL_INVALID"]
        assert problem in errors[0].message
        assert str(errors[0].span).endswith("sqlp.yaml:23:16")


def test_a_sql_completion_needs_a_sql_tool(tmp_path):
    from lynxc.compiler.lower.server import compile_spec

    shutil.copy(Path(__file__).parents[2] / "specs/countries-sql/data/countries.jsonl.gz", tmp_path)
    spec = tmp_path / "sqlp.yaml"
    text = SQL_SPEC.replace("COMPLETION", '"SELECT cca3 FROM countries"')
    text = text.replace(
        "tools:\n  - name: count_countries", "tools:\n  - name: count_countries\n    backend: x.y:z"
    )
    spec.write_text(
        text.replace('    backend: {sql: "SELECT count(*) AS n FROM countries", result: one}\n', "")
    )
    result = compile_spec(spec, check_backends=False)
    assert any("has no SQL tool" in d.message for d in result.diagnostics)


@pytest.mark.parametrize(
    ("target", "problem"),
    [
        ("tests.fixtures.completions:colours", None),
        ("tests.fixtures.completions:nope", "cannot load function"),
        ("tests.fixtures.nowhere:colours", "No module named"),
        ("os:system", "function of Python itself"),
    ],
)
def test_a_function_completion_is_imported_by_the_probe(tmp_path, target, problem):
    from lynxc.compiler.lower.server import compile_spec

    spec = tmp_path / "fn.yaml"
    spec.write_text(
        "lynxc: 1\nserver: {name: fn, version: 1.0.0}\ntools:\n"
        "  - {name: echo, backend: 'tests.fixtures.backends:echo', description: {purpose: Echo.},\n"
        "     parameters: {text: {type: string, required: true, description: Text.}}}\n"
        "prompts:\n  - name: p\n    description: d\n"
        f"    arguments: {{c: {{description: x, complete: {{function: '{target}'}}}}}}\n"
        "    messages: [{text: '{{ c }}'}]\n"
    )
    errors = [d for d in compile_spec(spec).diagnostics if d.rule_id.startswith("COMPLETION")]
    if problem is None:
        assert errors == []
    else:
        assert [d.rule_id for d in errors] == ["COMPLETION_FUNCTION_INVALID"]
        assert problem in errors[0].message
        assert str(errors[0].span).endswith("fn.yaml:9:58")


RESOURCE_SPEC = """\
lynxc: 1
server: {name: res, version: 1.0.0}
tools:
  - {name: echo, backend: 'tests.fixtures.backends:echo', description: {purpose: Echo.},
     parameters: {text: {type: string, required: true, description: Text.}}}
resources:
  - name: data
    uri_template: "test://template/{id}/data"
    description: Data of one id.
    mime_type: application/json
    text: '{"id": "{{ id }}"}'
    variables: {id: {description: The id., complete: {values: ["1", "2", "10"]}}}
  - {name: hello, uri: "test://static-text", description: Hello., mime_type: text/plain, text: hi}
prompts:
  - name: p
    description: d
    arguments: {id: {description: The id., required: true, complete: {values: ["1"]}}}
    messages:
      - {text: "Look at {{ id }}:"}
      - {resource: URI}
"""


@pytest.mark.parametrize(
    ("uri", "good"),
    [
        ("test://template/{{ id }}/data", True),
        ("test://static-text", True),
        ("test://template/{{ id }}", False),
        ("test://other", False),
    ],
)
def test_resource_messages_against_the_declared_resources(tmp_path, uri, good):
    from lynxc.compiler.lower.server import compile_spec

    spec = tmp_path / "res.yaml"
    spec.write_text(RESOURCE_SPEC.replace("URI", json.dumps(uri)))
    result = compile_spec(spec, check_backends=False)
    prompt_errors = [d for d in result.diagnostics if d.rule_id.startswith(("PROMPT", "COMPLETION"))]
    if good:
        assert prompt_errors == []
        assert result.value is not None
        assert json.loads(result.value.completions_json)["resources"] == {
            "test://template/{id}/data": {"id": {"values": ["1", "2", "10"]}}
        }
    else:
        assert [(d.rule_id, str(d.span).rsplit("/", 1)[1]) for d in prompt_errors] == [
            ("PROMPT_RESOURCE_UNKNOWN", "res.yaml:20:20")
        ]
        assert "test://template/{id}/data" in (prompt_errors[0].hint or "")


def test_an_embedded_image_is_an_input_of_the_build(tmp_path, monkeypatch):
    from lynxc.compiler.lower.server import compile_spec

    project = tmp_path / "project"
    shutil.copytree(Path(__file__).parents[1] / "fixtures" / "prompts_project", project)
    monkeypatch.chdir(project)
    result = compile_spec(Path("specs/prompts-demo.yaml"), check_backends=False)
    assert result.value is not None
    files = {f.path for f in result.value.spec_files}
    assert "specs/data/swatch.png" in files

"""Prompts in `lynxc diff`: the structural diff of two prompts/list answers, how each change is
judged, which inputs say what prompts a server offers (and which cannot), and the renderers.
Every rule also has its golden fixture in diff_rules/ (test_diff_rules.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from lynxc.compiler.diagnostics import Span
from lynxc.compiler.inputs import DiffInputError, load_side
from lynxc.compiler.review.compare import review_pair
from lynxc.compiler.review.prompts import diff_prompts, judge_prompt
from lynxc.compiler.review.render import render_github, render_json, render_markdown
from lynxc.compiler.wire import ServerWire
from tests.conftest import ROOT

FIXTURE = Path(__file__).parent / "diff_rules/PROMPT_REMOVED/before/surface"


def base() -> list[dict[str, Any]]:
    return json.loads((FIXTURE / "prompts.json").read_text())["prompts"]


def argument(prompts: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(a for a in prompts[0]["arguments"] if a["name"] == name)


def judged(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(c.op, c.path_text, judge_prompt(c).rule_id) for c in diff_prompts(before, after)]


def test_defaults_nulls_and_argument_order_are_no_change() -> None:
    before, after = base(), base()
    del argument(after, "style")["required"]  # absent is optional, as MCP says
    after[0]["arguments"].reverse()  # arguments are matched by name
    after[0]["icons"] = None  # null reads as absent
    assert judged(before, after) == []


def test_one_change_per_part_with_paths_in_order() -> None:
    before, after = base(), base()
    argument(after, "number")["description"] = "The PEP's number, e.g. 8."
    argument(after, "style")["required"] = True
    after[0]["arguments"].append({"name": "lang", "description": "The language, e.g. fr."})
    after[0]["title"] = "Summarize one PEP"
    assert judged(before, after) == [
        ("added", "Prompt summarize_pep / arguments / lang", "PROMPT_ARGUMENT_ADDED_OPTIONAL"),
        ("changed", "Prompt summarize_pep / arguments / number / description", "PROMPT_DESCRIPTION_CHANGED"),
        ("changed", "Prompt summarize_pep / arguments / style / required", "PROMPT_ARGUMENT_BECAME_REQUIRED"),
        ("changed", "Prompt summarize_pep / title", "PROMPT_TITLE_CHANGED"),
    ]


def test_a_renamed_prompt_is_removed_and_added() -> None:
    """Clients get a prompt by its name: the old name fails, whatever the new one holds."""
    before, after = base(), base()
    after[0]["name"] = "summarise_pep"
    assert judged(before, after) == [
        ("added", "Prompt summarise_pep", "PROMPT_ADDED"),
        ("removed", "Prompt summarize_pep", "PROMPT_REMOVED"),
    ]


def test_arguments_not_in_the_wire_shape_change_as_a_whole() -> None:
    before, after = base(), base()
    after[0]["arguments"] = {"number": "8"}
    assert judged(before, after) == [("changed", "Prompt summarize_pep / arguments", "PROMPT_CHANGED")]
    after = base()
    argument(after, "number")["required"] = "yes"  # not a boolean: a reviewer reads it
    assert judged(before, after) == [
        ("changed", "Prompt summarize_pep / arguments / number / required", "PROMPT_CHANGED")
    ]


def wire(prompts: list[dict[str, Any]] | None, **spans: Span) -> ServerWire:
    prompt_spans = {(name, None): span for name, span in spans.items()}
    return ServerWire("surface", [], "test", prompts=prompts, prompt_spans=prompt_spans)


def test_prompts_are_compared_only_when_both_sides_can_tell() -> None:
    """A saved tools/list answer (prompts None) says nothing of prompts: nothing is removed."""
    assert review_pair(wire(base()), wire(None)).findings == ()
    assert review_pair(wire(None), wire([])).findings == ()
    assert [f.rule_id for f in review_pair(wire(base()), wire([])).findings] == ["PROMPT_REMOVED"]
    # A server absent from one side offers no prompts there: every prompt is added.
    assert [f.rule_id for f in review_pair(None, wire(base())).findings] == ["PROMPT_ADDED"]


def test_renderers_name_the_prompt_and_point_at_its_line() -> None:
    before, after = base(), base()
    argument(after, "style")["required"] = True
    head = ServerWire(
        "surface",
        [],
        "spec",
        prompts=after,
        prompt_spans={
            ("summarize_pep", None): Span("specs/s/server.yaml", 12, 5),
            ("summarize_pep", "style"): Span("specs/s/server.yaml", 17, 9),
        },
    )
    reviews = [review_pair(wire(before), head)]
    github = render_github(reviews)
    assert github.startswith(
        "::error file=specs/s/server.yaml,line=17,col=9,title=lynxc PROMPT_ARGUMENT_BECAME_REQUIRED::"
    )
    assert "changed Prompt summarize_pep / arguments / style / required" in github
    (finding,) = json.loads(render_json(reviews))["servers"][0]["findings"]
    assert finding["prompt"] == "summarize_pep" and "tool" not in finding
    assert (finding["before"], finding["after"]) == (False, True)
    assert "| (prompts) |" not in render_markdown(reviews)  # breaking: listed, not in the info table
    assert "`PROMPT_ARGUMENT_BECAME_REQUIRED`" in render_markdown(reviews)


def test_a_generated_folder_and_a_saved_answer_carry_prompts(tmp_path: Path) -> None:
    side = load_side(str(FIXTURE), ROOT)
    assert side.servers["surface"].prompts == base()
    saved = tmp_path / "answer.json"
    saved.write_text(json.dumps({"tools": [], "prompts": base()}))
    assert load_side(str(saved), ROOT).servers["answer"].prompts == base()
    saved.write_text(json.dumps({"tools": []}))
    assert load_side(str(saved), ROOT).servers["answer"].prompts is None  # cannot tell


@pytest.mark.parametrize(
    ("prompts", "says"),
    [
        ({"prompts": [{"title": "no name"}]}, 'expected "prompts": a list of objects, each with a "name"'),
        ({"prompts": [{"name": "a"}, {"name": "a"}]}, "prompt 'a' is listed twice"),
        ({"prompts": "all"}, 'expected "prompts"'),
    ],
)
def test_a_bad_prompts_file_is_one_clear_error(tmp_path: Path, prompts: dict[str, Any], says: str) -> None:
    folder = tmp_path / "surface"
    folder.mkdir()
    (folder / "tools.json").write_text(json.dumps({"tools": []}))
    (folder / "prompts.json").write_text(json.dumps(prompts))
    with pytest.raises(DiffInputError, match=r"prompts\.json: ") as raised:
        load_side(str(folder), ROOT)
    assert says in str(raised.value)


def test_every_prompt_rule_fixture_holds_one_finding() -> None:
    """Each golden fixture changes one thing, so its review is that rule's finding alone."""
    for folder in sorted((Path(__file__).parent / "diff_rules").glob("PROMPT_*")):
        before = load_side(str(folder / "before/surface"), ROOT).servers["surface"]
        after = load_side(str(folder / "after/surface"), ROOT).servers["surface"]
        assert [f.rule_id for f in review_pair(before, after).findings] == [folder.name]
        assert copy.deepcopy(before.tools) == after.tools


def test_every_bundled_spec_and_its_generated_folder_offer_the_same_surface() -> None:
    """What review reads of a spec (its IR) is what the build wrote (prompts.json, resources.json):
    comparing one with the other finds no prompt or MCP resource change, for every bundled server."""
    from lynxc.compiler.spec.load import discover_specs

    specs = discover_specs(ROOT / "specs")
    assert specs
    for spec in specs:
        server = spec.name if spec.is_dir() else spec.parent.name
        generated = ROOT / "generated" / server
        (head,) = load_side(str(spec), ROOT).servers.values()
        (built,) = load_side(str(generated), ROOT).servers.values()
        assert head.prompts == built.prompts, server
        changed = [f.rule_id for f in review_pair(built, head).findings if not f.change.of_tool]
        assert not [rule for rule in changed if rule.startswith(("PROMPT_", "RESOURCE_"))], server

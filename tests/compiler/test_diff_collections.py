"""Declared records in `lynxc diff`: the structural diff of two resources lists, how each change
is judged, the inputs that carry resources (and the one that cannot), and every renderer."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from lynxc.compiler.diagnostics import Span
from lynxc.compiler.inputs import DiffInputError, load_side
from lynxc.compiler.review.collections import diff_resources, judge_resource
from lynxc.compiler.review.compare import review, review_pair
from lynxc.compiler.review.render import render_github, render_json, render_markdown, render_text
from lynxc.compiler.wire import ServerWire
from tests.conftest import ROOT

FIXTURE = Path(__file__).parent / "diff_rules/COLLECTION_FIELD_REMOVED/before/rules"


def base() -> list[dict[str, Any]]:
    return json.loads((FIXTURE / "collections.json").read_text())["resources"]


def field(resources: list[dict[str, Any]], *path: str) -> dict[str, Any]:
    """`field(rs, "peps", "discussion", "url")`: a field by resource and field names."""
    node: dict[str, Any] = next(r for r in resources if r["name"] == path[0])
    for name in path[1:]:
        node = next(f for f in node["fields"] if f["name"] == name)
    return node


def judged(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [
        (f.change.op, f.change.path_text, f.rule_id)
        for f in (judge_resource(c) for c in diff_resources(before, after))
    ]


def test_defaults_written_out_nulls_and_derived_parts_are_no_change() -> None:
    before, after = base(), base()
    peps = after[0]
    del peps["capabilities"], peps["parents"]  # all three capabilities; parents derive from id
    peps["id"] = None  # null reads as absent: the id is the name
    peps["schema"] = {"type": "object", "required": ["number"]}  # derived from fields
    peps["model"] = "records_other"  # derived from the name
    for f in peps["fields"]:
        if f["required"] is False:
            del f["required"]
    peps["fields"].reverse()  # records are objects: field order is not compared
    assert judged(before, after) == []


def test_nested_fields_and_array_items_have_paths_and_names() -> None:
    before, after = base(), base()
    field(after, "peps", "discussion")["fields"].pop()  # forum
    field(after, "peps", "authors")["items"]["type"] = "integer"
    field(after, "peps", "discussion", "url")["description"] = "The thread."
    assert judged(before, after) == [
        ("changed", "Collection peps / fields / authors / items", "COLLECTION_FIELD_TYPE_CHANGED"),
        ("removed", "Collection peps / fields / discussion / fields / forum", "COLLECTION_FIELD_REMOVED"),
        (
            "added",
            "Collection peps / fields / discussion / fields / url / description",
            "COLLECTION_DESCRIPTION_CHANGED",
        ),
    ]
    messages = [judge_resource(c).message for c in diff_resources(before, after)]
    assert messages[0] == "field 'authors[]' changed type: string -> integer"
    assert messages[1].startswith("field 'discussion.forum' was removed")


def test_a_type_change_is_one_change_of_the_whole_field() -> None:
    """The enum's values come with the type: shown in the whole values, not judged apart."""
    before, after = base(), base()
    status = field(after, "peps", "status")
    status.update(type="string", values=None)
    changes = diff_resources(before, after)
    assert len(changes) == 1
    assert changes[0].before["values"] == ["Draft", "Accepted", "Final", "Withdrawn"]
    assert "values" not in changes[0].after  # null is absent
    assert judge_resource(changes[0]).message == "field 'status' changed type: enum -> string"


def test_fields_named_like_the_format_words_parse() -> None:
    before, after = base(), base()
    discussion = field(after, "peps", "discussion")
    discussion["fields"].append({"name": "items", "type": "string", "required": True})
    discussion["fields"].append({"name": "fields", "type": "string"})
    found = {(path, rule) for _, path, rule in judged(before, after)}
    assert found == {
        ("Collection peps / fields / discussion / fields / items", "COLLECTION_FIELD_ADDED_REQUIRED"),
        ("Collection peps / fields / discussion / fields / fields", "COLLECTION_FIELD_ADDED_OPTIONAL"),
    }
    messages = {judge_resource(c).message.split(" was ")[0] for c in diff_resources(before, after)}
    assert messages == {"field 'discussion.items'", "field 'discussion.fields'"}


def test_enum_values_compare_as_json() -> None:
    before, after = base(), base()
    field(before, "peps", "status").update(values=[1, "x"])
    field(after, "peps", "status").update(values=[True, "x", "y"])
    finding = judge_resource(diff_resources(before, after)[0])
    assert finding.rule_id == "COLLECTION_ENUM_VALUE_REMOVED"
    assert finding.message.startswith("field 'status' no longer allows 1 (and now allows true, \"y\")")


def test_removed_and_added_together_weigh_as_the_removal() -> None:
    before, after = base(), base()
    after[0]["keyword"] = ["body", "title"]
    after[1]["capabilities"] = ["query"]
    after[1]["meaning"] = ["body"]
    assert judged(before, after) == [
        ("changed", "Collection peps / keyword", "COLLECTION_REORDERED"),
        ("changed", "Collection sections / capabilities", "COLLECTION_CAPABILITY_REMOVED"),
        ("changed", "Collection sections / meaning", "COLLECTION_SEARCH_FIELD_REMOVED"),
    ]
    messages = [judge_resource(c).message for c in diff_resources(before, after)]
    assert (
        messages[1]
        == "no longer allows search (search_records), get_one (get_record); now allows query (query_records)"
    )


def test_a_text_limit_set_where_there_was_none_lowers_it() -> None:
    before, after = base(), base()
    after[1]["max_text_chars"] = 4000
    assert judged(before, after) == [
        ("added", "Collection sections / max_text_chars", "COLLECTION_TEXT_LIMIT_LOWERED")
    ]


def test_a_renamed_resource_is_removed_and_added() -> None:
    before, after = base(), base()
    after[1]["name"] = "parts"
    assert judged(before, after) == [
        ("added", "Collection parts", "COLLECTION_ADDED"),
        ("removed", "Collection sections", "COLLECTION_REMOVED"),
    ]


def wires(before: list[dict[str, Any]], after: list[dict[str, Any]]) -> tuple[ServerWire, ServerWire]:
    spans = {
        ("peps",): Span("specs/peps/peps.yaml", 3, 1),
        ("peps", "status"): Span("specs/peps/peps.yaml", 9, 5),
    }
    return (
        ServerWire("peps", [], "a", resources=before),
        ServerWire("peps", [], "b", resources=after, resource_spans=spans),
    )


def test_every_renderer_shows_resource_changes() -> None:
    before, after = base(), base()
    field(after, "peps", "status")["values"].remove("Withdrawn")
    tool = {"name": "search_records", "inputSchema": {"type": "object"}}
    old, new = wires(before, after)
    old = replace(old, tools=[tool])
    new = replace(new, tools=[{**tool, "description": "Search."}])
    reviews = [review_pair(old, new)]
    text = render_text(reviews)
    assert "    info     DESCRIPTION_CHANGED: search_records: added Description" in text
    assert "    breaking COLLECTION_ENUM_VALUE_REMOVED: changed Collection peps / fields / status" in text
    markdown = render_markdown(reviews)
    assert "### Breaking (1)\n" in markdown and "| `search_records` | added `Description` |" in markdown
    assert (
        "- **breaking** `COLLECTION_ENUM_VALUE_REMOVED` — changed "
        "`Collection peps / fields / status / values`" in (markdown)
    )
    entry = json.loads(render_json(reviews))["servers"][0]["findings"][1]
    assert entry["collection"] == "peps" and "tool" not in entry
    assert entry["path"] == "Collection peps / fields / status / values" and entry["level"] == "breaking"
    assert entry["before"] == ["Draft", "Accepted", "Final", "Withdrawn"]
    github = render_github(reviews).splitlines()[1]
    assert github.startswith(
        "::error file=specs/peps/peps.yaml,line=9,col=5,title=lynxc COLLECTION_ENUM_VALUE_REMOVED::"
        "changed Collection peps / fields / status / values: field 'status' no longer allows"
    )


def test_a_tools_list_cannot_tell_resources_so_they_are_not_compared() -> None:
    with_records = ServerWire("peps", [], "generated", resources=base())
    saved = ServerWire("peps", [], "tools-list.json")  # resources None: unknown
    assert review_pair(saved, with_records).findings == ()
    assert [f.rule_id for f in review_pair(None, with_records).findings] == ["COLLECTION_ADDED"] * 2


def copy_generated(tmp_path: Path, name: str, resources: list[dict[str, Any]] | None) -> Path:
    folder = tmp_path / name / "rules"
    folder.mkdir(parents=True)
    (folder / "tools.json").write_text('{"tools": []}')
    if resources is not None:
        (folder / "collections.json").write_text(json.dumps({"format": 1, "resources": resources}))
    return folder


def test_generated_folders_carry_resources_and_a_bare_tools_json_does_not(tmp_path: Path) -> None:
    records = copy_generated(tmp_path, "new", base())
    plain = copy_generated(tmp_path, "old", None)
    side = load_side(str(records), ROOT)
    assert side.servers["rules"].resources == base()
    assert load_side(str(plain), ROOT).servers["rules"].resources == []  # no collections.json: none
    assert load_side(str(records / "tools.json"), ROOT).servers["rules"].resources is None
    rules = [f.rule_id for r in review(load_side(str(plain), ROOT), side) for f in r.findings]
    assert rules == ["COLLECTION_ADDED", "COLLECTION_ADDED"]


def test_a_folder_generated_before_the_rename_keeps_its_records(tmp_path: Path) -> None:
    """A build from before issue 31 kept its records in resources.json: still read as records;
    a resources.json of MCP resources (no `format`) is not."""
    legacy = copy_generated(tmp_path, "legacy", None)
    (legacy / "resources.json").write_text(json.dumps({"format": 1, "resources": base()}))
    assert load_side(str(legacy), ROOT).servers["rules"].resources == base()
    mcp = copy_generated(tmp_path, "mcp", None)
    (mcp / "resources.json").write_text(json.dumps({"resources": [], "resourceTemplates": []}))
    assert load_side(str(mcp), ROOT).servers["rules"].resources == []


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ({"format": 2, "resources": []}, "expected a collections document of format 1, found 2"),
        (
            {"format": 1, "resources": [{"id": "x"}]},
            'expected "resources": a list of objects, each with a "name"',
        ),
        ({"format": 1, "resources": [{"name": "a"}, {"name": "a"}]}, "collection 'a' is listed twice"),
        ([], "expected a collections document of format 1, found 'list'"),
    ],
)
def test_a_broken_collections_json_is_one_clear_line(tmp_path: Path, document: Any, says: str) -> None:
    folder = copy_generated(tmp_path, "x", [])
    (folder / "collections.json").write_text(json.dumps(document))
    with pytest.raises(DiffInputError) as err:
        load_side(str(folder), ROOT)
    assert str(err.value) == f"{folder}: collections.json: {says}"


def test_a_deep_collections_json_is_refused(tmp_path: Path) -> None:
    folder = copy_generated(tmp_path, "x", [])
    (folder / "collections.json").write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(DiffInputError, match="nests deeper than"):
        load_side(str(folder), ROOT)


def test_unchanged_resources_are_no_findings() -> None:
    assert review_pair(*wires(base(), copy.deepcopy(base()))).findings == ()


def test_annotations_point_at_the_field_or_else_its_resource() -> None:
    before, after = base(), base()
    field(after, "peps", "discussion")["fields"].pop()  # forum: gone from the head spec
    field(after, "peps", "discussion", "url")["description"] = "The thread."
    old, new = wires(before, after)
    spans = {**new.resource_spans, ("peps", "discussion", "url"): Span("specs/peps/peps.yaml", 14, 9)}
    lines = render_github([review_pair(old, replace(new, resource_spans=spans))]).splitlines()
    assert [line.split(",title=")[0] for line in lines] == [
        "::error file=specs/peps/peps.yaml,line=3,col=1",
        "::notice file=specs/peps/peps.yaml,line=14,col=9",
    ]


def test_records_bound_to_claims() -> None:
    """Row-level security (issue 27): binding narrows what callers see, unbinding widens it."""
    before, after = base(), base()
    before[0]["bind"] = {"status": "status", "created": "since"}
    after[0]["bind"] = {"status": "role", "number": "pep"}
    (change,) = diff_resources(before, after)
    finding = judge_resource(change)
    assert (change.path_text, finding.rule_id, finding.level) == (
        "Collection peps / bind",
        "COLLECTION_BIND_ADDED",
        "breaking",
    )
    assert finding.message == (
        "binds 'number' to the caller's 'pep' claim: callers see only their own records; "
        "binds 'status' to 'role' instead of 'status': the same caller sees other records; "
        "no longer binds 'created' (was the caller's 'since' claim): every caller now sees records "
        "it could not before"
    )
    del after[0]["bind"]
    assert judged(before, after) == [("removed", "Collection peps / bind", "COLLECTION_BIND_REMOVED")]
    assert judged(after, before) == [("added", "Collection peps / bind", "COLLECTION_BIND_ADDED")]

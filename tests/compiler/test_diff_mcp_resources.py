"""MCP resources in `lynxc diff`: static resources matched by URI, templates by name (a rename
is one change), a changed uriTemplate judged by the URIs it matches (RFC 6570 expansion and
matching with the SDK's UriTemplate), and the inputs that carry them. Every rule also has its
golden fixture in diff_rules/ (test_diff_rules.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.uri_template import UriTemplate

from lynxc.compiler.inputs import load_side
from lynxc.compiler.review.compare import review_pair
from lynxc.compiler.review.mcp_resources import diff_mcp_resources, judge_mcp_resource, probe_uris
from lynxc.compiler.wire import ServerWire
from tests.conftest import ROOT

RULES = Path(__file__).parent / "diff_rules"
FIXTURE = RULES / "RESOURCE_URI_REMOVED/before/surface"


def base() -> dict[str, list[dict[str, Any]]]:
    document = json.loads((FIXTURE / "resources.json").read_text())
    return {"resources": document["resources"], "resourceTemplates": document["resourceTemplates"]}


def judged(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c.op, c.path_text, judge_mcp_resource(c).rule_id) for c in diff_mcp_resources(before, after)]


def templated(old: str, new: str) -> str:
    before = {"resourceTemplates": [{"name": "t", "uriTemplate": old}]}
    after = {"resourceTemplates": [{"name": "t", "uriTemplate": new}]}
    ((_, _, rule),) = judged(before, after)
    return rule


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        ("pep://{number}", "pep://{number}.json", "RESOURCE_TEMPLATE_NARROWED"),  # a literal added
        ("pep://{number}", "peps://{number}", "RESOURCE_TEMPLATE_NARROWED"),  # the scheme changed
        ("docs://{+path}", "docs://{path}", "RESOURCE_TEMPLATE_NARROWED"),  # slashes no longer match
        ("x://{a}/{b}", "x://{a}", "RESOURCE_TEMPLATE_NARROWED"),  # a segment dropped
        ("files://{/path*}", "files://{/path}", "RESOURCE_TEMPLATE_NARROWED"),  # one segment only
        ("country://{code}", "country://{+code}", "RESOURCE_TEMPLATE_WIDENED"),
        ("x://{a}", "x://{a}{?lang}", "RESOURCE_TEMPLATE_WIDENED"),  # an optional query added
        ("pep://{number}", "pep://{n}", "RESOURCE_TEMPLATE_REWRITTEN"),  # a variable renamed
        ("pep://{number}", "pep://{number", "RESOURCE_TEMPLATE_CHANGED"),  # not a template
    ],
)
def test_a_changed_uri_template_is_judged_by_the_uris_it_matches(old: str, new: str, rule: str) -> None:
    assert templated(old, new) == rule


def test_a_narrowed_template_names_a_uri_that_no_longer_reads() -> None:
    before = {"resourceTemplates": [{"name": "pep", "uriTemplate": "pep://{number}"}]}
    after = {"resourceTemplates": [{"name": "pep", "uriTemplate": "pep://{number}.json"}]}
    (change,) = diff_mcp_resources(before, after)
    assert judge_mcp_resource(change).message == (
        "resource template 'pep' no longer matches URIs it matched, such as pep://8: reading them fails"
    )


def test_probes_are_bounded_and_matched_by_their_own_template() -> None:
    for text in ("pep://{number}", "docs://{+path}", "x://{a}/{b}{?q,lang}", "files://{/path*}"):
        template = UriTemplate.parse(text)
        uris = list(probe_uris(template))
        assert 1 <= len(uris) <= 8
        assert all(template.match(uri) is not None for uri in uris), text


def test_static_resources_by_uri_and_templates_by_name() -> None:
    before, after = base(), base()
    after["resources"][0]["name"] = "handbook"  # same URI: a changed name, not removed and added
    after["resourceTemplates"][0]["mimeType"] = "text/plain"
    after["resourceTemplates"][1]["name"] = "nation"  # same template: a rename
    after["resourceTemplates"][1]["description"] = "One nation as JSON."
    assert judged(before, after) == [
        ("changed", "Resource docs://guide / name", "RESOURCE_URI_NAME_CHANGED"),
        ("changed", "Resource template nation / description", "RESOURCE_TEMPLATE_DESCRIPTION_CHANGED"),
        ("changed", "Resource template nation / name", "RESOURCE_TEMPLATE_RENAMED"),
        ("changed", "Resource template pep / mimeType", "RESOURCE_MIME_TYPE_CHANGED"),
    ]


def test_a_renamed_template_with_another_template_is_removed_and_added() -> None:
    before, after = base(), base()
    after["resourceTemplates"][1].update(name="nation", uriTemplate="nation://{code}")
    assert judged(before, after) == [
        ("removed", "Resource template country", "RESOURCE_TEMPLATE_REMOVED"),
        ("added", "Resource template nation", "RESOURCE_TEMPLATE_ADDED"),
    ]


def test_a_mime_type_declared_is_info_and_one_dropped_or_changed_is_breaking() -> None:
    def mime(old: str | None, new: str | None) -> str:
        entry = {"uri": "docs://guide", "name": "guide"}
        before = {"resources": [{**entry, "mimeType": old}]}
        after = {"resources": [{**entry, "mimeType": new}]}
        ((_, _, rule),) = judged(before, after)
        return rule

    assert mime(None, "text/markdown") == "RESOURCE_MIME_TYPE_DECLARED"
    assert mime("text/markdown", None) == "RESOURCE_MIME_TYPE_CHANGED"
    assert mime("text/markdown", "text/plain") == "RESOURCE_MIME_TYPE_CHANGED"


def test_nulls_are_absent_and_order_is_not_compared() -> None:
    before, after = base(), base()
    after["resourceTemplates"].reverse()
    after["resources"][0]["icons"] = None
    assert judged(before, after) == []


def test_mcp_resources_are_compared_only_when_both_sides_can_tell() -> None:
    def side(mcp: dict[str, Any] | None) -> ServerWire:
        return ServerWire("surface", [], "test", mcp_resources=mcp)

    empty = {"resources": [], "resourceTemplates": []}
    assert review_pair(side(base()), side(None)).findings == ()
    rules = [f.rule_id for f in review_pair(side(base()), side(empty)).findings]
    assert rules == ["RESOURCE_URI_REMOVED", "RESOURCE_TEMPLATE_REMOVED", "RESOURCE_TEMPLATE_REMOVED"]


def test_records_and_mcp_resources_of_a_generated_folder_stay_apart(tmp_path: Path) -> None:
    """Records are in collections.json, MCP resources in resources.json; a folder generated
    before issue 31 kept records in resources.json (with a `format`): they are read as records,
    and the folder offers no MCP resources."""
    folder = RULES / "COLLECTION_FIELD_REMOVED/before/rules"
    wire = load_side(str(folder), ROOT).servers["rules"]
    assert wire.resources and wire.mcp_resources == {"resources": [], "resourceTemplates": []}
    assert wire.prompts == []
    legacy = tmp_path / "rules"
    legacy.mkdir()
    shutil.copy(folder / "tools.json", legacy / "tools.json")
    shutil.copy(folder / "collections.json", legacy / "resources.json")
    old = load_side(str(legacy), ROOT).servers["rules"]
    assert old.resources == wire.resources and old.mcp_resources == wire.mcp_resources
    surface = load_side(str(FIXTURE), ROOT).servers["surface"]
    assert surface.resources == [] and surface.mcp_resources == base()


def test_every_mcp_resource_rule_fixture_holds_one_finding() -> None:
    folders = [
        *RULES.glob("RESOURCE_URI_*"),
        *RULES.glob("RESOURCE_TEMPLATE_*"),
        *RULES.glob("RESOURCE_MIME_*"),
    ]
    assert len(folders) == 18
    for folder in sorted(folders):
        before = load_side(str(folder / "before/surface"), ROOT).servers["surface"]
        after = load_side(str(folder / "after/surface"), ROOT).servers["surface"]
        assert [f.rule_id for f in review_pair(before, after).findings] == [folder.name]


def test_a_static_resource_a_new_template_still_matches_is_removed_with_a_hint() -> None:
    before = {"resources": [{"uri": "docs://guide", "name": "guide"}], "resourceTemplates": []}
    after = {"resources": [], "resourceTemplates": [{"name": "docs", "uriTemplate": "docs://{page}"}]}

    def side(mcp: dict[str, Any]) -> ServerWire:
        return ServerWire("surface", [], "test", mcp_resources=mcp)

    removed, added = review_pair(side(before), side(after)).findings
    assert (removed.rule_id, added.rule_id) == ("RESOURCE_URI_REMOVED", "RESOURCE_TEMPLATE_ADDED")
    assert removed.hint == "template 'docs' matches its URI: reads may still work, but it is no longer listed"


def test_no_prompt_or_mcp_resource_rule_reuses_a_records_rule_id() -> None:
    """An acknowledgement or a suppression names a rule: a reused ID would change what an old
    one allows. The records' rules (diff and spec) keep theirs until they become COLLECTION_*."""
    from lynxc.compiler.rules import _COLLECTION_DIFF_RULES, _SURFACE_DIFF_RULES, _SURFACE_LINT_RULES, RULES

    records = {rule for rule, *_ in _COLLECTION_DIFF_RULES} | {
        rule for rule, entry in RULES.items() if entry.category in ("resource", "collection")
    }
    surface = {rule for rule, *_ in _SURFACE_DIFF_RULES} | {rule for rule, *_ in _SURFACE_LINT_RULES}
    assert len(surface) == 42 and not surface & records

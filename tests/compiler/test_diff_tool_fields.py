"""Every field of the tool object is compared and judged: icons, execution, _meta (MCP Apps UI and
visibility), annotations.title and fields lynxc does not know (review/tool_fields.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lynxc.compiler.review.diff import KNOWN_FIELDS, MATCH_KEY, SECTIONS, diff_tools
from lynxc.compiler.review.judge import Finding, judge
from lynxc.compiler.rules import RULES
from tests.conftest import LYNXC

PNG = "data:image/png;base64," + "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk" * 40
UI = "ui://t/view.html"


def tool(**fields: Any) -> dict[str, Any]:
    return {"name": "t", "inputSchema": {"type": "object"}, **fields}


def findings(old: dict[str, Any], new: dict[str, Any]) -> list[Finding]:
    return [judge(change, old, new) for change in diff_tools([old], [new])]


def verdict(old: dict[str, Any], new: dict[str, Any]) -> Finding:
    (finding,) = findings(old, new)
    return finding


def ui(**keys: Any) -> dict[str, Any]:
    return {"_meta": {"ui": keys}}


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        # MCP Apps visibility: absent or empty means model and app.
        (
            ui(resourceUri=UI, visibility=["model", "app"]),
            ui(resourceUri=UI, visibility=["app"]),
            "TOOL_HIDDEN_FROM_MODEL",
        ),
        (ui(resourceUri=UI), ui(resourceUri=UI, visibility=["app"]), "TOOL_HIDDEN_FROM_MODEL"),
        (ui(visibility=[]), ui(visibility=["app"]), "TOOL_HIDDEN_FROM_MODEL"),
        ({}, ui(resourceUri=UI, visibility=["app"]), "TOOL_HIDDEN_FROM_MODEL"),  # worst of two
        (ui(visibility=["app"]), ui(visibility=["app", "model"]), "TOOL_SHOWN_TO_MODEL"),
        (ui(visibility=["app"]), {}, "TOOL_SHOWN_TO_MODEL"),
        (ui(visibility=["model", "app"]), ui(visibility=["model"]), "TOOL_VISIBILITY_CHANGED"),
        (ui(visibility=["model", "app"]), ui(visibility=["app", "model"]), "META_CHANGED"),
        # MCP Apps UI resource, in the current form and the older `ui/resourceUri` one.
        ({}, ui(resourceUri=UI), "TOOL_UI_ADDED"),
        ({}, {"_meta": {"ui/resourceUri": UI}}, "TOOL_UI_ADDED"),
        (ui(resourceUri=UI), ui(), "TOOL_UI_REMOVED"),
        (ui(resourceUri=UI), ui(resourceUri="ui://t/other.html"), "TOOL_UI_CHANGED"),
        ({"_meta": {"io.example/cost": 1}}, {"_meta": {"io.example/cost": 2}}, "META_CHANGED"),
        ({"_meta": None}, {"_meta": {"io.example/cost": 2}}, "META_CHANGED"),
        # execution.taskSupport: absent means forbidden.
        (
            {"execution": {"taskSupport": "forbidden"}},
            {"execution": {"taskSupport": "required"}},
            "TASK_SUPPORT_NARROWED",
        ),
        ({}, {"execution": {"taskSupport": "required"}}, "TASK_SUPPORT_NARROWED"),
        (
            {"execution": {"taskSupport": "optional"}},
            {"execution": {"taskSupport": "required"}},
            "TASK_SUPPORT_NARROWED",
        ),
        ({"execution": {"taskSupport": "optional"}}, {}, "TASK_SUPPORT_NARROWED"),
        (
            {"execution": {"taskSupport": "required"}},
            {"execution": {"taskSupport": "forbidden"}},
            "TASK_SUPPORT_NARROWED",
        ),
        (
            {"execution": {"taskSupport": "required"}},
            {"execution": {"taskSupport": "optional"}},
            "TASK_SUPPORT_WIDENED",
        ),
        ({}, {"execution": {"taskSupport": "optional"}}, "TASK_SUPPORT_WIDENED"),
        ({}, {"execution": {"taskSupport": "forbidden"}}, "EXECUTION_CHANGED"),
        ({"execution": None}, {"execution": {"taskSupport": "forbidden"}}, "EXECUTION_CHANGED"),
        (
            {"execution": {"taskSupport": "forbidden"}},
            {"execution": {"taskSupport": "sometimes"}},
            "TOOL_FIELD_UNKNOWN",
        ),
        ({}, {"execution": {"requirements": ["auth:oauth2"]}}, "TOOL_FIELD_UNKNOWN"),
        # Display only.
        ({}, {"icons": [{"src": "https://example.com/t.png"}]}, "ICONS_CHANGED"),
        ({}, {"annotations": {"title": "Echo"}}, "TITLE_CHANGED"),  # annotations as a whole
        ({}, {"annotations": {"readOnlyHint": False}}, "ANNOTATION_CHANGED"),  # a default written out
        (
            {"annotations": {"title": "Echo"}},
            {"annotations": {"title": "Echo", "openWorldHint": True}},
            "ANNOTATION_CHANGED",
        ),
        ({"annotations": {"title": "Echo"}}, {"annotations": {"title": "Echo back"}}, "TITLE_CHANGED"),
        # Outside every MCP revision lynxc knows.
        ({}, {"pricing": {"perCall": "0.01"}}, "TOOL_FIELD_UNKNOWN"),
        ({"x-internal": True}, {}, "TOOL_FIELD_UNKNOWN"),
        (
            {"annotations": {"title": "E"}},
            {"annotations": {"title": "E", "costHint": "high"}},
            "TOOL_FIELD_UNKNOWN",
        ),
    ],
)
def test_verdicts(old: dict[str, Any], new: dict[str, Any], rule: str) -> None:
    assert verdict(tool(**old), tool(**new)).rule_id == rule


def test_hiding_a_tool_from_the_model_says_why_and_fails_the_default_gate(tmp_path: Path) -> None:
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(json.dumps({"tools": [tool(**ui(resourceUri=UI, visibility=["model", "app"]))]}))
    after.write_text(json.dumps({"tools": [tool(**ui(resourceUri=UI, visibility=["app"]))]}))
    run = subprocess.run(
        [LYNXC, "diff", str(before), str(after), "--format", "json"], capture_output=True, text=True
    )
    assert run.returncode == 1, run.stderr
    (finding,) = json.loads(run.stdout)["servers"][0]["findings"]
    assert finding["rule"] == "TOOL_HIDDEN_FROM_MODEL" and finding["level"] == "breaking"
    assert finding["path"] == "Meta / ui / visibility"
    assert (
        finding["message"]
        == 'visibility ["model", "app"] -> ["app"]: the model no longer sees or calls the tool'
    )


def test_meta_added_with_two_keys_is_two_findings_each_named() -> None:
    found = findings(tool(), tool(_meta={"ui": {"resourceUri": UI}, "com.example/tier": "pro"}))
    assert [(f.change.path_text, f.rule_id) for f in found] == [
        ("Meta / com.example/tier", "META_CHANGED"),
        ("Meta / ui", "TOOL_UI_ADDED"),
    ]
    assert found[0].message == "_meta key com.example/tier added"


def test_moving_the_ui_key_to_its_current_form_is_one_change_of_ui() -> None:
    old, new = tool(_meta={"ui/resourceUri": UI}), tool(**ui(resourceUri=UI))
    found = findings(old, new)
    assert {f.rule_id for f in found} == {"META_CHANGED"}
    assert [f.message for f in found] == [
        "_meta key ui added; the tool's MCP Apps UI and visibility are the same",
        "_meta key ui/resourceUri removed; the tool's UI is now given, and judged, as ui / resourceUri",
    ]


def test_icons_that_lose_their_sizes_say_so_without_their_bytes() -> None:
    old = tool(icons=[{"src": PNG, "mimeType": "image/png", "sizes": ["48x48", "96x96"]}])
    new = tool(icons=[{"src": PNG, "mimeType": "image/png"}])
    finding = verdict(old, new)
    assert finding.rule_id == "ICONS_CHANGED" and finding.level == "info"
    assert finding.message == "icon image/png (data URI, 1.8 KB) 48x48 96x96: lost sizes 48x48 96x96"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (None, [{"src": PNG}], "added icon image/png (data URI, 1.8 KB)"),
        (
            [{"src": "https://example.com/a.svg", "theme": "light"}],
            None,
            "removed icon https://example.com/a.svg light",
        ),
        (
            [{"src": "https://example.com/a.svg", "theme": "light"}],
            [{"src": "https://example.com/a.svg", "theme": "dark"}],
            'icon https://example.com/a.svg light: theme "light" -> "dark"',
        ),
        (
            [{"src": "https://example.com/a.png", "mimeType": "image/png"}],
            [{"src": "https://example.com/b.png", "mimeType": "image/png"}],
            "icon image/png https://example.com/a.png replaced by icon image/png https://example.com/b.png",
        ),
        (
            [{"src": "https://e.com/a"}, {"src": "https://e.com/b"}],
            [{"src": "https://e.com/b"}, {"src": "https://e.com/a"}],
            "icons reordered",
        ),
        (
            [{"src": "https://e.com/a"}],
            {"src": "https://e.com/a"},
            "icons changed (not a list of icons on one side)",
        ),
        ([{"src": "https://e.com/" + "x" * 200}], None, "removed icon https://e.com/" + "x" * 65 + "…"),
    ],
)
def test_icon_messages(old: Any, new: Any, message: str) -> None:
    fields = [{} if side is None else {"icons": side} for side in (old, new)]
    finding = verdict(tool(**fields[0]), tool(**fields[1]))
    assert (finding.rule_id, finding.message) == ("ICONS_CHANGED", message)
    assert "base64" not in finding.message and "iVBOR" not in finding.message


def test_task_support_messages_say_which_calls_fail() -> None:
    narrowed = verdict(
        tool(execution={"taskSupport": "optional"}), tool(execution={"taskSupport": "forbidden"})
    )
    assert narrowed.message == 'taskSupport "optional" -> "forbidden": a task now fails'
    required = verdict(tool(), tool(execution={"taskSupport": "required"}))
    assert required.message == 'taskSupport "forbidden" -> "required": a plain call now fails'
    odd = verdict(tool(), tool(execution={"taskSupport": "sometimes"}))
    assert (
        odd.message
        == 'taskSupport "forbidden" -> "sometimes": MCP knows only forbidden, optional, required; review it'
    )


def test_annotation_title_is_a_display_name() -> None:
    finding = verdict(
        tool(title="Echo", annotations={"title": "E"}), tool(title="Echo", annotations={"title": "F"})
    )
    assert finding.rule_id == "TITLE_CHANGED" and finding.level == "info"
    assert (
        finding.message
        == 'display title annotations.title "E" -> "F" (shown only where the tool has no title)'
    )


def test_the_name_is_the_match_key_not_a_change() -> None:
    found = findings(tool(), {**tool(), MATCH_KEY: "u"})
    assert sorted(f.rule_id for f in found) == ["TOOL_ADDED", "TOOL_REMOVED"]


# One changed value per field of the tool object. A field added to SECTIONS must be added here,
# and its change must then be judged by a rule of its own.
CHANGED: dict[str, tuple[Any, Any]] = {
    "title": ("Echo", "Echo back"),
    "description": ("Echo.", "Echo the arguments."),
    "annotations": ({"readOnlyHint": True}, {"readOnlyHint": False}),
    "inputSchema": ({"type": "object", "maxProperties": 3}, {"type": "object", "maxProperties": 4}),
    "outputSchema": ({"type": "object"}, {"type": "object", "required": ["a"]}),
    "icons": (
        [{"src": "https://example.com/a.png", "sizes": ["48x48"]}],
        [{"src": "https://example.com/a.png"}],
    ),
    "execution": ({"taskSupport": "forbidden"}, {"taskSupport": "optional"}),
    "_meta": ({"ui": {"visibility": ["model", "app"]}}, {"ui": {"visibility": ["app"]}}),
    "x-vendor": ({"a": 1}, {"a": 2}),  # a field no MCP revision defines
}


def test_every_field_of_the_tool_object_is_compared_and_judged() -> None:
    assert set(CHANGED) - {"x-vendor"} == KNOWN_FIELDS - {MATCH_KEY}, "give each known field a change here"
    full = {"name": "t", **{field: before for field, (before, _) in CHANGED.items()}}
    sections = dict(SECTIONS)
    for field, (_, after) in CHANGED.items():
        (finding,) = findings(full, {**full, field: after})
        assert finding.change.path[0] == sections.get(field, f"Unknown field {field}")
        assert finding.rule_id in RULES and RULES[finding.rule_id].category == "diff"
        assert finding.message


def test_hostile_fields_give_bounded_messages() -> None:
    many = [{"src": f"https://example.com/{n}.png", "sizes": [f"{n}x{n}"] * 500} for n in range(10_000)]
    long_key = "k" * 100_000
    old = tool(icons=many[:5_000], _meta={long_key: 1, "ui": {"resourceUri": long_key}}, **{long_key: 1})
    new = tool(
        icons=many[5_000:],
        _meta={long_key: 2, "ui": {"resourceUri": long_key + "2"}},
        execution={"taskSupport": {"not": "a string"}},
        **{long_key: 2},
    )
    found = findings(old, new)
    assert sorted(f.rule_id for f in found) == [
        "ICONS_CHANGED",
        "META_CHANGED",
        "TOOL_FIELD_UNKNOWN",
        "TOOL_FIELD_UNKNOWN",
        "TOOL_UI_CHANGED",
    ]
    assert all(len(f.message) < 2_000 for f in found)
    assert "and 4994 more" in next(f.message for f in found if f.rule_id == "ICONS_CHANGED")

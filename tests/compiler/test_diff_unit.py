"""Structural diff and judge details that goldens would not make obvious."""

from __future__ import annotations

from lynxc.compiler.diff import diff_tools
from lynxc.compiler.judge import judge


def tool(schema: dict, output: dict | None = None) -> dict:
    out = {"name": "t", "inputSchema": {"type": "object", "properties": schema}}
    if output is not None:
        out["outputSchema"] = output
    return out


def test_json_true_is_not_one() -> None:
    old, new = tool({"x": {"default": True}}), tool({"x": {"default": 1}})
    changes = diff_tools([old], [new])
    assert [(c.path_text, c.before, c.after) for c in changes] == [
        ("Input schema / properties / x / default", True, 1)
    ]


def test_a_property_named_description_is_a_property() -> None:
    output = {"type": "object", "properties": {"description": {"type": "string"}}}
    old, new = tool({}, output), tool({}, {"type": "object", "properties": {}})
    (change,) = diff_tools([old], [new])
    assert change.path_text == "Output schema / properties / description"
    assert judge(change, old, new).rule_id == "OUTPUT_PROPERTY_REMOVED"


def test_nested_required_property_added_to_an_object_parameter() -> None:
    old = tool({"filter": {"type": "object", "properties": {"a": {"type": "string"}}}})
    new = tool(
        {
            "filter": {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                "required": ["b"],
            }
        }
    )
    rules = {c.path_text: judge(c, old, new).rule_id for c in diff_tools([old], [new])}
    assert rules == {
        "Input schema / properties / filter / properties / b": "PARAM_ADDED_REQUIRED",
        "Input schema / properties / filter / required": "REQUIRED_CHANGED",
    }
    messages = [judge(c, old, new).message for c in diff_tools([old], [new])]
    assert "parameter 'filter.b' added as required" in messages


def test_default_inside_an_object_default_is_judged_as_default() -> None:
    old, new = (
        tool({"o": {"type": "object", "default": {"a": 1}}}),
        tool({"o": {"type": "object", "default": {"a": 2}}}),
    )
    (change,) = diff_tools([old], [new])
    assert change.path_text == "Input schema / properties / o / default / a"
    assert judge(change, old, new).rule_id == "DEFAULT_CHANGED"

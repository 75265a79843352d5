"""Structural diff and judge details that goldens would not make obvious."""

from __future__ import annotations

import json
from pathlib import Path

from lynxc.compiler.review.compare import review_pair
from lynxc.compiler.review.diff import diff_tools
from lynxc.compiler.review.judge import judge
from lynxc.compiler.review.render import render_github, render_json, render_markdown, render_text
from lynxc.compiler.wire import ServerWire
from tests.compiler.test_diff_versions import PAIRS


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


# --- issue 11: combinators and their neighbours ---------------------------------------------


def judged(old: dict, new: dict) -> dict[str, tuple[str, str]]:
    """path -> (rule, message) for every change between two tools."""
    old, new = {"name": "t", **old}, {"name": "t", **new}
    findings = (judge(c, old, new) for c in diff_tools([old], [new]))
    return {f.change.path_text: (f.rule_id, f.message) for f in findings}


POST = {"type": "object", "properties": {"body": {"type": "string"}, "reaction": {"type": "string"}}}
ONE_OF_THEM = [{"required": ["body"]}, {"required": ["reaction"]}]


def test_required_alternatives_added_to_an_input_narrow_it() -> None:
    added = judged({"inputSchema": POST}, {"inputSchema": {**POST, "anyOf": ONE_OF_THEM}})
    assert added == {
        "Input schema / anyOf": (
            "PARAM_BECAME_REQUIRED",
            "input now requires one of body | reaction: a call sending none of them is rejected",
        )
    }
    removed = judged({"inputSchema": {**POST, "anyOf": ONE_OF_THEM}}, {"inputSchema": POST})
    assert removed["Input schema / anyOf"][0] == "PARAM_BECAME_OPTIONAL"
    exclusive = judged(
        {"inputSchema": {**POST, "anyOf": ONE_OF_THEM}}, {"inputSchema": {**POST, "oneOf": ONE_OF_THEM}}
    )
    assert exclusive["Input schema / oneOf"] == (
        "PARAM_BECAME_REQUIRED",
        "input now requires exactly one of body | reaction: a call sending body and reaction is rejected",
    )
    assert exclusive["Input schema / anyOf"][0] == "PARAM_BECAME_REQUIRED"


def test_required_alternatives_relaxing_a_required_parameter_widen_the_input() -> None:
    old = {"inputSchema": {**POST, "required": ["body"]}}
    new = {"inputSchema": {**POST, "anyOf": ONE_OF_THEM}}
    assert {rule for rule, _ in judged(old, new).values()} == {"PARAM_BECAME_OPTIONAL"}


def test_required_alternatives_in_an_output_are_guarantees() -> None:
    added = judged({"outputSchema": POST}, {"outputSchema": {**POST, "anyOf": ONE_OF_THEM}})
    assert added["Output schema / anyOf"][0] == "OUTPUT_REQUIRED_ADDED"
    removed = judged({"outputSchema": {**POST, "anyOf": ONE_OF_THEM}}, {"outputSchema": POST})
    assert removed["Output schema / anyOf"][0] == "OUTPUT_REQUIRED_REMOVED"


def object_param(inner: dict) -> dict:
    return {"inputSchema": {"type": "object", "properties": {"o": {"type": "object", **inner}}}}


def test_removing_properties_from_an_open_object_rejects_nothing() -> None:
    empty = judged(object_param({"properties": {}}), object_param({}))
    assert empty == {
        "Input schema / properties / o / properties": (
            "SCHEMA_RESTRUCTURED",
            "parameter 'o': an empty 'properties' was removed; nothing changes",
        )
    }
    declared = judged(object_param({"properties": {"a": {"type": "string"}}}), object_param({}))
    assert declared["Input schema / properties / o / properties"] == (
        "PROPERTIES_UNDECLARED",
        "parameter 'o': a no longer declared but still accepted (additionalProperties allows it)",
    )
    closed = judged(
        object_param({"properties": {"a": {"type": "string"}}, "additionalProperties": False}),
        object_param({"additionalProperties": False}),
    )
    assert closed["Input schema / properties / o / properties"][0] == "PARAM_REMOVED"
    assert "parameter 'a' removed" in closed["Input schema / properties / o / properties"][1]


def union(first: dict, second: dict, kind: str = "oneOf") -> dict:
    return {"type": "object", "properties": {"x": {kind: [first, second]}}}


def test_a_change_inside_one_member_is_judged_like_the_same_change_outside() -> None:
    before = union({"type": "string", "enum": ["a", "b"]}, {"type": "integer"})
    after = union({"type": "string", "enum": ["a", "c"]}, {"type": "integer"})
    inside = judged({"inputSchema": before}, {"inputSchema": after})
    assert inside == {
        "Input schema / properties / x / oneOf": (
            "ENUM_VALUE_REMOVED",
            'parameter \'x\' (oneOf[0]) no longer accepts "b"; now accepts "a", "c"',
        )
    }
    outside = judged(
        {"inputSchema": {"type": "object", "properties": {"x": {"type": "string", "enum": ["a", "b"]}}}},
        {"inputSchema": {"type": "object", "properties": {"x": {"type": "string", "enum": ["a", "c"]}}}},
    )
    assert (
        outside["Input schema / properties / x / enum"][0]
        == inside["Input schema / properties / x / oneOf"][0]
    )
    # An output's member follows the output's direction: a new value may reach consumers.
    assert judged({"outputSchema": before}, {"outputSchema": after})[
        "Output schema / properties / x / oneOf"
    ][0] == ("OUTPUT_ENUM_VALUE_ADDED")


def test_members_are_paired_by_their_discriminator_whatever_their_order() -> None:
    circle = {"type": "object", "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}}}
    square = {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}}}
    square_capped = {
        **square,
        "properties": {**square["properties"], "side": {"type": "number", "maximum": 9}},
    }
    found = judged({"inputSchema": union(circle, square)}, {"inputSchema": union(square_capped, circle)})
    assert found["Input schema / properties / x / oneOf"] == (
        "MAXIMUM_DECREASED",
        "parameter 'x.side' (oneOf[0]) accepts less: maximum (none) -> 9",
    )


def test_unprovable_member_changes_still_ask_for_review() -> None:
    # One string member becomes two: neither accepts every string starting with "a", yet
    # together they accept every string. No single pairing proves a break, so a reviewer looks.
    strings = [{"type": "string", "maxLength": 3}, {"type": "string", "minLength": 4}, {"type": "integer"}]
    before = {
        "type": "object",
        "properties": {"x": {"anyOf": [{"type": "string", "pattern": "^a"}, {"type": "integer"}]}},
    }
    after = {"type": "object", "properties": {"x": {"anyOf": strings}}}
    rule, message = judged({"inputSchema": before}, {"inputSchema": after})[
        "Input schema / properties / x / anyOf"
    ]
    assert rule == "SCHEMA_CHANGED"
    assert message.startswith(
        "parameter 'x': no single member accepts everything the former anyOf[0] did; review it"
    )


def test_null_and_missing_input_schemas_are_the_same() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    to_null = judged({"inputSchema": schema}, {"inputSchema": None})
    to_missing = judged({"inputSchema": schema}, {})
    assert (
        to_null
        == to_missing
        == {
            "Input schema / (root)": (
                "INPUT_SCHEMA_REPLACED",
                "the input schema became null, which is not a valid input schema in MCP "
                "(it must be an object schema): clients may refuse to list or call the tool",
            )
        }
    )
    assert judged({"inputSchema": None}, {}) == {}
    assert judged({"outputSchema": schema}, {"outputSchema": None}) == judged({"outputSchema": schema}, {})


def test_a_rename_is_one_breaking_removal_with_a_hint() -> None:
    old = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "string", "description": "A."}},
            "required": ["a"],
        },
    }
    new = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "properties": {"b": {"type": "string", "description": "B."}},
            "required": ["b"],
        },
    }
    findings = {c.path_text: judge(c, old, new) for c in diff_tools([old], [new])}
    removed = findings["Input schema / properties / a"]
    assert (removed.rule_id, removed.hint) == ("PARAM_REMOVED", "probably renamed to 'b' (same schema)")
    assert findings["Input schema / properties / b"].hint is None
    assert findings["Input schema / required"].rule_id == "REQUIRED_CHANGED"
    assert not any("now optional" in finding.message for finding in findings.values())


def test_string_to_nullable_non_empty_string_loses_the_empty_string() -> None:
    found = judged(
        {"inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}},
        {
            "inputSchema": {
                "type": "object",
                "properties": {"x": {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}},
            }
        },
    )
    assert found["Input schema / properties / x / anyOf"] == (
        "MIN_LENGTH_INCREASED",
        "parameter 'x' (anyOf[0]) accepts less: minLength (none) -> 1; parameter 'x': text → text or null",
    )
    assert found["Input schema / properties / x / type"][0] == "PARAM_TYPE_WIDENED"


def test_markdown_leaves_out_unchanged_servers() -> None:
    old = {"name": "t", "description": "Old."}
    new = {"name": "t", "description": "New."}
    changed = review_pair(ServerWire("shop", [old], "a"), ServerWire("shop", [new], "b"))
    unchanged = review_pair(ServerWire("quiet", [old], "a"), ServerWire("quiet", [old], "b"))
    markdown = render_markdown([changed, unchanged])
    assert "`shop`" in markdown and "quiet" not in markdown and "no changes" not in markdown
    assert render_markdown([unchanged]) == "No schema changes.\n"


def test_text_json_and_github_show_the_rename_hint() -> None:
    old = {"name": "t", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}}
    new = {"name": "t", "inputSchema": {"type": "object", "properties": {"b": {"type": "string"}}}}
    reviews = [review_pair(ServerWire("shop", [old], "a"), ServerWire("shop", [new], "b"))]
    assert "             hint: probably renamed to 'b' (same schema)\n" in render_text(reviews)
    assert "(hint: probably renamed to 'b' (same schema))" in render_markdown(reviews)
    assert '"hint": "probably renamed to \'b\' (same schema)"' in render_json(reviews)
    assert "probably renamed to 'b'" in render_github(reviews)


def test_a_constraint_moved_into_the_members_is_not_judged_as_dropped() -> None:
    # Made nullable: maxLength and enum moved into the string member with `type`; they still hold.
    plain = {"type": "string", "maxLength": 50, "enum": ["a", "b"]}
    nullable = {"anyOf": [plain, {"type": "null"}]}
    found = judged(
        {"inputSchema": {"type": "object", "properties": {"x": plain}}},
        {"inputSchema": {"type": "object", "properties": {"x": nullable}}},
    )
    base = "Input schema / properties / x"
    assert found[f"{base} / maxLength"] == (
        "SCHEMA_RESTRUCTURED",
        "parameter 'x': 'maxLength' moved into the anyOf members it applies to (see 'anyOf')",
    )
    assert found[f"{base} / enum"][0] == "SCHEMA_RESTRUCTURED"
    assert found[f"{base} / anyOf"] == (
        "PARAM_TYPE_WIDENED",
        "parameter 'x': one of a, b → one of a, b or null",
    )
    # Out of a single member again: nothing a caller sends is rejected.
    single = judged(
        {"inputSchema": {"type": "object", "properties": {"x": {"anyOf": [plain]}}}},
        {"inputSchema": {"type": "object", "properties": {"x": plain}}},
    )
    assert {rule for rule, _ in single.values()} == {"SCHEMA_RESTRUCTURED"}


def test_a_boolean_member_is_a_schema_too() -> None:
    # `true` admits anything: dropping the union leaves a node that admits anything as well.
    anything = {"anyOf": [True, {"type": "string"}]}
    found = judged(
        {"inputSchema": {"type": "object", "properties": {"x": anything}}},
        {"inputSchema": {"type": "object", "properties": {"x": {}}}},
    )
    assert found["Input schema / properties / x / anyOf"] == (
        "SCHEMA_RESTRUCTURED",
        "parameter 'x': the former anyOf[1] dropped; the new schema accepts all it did",
    )


def test_a_huge_group_of_required_alternatives_is_left_to_review() -> None:
    """Judging required groups is cubic in their members: beyond a bound the judge says so at
    once instead of running for minutes on a hostile tools/list."""
    members = [{"required": [f"p{i}"]} for i in range(400)]
    props = {f"p{i}": {"type": "string"} for i in range(400)}
    old = {"name": "t", "inputSchema": {"type": "object", "properties": props, "anyOf": members}}
    new = {"name": "t", "inputSchema": {"type": "object", "properties": props, "anyOf": members[1:]}}
    (change,) = diff_tools([old], [new])
    finding = judge(change, old, new)
    assert finding.rule_id == "SCHEMA_CHANGED" and "too many to judge" in finding.message


def test_a_sql_column_from_decimal_to_double_is_one_clause() -> None:
    """DECIMAL(18,3) published as decimal text, then DOUBLE as a number (with its non-finite text):
    one finding whose message says the change whole, not the member-by-member differences."""
    from lynxc.runtime.backends.sql.types import json_schema

    decimal = json_schema({"id": "decimal", "precision": 18, "scale": 3}, nullable=True)
    double = json_schema({"id": "double"}, nullable=True)
    found = judged(
        {"outputSchema": {"type": "object", "properties": {"price": decimal}}},
        {"outputSchema": {"type": "object", "properties": {"price": double}}},
    )
    assert found == {
        "Output schema / properties / price / anyOf": (
            "OUTPUT_TYPE_WIDENED",
            "output field 'price': decimal text or null → number or null",
        )
    }


# --- issue 25: verdicts on a real history ------------------------------------------------------


def reviewed(old: dict, new: dict) -> dict[str, tuple[str, str]]:
    """path -> (rule, message) of the findings a review keeps (one per change)."""
    old, new = {"name": "t", **old}, {"name": "t", **new}
    findings = review_pair(ServerWire("s", [old], "a"), ServerWire("s", [new], "b")).findings
    return {f.change.path_text: (f.rule_id, f.message) for f in findings}


def test_a_null_input_schema_becoming_an_object_is_a_repair() -> None:
    params = {"type": "object", "properties": {"owner": {"type": "string"}}}
    repaired = judged({"inputSchema": None}, {"inputSchema": params})
    assert repaired["Input schema / (root)"][0] == "INPUT_SCHEMA_REPAIRED"
    assert "every call that worked still works" in repaired["Input schema / (root)"][1]
    # A new schema that requires what no call had to send narrows it: not a repair.
    requiring = judged({"inputSchema": None}, {"inputSchema": {**params, "required": ["owner"]}})
    rule, message = requiring["Input schema / (root)"]
    assert rule == "PARAM_ADDED_REQUIRED"
    assert message.startswith("the input schema was null (any arguments); the object schema narrows it")
    # The reverse is breaking, and says why.
    lost = judged({"inputSchema": params}, {"inputSchema": None})["Input schema / (root)"]
    assert lost[0] == "INPUT_SCHEMA_REPLACED"
    assert "not a valid input schema in MCP" in lost[1]
    # `{}` gaining `type: object` narrows nothing (arguments are always an object); gaining a
    # required parameter with it does.
    typed = judged({"inputSchema": {}}, {"inputSchema": {"type": "object"}})
    assert typed == {
        "Input schema / type": (
            "INPUT_SCHEMA_REPAIRED",
            "the input schema now declares type: object, as MCP requires; arguments were always an object",
        )
    }
    narrowed = judged({"inputSchema": {}}, {"inputSchema": {**params, "required": ["owner"]}})
    assert narrowed["Input schema / properties"][0] == "PARAM_ADDED_REQUIRED"


def test_a_default_added_to_a_formerly_required_parameter_is_information() -> None:
    required = {"type": "object", "properties": {"sort": {"type": "string"}}, "required": ["sort"]}
    optional = {"type": "object", "properties": {"sort": {"type": "string", "default": "created"}}}
    found = judged({"inputSchema": required}, {"inputSchema": optional})
    assert found["Input schema / properties / sort / default"][0] == "DEFAULT_ADDED"
    assert found["Input schema / required"][0] == "PARAM_BECAME_OPTIONAL"
    # On a parameter that was optional, callers omitting it relied on the old behaviour.
    was_optional = {"type": "object", "properties": {"sort": {"type": "string"}}}
    found = judged({"inputSchema": was_optional}, {"inputSchema": optional})
    assert found["Input schema / properties / sort / default"][0] == "DEFAULT_CHANGED"


REACTION = {
    "type": "object",
    "properties": {
        "comment_id": {"type": "number"},
        "body": {"type": "string"},
        "reaction": {"type": "string"},
    },
}
WHEN_COMMENT = {"comment_id": {"required": ["reaction"], "not": {"required": ["body"]}}}


def test_dependencies_are_judged_by_direction() -> None:
    added = judged({"inputSchema": REACTION}, {"inputSchema": {**REACTION, "dependentSchemas": WHEN_COMMENT}})
    assert added["Input schema / dependentSchemas"] == (
        "DEPENDENCY_ADDED",
        "input: when 'comment_id' is sent, reaction is now required and body is now forbidden",
    )
    removed = judged(
        {"inputSchema": {**REACTION, "dependentSchemas": WHEN_COMMENT}}, {"inputSchema": REACTION}
    )
    assert removed["Input schema / dependentSchemas"][0] == "DEPENDENCY_REMOVED"
    # One member loosened: only that condition, judged in its direction.
    looser = {"comment_id": {"required": ["reaction"]}}
    found = judged(
        {"inputSchema": {**REACTION, "dependentSchemas": WHEN_COMMENT}},
        {"inputSchema": {**REACTION, "dependentSchemas": looser}},
    )
    assert found["Input schema / dependentSchemas / comment_id / not"] == (
        "DEPENDENCY_REMOVED",
        "input: when 'comment_id' is sent, body is no longer forbidden",
    )
    # dependentRequired and `properties: {x: false}` read the same way; outputs mirror inputs.
    forbidding = {"comment_id": {"required": ["reaction"], "properties": {"body": False}}}
    assert judged(
        {"inputSchema": {**REACTION, "dependentRequired": {"comment_id": ["reaction"]}}},
        {"inputSchema": {**REACTION, "dependentSchemas": forbidding}},
    ) == {
        "Input schema / dependentRequired": (
            "DEPENDENCY_REMOVED",
            "input: when 'comment_id' is sent, reaction is no longer required",
        ),
        "Input schema / dependentSchemas": (
            "DEPENDENCY_ADDED",
            "input: when 'comment_id' is sent, reaction is now required and body is now forbidden",
        ),
    }
    output = judged(
        {"outputSchema": {**REACTION, "dependentSchemas": WHEN_COMMENT}}, {"outputSchema": REACTION}
    )
    assert output["Output schema / dependentSchemas"][0] == "OUTPUT_DEPENDENCY_REMOVED"


REVIEW = {"type": "object", "description": "The review to submit."}
APPROVE = {
    "type": "object",
    "properties": {"event": {"const": "APPROVE"}},
    "required": ["event"],
    "additionalProperties": False,
}
COMMENT = {
    "type": "object",
    "properties": {"event": {"const": "COMMENT"}, "body": {"type": "string"}},
    "required": ["event", "body"],
    "additionalProperties": False,
}


def test_an_open_object_split_into_closed_shapes_got_narrower() -> None:
    split = {**REVIEW, "oneOf": [APPROVE, COMMENT]}
    found = judged(object_param(REVIEW), object_param(split))
    assert found["Input schema / properties / o / oneOf"] == (
        "PARAM_ALTERNATIVE_REMOVED",
        "parameter 'o' got narrower: it now accepts only oneOf[0] or oneOf[1] (it accepted any object); "
        "an empty object is rejected",
    )
    # Merged back, it accepts more: information. In an output, the same moves weigh the other way.
    merged = judged(object_param(split), object_param(REVIEW))
    assert merged["Input schema / properties / o / oneOf"][0] == "PARAM_ALTERNATIVE_ADDED"

    def output(schema: dict) -> dict:
        return {"outputSchema": {"type": "object", "properties": {"o": schema}}}

    narrower = judged(output(REVIEW), output(split))["Output schema / properties / o / oneOf"]
    assert narrower == (
        "OUTPUT_ALTERNATIVE_REMOVED",
        "output field 'o' got narrower: it now returns only oneOf[0] or oneOf[1]",
    )
    wider = judged(output(split), output(REVIEW))["Output schema / properties / o / oneOf"]
    assert wider[0] == "OUTPUT_ALTERNATIVE_ADDED"
    assert "an empty object may come back" in wider[1]
    # Members that each accept less, with no value shown to be lost by all (they may together
    # cover it), are left to a reviewer, and never read as a widening.
    open_parts = {
        **REVIEW,
        "anyOf": [
            {"type": "object", "propertyNames": {"pattern": "^a"}},
            {"type": "object", "propertyNames": {"pattern": "^b"}},
        ],
    }
    unproven = judged(object_param(REVIEW), object_param(open_parts))
    rule, message = unproven["Input schema / properties / o / anyOf"]
    assert rule == "SCHEMA_CHANGED" and "also accepts" not in message


def test_a_removed_parameter_says_what_becomes_of_it() -> None:
    def params(extra: dict, **keys: dict) -> dict:
        return {"inputSchema": {"type": "object", "properties": keys, **extra}}

    cases = {
        "closed": (
            {"additionalProperties": False},
            "callers still sending it are rejected (additionalProperties: false)",
        ),
        "open": ({}, "callers still sending it are no longer refused: the argument is silently ignored"),
        "schema": (
            {"additionalProperties": {"type": "string"}},
            "callers still sending it have it checked against additionalProperties/patternProperties",
        ),
    }
    for extra, said in cases.values():
        found = judged(
            params(extra, q={"type": "string"}, page={"type": "number"}), params(extra, q={"type": "string"})
        )
        assert found["Input schema / properties / page"] == (
            "PARAM_REMOVED",
            f"parameter 'page' removed; {said}",
        )


def test_enum_messages_show_the_new_values() -> None:
    def order(values: list[str], direction: str = "inputSchema") -> dict:
        return {direction: {"type": "object", "properties": {"order": {"type": "string", "enum": values}}}}

    found = judged(order(["asc", "desc"]), order(["ASC", "DESC"]))
    assert found["Input schema / properties / order / enum"] == (
        "ENUM_VALUE_REMOVED",
        'parameter \'order\' no longer accepts "asc", "desc"; values changed case; now accepts "ASC", "DESC"',
    )
    found = judged(order(["asc"], "outputSchema"), order(["asc", "desc"], "outputSchema"))
    assert found["Output schema / properties / order / enum"] == (
        "OUTPUT_ENUM_VALUE_ADDED",
        'output field \'order\' may now return "desc"; now returns one of "asc", "desc"',
    )
    # Inside a combinator too.
    nullable = {
        "type": "object",
        "properties": {"order": {"anyOf": [{"enum": ["asc", "desc"]}, {"type": "null"}]}},
    }
    upper = {
        "type": "object",
        "properties": {"order": {"anyOf": [{"enum": ["ASC", "DESC"]}, {"type": "null"}]}},
    }
    rule, message = judged({"inputSchema": nullable}, {"inputSchema": upper})[
        "Input schema / properties / order / anyOf"
    ]
    assert rule == "ENUM_VALUE_REMOVED"
    assert message.endswith('values changed case; now accepts "ASC", "DESC", null')


def test_one_change_is_one_finding() -> None:
    def x(schema: dict) -> dict:
        return {"inputSchema": {"type": "object", "properties": {"x": schema}}}

    nullable = {"anyOf": [{"type": "string"}, {"type": "null"}]}
    pairs = [
        ({"type": "string"}, nullable, "Input schema / properties / x / anyOf", "PARAM_TYPE_WIDENED"),
        (nullable, {"type": "string"}, "Input schema / properties / x / anyOf", "PARAM_TYPE_NARROWED"),
        (
            {"$ref": "#/$defs/a"},
            {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]},
            "Input schema / properties / x / anyOf",
            "PARAM_TYPE_WIDENED",
        ),
        (
            {"type": "string", "enum": ["a", "b"]},
            {"anyOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}]},
            "Input schema / properties / x / anyOf",
            "ENUM_VALUE_REMOVED",  # "b" went: it weighs more than null arriving
        ),
        (
            {"type": "string"},
            {"type": "array", "items": {"type": "string"}},
            "Input schema / properties / x / type",
            "PARAM_TYPE_CHANGED",
        ),
        (
            {"type": "string", "maxLength": 5},
            {"type": "integer", "maximum": 3},
            "Input schema / properties / x / type",
            "PARAM_TYPE_CHANGED",
        ),
    ]
    type_list = {"type": ["string", "null"]}
    pairs += [
        (type_list, nullable, "Input schema / properties / x / anyOf", "SCHEMA_RESTRUCTURED"),
        (nullable, type_list, "Input schema / properties / x / anyOf", "SCHEMA_RESTRUCTURED"),
        (
            {"type": "string", "enum": ["a", "b"]},
            {"type": ["string", "null"], "enum": ["a", "b", None]},
            "Input schema / properties / x / type",
            "PARAM_TYPE_WIDENED",
        ),
        (
            {"type": "string", "enum": ["a", "b"]},
            {"type": ["string", "null"], "enum": ["a", None]},
            "Input schema / properties / x / type",
            "ENUM_VALUE_REMOVED",
        ),
    ]
    for before, after, path, rule in pairs:
        found = reviewed(x(before), x(after))
        assert list(found) == [path], (before, after, found)
        assert found[path][0] == rule
    # The entries left out are folded into the finding that says them, and still listed in JSON.
    review = review_pair(
        ServerWire("s", [{"name": "t", **x({"type": "string"})}], "a"),
        ServerWire("s", [{"name": "t", **x(nullable)}], "b"),
    )
    (only,) = review.findings
    assert [c.path_text for c in only.folded] == ["Input schema / properties / x / type"]
    assert json.loads(render_json([review]))["servers"][0]["findings"][0]["folded"][0]["op"] == "removed"


def _node(path: str) -> str:
    """The schema node a finding's path is about: its path without the last keyword."""
    return path.rsplit(" / ", 1)[0]


def test_no_two_findings_say_one_change_over_the_reference_servers_history() -> None:
    """Over every version pair of the three reference servers: no two findings of a tool say the
    same thing, and no schema node gets two findings beyond its annotations (a `type` and the
    `anyOf` that replaced it, or `properties` moved into new members, are one change)."""
    annotations = ("description", "title", "examples", "default")
    for old_path, new_path in PAIRS:
        old, new = (json.loads(Path(p).read_text())["tools"] for p in (old_path, new_path))
        findings = review_pair(ServerWire("s", old, "a"), ServerWire("s", new, "b")).findings
        said = [(f.change.tool, f.rule_id, f.message) for f in findings]
        assert len(said) == len(set(said)), (old_path.name, new_path.name)
        nodes = [
            (f.change.tool, _node(f.change.path_text))
            for f in findings
            if len(f.change.path) > 2 and f.change.path[-1] not in annotations
        ]
        doubled = {node for node in nodes if nodes.count(node) > 1}
        assert not doubled, (old_path.name, new_path.name, doubled)


def test_a_split_into_hundreds_of_members_is_said_in_one_bounded_line() -> None:
    members = [
        {
            "type": "object",
            "properties": {"k": {"const": i}},
            "required": ["k"],
            "additionalProperties": False,
        }
        for i in range(500)
    ]
    found = judged(object_param({}), object_param({"oneOf": members}))
    rule, message = found["Input schema / properties / o / oneOf"]
    assert rule == "PARAM_ALTERNATIVE_REMOVED"
    assert message == (
        "parameter 'o' got narrower: it now accepts only oneOf[0] or the 499 members after it, "
        "up to oneOf[499] (it accepted any object); an empty object is rejected"
    )


def test_parameters_declared_at_once_say_which_are_required() -> None:
    """A schema gaining its properties in one release (server-filesystem 2025.8.21 to
    2025.12.18: `read_file` went from no properties to path, head and tail, path required)."""
    old = {"name": "read_file", "inputSchema": {"type": "object"}}
    new = {
        "name": "read_file",
        "inputSchema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "head": {"type": "number"},
                "tail": {"type": "number"},
            },
            "required": ["path"],
        },
    }
    found = {judge(c, old, new).message for c in diff_tools([old], [new])}
    assert "parameter 'path' added as required; parameters head, tail added as optional" in found
    both = {**new, "inputSchema": {**new["inputSchema"], "required": ["head", "path", "tail"]}}
    found = {judge(c, old, both).message for c in diff_tools([old], [both])}
    assert "parameters head, path, tail added as required" in found


def test_a_required_list_that_names_the_same_parameters_moves_nothing() -> None:
    """server-filesystem 0.6.2 wrote `required: []` on a tool without parameters; later versions
    dropped it."""
    empty = {"name": "t", "inputSchema": {"type": "object", "properties": {}, "required": []}}
    bare = {"name": "t", "inputSchema": {"type": "object", "properties": {}}}
    (change,) = diff_tools([empty], [bare])
    found = judge(change, empty, bare)
    assert (found.rule_id, found.message) == (
        "REQUIRED_CHANGED",
        "an empty 'required' was removed; nothing changes",
    )
    ab, ba = tool({"a": {}, "b": {}}), tool({"a": {}, "b": {}})
    ab["inputSchema"]["required"], ba["inputSchema"]["required"] = ["a", "b"], ["b", "a"]
    (change,) = diff_tools([ab], [ba])
    assert judge(change, ab, ba).rule_id == "SCHEMA_REORDERED"
    one = tool({})
    one["inputSchema"]["properties"] = {"path": {"type": "string"}}
    found = {judge(c, bare, one).message for c in diff_tools([bare], [one])}
    assert "parameter 'path' added as optional" in found


def _hints(old: list[dict], new: list[dict]) -> dict[str, str | None]:
    review = review_pair(ServerWire("s", old, origin="old"), ServerWire("s", new, origin="new"))
    return {f.change.tool: f.hint for f in review.findings if f.rule_id == "TOOL_REMOVED"}


def test_a_renamed_tool_is_a_removal_with_a_hint() -> None:
    """mcp-server-sqlite 2025.1.14 renamed `read-query` to `read_query`; server-everything
    renamed `add` to `get-sum` and dropped `additionalProperties: false` on the way."""
    numbers = {"a": {"type": "number"}, "b": {"type": "number", "description": "Second"}}
    add = {"name": "add", "inputSchema": {"type": "object", "properties": numbers, "required": ["a", "b"]}}
    get_sum = {"name": "get-sum", "inputSchema": {**add["inputSchema"], "additionalProperties": False}}
    query = {"name": "read-query", "inputSchema": {"type": "object"}}
    hints = _hints([add, query], [get_sum, {**query, "name": "read_query"}])
    assert hints == {
        "add": "probably renamed to 'get-sum' (same parameters)",
        "read-query": "probably renamed to 'read_query' (same name spelt otherwise)",
    }
    # Two tools that fit: no guess. Parameterless tools all look alike: no guess either.
    twin = {**get_sum, "name": "get-total"}
    assert _hints([add], [get_sum, twin]) == {"add": None}
    assert _hints([{**query, "name": "printEnv"}], [{**query, "name": "get-env"}]) == {"printEnv": None}
    # An added tool named by one hint is not offered to another removal.
    spelt = {**add, "name": "Get_Sum"}
    assert _hints([spelt, add], [get_sum]) == {
        "Get_Sum": "probably renamed to 'get-sum' (same name spelt otherwise)",
        "add": None,
    }


def test_additional_properties_messages_say_what_the_object_does_with_extra_keys() -> None:
    closed = {"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": False}
    open_ = {"type": "object", "properties": {"n": {"type": "integer"}}}
    said = {}
    for old, new in ((tool({}, closed), tool({}, open_)), (tool({}, open_), tool({}, closed))):
        (change,) = diff_tools([old], [new])
        found = judge(change, old, new)
        said[found.rule_id, found.message] = found.level
    assert said == {
        (
            "ADDITIONAL_PROPERTIES_CHANGED",
            "output may hold keys it does not declare (additionalProperties false -> (none))",
        ): "info",
        (
            "ADDITIONAL_PROPERTIES_CHANGED",
            "output now holds only the keys it declares (additionalProperties (none) -> false)",
        ): "info",
    }


def test_a_schema_for_extra_keys_is_named_not_printed() -> None:
    big = {"type": "string", "description": "x" * 100_000}
    old, new = tool({}), tool({})
    new["inputSchema"]["additionalProperties"] = big
    (change,) = diff_tools([old], [new])
    assert judge(change, old, new).message == "input checks extra keys against a schema"
    old["inputSchema"]["additionalProperties"] = {"type": "string"}
    (change,) = diff_tools([old], [new])
    found = judge(change, old, new)
    assert len(found.message) < 200, found.message


# --- auth (issue 27) ----------------------------------------------------------------------------


def authed(params: dict, required: list[str], auth: dict | None = None) -> dict:
    """A tool as tools/list publishes it: identity-bound parameters out of its inputSchema, said
    under `_meta` "lynxc/auth" with the scopes it requires."""
    out: dict = {"name": "t", "inputSchema": {"type": "object", "properties": params}}
    if required:
        out["inputSchema"]["required"] = required
    if auth is not None:
        out["_meta"] = {"lynxc/auth": auth}
    return out


EMAIL = {"type": "string", "description": "The customer's email."}
LIMIT = {"type": "integer", "default": 10}
BOUND = {"customer_email": {"claim": "email", "type": "string"}}


def findings_of(old: dict, new: dict, old_auth: dict | None = None, new_auth: dict | None = None) -> list:
    base = ServerWire("s", [old], "a", auth=old_auth)
    head = ServerWire("s", [new], "b", auth=new_auth)
    return list(review_pair(base, head).findings)


def test_a_parameter_bound_to_a_claim_is_one_finding_not_a_removal() -> None:
    old = authed({"customer_email": EMAIL, "limit": LIMIT}, ["customer_email"])
    new = authed({"limit": LIMIT}, [], {"claims": BOUND})
    found = findings_of(old, new)
    assert [(f.rule_id, f.change.path_text) for f in found] == [
        ("PARAM_BOUND_TO_CLAIM", "Input schema / properties / customer_email"),
        ("REQUIRED_CHANGED", "Input schema / required"),
    ]
    (bound, _) = found
    assert bound.message == (
        "'customer_email' now comes from the caller's 'email' claim; callers that send it are refused"
    )
    assert bound.level == "breaking"
    # The `_meta` entry that binds it is said by that finding, not reported again.
    assert [c.path_text for c in bound.folded] == ["Meta / lynxc/auth"]


def test_scopes_and_a_binding_added_at_once_say_each_thing_once() -> None:
    old = authed({"customer_email": EMAIL}, ["customer_email"])
    new = authed({}, [], {"scopes": ["orders:read"], "claims": BOUND})
    rules = {f.rule_id: f for f in findings_of(old, new)}
    assert set(rules) == {"PARAM_BOUND_TO_CLAIM", "TOOL_SCOPE_ADDED", "REQUIRED_CHANGED"}
    assert rules["TOOL_SCOPE_ADDED"].message == (
        "scopes [] -> [\"orders:read\"]: callers without 'orders:read' are refused (403)"
    )


def test_a_new_parameter_bound_from_the_start_refuses_callers_without_the_claim() -> None:
    old = authed({"limit": LIMIT}, [])
    new = authed({"limit": LIMIT}, [], {"claims": BOUND})
    (finding,) = findings_of(old, new)
    assert finding.rule_id == "PARAM_BOUND_TO_CLAIM"
    assert "new parameter filled from the caller's 'email' claim" in finding.message


def test_an_unbound_parameter_is_judged_like_one_added() -> None:
    old = authed({"limit": LIMIT}, [], {"claims": BOUND})
    required = authed({"customer_email": EMAIL, "limit": LIMIT}, ["customer_email"])
    optional = authed({"customer_email": EMAIL, "limit": LIMIT}, [])
    assert {f.rule_id for f in findings_of(old, required)} == {
        "PARAM_CLAIM_UNBOUND_REQUIRED",
        "REQUIRED_CHANGED",
    }
    (finding,) = findings_of(old, optional)
    assert (finding.rule_id, finding.level) == ("PARAM_CLAIM_UNBOUND", "warning")
    # A bound parameter dropped altogether: nothing fails, but the tool may no longer filter.
    (gone,) = findings_of(old, authed({"limit": LIMIT}, []))
    assert gone.rule_id == "PARAM_CLAIM_UNBOUND" and "no longer a parameter" in gone.message


def test_a_claim_of_another_type_is_a_changed_binding() -> None:
    old = authed({}, [], {"claims": BOUND})
    new = authed({}, [], {"claims": {"customer_email": {"claim": "email", "type": "integer"}}})
    (finding,) = findings_of(old, new)
    assert finding.rule_id == "PARAM_CLAIM_CHANGED"
    assert "'email' (integer) claim instead of 'email'" in finding.message


def test_scopes_reordered_or_replaced() -> None:
    old = authed({}, [], {"scopes": ["a", "b"]})
    (reordered,) = findings_of(old, authed({}, [], {"scopes": ["b", "a"]}))
    assert reordered.rule_id == "META_CHANGED" and "who may call the tool is the same" in reordered.message
    (replaced,) = findings_of(old, authed({}, [], {"scopes": ["a", "c"]}))
    assert replaced.rule_id == "TOOL_SCOPE_ADDED"  # what a caller must newly hold weighs most


KEYS = {"methods": ["api_keys"], "scopes_supported": ["orders:read"]}


def test_server_auth_judged_by_who_loses_access() -> None:
    tool_ = authed({}, [])
    cases = [
        (None, KEYS, "SERVER_AUTH_CHANGED"),
        (KEYS, None, "SERVER_AUTH_REMOVED"),
        ({**KEYS, "methods": ["oauth"]}, KEYS, "SERVER_AUTH_CHANGED"),
        (KEYS, {**KEYS, "methods": ["oauth", "api_keys"]}, "SERVER_AUTH_METHOD_ADDED"),
        (KEYS, {**KEYS, "scopes_supported": []}, "SERVER_SCOPES_CHANGED"),
        (KEYS, {**KEYS, "issuer_hint": "x"}, "META_CHANGED"),
    ]
    for old, new, rule in cases:
        (finding,) = findings_of(tool_, tool_, old, new)
        assert finding.rule_id == rule, (old, new)
        assert finding.change.server and finding.change.located.startswith("Server / auth")
    assert findings_of(tool_, tool_, KEYS, dict(KEYS)) == []


def test_a_server_on_one_side_only_has_no_auth_finding() -> None:
    head = ServerWire("s", [authed({}, [])], "b", auth=KEYS)
    assert {f.rule_id for f in review_pair(None, head).findings} == {"TOOL_ADDED"}


def test_every_renderer_shows_server_changes() -> None:
    tool_ = authed({}, [])
    reviews = [
        review_pair(ServerWire("s", [tool_], "a", auth=None), ServerWire("s", [tool_], "b", auth=KEYS)),
    ]
    text = render_text(reviews)
    assert "breaking SERVER_AUTH_CHANGED: added Server / auth" in text
    assert '+ {"methods": ["api_keys"], "scopes_supported": ["orders:read"]}' in text
    (finding,) = json.loads(render_json(reviews))["servers"][0]["findings"]
    assert (finding["scope"], finding["path"], finding["after"]) == ("server", "Server / auth", KEYS)
    assert "tool" not in finding
    assert render_github(reviews).startswith("::error title=lynxc SERVER_AUTH_CHANGED::added Server / auth: ")
    markdown = render_markdown(reviews)
    assert "- **breaking** `SERVER_AUTH_CHANGED` — added `Server / auth`: the server now" in markdown
    scopes = [
        review_pair(
            ServerWire("s", [tool_], "a", auth=KEYS),
            ServerWire("s", [tool_], "b", auth={**KEYS, "scopes_supported": []}),
        )
    ]
    assert "| (server) | changed `Server / auth / scopes_supported` | `SERVER_SCOPES_CHANGED` |" in (
        render_markdown(scopes)
    )


def test_saved_tools_lists_carry_the_server_auth(tmp_path: Path) -> None:
    from lynxc.compiler.inputs import load_side

    tools = [authed({}, [], {"scopes": ["orders:read"]})]
    saved = tmp_path / "saved.json"
    saved.write_text(json.dumps({"result": {"tools": tools, "_meta": {"lynxc/auth": KEYS}}}))
    (server,) = load_side(str(saved), tmp_path).servers.values()
    assert server.auth == KEYS
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({"tools": tools}))
    (server,) = load_side(str(bare), tmp_path).servers.values()
    assert server.auth is None

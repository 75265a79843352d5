"""Judge details found by reading `lynxc diff` on real release pairs against the raw JSON
(github-mcp-server tool snapshots, the reference servers' versions): each case is the minimal
before/after of one misjudgement, and the hostile shapes the judge must stay bounded on."""

from __future__ import annotations

import time

from tests.compiler.test_diff_unit import reviewed

OBJECT = {"type": "object"}


def test_a_hint_written_out_at_its_default_is_said_as_itself() -> None:
    """github-mcp-server add_issue_comment_reaction: idempotentHint and readOnlyHint written out
    as false while the title changed. Each hint is its own no-op finding naming it; the title
    change is the title's finding, not one filed under a hint's path."""
    before = {"inputSchema": OBJECT, "annotations": {"title": "Add Issue Comment Reaction"}}
    after = {
        "inputSchema": OBJECT,
        "annotations": {
            "title": "Add Reaction to Issue Comment",
            "idempotentHint": False,
            "readOnlyHint": False,
        },
    }
    found = reviewed(before, after)
    assert found["Annotations / idempotentHint"] == (
        "ANNOTATION_CHANGED",
        "idempotentHint (none) -> false: absent means false, so the effective hints are the same",
    )
    assert found["Annotations / readOnlyHint"][0] == "ANNOTATION_CHANGED"
    assert found["Annotations / title"][0] == "TITLE_CHANGED"
    # add_issue_comment, create_pull_request: readOnlyHint false dropped.
    dropped = reviewed({**before, "annotations": {"readOnlyHint": False}}, {**before, "annotations": {}})
    assert dropped["Annotations / readOnlyHint"][1] == (
        "readOnlyHint false -> (none): absent means false, so the effective hints are the same"
    )


def test_annotations_added_at_their_defaults_name_them() -> None:
    """server-filesystem 2025.8.21 -> 2025.12.18, edit_file: annotations added with every hint at
    the value MCP assumes when it is absent."""
    hints = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False}
    found = reviewed({"inputSchema": OBJECT}, {"inputSchema": OBJECT, "annotations": hints})
    assert found["Annotations"] == (
        "ANNOTATION_CHANGED",
        "annotations added: readOnlyHint false, destructiveHint true, idempotentHint false written out, "
        "the values MCP assumes when absent; effective hints are the same",
    )


def test_required_names_the_new_parameters_it_lists() -> None:
    """server-filesystem 2025.8.21 -> 2025.12.18: read_file's schema gained its parameters and
    `required: [path]` at once; the required entry names them."""
    params = {"path": {"type": "string"}, "head": {"type": "number"}}
    found = reviewed(
        {"inputSchema": OBJECT}, {"inputSchema": {**OBJECT, "properties": params, "required": ["path"]}}
    )
    assert found["Input schema / required"] == (
        "REQUIRED_CHANGED",
        "required now lists the new parameters: path",
    )


def test_an_unknown_keyword_says_whether_it_came_or_went() -> None:
    """github-mcp-server fork_repository: `x-mcp-header` added to owner and repo."""
    plain = {"inputSchema": {**OBJECT, "properties": {"owner": {"type": "string"}}}}
    header = {"inputSchema": {**OBJECT, "properties": {"owner": {"type": "string", "x-mcp-header": "owner"}}}}
    path = "Input schema / properties / owner / x-mcp-header"
    assert reviewed(plain, header)[path] == (
        "SCHEMA_CHANGED",
        "parameter 'owner': 'x-mcp-header' added; review it",
    )
    assert reviewed(header, plain)[path] == (
        "SCHEMA_CHANGED",
        "parameter 'owner': 'x-mcp-header' removed; review it",
    )


def test_a_change_inside_a_definition_names_the_definition() -> None:
    """A property under `$defs` is not a top-level parameter (lynx-mcp's Hit, groundhog's Source):
    say which definition holds it."""

    def defs(node: dict) -> dict:
        return {"inputSchema": {**OBJECT, "$defs": {"n": node}, "properties": {"y": {"$ref": "#/$defs/n"}}}}

    loose = defs({**OBJECT, "properties": {"a": {"type": "string"}}})
    strict = defs(
        {**OBJECT, "properties": {"a": {"type": "string"}, "z": {"type": "string"}}, "required": ["z"]}
    )
    assert reviewed(loose, strict)["Input schema / $defs / n / properties / z"] == (
        "PARAM_ADDED_REQUIRED",
        "parameter 'z' in #/$defs/n added as required",
    )
    retyped = reviewed(defs({"type": "string"}), defs({"type": "integer"}))
    assert retyped["Input schema / $defs / n / type"][1].startswith("input definition #/$defs/n: ")


def test_hostile_schemas_are_judged_quickly_in_bounded_messages() -> None:
    """A 5,000-member anyOf rewritten, 1 MB descriptions, and `$ref`s that only point at each
    other: each pair is judged in well under a second of work, in messages of bounded length."""

    def members(start: int) -> dict:
        keyed = [
            {**OBJECT, "properties": {"k": {"const": i}}, "required": ["k"]}
            for i in range(start, start + 5000)
        ]
        return {"inputSchema": {**OBJECT, "properties": {"x": {"anyOf": keyed}}}}

    def described(text: str) -> dict:
        return {
            "description": text,
            "inputSchema": {**OBJECT, "properties": {"x": {"type": "string", "description": text}}},
        }

    def cyclic(target: str) -> dict:
        defs = {
            "a": {"$ref": "#/$defs/b"},
            "b": {"$ref": "#/$defs/a"},
            "n": {"properties": {"self": {"$ref": "#/$defs/n"}}},
        }
        return {"inputSchema": {**OBJECT, "$defs": defs, "properties": {"x": {"$ref": target}}}}

    plain = {"inputSchema": {**OBJECT, "properties": {"x": {"type": "string"}}}}
    pairs = [
        (plain, members(0)),
        (members(0), members(1)),
        (described("a" * 1_000_000), described("a" * 999_999 + "b")),
        (plain, cyclic("#/$defs/a")),
        (cyclic("#/$defs/a"), cyclic("#")),
    ]
    for old, new in pairs:
        started = time.process_time()
        found = reviewed(old, new)
        assert time.process_time() - started < 5
        assert found and all(len(message) < 1000 for _, message in found.values())
    assert (
        reviewed(members(0), members(1))["Input schema / properties / x / anyOf"][0] == "ENUM_VALUE_REMOVED"
    )


def test_a_type_widened_or_narrowed_names_the_types_that_moved() -> None:
    """github-mcp-server 0.1.1 -> 0.2.0, create_pull_request_review: `comments[].line` went from
    number to [number, null]; say which type came, not only that there are more."""

    def line(kind: object, direction: str = "inputSchema") -> dict:
        return {direction: {**OBJECT, "properties": {"line": {"type": kind}}}}

    path = "Input schema / properties / line / type"
    assert reviewed(line("number"), line(["number", "null"]))[path] == (
        "PARAM_TYPE_WIDENED",
        "parameter 'line' accepts more types (now also null)",
    )
    assert reviewed(line(["string", "array"]), line("string"))[path] == (
        "PARAM_TYPE_NARROWED",
        "parameter 'line' accepts fewer types (no longer array)",
    )
    output = reviewed(line("number", "outputSchema"), line(["number", "null"], "outputSchema"))
    assert output["Output schema / properties / line / type"] == (
        "OUTPUT_TYPE_WIDENED",
        "output field 'line' may return types it did not before (now also null)",
    )


def test_annotations_added_whole_say_their_title_beside_the_hints() -> None:
    """github-mcp-server 0.2.1 -> 0.3.0, get_commit: annotations added as a whole with
    readOnlyHint true and a display title; the one finding says both."""
    found = reviewed(
        {"inputSchema": OBJECT},
        {"inputSchema": OBJECT, "annotations": {"title": "Get commit details", "readOnlyHint": True}},
    )
    assert found["Annotations"] == (
        "READ_ONLY_HINT_ADDED",
        "readOnlyHint false -> true: the tool now declares it is read-only; "
        'display title annotations.title (none) -> "Get commit details"',
    )


def test_a_range_bound_rewritten_in_another_keyword_is_judged_by_what_it_admits() -> None:
    """mcp-server-fetch 2026.8.18 -> 2026.10.10: the integer `max_length` went from
    exclusiveMinimum 0 / exclusiveMaximum 1000000 to minimum 1 / maximum 999999. The same
    integers pass: no bound moved, and each bound is one finding, not a removal and an addition."""

    def max_length(kind: str, **bounds: object) -> dict:
        return {"inputSchema": {**OBJECT, "properties": {"max_length": {"type": kind, **bounds}}}}

    before = max_length("integer", exclusiveMinimum=0, exclusiveMaximum=1000000)
    after = max_length("integer", minimum=1, maximum=999999)
    assert reviewed(before, after) == {
        "Input schema / properties / max_length / exclusiveMaximum": (
            "SCHEMA_RESTRUCTURED",
            "parameter 'max_length': exclusiveMaximum 1000000 -> maximum 999999; it admits the same values",
        ),
        "Input schema / properties / max_length / exclusiveMinimum": (
            "SCHEMA_RESTRUCTURED",
            "parameter 'max_length': exclusiveMinimum 0 -> minimum 1; it admits the same values",
        ),
    }
    # Over numbers the same rewrite does move the bound: 999999.5 was accepted and is not now.
    path = "Input schema / properties / max_length / exclusiveMaximum"
    narrowed = reviewed(max_length("number", exclusiveMaximum=1000000), max_length("number", maximum=999999))
    assert narrowed[path] == (
        "MAXIMUM_DECREASED",
        "parameter 'max_length' accepts less: exclusiveMaximum 1000000 -> maximum 999999",
    )
    widened = reviewed(max_length("number", exclusiveMaximum=10), max_length("number", maximum=10))
    assert widened[path][0] == "MAXIMUM_INCREASED"
    # Draft 4 writes exclusiveness as a boolean beside maximum: dropping it admits the bound itself.
    draft4 = reviewed(
        max_length("number", maximum=10, exclusiveMaximum=True), max_length("number", maximum=10)
    )
    assert draft4[path] == (
        "MAXIMUM_INCREASED",
        "parameter 'max_length' accepts more: maximum 10, exclusiveMaximum true -> maximum 10",
    )

"""Lower and check the examples of a server's tools and its `test:` fixture (issue 29).

The compiler checks what a running server cannot: each example's arguments against the tool's
published inputSchema, each expected result key against its outputSchema, each field an
expected refusal names against its parameters. So an example that could never pass is a build
error at its line, not a test failure to puzzle over."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import jsonschema

from ..diagnostics import Diagnostic
from ..ir import ExampleIR, SetupStepIR, TestFixtureIR, ToolIR, canonical_json
from ..rules import diagnostic
from ..spec.load import SpecSource
from ..spec.models import Example
from ..spec.source import NodePath, SourceDoc
from ..suggest import did_you_mean

SETUP_VERBS = ("load", "index", "keys")  # the lynxc commands that prepare a server's data
CONTAINS = "contains"  # {contains: [...]}: a list holding these items, in any order


def lower_examples(
    source: SpecSource, tools: Iterable[ToolIR], setting_names: Iterable[str], tool_names: Iterable[str]
) -> tuple[tuple[ExampleIR, ...], TestFixtureIR | None, list[Diagnostic]]:
    """The examples of every tool (the tools' own, then the server's `test.examples`), the
    test fixture, and what is wrong with them. `tools` are those that lowered cleanly (the
    examples of the others are not checked: their own errors come first); `tool_names` all."""
    by_name = {tool.name: tool for tool in tools}
    all_names = set(tool_names)
    diagnostics: list[Diagnostic] = []
    written: list[tuple[str, Example, SourceDoc, NodePath]] = []
    for tool_source in source.tools:
        for index, example in enumerate(tool_source.tool.examples):
            written.append(
                (tool_source.tool.name, example, tool_source.doc, (*tool_source.base, "examples", index))
            )
    fixture = source.server.server.test
    doc = source.server_doc
    if fixture is not None:
        for index, example in enumerate(fixture.examples):
            path = ("server", "test", "examples", index)
            if example.tool not in all_names:
                diagnostics.append(
                    diagnostic(
                        "EXAMPLE_TOOL_UNKNOWN",
                        f"example of tool '{example.tool}', which the server does not have",
                        doc.span((*path, "tool")),
                        did_you_mean(example.tool, all_names) or "tools: " + ", ".join(sorted(all_names)),
                    )
                )
                continue
            written.append((example.tool, example, doc, path))
    examples: list[ExampleIR] = []
    counts: dict[str, int] = {}
    names: set[tuple[str, str]] = set()
    for tool_name, example, example_doc, path in written:
        tool = by_name.get(tool_name)
        if tool is None:  # its own lowering failed and said why
            continue
        counts[tool_name] = counts.get(tool_name, 0) + 1
        name = example.name or f"example {counts[tool_name]}"
        if (tool_name, name) in names:
            diagnostics.append(
                diagnostic(
                    "EXAMPLE_NAME_DUPLICATE",
                    f"tool '{tool_name}' has two examples named '{name}'",
                    example_doc.span((*path, "name") if example.name else path),
                )
            )
        names.add((tool_name, name))
        checker = _ExampleCheck(tool, name, example_doc, path)
        checker.check(example)
        diagnostics.extend(checker.diagnostics)
        examples.append(
            ExampleIR(
                tool=tool_name,
                name=name,
                arguments_json=canonical_json(example.arguments),
                expect_json=canonical_json(example.expect.model_dump(exclude_unset=True, by_alias=True)),
                span=example_doc.span(path),
            )
        )
    test_fixture = None
    if fixture is not None:
        known = set(setting_names)
        for setting in fixture.settings:
            if setting not in known:
                diagnostics.append(
                    diagnostic(
                        "TEST_SETTING_UNKNOWN",
                        f"test setting '{setting}' is not a setting of the server",
                        doc.span(("server", "test", "settings", setting), key=True),
                        did_you_mean(setting, known) or "settings: " + ", ".join(sorted(known)),
                    )
                )
        steps = []
        for index, step in enumerate(fixture.setup):
            path = ("server", "test", "setup", index, "lynxc")
            if not step.lynxc or step.lynxc[0] not in SETUP_VERBS:
                runs = f"runs `lynxc {step.lynxc[0]}`" if step.lynxc else "names no command"
                diagnostics.append(
                    diagnostic(
                        "TEST_SETUP_INVALID",
                        f"setup {runs}: only lynxc {', '.join(SETUP_VERBS)} prepare a server's data",
                        doc.span(path),
                    )
                )
            steps.append(SetupStepIR(tuple(step.lynxc), doc.span(path)))
        test_fixture = TestFixtureIR(canonical_json(fixture.settings), tuple(steps))
    return tuple(examples), test_fixture, diagnostics


class _ExampleCheck:
    """The checks of one example against its tool's published schemas."""

    def __init__(self, tool: ToolIR, name: str, doc: SourceDoc, path: NodePath) -> None:
        self.tool, self.name, self.doc, self.path = tool, name, doc, path
        self.diagnostics: list[Diagnostic] = []

    def report(self, rule_id: str, message: str, path: NodePath, hint: str | None = None) -> None:
        self.diagnostics.append(
            diagnostic(
                rule_id, f"example '{self.name}' of '{self.tool.name}': {message}", self.doc.span(path), hint
            )
        )

    def check(self, example: Example) -> None:
        expect = example.expect
        error = expect.error
        self._check_arguments(
            example.arguments, refused=error is not None and error.kind == "invalid_arguments"
        )
        expect_path = (*self.path, "expect")
        if error is not None and (expect.result is not None or expect.rows is not None):
            self.report(
                "EXAMPLE_EXPECT_INVALID",
                "expects an error and a result: a refused call has no structured result",
                expect_path,
            )
        if error is not None and error.field is not None:
            params = self.tool.published_input_schema.get("properties", {})
            if error.field not in params:
                self.report(
                    "EXAMPLE_EXPECT_INVALID",
                    f"error.field '{error.field}' is not a parameter of the tool",
                    (*expect_path, "error", "field"),
                    did_you_mean(error.field, params) or "parameters: " + ", ".join(sorted(params)) or None,
                )
        output = json_or_none(self.tool.output_schema_json)
        if (expect.result is not None or expect.rows is not None) and output is None:
            self.report(
                "EXAMPLE_EXPECT_INVALID",
                "expects a structured result, but the tool declares no output schema",
                expect_path,
            )
            return
        if expect.result is not None and output is not None:
            self._check_subset(expect.result, output, output, (*expect_path, "result"), "result")
        if expect.rows is not None and output is not None:
            rows = expect.rows
            rows_path = (*expect_path, "rows")
            node = _pointed_schema(output, rows.at)
            if node is None:
                self.report(
                    "EXAMPLE_EXPECT_INVALID",
                    f"rows.at '{rows.at}' names no list of the output schema",
                    (*rows_path, "at") if "at" in rows.model_fields_set else rows_path,
                )
            if rows.min is not None and rows.max is not None and rows.min > rows.max:
                self.report(
                    "EXAMPLE_EXPECT_INVALID", f"rows.min {rows.min} is over rows.max {rows.max}", rows_path
                )

    def _check_arguments(self, arguments: dict[str, Any], *, refused: bool) -> None:
        schema = self.tool.published_input_schema
        errors = sorted(
            jsonschema.Draft202012Validator(schema).iter_errors(arguments),
            key=lambda e: list(e.absolute_path),
        )
        args_path = (*self.path, "arguments")
        if refused:
            if not errors:
                self.report(
                    "EXAMPLE_ARGUMENTS_INVALID",
                    "expects invalid_arguments, but the arguments satisfy the inputSchema",
                    args_path,
                    "make them break a rule of a parameter, or expect another error kind",
                )
            return
        for error in errors:
            where = [str(part) for part in error.absolute_path]
            field = ".".join(where) or _named_field(error) or "arguments"
            self.report(
                "EXAMPLE_ARGUMENTS_INVALID",
                f"{field}: {error.message} ({error.validator})",
                (*args_path, *error.absolute_path),
                "the inputSchema refuses these arguments; to show the refusal, expect "
                "error: {kind: invalid_arguments}",
            )

    def _check_subset(
        self, expected: Any, schema: dict[str, Any], root: dict[str, Any], path: NodePath, where: str
    ) -> None:
        """`expected` must be able to match part of a value of `schema`: every key one the schema
        has, every leaf a value it allows."""
        schema = _resolved(schema, root)
        if isinstance(expected, dict) and set(expected) == {CONTAINS}:
            items = expected[CONTAINS]
            if not isinstance(items, list):
                self.report("EXAMPLE_EXPECT_INVALID", f"{where}: contains takes a list", path)
                return
            if "items" in schema:
                for index, item in enumerate(items):
                    self._check_subset(
                        item, schema["items"], root, (*path, CONTAINS, index), f"{where}[{index}]"
                    )
            return
        if isinstance(expected, list) and isinstance(schema.get("items"), dict):
            for index, item in enumerate(expected):
                self._check_subset(item, schema["items"], root, (*path, index), f"{where}[{index}]")
            return
        if isinstance(expected, dict) and isinstance(schema.get("properties"), dict):
            properties = schema["properties"]
            closed = schema.get("additionalProperties") is False
            for key, value in expected.items():
                if key in properties:
                    self._check_subset(value, properties[key], root, (*path, key), f"{where}.{key}")
                elif closed:
                    self.report(
                        "EXAMPLE_EXPECT_INVALID",
                        f"{where}.{key} is not in the output schema",
                        (*path, key),
                        did_you_mean(key, properties) or "keys: " + ", ".join(sorted(properties)),
                    )
            return
        if (
            isinstance(expected, dict)
            and "additionalProperties" in schema
            and isinstance(schema["additionalProperties"], dict)
        ):
            for key, value in expected.items():
                self._check_subset(
                    value, schema["additionalProperties"], root, (*path, key), f"{where}.{key}"
                )
            return
        if isinstance(expected, dict) and _is_object(schema):
            return  # an open object, or one of several forms: nothing more to hold against
        checkable = {**schema, "$defs": root.get("$defs", {})}
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(checkable).iter_errors(expected)
        )
        if error is not None and not isinstance(expected, dict):
            self.report(
                "EXAMPLE_EXPECT_INVALID",
                f"{where}: {expected!r} can never be returned: {error.message} ({error.validator})",
                path,
            )


def json_or_none(text: str | None) -> dict[str, Any] | None:
    import json

    return json.loads(text) if text else None


def _resolved(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """Follow a local $ref, and take the non-null branch of a nullable anyOf."""
    for _ in range(32):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            schema = root.get("$defs", {}).get(ref.removeprefix("#/$defs/"), {})
            continue
        branches = schema.get("anyOf")
        if isinstance(branches, list):
            kept = [b for b in branches if b.get("type") != "null"]
            if len(kept) == 1:
                schema = kept[0]
                continue
        break
    return schema


def _is_object(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return (
        kind == "object" or (isinstance(kind, list) and "object" in kind) or "anyOf" in schema or not schema
    )


def _pointed_schema(schema: dict[str, Any], pointer: str) -> dict[str, Any] | None:
    """The schema of the list at `pointer` in a result of `schema`, or None when there is none."""
    node = _resolved(schema, schema)
    for raw in pointer.split("/")[1:] if pointer else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node.get("properties"), dict) and token in node["properties"]:
            node = _resolved(node["properties"][token], schema)
        elif token.isdigit() and isinstance(node.get("items"), dict):
            node = _resolved(node["items"], schema)
        else:
            return None
    kind = node.get("type")
    return node if kind == "array" or (isinstance(kind, list) and "array" in kind) else None


def _named_field(error: jsonschema.ValidationError) -> str | None:
    """The property a `required` or `additionalProperties` error is about."""
    if error.validator == "required":
        return error.message.split("'")[1] if "'" in error.message else None
    if error.validator == "additionalProperties" and "'" in error.message:
        return error.message.split("'")[1]
    return None

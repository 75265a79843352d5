"""Validate results against a tool's output schema, fast.

The yes/no decision is made by code fastjsonschema compiles from the schema (about 20x faster
than interpreting it, which matters for results of thousands of items); only a failing result
goes through jsonschema, whose best match words the message. Both read the same schema, with
local `$ref`s inlined once; a test checks they agree."""

from __future__ import annotations

from typing import Any

from .schema_refs import inline_local_refs


class OutputValidator:
    def __init__(self, schema: dict[str, Any]):
        # Imported here, on a tool's first call: start-up (initialize, tools/list) needs neither.
        import fastjsonschema

        self.schema = inline_local_refs(schema)
        body = {k: v for k, v in self.schema.items() if k != "$schema"}  # compiled with draft-07 rules
        self._check = fastjsonschema.compile(body)
        self._error = fastjsonschema.JsonSchemaException

    def is_valid(self, value: Any) -> bool:
        try:
            self._check(value)
        except self._error:
            return False
        return True

    def problem(self, value: Any) -> str | None:
        """None for a valid value, else `where: what` for the most relevant error."""
        if self.is_valid(value):
            return None
        import jsonschema

        # With a format checker: fastjsonschema asserts date and date-time, and the message
        # must name the value that broke one rather than fall back to the plain answer below.
        checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(self.schema, format_checker=checker).iter_errors(value)
        )
        if error is None:  # the two validators disagree: trust the stricter answer, say so plainly
            return "(root): rejected by the output schema"
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"{where}: {error.message}"

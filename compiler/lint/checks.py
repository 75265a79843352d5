"""Lint checks over the wire form of a server: each check reads one tool (or the whole server)
and yields findings under a rule of the shared catalogue. Cue lists are deliberately small and
documented here, because scores are built on the same cues (`score`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..backticks import code_spans
from ..diagnostics import Span
from ..lower.templates_text import format_bytes
from ..rules import RULES
from ..wire import TOOL_NAME, ServerWire, SpecExtras
from .signals import (
    added_words,
    described,
    estimate_tokens,
    invocation_cost,
    name_words,
    properties,
    schema_coverage,
    sentences,
    stem,
    words,
    write_claims,
)


def _cue(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# When to use it, and what to use instead.
USAGE_CUES = _cue(r"\b(use|using|when|whenever|if you|call (it|this))\b")
ALTERNATIVE_CUES = _cue(r"\b(instead|rather than|prefer|better|not for|do not|don't|avoid)\b")
NEXT_STEP_CUES = _cue(r"\b(then|narrow|refine|raise|increase|follow|next|pass|continue|expand|retry)\b")
# What can stop, cut or slow a call.
LIMIT_CUES = _cue(
    r"\b(at most|up to|max(imum)?|limit(s|ed)?|caps?|capped|bounded|budget|clamped|timeouts?|"
    r"rate[- ]limit(ed)?|slow(er|est)?|costs?|pag(e|es|ed|ing)|truncat\w*|\d+)\b"
)
FAILURE_CUES = _cue(
    r"\b(errors?|fail(s|ed|ure|ures)?|reject(s|ed)?|invalid|not found|missing|skip(s|ped)?|warning|"
    r"incomplete|partial|shorten(ed)?|clamp(ed)?|unavailable|refuse[sd]?)\b"
)
EMPTY_CUES = _cue(r"\b(empty|no (match|matches|result|results)|zero|nothing|none)\b")
RETURN_CUES = _cue(r"\b(returns?|returned|results?|outputs?|responds?|gives|yields)\b")
SIDE_EFFECT_CUES = _cue(
    r"\b(read-only|side effects?|nothing is (written|changed)|writes?|deletes?|modif(y|ies))\b"
)
FILLER_OPENERS = (
    "this tool",
    "a tool",
    "tool to",
    "tool that",
    "allows",
    "used to",
    "helps",
    "this function",
)
CONFIRM_PARAMS = _cue(r"confirm|dry.?run|preview|force")
TOOL_LIKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
# A quoted name is called, so it names a tool: "call `x`", "use `x`", "prefer `x`", "pass ... to
# `x`", "`x` tool". Checked right before (or after) the quote and before any field context.
TOOL_CONTEXT_BEFORE = _cue(
    r"\b(call|calls|calling|use|using|invoke|run|try|prefer|via|instead of|see|pass\b.*\bto)\s*$"
)
TOOL_CONTEXT_AFTER = _cue(r"^\s*(tool|tools|instead)\b")
# A quoted name is a field or a value of what comes back: the clause talks about results ("returns
# `a`, `b`", "each hit carries `c`") or the quote is followed by a field word or a predicate.
FIELD_CONTEXT_CLAUSE = _cue(
    r"\b(returns?|returned|results?|outputs?|responses?|carr(y|ies)|includes?|contains?|reports?|"
    r"fields?|keys?|set|sets|each (hit|result|match|item|entry|record|row))\b"
)
FIELD_CONTEXT_AFTER = _cue(
    r"^\s*(field|fields|key|keys|property|properties|column|columns|attribute|attributes|value|values|"
    r"flag|entry|entries|is|are|holds|counts|caps|=|:)(\W|$)"
)
CLAUSE_START = re.compile(r"[.;:!?\n]")
STATED_DEFAULT = _cue(r"\bdefaults?(?: is| to|:|=)?\s+`?(true|false|null|-?\d+(?:\.\d+)?)`?\b")
STATED_MAX = _cue(r"\b(?:max(?:imum)?|at most|up to)\s*:?\s*(\d[\d,]*)")
STATED_MIN = _cue(r"\b(?:min(?:imum)?|at least)\s*:?\s*(\d[\d,]*)")
STATED_CHOICES = re.compile(r"\b([a-z_]+)(?:\s*\|\s*([a-z_]+))+\b")

TOOL_TOKEN_BUDGET = 500
SERVER_TOKEN_BUDGET = 10_000


@dataclass(frozen=True)
class LintFinding:
    rule_id: str
    tool: str | None
    message: str
    param: str | None = None
    span: Span | None = None

    @property
    def severity(self) -> str:
        return RULES[self.rule_id].severity

    @property
    def category(self) -> str:
        return RULES[self.rule_id].category

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule_id,
            "severity": self.severity,
            "category": self.category,
            "tool": self.tool,
            "message": self.message,
        }
        if self.param:
            out["parameter"] = self.param
        if self.span:
            out["location"] = {"file": self.span.file, "line": self.span.line, "column": self.span.col}
        return out


@dataclass(frozen=True)
class ToolView:
    """One tool with what the checks need around it."""

    tool: dict[str, Any]
    siblings: tuple[str, ...]
    spans: dict[tuple[str, str | None], Span]
    extras: SpecExtras | None
    # parameter, field and enum names of the sibling tools: "pass a hit's `note_ref` to `read_note`"
    sibling_words: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return self.tool["name"]

    @cached_property
    def description(self) -> str:
        text = self.tool.get("description")
        return text.strip() if isinstance(text, str) else ""

    @cached_property
    def first_sentence(self) -> str:
        found = sentences(self.description)
        return found[0] if found else ""

    @cached_property
    def params(self) -> dict[str, Any]:
        return properties(self.tool.get("inputSchema"))

    @cached_property
    def annotations(self) -> dict[str, Any]:
        value = self.tool.get("annotations")
        return value if isinstance(value, dict) else {}

    @cached_property
    def own_words(self) -> set[str]:
        """Names a description may quote without meaning a tool: parameters, output fields, enums."""
        return {self.name} | schema_names(self.tool)

    def finding(self, rule_id: str, message: str, param: str | None = None) -> LintFinding:
        span = self.spans.get((self.name, param)) or self.spans.get((self.name, None))
        return LintFinding(rule_id, self.name, message, param, span)


def schema_names(tool: dict[str, Any]) -> set[str]:
    """Parameter, output field and enum names of one tool's input and output schemas."""
    return _schema_names(tool.get("inputSchema")) | _schema_names(tool.get("outputSchema"))


def _schema_names(schema: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("properties", "$defs") and isinstance(value, dict):
                found |= set(value)
            if key == "enum" and isinstance(value, list):
                found |= {v for v in value if isinstance(v, str)}
            found |= _schema_names(value)
    elif isinstance(schema, list):
        for item in schema:
            found |= _schema_names(item)
    return found


def _has(pattern: re.Pattern[str], text: str) -> bool:
    return pattern.search(text) is not None


# --- purpose ------------------------------------------------------------------------------


def check_description(view: ToolView) -> Iterator[LintFinding]:
    if not view.description:
        yield view.finding("TOOL_DESCRIPTION_REQUIRED", f"{view.name} has no description")
        return
    normalized = view.description.lower()
    if normalized in (view.name.lower(), str(view.tool.get("title") or "").strip().lower()):
        yield view.finding(
            "DESCRIPTION_TAUTOLOGICAL", f"{view.name}'s description only restates its name or title"
        )
        return
    first = view.first_sentence
    if len(added_words(first, view.name, view.tool.get("title"))) < 2:
        yield view.finding(
            "DESCRIPTION_RESTATES_NAME", f"the first sentence adds little to the name: {first!r}"
        )
    if len(words(first)) < 5 or len(words(first)) > 45 or normalized.startswith(FILLER_OPENERS):
        yield view.finding(
            "PURPOSE_SENTENCE_VAGUE",
            f"open with one specific sentence (5-45 words, naming the action and its object): {first[:80]!r}",
        )


# --- usage --------------------------------------------------------------------------------


def check_usage(view: ToolView) -> Iterator[LintFinding]:
    if not view.description:
        return
    if not (_has(USAGE_CUES, view.description) or _has(ALTERNATIVE_CUES, view.description)):
        yield view.finding("USAGE_GUIDANCE_MISSING", "the description never says when to use the tool")
    if view.siblings and not any(re.search(rf"\b{re.escape(s)}\b", view.description) for s in view.siblings):
        yield view.finding(
            "SIBLING_NOT_NAMED",
            f"names none of its siblings ({', '.join(view.siblings)}); say which fits when",
        )
    known = view.own_words | view.sibling_words | set(view.siblings)
    for span in code_spans(view.description):
        quoted = span.group(1)
        if TOOL_LIKE.match(quoted) and quoted not in known and _quotes_a_tool(view.description, span):
            yield view.finding(
                "TOOL_REFERENCE_UNKNOWN", f"quotes `{quoted}`, which is no tool of this server"
            )


def _quotes_a_tool(text: str, span: re.Match[str]) -> bool:
    """Whether an unknown quoted name is meant as a tool: yes when it is called, no when it is a
    field or value of what comes back; otherwise yes, as a quoted name in a description usually
    is (the spec checks of lower.py see every schema word, lint of a foreign server does not)."""
    clause = CLAUSE_START.split(text[: span.start()])[-1]
    after = text[span.end() :]
    if _has(TOOL_CONTEXT_BEFORE, " ".join(clause.split()[-6:])) or _has(TOOL_CONTEXT_AFTER, after):
        return True
    return not (_has(FIELD_CONTEXT_CLAUSE, clause) or _has(FIELD_CONTEXT_AFTER, after))


# --- behaviour ----------------------------------------------------------------------------


def check_behaviour(view: ToolView) -> Iterator[LintFinding]:
    hints = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
    if not any(isinstance(view.annotations.get(h), bool) for h in hints):
        yield view.finding(
            "ANNOTATIONS_MISSING", "declares no MCP annotations (readOnlyHint, destructiveHint, ...)"
        )
    claims = write_claims(view.description) if view.annotations.get("readOnlyHint") is True else []
    if claims:
        yield view.finding(
            "READ_ONLY_CONTRADICTED", f"declared read-only, yet the description says '{claims[0]}'"
        )
    destructive = (
        view.annotations.get("destructiveHint") is True and view.annotations.get("readOnlyHint") is not True
    )
    if destructive and not any(CONFIRM_PARAMS.search(name) for name in view.params):
        yield view.finding(
            "DESTRUCTIVE_WITHOUT_CONFIRMATION", "destructive, yet has no confirm or dry-run parameter"
        )
    if view.description and not (_has(LIMIT_CUES, view.description) or _has(FAILURE_CUES, view.description)):
        yield view.finding("BEHAVIOUR_UNDISCLOSED", "states no limit and no failure mode")


# --- parameters ---------------------------------------------------------------------------


def check_parameters(view: ToolView) -> Iterator[LintFinding]:
    coverage = schema_coverage(view.tool.get("inputSchema"))
    if coverage is not None and coverage < 80:
        count = sum(described(p) for p in view.params.values())
        rule = "PARAMS_UNDOCUMENTED" if coverage < 50 else "PARAMS_PARTLY_DOCUMENTED"
        yield view.finding(rule, f"{count} of {len(view.params)} parameters have a description ({coverage}%)")
    for name, prop in view.params.items():
        if not isinstance(prop, dict):
            continue
        if not described(prop):
            yield view.finding("PARAM_DESCRIPTION_MISSING", f"parameter '{name}' has no description", name)
            continue
        yield from _check_param_text(view, name, prop, prop["description"])


# Words that say nothing of a parameter a reader could not tell from its name: 'Unit wanted.'
# for `to_unit` says no more than 'The unit.'
EMPTY_PARAM_WORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "for",
        "this",
        "that",
        "here",
        "value",
        "parameter",
        "argument",
        "input",
        "option",
        "field",
        "given",
        "wanted",
        "desired",
        "requested",
        "specified",
        "chosen",
        "selected",
        "required",
        "optional",
    ]
)


def _check_param_text(view: ToolView, name: str, prop: dict[str, Any], text: str) -> Iterator[LintFinding]:
    content = {stem(w) for w in words(text)} - EMPTY_PARAM_WORDS
    if content <= {stem(w) for w in name_words(name)} | {str(prop.get("type", ""))}:
        yield view.finding(
            "PARAM_DESCRIPTION_RESTATES_NAME", f"'{name}': {text!r} adds nothing to the name", name
        )
    stated = STATED_DEFAULT.search(text)
    if stated and "default" in prop and _literal(stated.group(1)) != prop["default"]:
        yield view.finding(
            "PARAM_DEFAULT_MISMATCH",
            f"'{name}' says default {stated.group(1)}, the schema says {json.dumps(prop['default'])}",
            name,
        )
    for pattern, keys, word in (
        (STATED_MAX, ("maximum", "maxLength", "maxItems"), "at most"),
        (STATED_MIN, ("minimum", "minLength", "minItems"), "at least"),
    ):
        stated = pattern.search(text)
        bound = next((prop[k] for k in keys if k in prop), None)
        if stated and bound is not None and int(stated.group(1).replace(",", "")) != bound:
            yield view.finding(
                "PARAM_BOUND_MISMATCH",
                f"'{name}' says {word} {stated.group(1)}, the schema says {bound}",
                name,
            )
    enum = prop.get("enum")
    choices = STATED_CHOICES.search(text)
    if isinstance(enum, list) and choices:
        listed = set(re.findall(r"[a-z_]+", choices.group(0)))
        if listed != {v for v in enum if isinstance(v, str)}:
            yield view.finding(
                "PARAM_ENUM_MISMATCH", f"'{name}' lists {sorted(listed)}, the schema's enum is {enum}", name
            )


def _literal(text: str) -> Any:
    return (
        json.loads(text) if text in ("true", "false", "null") else float(text) if "." in text else int(text)
    )


def check_cap_literals(view: ToolView) -> Iterator[LintFinding]:
    """Spec inputs only: a number in a description as written that equals a cap should be a
    `{caps.NAME}` placeholder, or the two drift apart when the cap changes."""
    if view.extras is None:
        return
    for span, raw in view.extras.description_sources:
        for cap, value in view.extras.caps.items():
            if value < 10:
                continue
            forms = {str(value), f"{value:,}", format_bytes(value)}
            if any(re.search(rf"(?<![\w.,]){re.escape(form)}(?![\w,]|\.\d)", raw) for form in forms):
                yield LintFinding(
                    "CAP_LITERAL_IN_DESCRIPTION",
                    view.name,
                    f"writes cap {cap} ({value}) as a literal; use {{caps.{cap}}}",
                    None,
                    span,
                )


# --- conciseness and completeness ---------------------------------------------------------


def check_length(view: ToolView) -> Iterator[LintFinding]:
    tokens = estimate_tokens(view.description)
    if tokens > TOOL_TOKEN_BUDGET:
        yield view.finding(
            "DESCRIPTION_TOO_LONG",
            f"description is about {tokens} tokens, over the {TOOL_TOKEN_BUDGET} budget",
        )
    seen: dict[str, str] = {}
    texts = [("description", view.description)] + [
        (f"parameter '{n}'", p["description"]) for n, p in view.params.items() if described(p)
    ]
    for where, text in texts:
        for sentence in sentences(text):
            key = " ".join(w.lower() for w in words(sentence))
            if len(key.split()) < 5:
                continue
            if key in seen:
                yield view.finding(
                    "SENTENCE_REPEATED", f"{where} repeats a sentence of the {seen[key]}: {sentence!r}"
                )
            else:
                seen[key] = where


def check_completeness(view: ToolView) -> Iterator[LintFinding]:
    if "outputSchema" not in view.tool:
        yield view.finding("OUTPUT_SCHEMA_MISSING", "has no output schema")
        if view.description and not _has(RETURN_CUES, view.description):
            yield view.finding(
                "RETURN_UNDESCRIBED", "no output schema, and the description never says what returns"
            )
    if view.description and not (_has(FAILURE_CUES, view.description) or _has(EMPTY_CUES, view.description)):
        yield view.finding("ERROR_BEHAVIOUR_UNDESCRIBED", "says nothing of errors or empty results")


# --- hygiene ------------------------------------------------------------------------------


def check_hygiene(view: ToolView) -> Iterator[LintFinding]:
    if not TOOL_NAME.match(view.name):
        yield view.finding("TOOL_NAME_INVALID", f"'{view.name}' does not match [A-Za-z0-9_.-]{{1,128}}")
    for node in _objects(view.tool.get("inputSchema")):
        required = node.get("required") if isinstance(node.get("required"), list) else []
        for name in required:
            if name not in properties(node):
                yield view.finding("REQUIRED_PROPERTY_UNKNOWN", f"required '{name}' is not a property")
    if any(
        isinstance(node.get("type"), list) for node in _objects(view.tool.get("inputSchema"), all_nodes=True)
    ):
        yield view.finding(
            "TYPE_ARRAY_NOT_PORTABLE", "uses a `type` array; write anyOf for clients that reject it"
        )


def _objects(schema: Any, *, all_nodes: bool = False) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        if all_nodes or "properties" in schema or "required" in schema:
            yield schema
        for value in schema.values():
            yield from _objects(value, all_nodes=all_nodes)
    elif isinstance(schema, list):
        for item in schema:
            yield from _objects(item, all_nodes=all_nodes)


TOOL_CHECKS: tuple[Callable[[ToolView], Iterable[LintFinding]], ...] = (
    check_description,
    check_usage,
    check_behaviour,
    check_parameters,
    check_cap_literals,
    check_length,
    check_completeness,
    check_hygiene,
)


# --- server -------------------------------------------------------------------------------


def check_server(server: ServerWire) -> Iterator[LintFinding]:
    tokens = sum(estimate_tokens(json.dumps(tool, ensure_ascii=False)) for tool in server.tools)
    if tokens > SERVER_TOKEN_BUDGET:
        yield LintFinding(
            "SERVER_TOO_LONG", None, f"all definitions are about {tokens} tokens, over {SERVER_TOKEN_BUDGET}"
        )
    yield from _shadowed(server)


def _shadowed(server: ServerWire) -> Iterator[LintFinding]:
    """TDQS's prefilter: a dearer tool (at least twice the cost, and four more) may be shadowed
    by its dearest such cheaper sibling; ties go to the name that sorts first in UTF-16."""
    costs = {tool["name"]: invocation_cost(tool.get("inputSchema")) for tool in server.tools}
    for name, cost in costs.items():
        cheaper = [(c, n) for n, c in costs.items() if n != name and cost >= 2 * c and cost - c >= 4]
        if not cheaper:
            continue
        top = max(c for c, _ in cheaper)
        sibling = min(
            (n for c, n in cheaper if c == top), key=lambda n: n.encode("utf-16-be", "surrogatepass")
        )
        yield LintFinding(
            "SHADOWED_BY_CHEAPER_SIBLING",
            name,
            f"{name} (invocation cost {cost}) may be shadowed by {sibling} (cost {top}); "
            "make their uses disjoint",
            None,
            server.spans.get((name, None)),
        )

"""A deterministic TDQS-style score: six dimensions, 1 to 5, each with its reasons.

A described tool starts every dimension at 2 and gains a point for each of three signals met;
every reason names a signal, met or missed. Gates follow the TDQS rubric and cap a dimension,
saying why: no description scores 1 everywhere; an error finding in a dimension caps it at 2 (a
tautological description caps Purpose so); Behaviour with no annotations and nothing disclosed
scores 1 (the rubric's "no disclosure"); a one-liner too short for its parameters is
under-specified, not concise (Conciseness at most 3). No parameters is the rubric's baseline 4.
Weights: Purpose 25, Usage 20, Behaviour 20, Parameters 15, Conciseness 10, Completeness 10.
Tiers: A >= 3.5, B >= 3.0, C >= 2.0, else D. A server scores 0.6 x mean + 0.4 x minimum."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..backticks import code_spans
from .checks import (
    EMPTY_CUES,
    FAILURE_CUES,
    FILLER_OPENERS,
    LIMIT_CUES,
    NEXT_STEP_CUES,
    RETURN_CUES,
    SIDE_EFFECT_CUES,
    TOOL_LIKE,
    LintFinding,
    ToolView,
)
from .signals import added_words, described, estimate_tokens, sentences, words

WEIGHTS = {
    "purpose": 25,
    "usage": 20,
    "behaviour": 20,
    "parameters": 15,
    "conciseness": 10,
    "completeness": 10,
}
DIMENSIONS = tuple(WEIGHTS)
SCOPE_CUES = re.compile(
    r"\b(only|inside|within|one|single|without|not|instead|rather than|from|across)\b", re.I
)
WHEN_NOT_CUES = re.compile(
    r"\b(do not|don't|avoid|not for|instead|rather than|only (when|if)|narrow|refine|raise|increase)\b", re.I
)
# Explicit routing: "use it when", "prefer X when", "escalation for when", "do not start here".
ROUTING_CUES = re.compile(
    r"\b(use (it|this|them)?\s*(when|for|to|if|after|before|only)|when you|whenever|for when|prefer|"
    r"do not start|start (here|with))\b",
    re.I,
)
# What a tool does not cover: for the server's only tool, the pointer away that naming an
# alternative tool would give.
OUT_OF_SCOPE_CUES = re.compile(
    r"\b(cannot|can't|does not|doesn't|will not|won't|is not for|not (meant|intended|made) for|"
    r"outside|unsupported|only (works|covers|handles|supports|reads|accepts))\b",
    re.I,
)
# A read verb in the opening sentence says, without annotations, that nothing is changed.
READ_VERBS = re.compile(
    r"\b(search\w*|find\w*|list\w*|read\w*|get|gets|fetch\w*|look\w* up|show\w*|count\w*)\b", re.I
)
# Limits or costs stated concretely: a number with a bound or unit, a rate limit, a cost.
QUANTIFIED_LIMITS = re.compile(
    r"\b(at most|up to|max(imum)?|no more than|limit(ed)? to)\s+\d|\d[\d,.]*\s*(MiB|KiB|MB|KB|GB|bytes?|"
    r"characters?|chars|pages?|results?|records?|tokens?|matches|files|seconds?|ms|per)\b|\brate[- ]limit|"
    r"\bcosts?\b|\bslowest\b|\bquota",
    re.I,
)
# Conditions and consequences of a call, for telling a silent definition from a terse one: where
# it works ("only works within allowed directories"), what it needs, what cannot be undone.
CONSTRAINT_CUES = re.compile(
    r"\b(only|within|requires?|required|must|needs?|permissions?|auth\w*|credentials?|irreversibl\w*|"
    r"permanent\w*|undo|replaces?|overwrit\w*|appends?|blocking|asynchronous\w*|cached?|idempotent)\b",
    re.I,
)
# An opening verb that changes something ("Update ...", "Creates ...") tells the agent the call has
# a side effect: TDQS's own mid example scores "'Update' implies mutation" 2, not 1. An opening
# read verb tells nothing of consequences.
MUTATION_OPENERS = re.compile(
    r"^\W*(create|update|add|remove|delete|edit|move|rename|insert|replace|toggle|append|save|upload|"
    r"send|publish|set|write|overwrite|clear|reset)s?\b",
    re.I,
)
RESOURCE_NOUNS = re.compile(
    r"\b(files?|director(y|ies)|folders?|records?|pages?|web|text|code|documents?|sources?|rows?|tables?|"
    r"urls?|issues?|messages?|items?|database|repositor(y|ies)|projects?|passages?)\b",
    re.I,
)

Signal = tuple[bool, str, str]  # (met, why when met, why when missed)
ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


@dataclass(frozen=True)
class Gate:
    """The most a dimension may score whatever its signals, and why."""

    cap: int
    reason: str


@dataclass(frozen=True)
class DimensionScore:
    dimension: str
    score: int
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ToolScore:
    tool: str
    dimensions: tuple[DimensionScore, ...]

    @property
    def total(self) -> float:
        return round(sum(d.score * WEIGHTS[d.dimension] for d in self.dimensions) / 100, 2)

    @property
    def tier(self) -> str:
        return tier(self.total)


@dataclass(frozen=True)
class ServerScore:
    tools: tuple[ToolScore, ...]

    @property
    def mean(self) -> float:
        return sum(t.total for t in self.tools) / len(self.tools) if self.tools else 0.0

    @property
    def minimum(self) -> float:
        return min((t.total for t in self.tools), default=0.0)

    @property
    def total(self) -> float:
        return round(0.6 * self.mean + 0.4 * self.minimum, 2)

    @property
    def tier(self) -> str:
        return tier(self.total)


def tier(score: float) -> str:
    return "A" if score >= 3.5 else "B" if score >= 3.0 else "C" if score >= 2.0 else "D"


def score_tool(view: ToolView, findings: Iterable[LintFinding]) -> ToolScore:
    found = list(findings)
    if not view.description:
        reason = ("no description: every dimension scores 1",)
        return ToolScore(view.name, tuple(DimensionScore(d, 1, reason) for d in DIMENSIONS))
    errors = {f.category for f in found if f.severity == "error"}
    dims = []
    for dimension, signals in _SIGNALS.items():
        met = signals(view, found)
        score = 2 + sum(ok for ok, _, _ in met)
        reasons = [yes if ok else no for ok, yes, no in met]
        gates = [gate(view) for gate in _GATES.get(dimension, ())]
        if dimension in errors:
            gates.append(Gate(2, "capped at 2 by an error finding: " + _rules_of(found, dimension)))
        for gate in (g for g in gates if g is not None and g.cap <= score):
            score = gate.cap
            reasons.append(gate.reason)  # shown at the cap too: it says what holds the score there
        dims.append(DimensionScore(dimension, score, tuple(reasons)))
    return ToolScore(view.name, tuple(dims))


def _rules_of(found: list[LintFinding], category: str) -> str:
    return ", ".join(sorted({f.rule_id for f in found if f.category == category and f.severity == "error"}))


def _has(pattern: re.Pattern[str], text: str) -> bool:
    return pattern.search(text) is not None


def _declares_hints(view: ToolView) -> bool:
    return any(isinstance(view.annotations.get(hint), bool) for hint in ANNOTATION_HINTS)


def _word_budget(view: ToolView) -> int:
    """Words a description needs to be complete: ten for the tool, five for each parameter."""
    return 10 + 5 * len(view.params)


def _names_another_tool(view: ToolView) -> bool:
    if any(re.search(rf"\b{re.escape(s)}\b", view.description) for s in view.siblings):
        return True
    quoted = [
        m.group(1) for m in code_spans(view.description) if re.fullmatch(r"[A-Za-z_][\w.]*", m.group(1))
    ]
    bare = [w for w in words(view.description) if TOOL_LIKE.match(w)]
    return any(w not in view.own_words for w in quoted + bare)


def _purpose(view: ToolView, found: list[LintFinding]) -> list[Signal]:
    first = view.first_sentence
    count = len(words(first))
    added = added_words(first, view.name, view.tool.get("title"))
    opening = " ".join(sentences(view.description)[:2])
    return [
        (
            5 <= count <= 45,
            "opens with one specific sentence",
            f"first sentence of {count} words is not specific",
        ),
        (len(added) >= 2, "first sentence adds to the name", "first sentence mostly restates the name"),
        (
            _names_another_tool(view) or _has(SCOPE_CUES, opening) or _has(RESOURCE_NOUNS, first),
            "states the resource and scope it acts on",
            "states neither the resource it acts on nor its scope",
        ),
    ]


def _usage(view: ToolView, found: list[LintFinding]) -> list[Signal]:
    text = view.description
    return [
        (_has(ROUTING_CUES, text), "says explicitly when to use it", "never says explicitly when to use it"),
        _alternatives_named(view),
        (
            _has(WHEN_NOT_CUES, text) or _has(NEXT_STEP_CUES, text),
            "says when not to use it or how to refine",
            "says neither when not to use it nor how to refine a call",
        ),
    ]


def _alternatives_named(view: ToolView) -> Signal:
    """Beside other tools: does it name them? The server's only tool has none to name, so it is
    asked what the alternatives would tell an agent instead: where it stops ("it cannot convert
    mass"), so the agent looks elsewhere."""
    if _names_another_tool(view):
        return (True, "names the alternative tools", "")
    if view.siblings:
        return (False, "", "names no alternative tool")
    return (
        _has(OUT_OF_SCOPE_CUES, view.description),
        "the server's only tool: says what it does not cover",
        "the server's only tool (no alternative to name): never says what it does not cover",
    )


def _behaviour(view: ToolView, found: list[LintFinding]) -> list[Signal]:
    text = view.description
    declared = (
        "side effects declared by annotations"
        if _declares_hints(view)
        else "side effects stated"
        if _has(SIDE_EFFECT_CUES, text)
        else "side effects implied by a read verb only"
    )
    return [
        (
            _declares_hints(view) or _has(SIDE_EFFECT_CUES, text) or _has(READ_VERBS, view.first_sentence),
            declared,
            "side effects undeclared: no annotations, no statement",
        ),
        (
            _has(QUANTIFIED_LIMITS, text),
            "states limits or costs concretely",
            "states no concrete limit, rate limit or cost",
        ),
        (
            _has(FAILURE_CUES, text) or _has(EMPTY_CUES, text),
            "states failure or partial-result behaviour",
            "states no failure modes",
        ),
    ]


def _parameters(view: ToolView, found: list[LintFinding]) -> list[Signal]:
    """As the rubric reads it: schema descriptions set the baseline; more needs the tool's own
    description to explain parameters (quoted in code form: `x`, snake_case, camelCase)."""
    params = view.params
    if not params:
        # The rubric's anchor: "0 params = baseline 4"; there is nothing left to explain.
        return [
            (True, "no parameters to document", ""),
            (True, "no parameters to explain", ""),
            (False, "", "no parameters: the rubric's baseline of 4"),
        ]
    mentioned = {n for n in params if _mentions(view.description, n)}
    described_in_schema = {n for n, p in params.items() if described(p)}
    documented = described_in_schema | mentioned
    in_code = {
        n for n in mentioned if "_" in n or re.search(r"[a-z][A-Z]", n) or f"`{n}`" in view.description
    }
    return [
        (
            len(documented) >= 0.8 * len(params),
            f"{len(documented)} of {len(params)} parameters documented",
            f"only {len(documented)} of {len(params)} parameters documented (schema or description)",
        ),
        (
            bool(in_code),
            "the description explains parameters: " + ", ".join(sorted(in_code)),
            "the description adds nothing about parameters beyond the schema",
        ),
        (
            # Named in passing ("for a city") a parameter is found, not explained: the full mark
            # needs the schema to describe every parameter as well.
            len(described_in_schema) == len(params) and len(mentioned) >= 2 * len(params) / 3,
            "every parameter documented, most explained in the description",
            "short of the full mark: " + _short_of_full_marks(params, described_in_schema, mentioned),
        ),
    ]


def _short_of_full_marks(params: Iterable[str], described_in_schema: set[str], mentioned: set[str]) -> str:
    """Which parameters keep the full mark away: every one without a schema description, and,
    while fewer than two thirds are explained in the tool's description, the unexplained ones."""
    names = list(params)
    missing = []
    undescribed = [n for n in names if n not in described_in_schema]
    if undescribed:
        missing.append(
            f"{', '.join(undescribed)} {'has' if len(undescribed) == 1 else 'have'} no schema description"
        )
    if len(mentioned) < 2 * len(names) / 3:
        unexplained = [n for n in names if n not in mentioned]
        missing.append(f"{', '.join(unexplained)} not explained in the description (two thirds should be)")
    return "; ".join(missing)


def _mentions(text: str, name: str) -> bool:
    """`caseSensitive` is mentioned by "caseSensitive", "case_sensitive" or "case-sensitive"."""
    parts = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").split()
    pattern = r"[-_ ]?".join(re.escape(p) for p in parts)
    return re.search(rf"(?<![\w-]){pattern}(?![\w-])", text, re.I) is not None


def _conciseness(view: ToolView, found: list[LintFinding]) -> list[Signal]:
    tokens = estimate_tokens(view.description)
    whole = tokens + sum(estimate_tokens(p["description"]) for p in view.params.values() if described(p))
    first = len(words(view.first_sentence))
    repeated = any(f.rule_id == "SENTENCE_REPEATED" for f in found)
    filler = view.description.lower().startswith(FILLER_OPENERS)
    return [
        (
            tokens <= 300,
            f"description of about {tokens} tokens",
            f"description of about {tokens} tokens: long",
        ),
        (
            whole <= 600,
            f"whole definition about {whole} tokens",
            f"whole definition about {whole} tokens: heavy",
        ),
        (
            first <= 40 and not (repeated or filler),
            "front-loaded, no repetition or filler",
            "a long first sentence, repetition or filler delays the point",
        ),
    ]


def _completeness(view: ToolView, found: list[LintFinding]) -> list[Signal]:
    text = view.description
    needed = _word_budget(view)
    length = len(words(text))
    return [
        (
            "outputSchema" in view.tool or _has(RETURN_CUES, text),
            "what comes back is specified",
            "what comes back is unspecified",
        ),
        (
            _has(FAILURE_CUES, text) or _has(EMPTY_CUES, text),
            "errors or empty results are described",
            "errors and empty results are not described",
        ),
        (
            length >= needed,
            f"{length} words for {len(view.params)} parameters",
            f"{length} words for {len(view.params)} parameters (about {needed} expected)",
        ),
    ]


def _behaviour_undisclosed(view: ToolView) -> Gate | None:
    """TDQS: without annotations the description carries the full burden; one that discloses
    nothing at all scores 1. Any side effect, limit, failure, empty result or condition stated
    lifts it (terse is not silent), and so does an opening mutation verb; a read verb ("Gets ...")
    names the purpose and alone discloses nothing an agent can rely on."""
    text = view.description
    cues = (SIDE_EFFECT_CUES, LIMIT_CUES, FAILURE_CUES, EMPTY_CUES, CONSTRAINT_CUES)
    if _declares_hints(view) or any(_has(cue, text) for cue in cues) or _has(MUTATION_OPENERS, text):
        return None
    return Gate(
        1, "no annotations and nothing disclosed (side effects, limits, failures, conditions): scores 1"
    )


def _conciseness_under_specified(view: ToolView) -> Gate | None:
    """TDQS: "under-specification is not conciseness". A one-liner shorter than the tool's word
    budget (ten words, five more per parameter) leaves the agent guessing: at most 3."""
    length = len(words(view.description))
    if len(sentences(view.description)) > 1 or length >= _word_budget(view):
        return None
    return Gate(
        3,
        f"capped at 3: a one-liner of {length} words for {len(view.params)} parameters "
        f"(about {_word_budget(view)} expected) is under-specified, not concise",
    )


# Gates by dimension, applied after the signals (the error cap is added in score_tool).
_GATES: dict[str, tuple[Callable[[ToolView], Gate | None], ...]] = {
    "behaviour": (_behaviour_undisclosed,),
    "conciseness": (_conciseness_under_specified,),
}

_SIGNALS: dict[str, Callable[[ToolView, list[LintFinding]], list[Signal]]] = {
    "purpose": _purpose,
    "usage": _usage,
    "behaviour": _behaviour,
    "parameters": _parameters,
    "conciseness": _conciseness,
    "completeness": _completeness,
}

"""A deterministic TDQS-style score: six dimensions, 1 to 5, each with its reasons.

A described tool starts every dimension at 2 and gains a point for each of three signals met;
every reason names a signal, met or missed. Gates follow TDQS: no description scores 1
everywhere; a tautological one caps Purpose at 2; an error finding in a dimension caps it at 2.
Weights: Purpose 25, Usage 20, Behaviour 20, Parameters 15, Conciseness 10, Completeness 10.
Tiers: A >= 3.5, B >= 3.0, C >= 2.0, else D. A server scores 0.6 x mean + 0.4 x minimum."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .lint_checks import (
    EMPTY_CUES,
    FAILURE_CUES,
    FILLER_OPENERS,
    NEXT_STEP_CUES,
    RETURN_CUES,
    SIDE_EFFECT_CUES,
    TOOL_LIKE,
    LintFinding,
    ToolView,
)
from .lint_signals import described, estimate_tokens, name_words, sentences, words

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
RESOURCE_NOUNS = re.compile(
    r"\b(files?|director(y|ies)|folders?|records?|pages?|web|text|code|documents?|sources?|rows?|tables?|"
    r"urls?|issues?|messages?|items?|database|repositor(y|ies)|projects?|passages?)\b",
    re.I,
)

Signal = tuple[bool, str, str]  # (met, why when met, why when missed)


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
        if dimension in errors:
            score = min(score, 2)
            reasons.append("capped at 2 by an error finding: " + _rules_of(found, dimension))
        dims.append(DimensionScore(dimension, score, tuple(reasons)))
    return ToolScore(view.name, tuple(dims))


def _rules_of(found: list[LintFinding], category: str) -> str:
    return ", ".join(sorted({f.rule_id for f in found if f.category == category and f.severity == "error"}))


def _has(pattern: re.Pattern[str], text: str) -> bool:
    return pattern.search(text) is not None


def _names_another_tool(view: ToolView) -> bool:
    if any(re.search(rf"\b{re.escape(s)}\b", view.description) for s in view.siblings):
        return True
    quoted = re.findall(r"`([A-Za-z_][\w.]*)`", view.description)
    bare = [w for w in words(view.description) if TOOL_LIKE.match(w)]
    return any(w not in view.own_words for w in quoted + bare)


def _purpose(view: ToolView, found: list[LintFinding]) -> list[Signal]:
    first = view.first_sentence
    count = len(words(first))
    added = {w.lower() for w in words(first) if len(w) > 3} - name_words(view.name, view.tool.get("title"))
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
        (_names_another_tool(view), "names the alternative tools", "names no alternative tool"),
        (
            _has(WHEN_NOT_CUES, text) or _has(NEXT_STEP_CUES, text),
            "says when not to use it or how to refine",
            "says neither when not to use it nor how to refine a call",
        ),
    ]


def _behaviour(view: ToolView, found: list[LintFinding]) -> list[Signal]:
    text = view.description
    return [
        (
            bool(view.annotations) or _has(SIDE_EFFECT_CUES, text) or _has(READ_VERBS, view.first_sentence),
            "side effects declared (annotations, or stated)",
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
        return [(True, "no parameters to explain", "")] * 3
    mentioned = {n for n in params if _mentions(view.description, n)}
    documented = {n for n, p in params.items() if described(p)} | mentioned
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
            len(documented) == len(params) and len(mentioned) >= 2 * len(params) / 3,
            "every parameter documented, most explained in the description",
            "not every parameter is documented and explained in the description",
        ),
    ]


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
    needed = 10 + 5 * len(view.params)
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


_SIGNALS: dict[str, Callable[[ToolView, list[LintFinding]], list[Signal]]] = {
    "purpose": _purpose,
    "usage": _usage,
    "behaviour": _behaviour,
    "parameters": _parameters,
    "conciseness": _conciseness,
    "completeness": _completeness,
}

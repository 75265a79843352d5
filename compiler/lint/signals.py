"""Measurements of a tool definition that lint rules and scores are built on: sentences, words,
token estimates, parameter coverage, quoted names, claims of writing, and the invocation cost
TDQS defines for shadowing."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`'\"(])|\n\s*\n")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")
_LOCAL_REF = re.compile(r"#/(\$defs|definitions)/([^/]+)")
MAX_COST_DEPTH = 10


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def words(text: str) -> list[str]:
    return _WORD.findall(text)


def estimate_tokens(text: str) -> int:
    """About four characters a token for English and code: the usual rule of thumb."""
    return math.ceil(len(text) / 4)


def name_words(*names: str | None) -> set[str]:
    """`search_project_text`, `deepSearch`, "Search text" -> {'search', 'project', 'text', 'deep'}."""
    found: set[str] = set()
    for name in names:
        if name:
            spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
            found |= {w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w}
    return found


def stem(word: str) -> str:
    """Just enough English inflection to see that "Gets", "searches" and "tables" are the name's
    "get", "search" and "table": a possessive, -ies, -es after a sibilant, and a plural or
    third-person -s. Anything cleverer would need a dictionary."""
    word = word.lower().removesuffix("'s").removesuffix("\u2019s")
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def added_words(sentence: str, *names: str | None) -> set[str]:
    """Words of more than three letters in `sentence` that the name and title do not already say:
    what a purpose sentence adds to the name ("Gets the weather for a city" adds only 'city' to
    get_weather)."""
    known = {stem(w) for w in name_words(*names)}
    return {stem(w) for w in words(sentence) if len(w) > 3} - known


def properties(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return props if isinstance(props, dict) else {}


def described(prop: Any) -> bool:
    return (
        isinstance(prop, dict) and isinstance(prop.get("description"), str) and len(prop["description"]) > 0
    )


def schema_coverage(schema: Mapping[str, Any] | None) -> int | None:
    """Percent of top-level parameters with a schema description (None without parameters),
    rounded half up as TDQS does."""
    props = properties(schema)
    if not props:
        return None
    return math.floor(100 * sum(described(p) for p in props.values()) / len(props) + 0.5)


# --- claims of writing ---------------------------------------------------------------------
# What a read-only tool must not say it does. Only a present claim counts: the third person
# ("deletes"), the imperative or base form ("Delete the note"), a gerund, or a present passive
# ("are deleted"). A past form describes a state or a history ("the last modified date", "the
# commit that last modified each line", "deleted notes in the trash"), not what the call does.
_CLAIM_VERBS = re.compile(
    r"\b(creates?|deletes?|deleting|overwrites?|overwriting|modif(?:y|ies|ying)|erases?|erasing|"
    r"destroys?|destroying)\b",
    re.IGNORECASE,
)
# Words that are as often nouns ("the writes per table", "packet drops", "recent uploads") count
# only with an object or a destination after them: "writes a file", "sends it to", "drops the table".
_CLAIM_VERBS_WITH_OBJECT = re.compile(
    r"\b(writes?|writing|sends?|sending|uploads?|uploading|drops?|dropping)\b(?=\s+(?:to|into|the|a|an|"
    r"it|them|its|your|their|this|these|those|all|any|every|each|data|files?|records?|messages?|emails?)\b)",
    re.IGNORECASE,
)
# A passive claims a write only with a participle that cannot mean anything else: "is written" is
# as often "authored" and "is dropped" "left out of the answer" ("a leading BOM is dropped"), so
# those count only with a destination ("is written to disk"); "sent" and "created" never do.
_PRESENT_PASSIVE = re.compile(
    r"\b(?:is|are|will be|gets?)\s+(?:(?:also|then|permanently|automatically)\s+)?"
    r"(?:deleted|overwritten|modified|erased|destroyed|(?:written|saved|uploaded)\s+(?:to|into))\b",
    re.IGNORECASE,
)
# A claim's clause ends at a sentence or clause mark or a contrast ("reads notes, but deletes ...").
_CLAUSE_BREAK = re.compile(
    r"[.;:!?()\n\u2013\u2014]|\b(?:but|however|although|though|whereas|except|yet)\b", re.I
)
# "never" and "nor" negate any form; do-support ("does not", "doesn't") takes a base form, so it
# negates "delete" but not a later "deletes" ("does not ask first and deletes the file").
_NEGATES_ANY = re.compile(r"\b(?:never|nor|neither|without)\b", re.IGNORECASE)
_NEGATES_BASE = re.compile(r"\b(?:not|cannot|\w+n['\u2019]t)\b", re.IGNORECASE)
# "No files are deleted", "nothing is written": a negative subject opens the clause.
_NEGATIVE_SUBJECT = re.compile(r"^\W*(?:no|nothing|none|neither)\b", re.IGNORECASE)
# "modifies nothing", "deletes no files": a negative object follows the verb.
_NEGATIVE_OBJECT = re.compile(r"^\s+(?:nothing|no|none)\b", re.IGNORECASE)
# Someone else acts or nothing is claimed: the agent ("you"), a hypothetical ("would delete"), an
# intention or a sibling's job ("to delete one, call `delete_note`"), a sequence ("before deleting").
_OTHER_ACTOR = re.compile(r"\b(?:you|your|user|agent|caller)\b", re.IGNORECASE)
# A relative pronoun right before ("functions that modify state", "files that are modified") or a
# subordinate clause ("find where something is modified") describes other things, not the call.
_NOT_A_CLAIM_BEFORE = {"to", "would", "could", "might", "should", "may", "before", "after", "the", "a", "an"}
_RELATIVE_BEFORE = {"that", "which", "who"}
_SUBORDINATE = re.compile(r"\b(?:where|whether|when|how|if|what)\b", re.IGNORECASE)
# Sending a request or a query is how a read reaches a server, not a write.
_SENDS_A_REQUEST = re.compile(r"^(?:\s+\S+){0,3}?\s+(?:requests?|quer(?:y|ies))\b", re.IGNORECASE)
# Words before a claim that a negation still governs: "does not create, update, modify or delete".
_NEGATION_REACH = 8


def write_claims(text: str) -> list[str]:
    """The phrases in which `text` says the tool itself creates, changes, deletes or sends
    something, in the order they appear."""
    matches = [
        *_CLAIM_VERBS.finditer(text),
        *_CLAIM_VERBS_WITH_OBJECT.finditer(text),
        *_PRESENT_PASSIVE.finditer(text),
    ]
    return [m.group(0) for m in sorted(matches, key=lambda m: m.start()) if _is_claim(text, m)]


def _is_claim(text: str, match: re.Match[str]) -> bool:
    clause = _CLAUSE_BREAK.split(text[: match.start()])[-1]
    before = clause.split()[-_NEGATION_REACH:]
    reach = " ".join(before)
    verb = match.group(0).split()[0].lower()
    third_person = verb.endswith("s") and not verb.endswith("ss")
    after = text[match.end() :]
    if _has(_NEGATES_ANY, reach) or _has(_NEGATIVE_SUBJECT, clause) or _has(_NEGATIVE_OBJECT, after):
        return False
    if _has(_NEGATES_BASE, reach) and not third_person:
        return False
    previous = before[-1].lower() if before else ""
    if _has(_OTHER_ACTOR, clause) or previous in _NOT_A_CLAIM_BEFORE | _RELATIVE_BEFORE:
        return False
    if _has(_SUBORDINATE, clause.split(",")[-1]):
        return False
    return not (verb.startswith("send") and _has(_SENDS_A_REQUEST, after))


def _has(pattern: re.Pattern[str], text: str) -> bool:
    return pattern.search(text) is not None


def invocation_cost(schema: Mapping[str, Any] | None) -> int:
    """TDQS's proxy for the work of filling a schema in: required fields in the required
    subtree, plus 2 per object level below the first, plus 2 per extra union branch."""
    if not isinstance(schema, Mapping) or not properties(schema):
        return 0
    fields, depth, unions = _visit(schema, schema, 0, frozenset())
    return fields + 2 * max(0, depth - 1) + 2 * unions


def _resolve(root: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any] | None:
    ref = node.get("$ref")
    if not isinstance(ref, str):
        return node
    match = _LOCAL_REF.fullmatch(ref)
    if match is None:
        return None
    defs = root.get(match.group(1))
    target = defs.get(match.group(2)) if isinstance(defs, dict) else None
    return target if isinstance(target, dict) else None


def _is_null(node: Any) -> bool:
    kind = node.get("type") if isinstance(node, dict) else None
    return kind == "null" or kind == ["null"]


def _visit(
    root: Mapping[str, Any], node: Any, parent_depth: int, seen: frozenset[str]
) -> tuple[int, int, int]:
    """(required fields, deepest object level, extra union branches) reachable from `node`
    through required properties. `items`, `allOf`, `not` and union branches refine the node
    they sit on, so they are visited at the parent's depth; of a union only the widest branch
    adds fields, and the nullable idiom (`X | null`) is no choice."""
    if not isinstance(node, dict):
        return 0, parent_depth, 0
    ref = node.get("$ref") if isinstance(node.get("$ref"), str) else None
    if ref is not None and ref in seen:
        return 0, parent_depth, 0
    resolved = _resolve(root, node)
    if resolved is None:
        return 0, parent_depth, 0
    seen = seen | {ref} if ref else seen
    fields, deepest, unions = 0, parent_depth, 0

    def add(visit: tuple[int, int, int]) -> None:
        nonlocal fields, deepest, unions
        fields, deepest, unions = fields + visit[0], max(deepest, visit[1]), unions + visit[2]

    props = properties(resolved)
    if props and parent_depth < MAX_COST_DEPTH:
        depth = parent_depth + 1
        deepest = max(deepest, depth)
        required = resolved.get("required") if isinstance(resolved.get("required"), list) else []
        for name in (n for n in required if isinstance(n, str)):
            fields += 1  # a required name counts even without a schema: it must be supplied
            if name in props:
                add(_visit(root, props[name], depth, seen))
    if isinstance(resolved.get("items"), dict):
        add(_visit(root, resolved["items"], parent_depth, seen))
    for branch in resolved.get("allOf") if isinstance(resolved.get("allOf"), list) else []:
        add(_visit(root, branch, parent_depth, seen))
    if isinstance(resolved.get("not"), dict):
        deepest = max(deepest, _visit(root, resolved["not"], parent_depth, seen)[1])
    for keyword in ("oneOf", "anyOf"):
        branches = resolved.get(keyword)
        if not isinstance(branches, list) or not branches:
            continue
        visits = [_visit(root, b, parent_depth, seen) for b in branches if not _is_null(b)]
        if visits:
            widest = max(visits, key=lambda visit: visit[0])  # first of the widest, as TDQS picks
            fields, unions = fields + widest[0], unions + widest[2]
            deepest = max(deepest, *(visit[1] for visit in visits))
        unions += max(0, len(visits) - 1)
    return fields, deepest, unions

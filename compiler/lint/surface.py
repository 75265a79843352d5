"""Lint of prompts and MCP resources (issue 31): what a client shows a user choosing a prompt,
and what an agent reads before reading a resource, from their wire entries (`prompts/list`,
`resources/list`, `resources/templates/list`), so servers lynxc did not build are linted alike.

Each description is present, neither a few words nor past its budget, free of placeholder text,
and says what it is for (a prompt: what it produces or when to pick it; a resource: what it
holds or when to read it); it quotes only names that exist: a prompt's `{name}`, `{{ name }}`
or "argument `name`" must be one of its arguments, a template's `{name}` one of its variables.
A prompt's arguments each have a description that adds to their name. Findings point at the
prompt's or resource's line in a spec (its argument's, for an argument), and are suppressed by
the server's `lint: suppress` (a prompt or resource carries no suppressions of its own).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..diagnostics import Span
from ..wire import ServerWire
from .checks import EMPTY_PARAM_WORDS, RETURN_CUES, USAGE_CUES, LintFinding
from .signals import estimate_tokens, name_words, stem, words

MIN_WORDS = 4  # fewer words than this say nothing a name does not
TOKEN_BUDGET = 300  # a prompt or resource description, about 1200 characters
PLACEHOLDER = re.compile(r"\b(TODO|TBD|FIXME|XXX|lorem ipsum)\b|\bdescription (here|goes here)\b|^\W*$", re.I)
# What a prompt produces or asks for ("Summarize ...", "Drafts a reply", "asks the model ...").
PROMPT_PURPOSE = re.compile(
    r"\b(asks?|ask for|produces?|drafts?|writes?|summari[sz]es?|explains?|reviews?|generates?|"
    r"creates?|compares?|lists?|suggests?|plans?|answers?|translates?|requests?|pick|choose)\b",
    re.I,
)
# What a resource holds.
CONTENT_CUES = re.compile(
    r"\b(holds?|contains?|lists?|describes?|documents?|content|data|records?|reads?|each|one \w+ per|"
    r"text|image|file|blob|object|page|table|json|markdown|csv|png|pdf|html|yaml)\b",
    re.I,
)
# `{name}` / `{{ name }}` (a template's or Jinja placeholder) and "argument `name`" / "`name` argument".
PLACEHOLDERS = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}|(?<![{\w])\{([A-Za-z_][\w.]*)\}(?!\})")
ARGUMENT_QUOTE = re.compile(r"\bargument\s+`([^`\s]+)`|`([^`\s]+)`\s+argument\b", re.I)
URI_TOKEN = re.compile(r"\S+://\S*")


def check_surface(server: ServerWire) -> Iterator[LintFinding]:
    """Findings for every prompt and MCP resource the server offers (none when unknown)."""
    for prompt in server.prompts or ():
        yield from _prompt(server, prompt)
    mcp = server.mcp_resources or {}
    for resource in mcp.get("resources", ()):
        yield from _resource(server, resource, None)
    for template in mcp.get("resourceTemplates", ()):
        yield from _resource(server, template, _variables(template.get("uriTemplate")))


def _prompt(server: ServerWire, prompt: Mapping[str, Any]) -> Iterator[LintFinding]:
    name = str(prompt.get("name"))
    who = f"prompt '{name}'"
    span = server.prompt_spans.get((name, None))
    arguments = [a for a in prompt.get("arguments") or () if isinstance(a, dict)]
    declared = {str(a.get("name")) for a in arguments}
    description = prompt.get("description")
    if not isinstance(description, str) or not description.strip():
        yield LintFinding("PROMPT_DESCRIPTION_MISSING", None, f"{who} has no description", span=span)
    else:
        yield from _description(who, "PROMPT", description, span)
        if not (PROMPT_PURPOSE.search(description) or USAGE_CUES.search(description)):
            yield LintFinding(
                "PROMPT_USAGE_UNDESCRIBED",
                None,
                f"{who}: say what it produces or when to pick it (a user chooses among prompts by it)",
                span=span,
            )
        quoted = _quoted(URI_TOKEN.sub(" ", description)) - declared
        if quoted:
            known = ", ".join(sorted(declared)) or "none"
            yield LintFinding(
                "PROMPT_ARGUMENT_UNDECLARED",
                None,
                f"{who}: quotes {_names(quoted)}, which it does not declare (arguments: {known})",
                span=span,
            )
    for argument in arguments:
        yield from _argument(server, name, argument, declared)


def _argument(
    server: ServerWire, prompt: str, argument: Mapping[str, Any], declared: set[str]
) -> Iterator[LintFinding]:
    name = str(argument.get("name"))
    who = f"prompt '{prompt}': argument '{name}'"
    span = server.prompt_spans.get((prompt, name)) or server.prompt_spans.get((prompt, None))
    description = argument.get("description")
    if not isinstance(description, str) or not description.strip():
        yield LintFinding(
            "PROMPT_ARGUMENT_DESCRIPTION_MISSING", None, f"{who} has no description", name, span
        )
        return
    if PLACEHOLDER.search(description):
        yield LintFinding(
            "PROMPT_PLACEHOLDER_TEXT", None, f"{who}: description is placeholder text", name, span
        )
    elif {stem(w) for w in words(description)} - EMPTY_PARAM_WORDS <= {
        stem(w) for w in name_words(name, argument.get("title"))
    }:
        yield LintFinding(
            "PROMPT_ARGUMENT_DESCRIPTION_RESTATES_NAME",
            None,
            f"{who}: description adds nothing to the name; say what to pass, with an example",
            name,
            span,
        )
    quoted = _quoted(URI_TOKEN.sub(" ", description)) - declared
    if quoted:
        yield LintFinding(
            "PROMPT_ARGUMENT_UNDECLARED",
            None,
            f"{who}: quotes {_names(quoted)}, which the prompt does not declare",
            name,
            span,
        )


def _resource(
    server: ServerWire, entry: Mapping[str, Any], variables: set[str] | None
) -> Iterator[LintFinding]:
    templated = variables is not None
    key = ("template", str(entry.get("name"))) if templated else ("uri", str(entry.get("uri")))
    who = f"resource template '{key[1]}'" if templated else f"resource {key[1]}"
    span = server.mcp_resource_spans.get(key)
    description = entry.get("description")
    if not isinstance(description, str) or not description.strip():
        yield LintFinding("RESOURCE_DESCRIPTION_MISSING", None, f"{who} has no description", span=span)
        return
    yield from _description(who, "RESOURCE", description, span)
    if not (
        CONTENT_CUES.search(description) or RETURN_CUES.search(description) or USAGE_CUES.search(description)
    ):
        yield LintFinding(
            "RESOURCE_CONTENT_UNDESCRIBED",
            None,
            f"{who}: say what it holds or returns, or when to read it",
            span=span,
        )
    if templated:
        quoted = _quoted(URI_TOKEN.sub(" ", description)) - (variables or set())
        if quoted:
            known = ", ".join(sorted(variables or ())) or "none"
            yield LintFinding(
                "RESOURCE_VARIABLE_UNDECLARED",
                None,
                f"{who}: quotes {_names(quoted)}, which its uriTemplate does not have (variables: {known})",
                span=span,
            )


def _description(who: str, kind: str, description: str, span: Span | None) -> Iterator[LintFinding]:
    if PLACEHOLDER.search(description):
        yield LintFinding(
            f"{kind}_PLACEHOLDER_TEXT", None, f"{who}: description is placeholder text", span=span
        )
    count = len(words(description))
    if count < MIN_WORDS:
        yield LintFinding(
            f"{kind}_DESCRIPTION_TOO_SHORT",
            None,
            f"{who}: description has {count} word{'s' if count != 1 else ''}; say what it is for",
            span=span,
        )
    tokens = estimate_tokens(description)
    if tokens > TOKEN_BUDGET:
        yield LintFinding(
            f"{kind}_DESCRIPTION_TOO_LONG",
            None,
            f"{who}: description is about {tokens} tokens, over {TOKEN_BUDGET}",
            span=span,
        )


def _quoted(text: str) -> set[str]:
    found = {a or b for a, b in PLACEHOLDERS.findall(text)}
    found |= {a or b for a, b in ARGUMENT_QUOTE.findall(text)}
    return found


def _variables(template: Any) -> set[str]:
    if not isinstance(template, str):
        return set()
    from lynxc.runtime.resource_media import uri_templates  # the SDK's parser, without the SDK

    templates = uri_templates()
    try:
        return set(templates.UriTemplate.parse(template).variable_names)
    except templates.InvalidUriTemplate:
        return set()


def _names(names: set[str]) -> str:
    return ", ".join(f"'{name}'" for name in sorted(names))

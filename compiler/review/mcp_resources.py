"""Diff and judge the MCP resources a server offers: the entries of its `resources/list` and
`resources/templates/list` answers. (The records a server declares are `review.resources`.)

Static resources are matched by URI (what clients read them by; a new name for the same URI is a
changed field), templates by name, so that an edited template is judged, not removed and added.
A template removed and one added with the same `uriTemplate` is a rename, one change of its name.
Paths read `Resource docs://guide / size` and `Resource template pep / uriTemplate`.

A changed `uriTemplate` is judged by the URIs it matches, with the SDK's RFC 6570 implementation
(`mcp.shared.uri_template.UriTemplate`): the old template is expanded with probe values and
each URI matched with the new one; a URI the old template matched that the new one does not
means clients holding such URIs fail (narrowed, breaking); the reverse direction says the new
one matches more (widened). Both matching each other is the same set of URIs written anew
(`pep://{number}` -> `pep://{n}`): reads keep working, but completions name a template by its
text, so a reviewer is told. Probes cannot prove two templates equal; they catch what a
reviewer would: a literal, a variable or an operator added, removed or changed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..diagnostics import Span
from ..wire import ServerWire
from .diff import MISSING, Change, same_json
from .judge_context import Finding

if TYPE_CHECKING:
    from mcp.shared.uri_template import UriTemplate

STATIC = "uri"
TEMPLATE = "template"
STATIC_PREFIX = "Resource "
TEMPLATE_PREFIX = "Resource template "
# Values a template variable is expanded with to probe what it matches: digits, letters,
# the unreserved punctuation, a space (percent-encoded), a slash (kept by {+var}) and non-ASCII.
PROBES = ("8", "abc", "Ab-9_z.x~", "a b", "a/b", "é")


def diff_mcp_resources(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    """Changes from one `{"resources": [...], "resourceTemplates": [...]}` to another: static
    resources in URI order, then templates in name order, each one's changes in path order."""
    static = _diff_static(_listed(before, "resources", "uri"), _listed(after, "resources", "uri"))
    templates = _diff_templates(
        _listed(before, "resourceTemplates", "name"), _listed(after, "resourceTemplates", "name")
    )
    return [*static, *templates]


def _listed(document: Mapping[str, Any], key: str, by: str) -> dict[str, dict[str, Any]]:
    entries = document.get(key) if isinstance(document, Mapping) else None
    if not isinstance(entries, list):
        return {}
    return {str(e[by]): e for e in entries if isinstance(e, dict) and isinstance(e.get(by), str)}


def _diff_static(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> Iterator[Change]:
    for uri in sorted(old.keys() | new.keys()):
        subject = (STATIC, uri)
        head = (STATIC_PREFIX + uri,)
        if uri not in new:
            yield Change("removed", "", head, before=old[uri], mcp_resource=subject)
        elif uri not in old:
            yield Change("added", "", head, after=new[uri], mcp_resource=subject)
        else:
            yield from sorted(_fields(subject, head, old[uri], new[uri], {"uri"}), key=lambda c: c.path)


def _diff_templates(old: dict[str, dict[str, Any]], new: dict[str, dict[str, Any]]) -> Iterator[Change]:
    removed = [name for name in sorted(old) if name not in new]
    added = [name for name in sorted(new) if name not in old]
    renamed: dict[str, str] = {}  # new name -> old name, when the template is the same
    for name in added:
        same = next(
            (r for r in removed if r not in renamed.values() and _template(old[r]) == _template(new[name])),
            None,
        )
        if same is not None and _template(new[name]) is not None:
            renamed[name] = same
    gone = set(renamed.values())
    for name in sorted((old.keys() | new.keys()) - gone):
        subject = (TEMPLATE, name)
        head = (TEMPLATE_PREFIX + name,)
        if name in renamed:
            was = renamed[name]
            changes = [Change("changed", "", (*head, "name"), before=was, after=name, mcp_resource=subject)]
            changes += _fields(subject, head, old[was], new[name], {"name"})
            yield from sorted(changes, key=lambda c: c.path)
        elif name not in new:
            yield Change("removed", "", head, before=old[name], mcp_resource=subject)
        elif name not in old:
            yield Change("added", "", head, after=new[name], mcp_resource=subject)
        else:
            yield from sorted(_fields(subject, head, old[name], new[name], {"name"}), key=lambda c: c.path)


def _template(entry: Mapping[str, Any]) -> str | None:
    value = entry.get("uriTemplate")
    return value if isinstance(value, str) else None


def _fields(
    subject: tuple[str, str],
    head: tuple[str, ...],
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    key: set[str],
) -> Iterator[Change]:
    """Each field of the entry compared as a whole (null read as absent)."""
    for field in sorted((old.keys() | new.keys()) - key):
        before = MISSING if old.get(field) is None else old[field]
        after = MISSING if new.get(field) is None else new[field]
        path = (*head, field)
        if before is MISSING and after is MISSING:
            continue
        if before is MISSING:
            yield Change("added", "", path, after=after, mcp_resource=subject)
        elif after is MISSING:
            yield Change("removed", "", path, before=before, mcp_resource=subject)
        elif not same_json(before, after):
            yield Change("changed", "", path, before=before, after=after, mcp_resource=subject)


def mcp_resource_span(side: ServerWire, change: Change) -> Span | None:
    """Where the resource or template a change is about is declared in a spec."""
    return side.mcp_resource_spans.get(change.mcp_resource) if change.mcp_resource else None


# --- judging ------------------------------------------------------------------------------


def judge_mcp_resource(change: Change) -> Finding:
    kind, key = change.mcp_resource or (STATIC, "")
    static = kind == STATIC
    who = f"resource {key}" if static else f"resource template '{key}'"
    path = change.path[1:]
    if not path:
        if change.op == "removed":
            rule = "RESOURCE_URI_REMOVED" if static else "RESOURCE_TEMPLATE_REMOVED"
            reads = "reading it fails" if static else "reading the URIs it matched fails"
            return Finding(change, rule, f"{who} was removed: {reads}")
        return Finding(
            change, "RESOURCE_URI_ADDED" if static else "RESOURCE_TEMPLATE_ADDED", f"{who} was added"
        )
    field = path[0]
    if field == "mimeType" and change.op == "added":
        return Finding(change, "RESOURCE_MIME_TYPE_DECLARED", f"{who}: now declares MIME type {change.after}")
    if field == "mimeType":
        return Finding(
            change,
            "RESOURCE_MIME_TYPE_CHANGED",
            f"{who}: MIME type {_shown(change.before)} -> {_shown(change.after)}: "
            "clients parse its contents by it",
        )
    if field == "uriTemplate" and not static:
        return _uri_template(change, who)
    if field == "name" and not static:
        return Finding(
            change,
            "RESOURCE_TEMPLATE_RENAMED",
            f"resource template '{change.before}' is now named '{key}'; its URIs read as before",
        )
    rule = _INFO_FIELDS.get((kind, field))
    if rule is not None:
        return Finding(change, rule, f"{who}: {field} {change.op}")
    rule = "RESOURCE_URI_CHANGED" if static else "RESOURCE_TEMPLATE_CHANGED"
    return Finding(change, rule, f"{who}: '{field}' {change.op}, a change lynxc cannot classify; review it")


_INFO_FIELDS = {
    (STATIC, "name"): "RESOURCE_URI_NAME_CHANGED",
    (STATIC, "title"): "RESOURCE_URI_TITLE_CHANGED",
    (STATIC, "description"): "RESOURCE_URI_DESCRIPTION_CHANGED",
    (STATIC, "size"): "RESOURCE_URI_SIZE_CHANGED",
    (TEMPLATE, "title"): "RESOURCE_TEMPLATE_TITLE_CHANGED",
    (TEMPLATE, "description"): "RESOURCE_TEMPLATE_DESCRIPTION_CHANGED",
}


def _uri_template(change: Change, who: str) -> Finding:
    old, new = _parsed(change.before), _parsed(change.after)
    if old is None or new is None:
        return Finding(
            change,
            "RESOURCE_TEMPLATE_CHANGED",
            f"{who}: uriTemplate {change.op}, and one side is no RFC 6570 template lynxc can read; review it",
        )
    lost = unmatched(old, new)
    if lost is not None:
        return Finding(
            change,
            "RESOURCE_TEMPLATE_NARROWED",
            f"{who} no longer matches URIs it matched, such as {lost}: reading them fails",
        )
    gained = unmatched(new, old)
    if gained is not None:
        return Finding(
            change,
            "RESOURCE_TEMPLATE_WIDENED",
            f"{who} now also matches URIs such as {gained}; every URI it matched still reads",
        )
    return Finding(
        change,
        "RESOURCE_TEMPLATE_REWRITTEN",
        f"{who} matches the same URIs, written anew: completion requests name the template by its "
        "text, so clients that complete its variables must send the new one",
    )


def still_matched(uri: str, templates: list[dict[str, Any]]) -> str | None:
    """The name of a template of `templates` that matches `uri` (a static resource removed from
    resources/list may still read through one), else None."""
    for entry in templates:
        template = _parsed(entry.get("uriTemplate"))
        if template is not None and template.match(uri) is not None:
            return str(entry.get("name"))
    return None


def _parsed(value: Any) -> UriTemplate | None:
    if not isinstance(value, str):
        return None
    # The SDK's own parser, its one file loaded alone: `lynxc build` and `diff` stay clear of the SDK.
    from lynxc.runtime.resource_media import uri_templates

    templates = uri_templates()
    try:
        return templates.UriTemplate.parse(value)
    except templates.InvalidUriTemplate:
        return None


def unmatched(old: UriTemplate, new: UriTemplate) -> str | None:
    """A URI that `old` matches (an expansion of it with probe values) and `new` does not;
    None when `new` matches every probe."""
    for uri in probe_uris(old):
        if old.match(uri) is not None and new.match(uri) is None:
            return uri
    return None


def probe_uris(template: UriTemplate) -> Iterator[str]:
    """Expansions of `template`: every variable given each probe value, then each variable its
    own value (templates that need two values to differ), then the optional query variables left
    out. Explode variables get one and two values. Deduplicated, bounded by the probes."""
    variables = template.variables
    optional = template.query_variable_names

    def value(variable: Any, probe: str) -> str | list[str]:
        return [probe, probe + "2"] if variable.explode else probe

    seen: set[str] = set()
    assignments: Iterator[dict[str, str | list[str]]] = itertools.chain(
        ({v.name: value(v, probe) for v in variables} for probe in PROBES),
        [{v.name: value(v, f"v{index}") for index, v in enumerate(variables)}],
        [{v.name: value(v, "8") for v in variables if v.name not in optional}],
    )
    for assignment in assignments:
        uri = template.expand(assignment)
        if uri not in seen:
            seen.add(uri)
            yield uri


def _shown(value: Any) -> str:
    return "(none)" if value is MISSING else str(value)

"""Check the completion sources of prompt arguments and resource-template variables (issue 31)
and lower them into completions.json:

    {"prompts": {prompt: {argument: source}}, "resources": {uriTemplate: {variable: source}}}

where a source is one of `{"values": [...]}`, `{"collection": c, "field": f}`, `{"sql": text,
"statement": what the engine runs, "params": [...]}` or `{"function": "package.module:fn"}`.

A SQL source is checked the way a SQL tool's statement is (compiler/lower/sql/): against the
build's DuckDB of the declared data, bound with `$value` and the other argument names, and
must return exactly one column. A function is imported in the backend probe's child process.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lynxc.runtime.backend import resolve_target
from lynxc.runtime.prompt_templates import MAX_SQL_VALUES, sql_statement
from lynxc.runtime.resource_media import uri_templates

from ..diagnostics import Diagnostic, Span
from ..limits import SQL_CHECK_CPU_SECONDS, SQL_CHECK_WALL_SECONDS
from ..rules import diagnostic
from ..spec.source import NodePath, SourceDoc
from ..spec.surface import CompletionSource
from ..suggest import did_you_mean
from .backend_probe import read_declarations, refused_target
from .sql.check import is_sql_tool

if TYPE_CHECKING:
    from ..cache import Store
    from ..spec.load import SpecSource

# Record field types whose values a user types (a `text` field's long bodies are no completion,
# and the records frame completions read does not hold them).
COMPLETABLE_TYPES = ("string", "integer", "enum")


@dataclass(frozen=True)
class CompletionSite:
    """One completed argument or variable: whose, which, the names beside it, where."""

    kind: str  # "prompts" or "resources"
    owner: str  # the prompt's name, or the resource's uriTemplate
    name: str  # the argument or variable
    siblings: tuple[str, ...]  # the owner's other arguments or variables (SQL may bind them)
    source: CompletionSource
    doc: SourceDoc
    path: NodePath  # where `complete:` sits


@dataclass
class CompletionCheck:
    document: dict[str, dict[str, dict[str, Any]]] = field(
        default_factory=lambda: {"prompts": {}, "resources": {}}
    )
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[tuple[str, str]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.document["prompts"] and not self.document["resources"]


def prompt_sites(prompts: Iterable[Any]) -> list[CompletionSite]:
    """The completed arguments of prompts (items with .doc, .prompt, .base)."""
    sites = []
    for item in prompts:
        names = tuple(item.prompt.arguments)
        for name, argument in item.prompt.arguments.items():
            if argument.complete is not None:
                sites.append(
                    CompletionSite(
                        "prompts",
                        item.prompt.name,
                        name,
                        tuple(n for n in names if n != name),
                        argument.complete,
                        item.doc,
                        (*item.base, "arguments", name, "complete"),
                    )
                )
    return sites


def resource_sites(resources: Iterable[Any]) -> tuple[list[CompletionSite], list[Diagnostic]]:
    """The completed variables of resource templates (items with .doc, .resource, .base); a
    variable that is not its template's is refused."""
    sites, found = [], []
    for item in resources:
        resource = item.resource
        if not resource.variables:
            continue
        templates = uri_templates()  # the SDK's parser, without loading the SDK (a build stays light)
        UriTemplate, InvalidUriTemplate = templates.UriTemplate, templates.InvalidUriTemplate

        if resource.uri_template is None:
            found.append(
                diagnostic(
                    "COMPLETION_VARIABLE_UNKNOWN",
                    f"resource '{resource.name}' has a fixed uri: it has no variables to complete",
                    item.doc.span((*item.base, "variables"), key=True),
                )
            )
            continue
        try:
            names = UriTemplate.parse(resource.uri_template).variable_names
        except InvalidUriTemplate:
            continue  # the resources lowering reports the template
        for name, variable in resource.variables.items():
            path = (*item.base, "variables", name)
            if name not in names:
                found.append(
                    diagnostic(
                        "COMPLETION_VARIABLE_UNKNOWN",
                        f"'{name}' is no variable of {resource.uri_template}",
                        item.doc.span(path, key=True),
                        did_you_mean(name, names) or "its variables: " + (", ".join(names) or "none"),
                    )
                )
                continue
            if variable.complete is not None:
                sites.append(
                    CompletionSite(
                        "resources",
                        resource.uri_template,
                        name,
                        tuple(n for n in names if n != name),
                        variable.complete,
                        item.doc,
                        (*path, "complete"),
                    )
                )
    return sites, found


def check_completions(
    sites: Sequence[CompletionSite],
    collections: Mapping[str, Mapping[str, str]],
    source: SpecSource | None,
    *,
    check_functions: bool = True,
    cache: Store | None = None,
) -> CompletionCheck:
    """Check every site; `collections` maps each declared collection to {field: type} of its
    top-level fields; `source` is the spec (its SQL data) for SQL sources."""
    result = CompletionCheck()
    checked: list[tuple[CompletionSite, dict[str, Any]]] = []
    sql_sites: list[CompletionSite] = []
    function_sites: list[CompletionSite] = []
    for site in sites:
        entry = _check_shape(site, collections, result.diagnostics)
        if entry is None:
            continue
        if "sql" in entry:
            sql_sites.append(site)
        elif "function" in entry:
            function_sites.append(site)
            checked.append((site, entry))
        else:
            checked.append((site, entry))
    if sql_sites:
        checked.extend(_check_sql(sql_sites, source, result))
    if function_sites and check_functions:
        result.diagnostics.extend(_check_functions(function_sites, cache))
    for site, entry in checked:
        result.document[site.kind].setdefault(site.owner, {})[site.name] = entry
    return result


def _span(site: CompletionSite, *key: str) -> Span:
    return site.doc.span((*site.path, *key))


def _check_shape(
    site: CompletionSite, collections: Mapping[str, Mapping[str, str]], found: list[Diagnostic]
) -> dict[str, Any] | None:
    source = site.source
    kinds = [k for k in ("values", "collection", "sql", "function") if getattr(source, k) is not None]
    if len(kinds) != 1 or (source.field is not None and kinds != ["collection"]):
        found.append(
            diagnostic(
                "COMPLETION_SOURCE_INVALID",
                f"the completion of '{site.name}' holds "
                + (" and ".join(kinds) if kinds else "no source")
                + (" with a field" if source.field is not None and kinds != ["collection"] else ""),
                _span(site),
                "write exactly one of values: [...], collection: + field:, sql: or function:",
            )
        )
        return None
    kind = kinds[0]
    if kind == "values":
        if not source.values:
            found.append(
                diagnostic(
                    "COMPLETION_SOURCE_INVALID",
                    f"the completion of '{site.name}' offers no values",
                    _span(site, "values"),
                    "list at least one value",
                )
            )
            return None
        return {"values": list(source.values)}
    if kind == "collection":
        fields = collections.get(source.collection or "")
        if fields is None:
            found.append(
                diagnostic(
                    "COMPLETION_COLLECTION_UNKNOWN",
                    f"'{source.collection}' is no collection of this server",
                    _span(site, "collection"),
                    did_you_mean(source.collection or "", collections)
                    or (
                        "collections: " + ", ".join(collections)
                        if collections
                        else "the server declares no collections"
                    ),
                )
            )
            return None
        if source.field is None:
            found.append(
                diagnostic(
                    "COMPLETION_SOURCE_INVALID",
                    f"the completion of '{site.name}' names collection '{source.collection}' but no field",
                    _span(site, "collection"),
                    "add field: NAME, the top-level field whose values are offered",
                )
            )
            return None
        kind_of = fields.get(source.field)
        if kind_of not in COMPLETABLE_TYPES:
            completable = [name for name, t in fields.items() if t in COMPLETABLE_TYPES]
            found.append(
                diagnostic(
                    "COMPLETION_FIELD_INVALID",
                    f"'{source.field}' is no top-level field of collection '{source.collection}'"
                    if kind_of is None
                    else f"field '{source.field}' of '{source.collection}' is of type {kind_of}: "
                    "only string, integer and enum fields complete",
                    _span(site, "field"),
                    did_you_mean(source.field, completable) or "fields: " + ", ".join(completable),
                )
            )
            return None
        return {"collection": source.collection, "field": source.field}
    if kind == "function":
        target = resolve_target(source.function or "")
        if target is None or ":" not in (source.function or ""):
            found.append(
                diagnostic(
                    "COMPLETION_FUNCTION_INVALID",
                    f"'{source.function}' is not 'package.module:function'",
                    _span(site, "function"),
                )
            )
            return None
        return {"function": target}
    return {"sql": source.sql}


def _check_functions(sites: Sequence[CompletionSite], cache: Store | None) -> list[Diagnostic]:
    found = []
    targets = sorted({s.source.function or "" for s in sites})
    refused = {t: r for t in targets if (r := refused_target(t)) is not None}
    declarations = read_declarations([t for t in targets if t not in refused], cache=cache)
    for site in sites:
        target = site.source.function or ""
        read = refused.get(target) or declarations.get(target)
        # An undecorated function is what a completion function is: imported and callable.
        if read is None or read.rule_id in (None, "BACKEND_NOT_DECLARED"):
            continue
        message = (read.message or "").replace("backend", "function")
        found.append(diagnostic("COMPLETION_FUNCTION_INVALID", message, _span(site, "function"), read.hint))
    return found


def _check_sql(
    sites: Sequence[CompletionSite], source: SpecSource | None, result: CompletionCheck
) -> list[tuple[CompletionSite, dict[str, Any]]]:
    """Each SQL source bound and described against the build's DuckDB of the declared data."""
    server = source.server.server if source is not None else None
    if server is not None and server.duckdb is not None and not any(is_sql_tool(t) for t in source.tools):
        for site in sites:
            result.diagnostics.append(
                _sql_problem(
                    site,
                    "runs SQL, but the server has no SQL tool: the completion reads the data its tools read",
                    "declare a SQL tool over the data, or complete from values or a function",
                )
            )
        return []
    if server is not None and server.sqlite is not None and server.duckdb is None:
        assert source is not None
        return _check_sqlite(sites, source, result)
    if server is None or server.duckdb is None:
        engine = next((e for e in ("postgres",) if getattr(server, e, None) is not None), None)
        for site in sites:
            result.diagnostics.append(
                diagnostic(
                    "COMPLETION_SQL_INVALID",
                    f"the completion of '{site.name}' runs SQL, but "
                    + (
                        f"completions over {engine} are not supported yet (DuckDB and SQLite data only)"
                        if engine
                        else "the server declares no SQL data"
                    ),
                    _span(site, "sql"),
                    None if engine else "declare it under server: duckdb: {views: ...}",
                )
            )
        return []
    import duckdb

    from ..work_budget import cpu_watchdog
    from .sql.catalog import cleanup, open_build_data
    from .sql.statements import parameter_occurrences

    passed = []
    with cleanup() as stack, cpu_watchdog(SQL_CHECK_CPU_SECONDS, SQL_CHECK_WALL_SECONDS, stack.expire):
        assert source is not None
        build, problems = open_build_data(source, stack)
        if build is None:
            result.diagnostics.extend(problems)
            return []
        result.files.extend(build.files)
        for site in sites:
            text = (site.source.sql or "").strip().rstrip(";")
            allowed = ("value", *site.siblings)
            try:
                names = list(dict.fromkeys(o.name for o in parameter_occurrences(text)))
            except duckdb.Error as err:
                result.diagnostics.append(_sql_problem(site, f"does not parse: {_first_line(err)}"))
                continue
            unknown = [n for n in names if n not in allowed]
            if unknown:
                result.diagnostics.append(
                    _sql_problem(
                        site,
                        f"binds ${unknown[0]}, which is neither $value nor another "
                        + ("argument" if site.kind == "prompts" else "variable"),
                        did_you_mean(unknown[0], allowed)
                        or "it may bind: " + ", ".join(f"${n}" for n in allowed),
                    )
                )
                continue
            statement = sql_statement(text)
            connection = build.connection  # its views are temporary: this connection's own
            try:
                connection.execute(statement, {name: "" for name in names})
                columns = connection.description or []
            except duckdb.InterruptException:
                result.diagnostics.append(_sql_problem(site, "took too long to check and was stopped"))
                break
            except duckdb.Error as err:
                result.diagnostics.append(_sql_problem(site, f"fails: {_first_line(err)}"))
                continue
            if len(columns) != 1:
                result.diagnostics.append(
                    _sql_problem(site, f"returns {len(columns)} columns: a completion returns exactly one")
                )
                continue
            passed.append((site, {"sql": site.source.sql, "statement": statement, "params": names}))
    return passed


def _check_sqlite(
    sites: Sequence[CompletionSite], source: SpecSource, result: CompletionCheck
) -> list[tuple[CompletionSite, dict[str, Any]]]:
    """Each SQL source prepared against the build's SQLite database of the declared shape, under
    the authorizer a SQL tool's statement is held to (reads only)."""
    import sqlite3

    from lynxc.runtime.backends.sql.sqlite.access import install

    from .sql.sqlite.build import BudgetSpent, open_build_database
    from .sql.sqlite.scan import scan

    try:
        build, problems = open_build_database(source, SQL_CHECK_CPU_SECONDS)
    except BudgetSpent:
        build, problems = None, [_sql_problem(sites[0], "took too long to check and was stopped")]
    if build is None:
        result.diagnostics.extend(problems)
        return []
    passed = []
    try:
        result.files.extend(build.files)
        access = install(build.connection)
        for site in sites:
            text = (site.source.sql or "").strip().rstrip(";")
            allowed = ("value", *site.siblings)
            parameters = scan(text).parameters
            unnamed = [p for p in parameters if p.mark == "?"]
            unknown = [p.name for p in parameters if p.mark != "?" and p.name not in allowed]
            if unnamed or unknown:
                name = unknown[0] if unknown else "?"
                result.diagnostics.append(
                    _sql_problem(
                        site,
                        f"binds {'$' + name if unknown else 'a positional ?'}, which is neither $value nor "
                        "another " + ("argument" if site.kind == "prompts" else "variable"),
                        did_you_mean(name, allowed) or "it may bind: " + ", ".join(f"${n}" for n in allowed),
                    )
                )
                continue
            names = list(dict.fromkeys(p.name for p in parameters))
            statement = sql_statement(text)
            access.reset()
            try:
                cursor = build.connection.execute(statement, {name: "" for name in names})
                columns = cursor.description or []
                cursor.close()
            except BudgetSpent:
                result.diagnostics.append(_sql_problem(site, "took too long to check and was stopped"))
                break
            except sqlite3.Error as err:
                refused = "; ".join(access.refused)
                result.diagnostics.append(_sql_problem(site, f"fails: {refused or _first_line(err)}"))
                continue
            if len(columns) != 1:
                result.diagnostics.append(
                    _sql_problem(site, f"returns {len(columns)} columns: a completion returns exactly one")
                )
                continue
            passed.append(
                (site, {"sql": site.source.sql, "statement": statement, "params": names, "engine": "sqlite"})
            )
    finally:
        build.connection.close()
    return passed


def _sql_problem(site: CompletionSite, what: str, hint: str | None = None) -> Diagnostic:
    return diagnostic(
        "COMPLETION_SQL_INVALID", f"the SQL completion of '{site.name}' {what}", _span(site, "sql"), hint
    )


def _first_line(err: BaseException) -> str:
    return " ".join(str(err).split("\n\n")[0].split())


__all__ = ["COMPLETABLE_TYPES", "MAX_SQL_VALUES", "CompletionCheck", "CompletionSite", "check_completions"]

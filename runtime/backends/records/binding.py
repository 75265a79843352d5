"""Row-level security: the records of a bound resource that one caller may see.

A resource declared with `bind: {customer_email: {from_claim: email}}` shows each caller only
the records whose `customer_email` equals the `email` claim of that caller (`ctx.caller`: the
verified token or API key over HTTP, the `caller_claims` setting on stdio). `visibility` turns
the declaration and the caller into conditions, and every read of the records tools adds them
to the WHERE clause of its store query: the filter lists, the ranking scans, the fetch of a
page's rows by key, get_record, populate and the record counts. The conditions are ANDed in
front of the caller's own filters, each in parentheses, so no filter (an `ne` or `not_in`
holds an OR) can widen them; they are rebuilt from the caller on every call, never read back
from a cursor.

LanceDB takes a WHERE clause as SQL text and has no bound parameters, so the claim reaches it as
a literal rendered by `filters.sql_literal` from a value first checked to be of the field's
type (a string quoted with its quotes doubled, a number printed by Python), the same path every
filter value takes; never as text pasted from the request or the token.

A caller who cannot be bound (no caller, no such claim, a claim of another type) is refused
before anything is read: seeing nothing would hide a misconfigured server, and seeing
everything would be the breach this prevents.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lynxc.runtime.caller_arguments import CALLER_CLAIMS_SETTING
from lynxc.runtime.errors import ToolError
from lynxc.runtime.wire_values import json_kind

from .definitions import Bound, Resource
from .filters import INT64_MAX, INT64_MIN, Condition, condition_sql, stored_paths

if TYPE_CHECKING:
    from lynxc.runtime.auth.caller import Caller


@dataclass(frozen=True)
class Visibility:
    """The conditions a caller's reads of one resource carry: none for a resource not bound."""

    conditions: tuple[Condition, ...] = ()

    @property
    def clauses(self) -> list[str]:
        """The conditions as SQL, for `filters.where_sql`'s extra clauses."""
        return [condition_sql(c) for c in self.conditions]

    @property
    def identity(self) -> dict[str, Any]:
        """Field -> the caller's value: part of a list's query hash, so that a cursor issued to
        one caller is refused to another rather than paging on through their records."""
        return {c.path.path: c.value for c in self.conditions}


def visibility(resource: Resource, caller: Caller | None) -> Visibility:
    """The records of `resource` that `caller` may see; ToolError when the caller cannot be
    bound to each of its `bind` fields."""
    if not resource.bind:
        return Visibility()
    paths = stored_paths(resource)
    conditions = []
    for bound in resource.bind:
        path = paths[bound.field]  # the compiler checks it names a top-level scalar field
        value = _claim(resource, bound, caller, path.field.type, path.field.values)
        conditions.append(Condition(path, "eq", value, path.field.type))
    return Visibility(tuple(conditions))


def visible_records(resource: Resource) -> str | None:
    """What describe_resource and discover_resources say of a bound resource, None otherwise."""
    if not resource.bind:
        return None
    terms = " and ".join(f"whose {b.field} equals your {b.claim!r} claim" for b in resource.bind)
    return f"only your own: the records {terms}; other callers' records are invisible to you"


def _claim(
    resource: Resource, bound: Bound, caller: Caller | None, field_type: str, values: tuple[Any, ...] | None
) -> Any:
    who = (
        f"{resource.id!r} shows each caller only the records whose {bound.field} equals their "
        f"{bound.claim!r} claim"
    )
    if caller is None:
        raise ToolError(
            f"{who}, and this call has no verified caller: serve over HTTP with authentication, or on "
            f"stdio give the claims with --set {CALLER_CLAIMS_SETTING}='{{\"{bound.claim}\": ...}}'"
        )
    if bound.claim not in caller.claims:
        raise ToolError(f"{who}, and the caller has no {bound.claim!r} claim")
    value = caller.claims[bound.claim]
    if not _fits(value, field_type, values):
        raise ToolError(
            f"{who}, and the caller's {bound.claim!r} claim is {json_kind(value)}, which the {field_type} "
            f"field {bound.field} never holds"
        )
    return value


def _fits(value: Any, field_type: str, values: tuple[Any, ...] | None) -> bool:
    """Whether a claim value can equal a value of the field (JSON types: a bool is no number,
    and an integer field takes no float; an integer beyond 64 bits is in no store column)."""
    if isinstance(value, bool):  # `True == 1` in Python: compare bools by identity
        return field_type == "boolean" or (field_type == "enum" and any(v is value for v in values or ()))
    if field_type == "string":
        return isinstance(value, str)
    if field_type == "integer":
        return isinstance(value, int) and INT64_MIN <= value <= INT64_MAX
    if field_type == "number":
        return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))
    if field_type == "enum":
        return isinstance(value, str | int | float) and any(
            value == v and not isinstance(v, bool) for v in values or ()
        )
    return False  # boolean fields take only bools (above); other types cannot be bound

"""The conditions a bound resource adds for one caller (binding.visibility): which claims bind
to which field types, the refusals naming resource, field and claim, and the rendered clause run
on a real Lance table with claim values that try to break out of their literal."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from lynxc.runtime.auth.caller import Caller, frozen_claims
from lynxc.runtime.backends.records.binding import visibility, visible_records
from lynxc.runtime.backends.records.filters import where_sql
from lynxc.runtime.errors import ToolError

from .tables import declare, field, resource, write_store

BOUND = resource(
    "tickets",
    "id",
    [
        field("id", "string", required=True),
        field("owner", "string", required=True),
        field("team", "integer"),
        field("score", "number"),
        field("vip", "boolean"),
        field("tier", "enum", values=["gold", "silver", 3, 1]),
        field("subject", "string"),
    ],
    bind={"owner": "email"},
)


def bound_to(field_name: str, claim: str = "c") -> Any:
    declared = declare({**BOUND, "bind": {field_name: claim}})
    return declared.by_name("tickets")


def caller(**claims: Any) -> Caller:
    return Caller(method="local", subject="someone", scopes=frozenset(), claims=frozen_claims(claims))


def test_an_unbound_resource_adds_nothing() -> None:
    unbound = declare({**BOUND, "bind": {}}).by_name("tickets")
    seen = visibility(unbound, None)
    assert seen.clauses == [] and seen.identity == {}
    assert visible_records(unbound) is None


def test_a_bound_field_equals_the_callers_claim() -> None:
    tickets = declare(BOUND).by_name("tickets")
    seen = visibility(tickets, caller(email="o'brien@example.com", sub="x"))
    assert seen.clauses == ["f_owner = 'o''brien@example.com'"]
    assert seen.identity == {"owner": "o'brien@example.com"}
    assert visible_records(tickets) == (
        "only your own: the records whose owner equals your 'email' claim; "
        "other callers' records are invisible to you"
    )


FITTING = [("owner", "a"), ("team", 7), ("team", -(2**40)), ("score", 1.5), ("score", 2), ("vip", False)]


@pytest.mark.parametrize(("field_name", "value"), [*FITTING, ("tier", "gold"), ("tier", 3)])
def test_claims_that_fit_the_field_bind(field_name: str, value: Any) -> None:
    assert visibility(bound_to(field_name), caller(c=value)).identity == {field_name: value}


@pytest.mark.parametrize(
    ("field_name", "value", "kind"),
    [
        ("owner", True, "a boolean (true)"),
        ("owner", 3, "an integer"),
        ("owner", None, "null"),
        ("owner", ["a"], "an array"),
        ("owner", {"a": 1}, "an object"),
        ("team", "7", "a string"),
        ("team", True, "a boolean (true)"),
        ("team", 7.0, "a number"),
        ("team", 2**63, "an integer"),
        ("score", False, "a boolean (false)"),
        ("score", math.nan, "a number"),
        ("vip", 1, "an integer"),
        ("vip", "true", "a string"),
        ("tier", "bronze", "a string"),
        ("tier", True, "a boolean (true)"),  # though True == 1 in Python
    ],
)
def test_a_claim_of_another_type_is_refused(field_name: str, value: Any, kind: str) -> None:
    with pytest.raises(ToolError) as raised:
        visibility(bound_to(field_name), caller(c=value))
    message = str(raised.value)
    assert (
        f"'tickets' shows each caller only the records whose {field_name} equals their 'c' claim" in message
    )
    assert f"claim is {kind}, which the" in message and f"field {field_name} never holds" in message


def test_no_caller_and_a_missing_claim_are_refused() -> None:
    tickets = declare(BOUND).by_name("tickets")
    with pytest.raises(ToolError) as raised:
        visibility(tickets, None)
    assert "no verified caller" in str(raised.value)
    assert """--set caller_claims='{"email": ...}'""" in str(raised.value)
    with pytest.raises(ToolError, match="the caller has no 'email' claim"):
        visibility(tickets, caller(mail="a@example.com"))


HOSTILE = ["x' OR '1'='1", "a\\", "' OR owner IS NOT NULL --", "%", "_", "a@example.com' --"]


def test_hostile_claims_match_only_their_own_literal_value(tmp_path: Path) -> None:
    import lancedb

    declared = declare(BOUND)
    tickets = declared.by_name("tickets")
    owners = ["a@example.com", "b@example.com", *HOSTILE]
    records = [{"id": f"t{i}", "owner": owner, "subject": "hi"} for i, owner in enumerate(owners)]
    write_store(tmp_path, declared, {"tickets": records}, embedder=None)
    table = lancedb.connect(str(tmp_path / "lance")).open_table("tickets-1")
    for i, owner in enumerate(owners):
        where = where_sql([], visibility(tickets, caller(email=owner)).clauses)
        found = table.search().where(where).select(["_key"]).to_list()
        assert [row["_key"] for row in found] == [f"t{i}"], owner
    nobody = where_sql([], visibility(tickets, caller(email="c@example.com")).clauses)
    assert table.count_rows(nobody) == 0

"""Records bound to the caller's claims, end to end: a help desk whose `tickets` declare
`bind: {customer_email: {from_claim: email}}`, built in a project of its own, loaded with
`lynxc load` (the operator loads every customer's tickets) and served on stdio with the
`caller_claims` setting naming alice, then bob, to a real MCP client. Each sees only their own
tickets through every tool and every trick a client can play (filters naming the others, `ne` and
`not_in`, which hold an OR, sort, paging, another caller's cursor, another's record id, populate
from an unbound resource); counts are their own. No caller, a caller without the claim and a
claim of the wrong type are refused before anything is read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import settings_args, stdio_client
from tests.e2e.test_records_catalogue import lynxc

pytestmark = pytest.mark.anyio

SPEC = """\
lynxc: 1
server:
  name: desk
  version: 1.0.0
  title: Help desk
  instructions: Support tickets, each customer seeing their own, read with the records tools.
  transports: [stdio]
collections:
  - name: tickets
    title: Tickets
    description: One support ticket of a customer.
    key: id
    fields:
      id: {type: string, required: true, description: The ticket number.}
      customer_email: {type: string, required: true, description: Who opened it.}
      subject: {type: string, required: true, description: What it is about.}
      body: {type: text, description: What the customer wrote.}
      status: {type: enum, required: true, values: [open, closed]}
    keyword: [subject, body]
    sort: [id]
    bind:
      customer_email: {from_claim: email}
  - name: notes
    title: Notes
    description: A public note about a ticket.
    key: note_id
    fields:
      note_id: {type: string, required: true}
      ticket: {type: reference, to: tickets, required: true}
      text: {type: string, required: true}
    capabilities: [query, get_one]
"""

ALICE, BOB, CAROL = "alice@example.com", "bob@example.com", "carol@example.com"
OWNERS = [ALICE] * 8 + [BOB] * 7 + [CAROL] * 5
TICKETS = [
    {
        "id": f"T-{n:02d}",
        "customer_email": owner,
        "subject": f"Printer problem {n}",
        "body": f"The printer on floor {n % 4} jams.",
        "status": "open" if n % 3 else "closed",
    }
    for n, owner in enumerate(OWNERS, start=1)
]
OWN = {who: {t["id"] for t in TICKETS if t["customer_email"] == who} for who in (ALICE, BOB, CAROL)}
BOBS_TICKET = sorted(OWN[BOB])[0]
NOTES = [{"note_id": "N-1", "ticket": BOBS_TICKET, "text": "Bob's printer is an old model."}]


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    project = tmp_path_factory.mktemp("desk")
    (project / "specs").mkdir()
    (project / "specs" / "desk.yaml").write_text(SPEC)
    built = lynxc(project, "build")
    assert built.returncode == 0, built.stdout + built.stderr
    settings = {"data_dir": str(project / "store")}
    for name, rows in (("tickets", TICKETS), ("notes", NOTES)):
        path = project / f"{name}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        loaded = lynxc(project, "load", "desk", name, str(path), *settings_args(settings))
        assert loaded.returncode == 0, loaded.stderr
    current = json.loads((project / "store" / "CURRENT.json").read_text())
    assert current["resources"]["tickets"]["records"] == len(TICKETS)  # the load binds nothing
    return project, settings


def ids(result: Any) -> list[str]:
    assert not result.is_error, result.content[0].text
    return [item["id"] for item in result.structured_content["items"]]


async def every_page(client: Client, tool: str, arguments: dict[str, Any]) -> list[str]:
    """Every id a list call pages through, three at a time, following next_cursor."""
    seen: list[str] = []
    cursor = None
    for _ in range(20):
        result = await client.call_tool(tool, {**arguments, "limit": 3, "cursor": cursor})
        seen += ids(result)
        cursor = result.structured_content["page"]["next_cursor"]
        if cursor is None:
            return seen
    raise AssertionError(f"{tool} pages on forever: {seen}")


async def refusal(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, (tool, result.structured_content)
    return result.content[0].text


def tickets(**more: Any) -> dict[str, Any]:
    return {"resource_id": "tickets", **more}


def claims(email: Any) -> dict[str, Any]:
    return {"caller_claims": {"sub": "someone", "email": email}}


@pytest.mark.parametrize("who", [ALICE, BOB])
async def test_each_caller_pages_through_exactly_their_own_tickets(
    desk: tuple[Path, dict[str, Any]], who: str
) -> None:
    project, settings = desk
    async with stdio_client("desk", {**settings, **claims(who)}, project=project) as client:
        queried = await every_page(client, "query_records", tickets())
        searched = await every_page(client, "search_records", tickets(query="printer jams"))
        by_status = await every_page(
            client, "query_records", tickets(filters=[{"field": "status", "value": "open"}])
        )
        newest_first = await every_page(
            client, "query_records", tickets(sort=[{"field": "customer_email", "order": "desc"}])
        )
    assert queried == sorted(OWN[who])  # every page once, in the default order
    assert sorted(searched) == sorted(OWN[who])
    assert len(searched) == len(set(searched))
    assert set(by_status) == {
        t["id"] for t in TICKETS if t["customer_email"] == who and t["status"] == "open"
    }
    assert sorted(newest_first) == sorted(OWN[who])


async def test_no_filter_reaches_another_callers_tickets(desk: tuple[Path, dict[str, Any]]) -> None:
    project, settings = desk
    attempts = [
        [{"field": "customer_email", "value": BOB}],
        [{"field": "customer_email", "op": "ne", "value": ALICE}],  # SQL: IS NULL OR <> ...
        [{"field": "customer_email", "op": "not_in", "value": [ALICE]}],
        [{"field": "customer_email", "op": "in", "value": [ALICE, BOB, CAROL]}],
        [{"field": "customer_email", "op": "contains", "value": "example.com"}],
        [{"field": "customer_email", "op": "exists", "value": False}],
        [{"field": "id", "value": BOBS_TICKET}],
        [{"field": "id", "op": "in", "value": sorted(OWN[BOB] | OWN[CAROL])}],
        [{"field": "customer_email", "value": "x' OR '1'='1"}],
    ]
    async with stdio_client("desk", {**settings, **claims(ALICE)}, project=project) as client:
        found = [ids(await client.call_tool("query_records", tickets(filters=f, limit=50))) for f in attempts]
        searched = [
            ids(await client.call_tool("search_records", tickets(query="printer", filters=f, limit=50)))
            for f in attempts
        ]
    for attempt, queried, search in zip(attempts, found, searched, strict=True):
        assert set(queried) <= OWN[ALICE], (attempt, queried)
        assert set(search) <= OWN[ALICE], (attempt, search)
    assert set(found[3]) == OWN[ALICE]  # `in` naming everyone still yields only hers
    assert found[0] == found[1] == found[2] == found[6] == []


async def test_another_callers_record_answers_like_a_missing_one(desk: tuple[Path, dict[str, Any]]) -> None:
    project, settings = desk
    async with stdio_client("desk", {**settings, **claims(ALICE)}, project=project) as client:
        own = await client.call_tool("get_record", tickets(record_id=sorted(OWN[ALICE])[0]))
        others = await refusal(client, "get_record", tickets(record_id=BOBS_TICKET))
        missing = await refusal(client, "get_record", tickets(record_id="T-99"))
        note = await client.call_tool(
            "get_record", {"resource_id": "notes", "record_id": "N-1", "populate": ["ticket"]}
        )
        notes = await client.call_tool("query_records", {"resource_id": "notes", "populate": ["ticket"]})
    assert not own.is_error and own.structured_content["data"]["customer_email"] == ALICE
    assert others.replace(BOBS_TICKET, "T-99") == missing, (others, missing)
    # notes are not bound, but the ticket a note points at is bob's: it stays a bare key
    assert note.structured_content["data"]["ticket"] == BOBS_TICKET
    assert notes.structured_content["items"][0]["data"]["ticket"] == BOBS_TICKET


async def test_counts_are_the_callers_own(desk: tuple[Path, dict[str, Any]]) -> None:
    project, settings = desk
    async with stdio_client("desk", {**settings, **claims(CAROL)}, project=project) as client:
        discovered = (await client.call_tool("discover_resources", {})).structured_content
        described = (await client.call_tool("describe_resource", tickets())).structured_content
        notes = (await client.call_tool("describe_resource", {"resource_id": "notes"})).structured_content
    listed = {entry["resource_id"]: entry for entry in discovered["resources"]}
    assert listed["tickets"]["record_count"] == described["record_count"] == len(OWN[CAROL])
    assert listed["notes"]["record_count"] == notes["record_count"] == len(NOTES)
    for entry in (listed["tickets"], described):
        assert "customer_email equals your 'email' claim" in entry["visible_records"]
    assert "visible_records" not in listed["notes"] and "visible_records" not in notes


async def test_a_cursor_pages_on_only_for_the_caller_it_was_issued_to(
    desk: tuple[Path, dict[str, Any]],
) -> None:
    project, settings = desk
    async with stdio_client("desk", {**settings, **claims(ALICE)}, project=project) as client:
        first = await client.call_tool("query_records", tickets(limit=3))
        searched = await client.call_tool("search_records", tickets(query="printer", limit=3))
    cursors = [
        first.structured_content["page"]["next_cursor"],
        searched.structured_content["page"]["next_cursor"],
    ]
    async with stdio_client("desk", {**settings, **claims(BOB)}, project=project) as client:
        answers = [
            await refusal(client, "query_records", tickets(limit=3, cursor=cursors[0])),
            await refusal(client, "search_records", tickets(query="printer", limit=3, cursor=cursors[1])),
        ]
    for answer in answers:
        assert "cursor" in answer and "does not belong to this query" in answer, answer


CALLS = [
    ("search_records", tickets(query="printer")),
    ("query_records", tickets()),
    ("get_record", tickets(record_id=sorted(OWN[ALICE])[0])),
]


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ({}, "this call has no verified caller"),
        ({"caller_claims": {"sub": "someone"}}, "the caller has no 'email' claim"),
        (claims(True), "claim is a boolean (true), which the string field customer_email never holds"),
        (claims(7), "claim is an integer, which the string field customer_email never holds"),
    ],
    ids=["no-caller", "no-claim", "bool-claim", "integer-claim"],
)
async def test_a_caller_who_cannot_be_bound_is_refused(
    desk: tuple[Path, dict[str, Any]], extra: dict[str, Any], reason: str
) -> None:
    project, settings = desk
    async with stdio_client("desk", {**settings, **extra}, project=project) as client:
        answers = [await refusal(client, tool, arguments) for tool, arguments in CALLS]
        discovered = (await client.call_tool("discover_resources", {})).structured_content
    for answer in answers:
        assert "'tickets'" in answer and "customer_email" in answer and "'email' claim" in answer, answer
        assert reason in answer, answer
        assert "T-" not in answer.replace(sorted(OWN[ALICE])[0], ""), answer  # no record in the answer
    counts = {entry["resource_id"]: entry["record_count"] for entry in discovered["resources"]}
    assert counts == {"tickets": 0, "notes": len(NOTES)}


def test_over_http_each_api_key_sees_its_own_tickets(
    desk: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """The same desk, declaring API keys instead of stdio only, served over HTTP: each caller's
    key carries their email claim, and search and query find only their tickets."""
    from lynxc.runtime.auth.api_keys import add_key
    from lynxc.runtime.definition import load_definition
    from tests.e2e.test_auth_http import call_message, open_session, post, result_of
    from tests.fixtures.mcp_http import serving_generated

    project = tmp_path / "desk-http"
    (project / "specs").mkdir(parents=True)
    spec = SPEC.replace("  transports: [stdio]\n", "  auth:\n    api_keys: {file: {setting: keys_file}}\n")
    (project / "specs" / "desk.yaml").write_text(spec)
    built = lynxc(project, "build")
    assert built.returncode == 0, built.stdout + built.stderr
    keys = tmp_path / "keys.json"
    made = {who: add_key(keys, who.split("@")[0], [], {"email": who}) for who in (ALICE, BOB)}
    settings = {**desk[1], "keys_file": str(keys)}  # the store the stdio desk loaded: same tables
    definition = load_definition(project / "generated" / "desk")
    with serving_generated("desk", lambda base: settings, definition=definition) as served:
        for who, key in made.items():
            session = open_session(served, key)
            for tool, arguments in (
                ("query_records", {"resource_id": "tickets", "limit": 50}),
                ("search_records", {"resource_id": "tickets", "query": "printer jams", "limit": 50}),
            ):
                result = result_of(post(served, call_message(tool, arguments), key, session))
                assert not result["isError"], result
                assert {item["id"] for item in result["structuredContent"]["items"]} == OWN[who], (who, tool)

"""MCP resources over declared records, end to end (issue 31): a help desk whose `tickets`
are bound to the caller's email and whose `notes` are public, each also readable by URI
(`ticket://{id}`, `note://{note_id}`). A caller reads only their own tickets by URI (another's
reads as "Resource not found", exactly as a missing one); a subscriber is told of exactly the
records a real `lynxc load` (another process) changed: in the handshake era by
`resources/subscribe` and `notifications/resources/updated`, in 2026-07-28 by
`subscriptions/listen`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from tests.conftest import LYNXC, settings_args, stdio_client
from tests.e2e.test_records_catalogue import lynxc

pytestmark = [
    pytest.mark.anyio,
    # resources/subscribe is the handshake era's, which these tests speak on purpose
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

COLLECTIONS_KEY = "collections"
RESOURCES_KEY = "resources"

SPEC = f"""\
lynxc: 1
server:
  name: desk
  version: 1.0.0
  title: Help desk
  instructions: Support tickets, each customer seeing their own, and public notes.
  transports: [stdio]
{COLLECTIONS_KEY}:
  - name: tickets
    title: Tickets
    description: One support ticket of a customer.
    key: id
    fields:
      id: {{type: string, required: true, description: The ticket number.}}
      customer_email: {{type: string, required: true, description: Who opened it.}}
      subject: {{type: string, required: true, description: What it is about.}}
    sort: [id]
    capabilities: [query, get_one]
    bind:
      customer_email: {{from_claim: email}}
  - name: notes
    title: Notes
    description: A public note.
    key: note_id
    fields:
      note_id: {{type: string, required: true}}
      text: {{type: string, required: true}}
    capabilities: [query, get_one]
{RESOURCES_KEY}:
  - name: ticket
    uri_template: "ticket://{{id}}"
    description: One of the caller's tickets, as JSON.
    mime_type: application/json
    record: {{collection: tickets}}
  - name: note
    uri_template: "note://{{note_id}}"
    description: One public note, as JSON.
    mime_type: application/json
    record: {{collection: notes}}
prompts:
  - name: about_ticket
    description: Ask for help with one of your tickets, the ticket embedded.
    arguments:
      id: {{description: "A ticket id, e.g. T-1.", required: true, sample: T-1}}
    messages:
      - {{role: user, text: "Help me with ticket {{{{ id }}}}."}}
      - {{role: user, resource: "ticket://{{{{ id }}}}"}}
"""

ALICE, BOB = "alice@example.com", "bob@example.com"
TICKETS = [
    {"id": "T-1", "customer_email": ALICE, "subject": "Printer jams"},
    {"id": "T-2", "customer_email": BOB, "subject": "Screen flickers"},
]
NOTES = [{"note_id": f"N-{n}", "text": f"Note {n}"} for n in range(1, 6)]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    project = tmp_path_factory.mktemp("desk")
    (project / "specs").mkdir()
    (project / "specs" / "desk.yaml").write_text(SPEC)
    built = lynxc(project, "build")
    assert built.returncode == 0, built.stdout + built.stderr
    settings = {"data_dir": str(project / "store")}
    for name, rows in (("tickets", TICKETS), ("notes", NOTES)):
        loaded = lynxc(project, "load", "desk", name, str(write_rows(project / f"{name}.jsonl", rows)),
                       *settings_args(settings))  # fmt: skip
        assert loaded.returncode == 0, loaded.stderr
    return project, settings


def claims(email: str) -> dict[str, Any]:
    return {"caller_claims": {"sub": "someone", "email": email}}


@pytest.mark.parametrize(("who", "own", "other"), [(ALICE, "T-1", "T-2"), (BOB, "T-2", "T-1")])
async def test_a_caller_reads_only_their_own_record_by_uri(
    desk: tuple[Path, dict[str, Any]], who: str, own: str, other: str
) -> None:
    project, settings = desk
    async with stdio_client("desk", {**settings, **claims(who)}, project=project) as client:
        read = await client.read_resource(f"ticket://{own}")
        record = json.loads(read.contents[0].text)
        assert record["id"] == own and record["data"]["customer_email"] == who
        for uri in (f"ticket://{other}", "ticket://T-404"):  # another's reads as a missing one
            with pytest.raises(MCPError) as raised:
                await client.read_resource(uri)
            assert raised.value.error.code == -32602
            assert raised.value.error.data == {"uri": uri}


async def test_a_prompt_embeds_a_record_as_its_caller_may_read_it(desk: tuple[Path, dict[str, Any]]) -> None:
    project, settings = desk
    async with stdio_client("desk", {**settings, **claims(ALICE)}, project=project) as client:
        prompt = await client.get_prompt("about_ticket", {"id": "T-1"})
        embedded = json.loads(prompt.messages[1].content.resource.text)
        assert embedded["id"] == "T-1" and embedded["data"]["customer_email"] == ALICE
        with pytest.raises(MCPError) as raised:  # Bob's ticket: not found, for Alice
            await client.get_prompt("about_ticket", {"id": "T-2"})
        assert raised.value.error.code == -32602


def load_notes(project: Path, settings: dict[str, Any], rows: list[dict[str, Any]], name: str) -> None:
    path = write_rows(project / name, rows)
    loaded = subprocess.run(
        [LYNXC, "--project", str(project), "load", "desk", "notes", str(path), *settings_args(settings)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert loaded.returncode == 0, loaded.stderr


async def test_a_load_notifies_subscribers_of_exactly_the_records_it_changed(
    desk: tuple[Path, dict[str, Any]],
) -> None:
    project, settings = desk
    received: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            received.append(str(message.params.uri))
            arrived.set()

    command = [
        LYNXC,
        "--project",
        str(project),
        "serve",
        "desk",
        *settings_args({**settings, **claims(ALICE)}),
    ]
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with Client(params, mode="legacy", message_handler=on_message) as client:
        assert client.server_capabilities.resources.subscribe is True
        for uri in ("note://N-1", "note://N-2", "note://N-3"):
            await client.subscribe_resource(uri)
        await client.unsubscribe_resource("note://N-3")
        with pytest.raises(MCPError) as raised:
            await client.subscribe_resource("nowhere://N-1")
        assert raised.value.error.code == -32602 and raised.value.error.data == {"uri": "nowhere://N-1"}
        # N-1 changes, N-3 changes (unsubscribed), N-6 is new (never subscribed); N-2 stays.
        changed = [dict(row) for row in NOTES]
        changed[0]["text"] = "Note 1, edited"
        changed[2]["text"] = "Note 3, edited"
        await anyio.to_thread.run_sync(
            load_notes, project, settings, [*changed, {"note_id": "N-6", "text": "Note 6"}], "notes-2.jsonl"
        )
        with anyio.fail_after(60):
            await arrived.wait()
        # Once more, with nothing changed: no notification (a reread would show it).
        await anyio.to_thread.run_sync(
            load_notes, project, settings, [*changed, {"note_id": "N-6", "text": "Note 6"}], "notes-3.jsonl"
        )
        edited = await client.read_resource("note://N-1")
        assert json.loads(edited.contents[0].text)["data"]["text"] == "Note 1, edited"
        await anyio.sleep(3)  # three polls of the pointer: a wrong notification would have come
    assert received == ["note://N-1"]


async def test_the_listen_stream_carries_the_same_notifications(desk: tuple[Path, dict[str, Any]]) -> None:
    project, settings = desk
    async with stdio_client("desk", {**settings, **claims(ALICE)}, project=project) as client:
        with pytest.raises(MCPError) as raised:
            async with client.listen(resource_subscriptions=["nowhere://x"]):
                pass
        assert raised.value.error.code == -32602
        async with client.listen(resource_subscriptions=["note://N-2", "note://N-4"]) as subscription:
            rows = [dict(row) for row in NOTES] + [{"note_id": "N-6", "text": "Note 6"}]
            rows[3]["text"] = "Note 4, edited"
            rows[0]["text"] = "Note 1, edited again"
            await anyio.to_thread.run_sync(load_notes, project, settings, rows, "notes-4.jsonl")
            with anyio.fail_after(60):
                event = await subscription.__anext__()
    assert event.uri == "note://N-4"


BOARD = f"""\
lynxc: 1
server:
  name: board
  version: 1.0.0
  title: Notice board
  instructions: Public notes, readable by URI.
{COLLECTIONS_KEY}:
  - name: notes
    title: Notes
    description: A public note.
    key: note_id
    fields:
      note_id: {{type: string, required: true}}
      text: {{type: string, required: true}}
    capabilities: [query, get_one]
{RESOURCES_KEY}:
  - name: note
    uri_template: "note://{{note_id}}"
    description: One public note, as JSON.
    mime_type: application/json
    record: {{collection: notes}}
"""


async def test_the_listen_stream_over_http(tmp_path: Path) -> None:
    import socket
    import time

    from tests.conftest import free_port

    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "board.yaml").write_text(BOARD)
    assert lynxc(tmp_path, "build").returncode == 0
    settings = {"data_dir": str(tmp_path / "store")}

    def load(rows: list[dict[str, Any]], name: str) -> None:
        path = write_rows(tmp_path / name, rows)
        loaded = subprocess.run(
            [
                LYNXC,
                "--project",
                str(tmp_path),
                "load",
                "board",
                "notes",
                str(path),
                *settings_args(settings),
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert loaded.returncode == 0, loaded.stderr

    load(NOTES, "notes-1.jsonl")
    port = free_port()
    command = [
        LYNXC,
        "--project",
        str(tmp_path),
        "serve",
        "board",
        "--transport",
        "http",
        "--port",
        str(port),
    ]
    process = subprocess.Popen([*command, *settings_args(settings)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            assert client.session.protocol_version == "2026-07-28"  # what mcp.Client negotiates
            async with client.listen(resource_subscriptions=["note://N-5"]) as subscription:
                rows = [dict(row) for row in NOTES]
                rows[4]["text"] = "Note 5, edited"
                rows[1]["text"] = "Note 2, edited"
                await anyio.to_thread.run_sync(load, rows, "notes-2.jsonl")
                with anyio.fail_after(60):
                    event = await subscription.__anext__()
            assert event.uri == "note://N-5"
    finally:
        process.terminate()
        process.wait(timeout=10)

"""A completion over a collection bound to the caller (issue 31): the help desk of
test_records_bound.py with a prompt whose `ticket` argument completes from the tickets' ids;
each caller is offered only their own tickets' ids, over stdio with `caller_claims`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from tests.conftest import settings_args, stdio_client
from tests.e2e.test_records_bound import ALICE, BOB, OWN, SPEC, TICKETS, claims
from tests.e2e.test_records_catalogue import lynxc

pytestmark = pytest.mark.anyio

PROMPTS = """\
prompts:
  - name: follow_up
    description: Ask for a follow-up message on one of your tickets.
    arguments:
      ticket:
        description: "The ticket's id, e.g. T-01."
        required: true
        sample: T-01
        complete: {collection: tickets, field: id}
    messages:
      - {text: "Write a follow-up on ticket {{ ticket }}."}
"""


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    project = tmp_path_factory.mktemp("desk-prompts")
    (project / "specs").mkdir()
    (project / "specs" / "desk.yaml").write_text(SPEC + PROMPTS)
    built = lynxc(project, "build")
    assert built.returncode == 0, built.stdout + built.stderr
    settings = {"data_dir": str(project / "store")}
    path = project / "tickets.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in TICKETS))
    loaded = lynxc(project, "load", "desk", "tickets", str(path), *settings_args(settings))
    assert loaded.returncode == 0, loaded.stderr
    return project, settings


@pytest.mark.parametrize("who", [ALICE, BOB])
async def test_each_caller_is_offered_only_their_own_values(
    desk: tuple[Path, dict[str, Any]], who: str
) -> None:
    project, settings = desk
    async with stdio_client("desk", {**settings, **claims(who)}, project=project) as client:
        offered = await client.complete(
            types.PromptReference(name="follow_up"), {"name": "ticket", "value": "t-"}
        )
    assert offered.completion.values == sorted(OWN[who])
    assert offered.completion.total == len(OWN[who])

"""`lynxc diff` across chosen version pairs of three official MCP reference servers
(tests/data/mcp-tool-versions): golden text output, and the classifications a reviewer
should agree with, explained where they may surprise.

Regenerate goldens with `LYNXC_UPDATE_GOLDENS=1 pytest tests/compiler/test_diff_versions.py`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from lynxc.compiler.rules import RULES
from tests.conftest import DATA, LYNXC

VERSIONS = DATA / "mcp-tool-versions"
GOLDEN = Path(__file__).parent / "diff_versions"
UPDATE = os.environ.get("LYNXC_UPDATE_GOLDENS") == "1"


def _pairs() -> list[tuple[Path, Path]]:
    """The pairs that have a golden text (`OLD__NEWVERSION.txt`): a chosen few, since the
    histories here hold over a hundred pairs, which test_diff_histories.py covers by counts per
    rule. To follow another pair as text, add an empty golden of its name and regenerate."""
    pairs = []
    for golden in sorted(GOLDEN.glob("*.txt")):
        old, new_version = golden.stem.split("__")
        history = old.rsplit("_", 1)[0]
        pairs.append((VERSIONS / f"{old}.json", VERSIONS / f"{history}_{new_version}.json"))
    return pairs


PAIRS = _pairs()


def diff(old: Path, new: Path, fmt: str = "text") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LYNXC, "diff", str(old), str(new), "--format", fmt, "--fail-on", "never"],
        capture_output=True,
        text=True,
        check=True,
    )


@pytest.mark.parametrize(
    ("old", "new"), PAIRS, ids=[f"{a.stem}..{b.stem.rsplit('_', 1)[1]}" for a, b in PAIRS]
)
def test_golden_text(old: Path, new: Path) -> None:
    golden = GOLDEN / f"{old.stem}__{new.stem.rsplit('_', 1)[1]}.txt"
    output = diff(old, new).stdout
    if UPDATE:
        golden.write_text(output)
    assert output == golden.read_text()


def rules(old: str, new: str) -> dict[tuple[str, str], str]:
    findings = json.loads(diff(VERSIONS / f"{old}.json", VERSIONS / f"{new}.json", "json").stdout)
    return {(f["tool"], f["path"]): f["rule"] for f in findings["servers"][0]["findings"]}


def test_filesystem_first_real_input_schemas_are_breaking_by_contract() -> None:
    # Surprising but right: up to 2025.8.21 the server published input schemas holding only
    # `$schema`, a contract that accepts any arguments. 2025.12.18 publishes real schemas with
    # required `path`: by the published contract callers now must send it, so this is breaking
    # (in practice the server validated internally all along; the contract just said nothing).
    # The `type: object` they gained narrows nothing (arguments are always an object): it
    # repairs the schema to what MCP requires.
    found = rules("server-filesystem_2025.8.21", "server-filesystem_2025.12.18")
    assert found[("read_text_file", "Input schema / properties")] == "PARAM_ADDED_REQUIRED"
    assert found[("read_text_file", "Input schema / type")] == "INPUT_SCHEMA_REPAIRED"
    assert found[("read_text_file", "Output schema / (root)")] == "OUTPUT_SCHEMA_ADDED"


def test_filesystem_2026_move_file_and_media_content() -> None:
    found = rules("server-filesystem_2025.12.18", "server-filesystem_2026.8.31")
    # move_file now declares itself destructive: clients that auto-approved it must ask.
    assert found[("move_file", "Annotations / destructiveHint")] == "DESTRUCTIVE_HINT_ADDED"
    # read_media_file content items became a union of shapes: the old item shape pairs with the
    # first member (by the `type` discriminator; it lost "blob"), and the second member, an
    # embedded resource without `data` or `mimeType`, is a shape consumers never saw. That is
    # one change, one finding: `type`, `properties`, `required` and `additionalProperties`
    # moved from beside the anyOf into its members, and the anyOf's finding, which compares
    # whole alternatives, says what that did ("no longer guaranteed: data, mimeType").
    base = "Output schema / properties / content / items"
    assert found[("read_media_file", f"{base} / anyOf")] == "OUTPUT_ALTERNATIVE_ADDED"
    for keyword in ("type", "properties", "required", "additionalProperties"):
        assert ("read_media_file", f"{base} / {keyword}") not in found


def test_everything_removed_tools_break_and_added_ones_do_not() -> None:
    found = rules("server-everything_2025.4.8", "server-everything_2026.8.31")
    removed = sorted(tool for (tool, path), rule in found.items() if rule == "TOOL_REMOVED")
    added = sorted(tool for (tool, path), rule in found.items() if rule == "TOOL_ADDED")
    assert len(removed) == 7 and added
    assert not set(removed) & set(added)


def test_memory_releases_only_add_information() -> None:
    # 0.6.2 -> 2025.8.4 published an identical tools/list; 2026.8.31 adds titles, annotations and
    # output schemas, none of which can break a caller or a consumer.
    assert rules("server-memory_0.6.2", "server-memory_2025.8.4") == {}
    later = rules("server-memory_2025.8.4", "server-memory_2026.8.31")
    levels = {RULES[rule].severity for rule in later.values()}
    assert levels == {"info"}

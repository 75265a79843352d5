"""A small project for the docs tests: `shop` released at 0.1.0 with `find_items`, then 0.2.0
where the tool is renamed `findItems` (a breaking change, allowed by the minor bump below 1.0),
with hostile description text and a secret setting whose default must never be shown."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import LYNXC, ROOT

SECRET_DEFAULT = "hunter2-do-not-show"
HOSTILE = "<script>alert('owned')</script> & <b>bold</b>"
HOSTILE_CODE = "<img src=x onerror=alert(1)>"

SPEC = """\
lynxc: 1
server:
  name: shop
  version: {version}
  title: "Shop <i>items</i>"
  instructions: "Find items in the shop. {hostile}"
  settings:
    api_token:
      type: string
      default: {secret}
      description: The token the shop's API takes.
    page_size:
      type: integer
      minimum: 1
      default: 20
      description: Items per page.
tools:
  - name: {tool}
    backend: tests.fixtures.backends:echo
    title: Find items
    annotations: {{readOnlyHint: true, openWorldHint: false}}
    description:
      purpose: "Find items by a word of their name. {hostile} Quoted: `{code}`."
    parameters:
      q: {{type: string, required: true, minLength: 1, maxLength: 50, description: Text to find.}}
      sort: {{type: string, enum: [name, price], default: name, description: Order of the items.}}
"""


def lynxc(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [LYNXC, "--project", str(project), *args], capture_output=True, text=True, env=env, timeout=300
    )


def write_spec(project: Path, version: str, tool: str) -> None:
    (project / "specs").mkdir(parents=True, exist_ok=True)
    text = SPEC.format(version=version, tool=tool, hostile=HOSTILE, code=HOSTILE_CODE, secret=SECRET_DEFAULT)
    (project / "specs" / "shop.yaml").write_text(text)


def make_shop(project: Path) -> Path:
    write_spec(project, "0.1.0", "find_items")
    for args in (("build",), ("release", "shop", "--date", "2026-01-02")):
        done = lynxc(project, *args)
        assert done.returncode == 0, done.stderr
    write_spec(project, "0.2.0", "findItems")
    done = lynxc(project, "build")
    assert done.returncode == 0, done.stderr
    return project

"""The layout's import contracts (pyproject.toml, [tool.importlinter]) hold: compiler stages
import one way, the runtime never imports the compiler, built-in backends share code only
through shared modules. `.ci/run` runs `lint-imports` too; this makes `pytest` alone catch a
broken contract."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def test_import_contracts_are_kept() -> None:
    done = subprocess.run([LINT_IMPORTS, "--no-cache"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert "0 broken" in done.stdout


def test_no_module_imports_itself_through_others() -> None:
    """No import cycle between lynxc's modules, function-level imports included (a cycle hidden
    in a function still ties two modules into one): each one can be read, tested and moved alone.
    Imports under TYPE_CHECKING are left out, as in the contracts."""
    import grimp

    graph = grimp.build_graph(
        "lynxc.compiler", "lynxc.runtime", include_external_packages=False, exclude_type_checking_imports=True
    )
    cycles = sorted(
        " -> ".join(chain)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if (chain := graph.find_shortest_chain(importer=imported, imported=module)) is not None
    )
    assert cycles == [], "\n".join(cycles)

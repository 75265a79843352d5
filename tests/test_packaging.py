"""Both install forms import `lynxc.compiler` and `lynxc.runtime`, never top-level `compiler`."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import ROOT


def test_wheel_installs_under_the_lynxc_namespace(tmp_path: Path) -> None:
    # Built from a copy of what the wheel is made of: setuptools reuses a `build/` folder left
    # in the tree, whose stale files would hide a package the configuration leaves out.
    source = tmp_path / "source"
    for name in ("compiler", "runtime"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("lynxc-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "lynxc/compiler/cli.py" in names and "lynxc/runtime/host.py" in names
    assert "lynxc/compiler/emit/templates/server.py.j2" in names
    assert not any(name.startswith(("compiler/", "runtime/", "tests/", "generated/")) for name in names)
    assert any(name.endswith("entry_points.txt") for name in names)
    # Every module and data file of the source tree ships: a package missing from pyproject's
    # explicit list would install as a wheel that fails on its first import of it.
    sources = {
        f"lynxc/{path.relative_to(ROOT).as_posix()}"
        for top in ("compiler", "runtime")
        for path in (ROOT / top).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert sorted(sources - set(names)) == []

    target = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(target)
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "import lynxc.compiler.cli, lynxc.runtime.host, lynxc.compiler.emit.server; "
        "print(lynxc.compiler.cli.__file__); print(lynxc.runtime.host.__file__)"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(target)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert all(line.startswith(str(target)) for line in done.stdout.split())


def test_editable_install_imports_from_the_source_tree() -> None:
    probe = "import lynxc.compiler.cli, lynxc.runtime.host; print(lynxc.compiler.cli.__file__)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd="/")
    assert done.stdout.strip() == str(ROOT / "compiler" / "cli.py")
    top_level = subprocess.run([sys.executable, "-c", "import compiler"], capture_output=True, cwd="/")
    assert top_level.returncode != 0

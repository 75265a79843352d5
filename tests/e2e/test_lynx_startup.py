"""lynx-mcp refuses to start (and to index) with an embedder that does not match its index,
instead of failing the first search with a raw LanceDB error."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lynxc.runtime.backends.retrieval.embedders import DIMENSIONS, get_embedder
from tests.conftest import LYNXC, ROOT, settings_args


def lynxc(*args: str, settings: dict) -> subprocess.CompletedProcess[str]:
    command = [LYNXC, "--project", str(ROOT), *args, *settings_args(settings)]
    return subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def static_index(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """An index built with the `static` embedder (64-d vectors)."""
    base = tmp_path_factory.mktemp("lynx-startup")
    (base / "code").mkdir()
    (base / "code/net.py").write_text('def open_socket(host, port):\n    """Connect."""\n    return None\n')
    settings = {
        "sources": [{"name": "code", "root": str(base / "code")}],
        "index_dir": str(base / "index"),
        "embedder": "static",
    }
    done = lynxc("index", "lynx-mcp", settings=settings)
    assert done.returncode == 0, done.stderr
    return settings


@pytest.mark.parametrize("verb", ["serve", "index"])
def test_an_index_built_by_another_embedder_is_refused(static_index: dict, verb: str) -> None:
    done = lynxc(verb, "lynx-mcp", settings={**static_index, "embedder": "minilm"})
    index = static_index["index_dir"]
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        f"lynxc {verb}: setting 'embedder': the index {index!r} holds 64-d vectors for source 'code' "
        "(built with 'static'), but embedder 'minilm' makes 384-d vectors: use --set embedder=static, "
        f"or delete {index!r} and run `lynxc index` again with this embedder\n"
    )


def test_the_matching_embedder_starts(static_index: dict) -> None:
    done = lynxc("serve", "lynx-mcp", settings=static_index)  # stdin closed: starts, then ends
    assert done.returncode == 0, done.stderr


def test_an_index_dir_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "index").write_text("")
    done = lynxc("serve", "lynx-mcp", settings={"index_dir": str(tmp_path / "index")})
    assert done.returncode == 2
    assert f"lynxc serve: setting 'index_dir': '{tmp_path}/index' is a file, not a folder" in done.stderr


@pytest.mark.parametrize("name", sorted(DIMENSIONS))
def test_declared_dimensions_are_the_models(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert get_embedder(name).dimension == DIMENSIONS[name]

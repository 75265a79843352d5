"""Settings are checked when a server starts, not at its first call: required settings, declared
paths (made absolute, must exist as declared), placeholders, unknown LYNXC_* variables."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from lynxc.runtime.definition import ServerDefinition, ToolBinding
from lynxc.runtime.setting_paths import resolve_paths
from lynxc.runtime.settings import (
    SettingsError,
    collect_settings,
    placeholder,
    unknown_environment,
)
from lynxc.runtime.startup_checks import startup_settings
from tests.conftest import LYNXC

SPEC = """\
lynxc: 1
server:
  name: paths
  version: 0.1.0
  title: Settings fixture
  instructions: Reports the settings it was started with; not for real use.
  settings:
    greeting: {type: string, description: A required text setting.}
    roots:
      type: array
      items: {type: string, format: directory-path}
      default: []
      description: Folders, each must exist.
    spaces:
      type: object
      additionalProperties: {type: string, format: directory-path}
      default: {}
      description: Named folders.
    index_dir: {type: string, format: path, default: .index, description: Need not exist yet.}
tools:
  - name: show_settings
    backend: paths_backend:show_settings
    annotations: {readOnlyHint: true}
    description:
      purpose: Return the settings the server started with.
    output: {type: object, properties: {settings: {type: object}}}
"""

BACKEND = """\
from lynxc.runtime.backend import backend


@backend(settings={"greeting", "roots", "spaces", "index_dir"})
async def show_settings(params, ctx):
    return {"settings": dict(ctx.settings)}
"""

SCHEMA = {
    "greeting": {"type": "string"},
    "roots": {"type": "array", "items": {"type": "string", "format": "directory-path"}, "default": []},
    "spaces": {
        "type": "object",
        "additionalProperties": {"type": "string", "format": "directory-path"},
        "default": {},
    },
    "sources": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "root": {"type": "string", "format": "directory-path"},
            },
        },
        "default": [],
    },
    "config_file": {"anyOf": [{"type": "string", "format": "file-path"}, {"type": "null"}], "default": None},
    "index_dir": {"type": "string", "format": "path", "default": ".index"},
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("settings") / "project"
    (project / "specs").mkdir(parents=True)
    (project / "specs/paths.yaml").write_text(SPEC)
    (project / "paths_backend.py").write_text(BACKEND)
    done = subprocess.run([LYNXC, "--project", str(project), "build"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return project


def serve(
    project: Path, *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`lynxc serve` on stdio with stdin closed: a server that starts ends at once with status 0."""
    return subprocess.run(
        [LYNXC, "--project", str(project), "serve", "paths", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        env=env or {k: v for k, v in os.environ.items() if not k.startswith("LYNXC_")},
    )


def definition(schema: dict, tools: tuple[ToolBinding, ...] = ()) -> ServerDefinition:
    return ServerDefinition("s", "0.1.0", None, None, Path("."), schema, tools)


# Required settings and placeholders ------------------------------------------------------------


def test_a_setting_without_a_default_is_required() -> None:
    assert collect_settings(SCHEMA, {}, environ={})[1] == [
        "setting 'greeting' is required (it has no default): pass --set greeting=VALUE or set LYNXC_GREETING"
    ]
    values, problems = collect_settings(SCHEMA, {"greeting": "hi"}, environ={})
    assert values["greeting"] == "hi" and problems == []
    assert collect_settings(SCHEMA, {}, environ={"LYNXC_GREETING": "hi"})[0]["greeting"] == "hi"


def test_every_problem_is_reported_at_once() -> None:
    given = {"colour": "red", "roots": "not json", "spaces": "[1]"}
    _, problems = collect_settings(SCHEMA, given, environ={})
    assert problems[0].startswith("unknown setting 'colour'")
    assert "setting 'greeting' is required" in problems[1]
    assert problems[2].startswith("setting 'roots' expects JSON (array)")
    assert problems[3] == "setting 'spaces': [1] is not of type 'object'"


def test_placeholders_say_what_goes_there_and_are_refused_when_serving() -> None:
    assert placeholder(SCHEMA["greeting"]) == "<required: text>"
    assert placeholder(SCHEMA["roots"]) == "<required: JSON array of absolute folder paths>"
    assert placeholder(SCHEMA["spaces"]) == "<required: JSON object of absolute folder paths>"
    assert placeholder({"type": "integer"}) == "<required: integer>"
    assert placeholder({"type": "string", "format": "file-path"}) == "<required: absolute file path>"
    assert collect_settings(SCHEMA, {}, environ={"LYNXC_GREETING": "<required: text>"})[1] == [
        "setting 'greeting' still holds the placeholder <required: text> from `lynxc config`: "
        "replace it with a value"
    ]


# Unknown variables --------------------------------------------------------------------------


def test_unknown_lynxc_variables_are_warned_about_with_a_suggestion() -> None:
    environ = {"LYNXC_ROOT": "[]", "LYNXC_GREETING": "hi", "LYNXC_ZZZ": "1", "PATH": "/bin"}
    assert unknown_environment(SCHEMA, environ) == [
        "LYNXC_ROOT names no setting of this server (did you mean LYNXC_ROOTS?); ignored",
        "LYNXC_ZZZ names no setting of this server (its settings: LYNXC_CONFIG_FILE, LYNXC_GREETING, "
        "LYNXC_INDEX_DIR, LYNXC_ROOTS, LYNXC_SOURCES, LYNXC_SPACES); ignored",
    ]


# Declared paths -----------------------------------------------------------------------------


def test_declared_paths_are_made_absolute_from_the_start_directory(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "app.toml").write_text("")
    values = {
        "roots": ["docs", str(tmp_path / "docs") + "/"],
        "spaces": {"d": "./docs/../docs"},
        "sources": [{"name": "code", "root": "docs"}],
        "config_file": "app.toml",
        "index_dir": ".index",
        "greeting": "docs",  # no format: left alone
    }
    resolved, problems = resolve_paths(SCHEMA, values, str(tmp_path))
    assert problems == []
    docs = str(tmp_path / "docs")
    assert resolved == {
        "roots": [docs, docs],
        "spaces": {"d": docs},
        "sources": [{"name": "code", "root": docs}],
        "config_file": str(tmp_path / "app.toml"),
        "index_dir": str(tmp_path / ".index"),  # a `path` need not exist
        "greeting": "docs",
    }


def test_missing_folders_and_files_instead_of_folders_are_reported(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("")
    values = {
        "roots": [str(tmp_path / "gone"), "notes.txt"],
        "spaces": {"w": str(tmp_path / "notes.txt")},
        "sources": [{"name": "code", "root": str(tmp_path / "gone")}],
        "config_file": str(tmp_path),
    }
    _, problems = resolve_paths(SCHEMA, values, str(tmp_path))
    assert problems == [
        f"setting 'roots': roots[0] = '{tmp_path}/gone' does not exist (it must be an existing folder)",
        "setting 'roots': roots[1] = 'notes.txt' (relative, so taken from the directory the server starts "
        f"in: {tmp_path}/notes.txt) is a file, not a folder",
        f"setting 'spaces': spaces.w = '{tmp_path}/notes.txt' is a file, not a folder",
        f"setting 'sources': sources[0].root = '{tmp_path}/gone' does not exist "
        "(it must be an existing folder)",
        f"setting 'config_file': '{tmp_path}' is a folder, not a file",
    ]


def test_nullable_path_settings_are_resolved_and_checked(tmp_path: Path) -> None:
    """`nullable: true` wraps a setting in `anyOf: [node, {type: null}]`; its paths still count."""
    folders = {"type": "array", "items": {"type": "string", "format": "directory-path"}}
    schema = {"roots": {"anyOf": [folders, {"type": "null"}]}}
    (tmp_path / "docs").mkdir()
    values, problems = resolve_paths(schema, {"roots": ["docs", "gone"]}, str(tmp_path))
    assert values == {"roots": [f"{tmp_path}/docs", f"{tmp_path}/gone"]}
    assert len(problems) == 1 and "roots[1] = 'gone'" in problems[0] and "does not exist" in problems[0]
    assert resolve_paths(schema, {"roots": None}, str(tmp_path)) == ({"roots": None}, [])
    assert placeholder(schema["roots"]) == "<required: JSON array of absolute folder paths>"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every folder")
def test_an_unreadable_folder_is_reported(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0)
    try:
        _, problems = resolve_paths(SCHEMA, {"roots": [str(locked)]}, str(tmp_path))
    finally:
        locked.chmod(0o700)
    assert problems == [
        f"setting 'roots': roots[0] = '{locked}' cannot be read by this server (permission denied)"
    ]


def test_startup_reports_values_and_paths_together(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as err:
        startup_settings(definition(SCHEMA), ['roots=["nope"]'], str(tmp_path), environ={})
    assert [p.split(":")[0] for p in err.value.problems] == [
        "setting 'greeting' is required (it has no default)",
        "setting 'roots'",
    ]


def test_backend_checks_run_once_the_values_are_valid(tmp_path: Path) -> None:
    lynx = ToolBinding("search", "lynxc.runtime.backends.lynx.tools:search_tool", "search", "I", "O")
    schema = {"index_dir": {"type": "string", "default": str(tmp_path / "index")}}
    (tmp_path / "index").write_text("not a folder")
    with pytest.raises(SettingsError) as err:
        startup_settings(definition(schema, (lynx,)), [], str(tmp_path), environ={})
    assert err.value.problems == [f"setting 'index_dir': '{tmp_path}/index' is a file, not a folder"]


# Through `lynxc serve` ----------------------------------------------------------------------


def test_serve_refuses_to_start_naming_every_problem(project: Path, tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("LYNXC_")}, "LYNXC_ROOT": "[]"}
    done = serve(project, "--set", 'roots=["missing", "file.txt"]', cwd=tmp_path, env=env)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "lynxc serve: warning: LYNXC_ROOT names no setting of this server "
        "(did you mean LYNXC_ROOTS?); ignored",
        "lynxc serve: setting 'greeting' is required (it has no default): pass --set greeting=VALUE or set "
        "LYNXC_GREETING",
        "lynxc serve: setting 'roots': roots[0] = 'missing' (relative, so taken from the directory the "
        f"server starts in: {tmp_path}/missing) does not exist (it must be an existing folder)",
        "lynxc serve: setting 'roots': roots[1] = 'file.txt' (relative, so taken from the directory the "
        f"server starts in: {tmp_path}/file.txt) is a file, not a folder",
    ]


def test_backends_receive_absolute_paths(project: Path, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()

    async def call() -> dict:
        args = [
            "--project",
            str(project),
            "serve",
            "paths",
            "--set",
            "greeting=hi",
            "--set",
            'roots=["docs"]',
        ]
        params = StdioServerParameters(command=LYNXC, args=args, cwd=tmp_path)
        async with Client(params) as client:
            result = await client.call_tool("show_settings", {})
        return result.structured_content["settings"]

    settings = anyio.run(call)
    assert settings["roots"] == [str(tmp_path / "docs")]
    assert settings["index_dir"] == str(tmp_path / ".index")


def test_config_prints_placeholders_and_absolute_path_defaults(project: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [LYNXC, "--project", str(project), "config", "paths"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    env = json.loads(done.stdout)["mcpServers"]["paths"]["env"]
    assert env == {
        "LYNXC_GREETING": "<required: text>",
        "LYNXC_ROOTS": "[]",
        "LYNXC_SPACES": "{}",
        "LYNXC_INDEX_DIR": str(tmp_path / ".index"),
    }


def test_a_path_or_uri_keeps_a_uri_as_written_and_resolves_a_path(tmp_path: Path) -> None:
    schema = {"index_dir": {"type": "string", "format": "path-or-uri"}}
    for uri in ("s3://bucket/prefix", "gs://b/x", "az://container/p", "file:///tmp/index"):
        assert resolve_paths(schema, {"index_dir": uri}, str(tmp_path)) == ({"index_dir": uri}, [])
    resolved, problems = resolve_paths(schema, {"index_dir": "idx"}, str(tmp_path))
    assert (resolved, problems) == ({"index_dir": str(tmp_path / "idx")}, [])
    # Only a `path-or-uri` keeps a URI: a plain `path` makes it a (strange) folder below the start.
    resolved, _ = resolve_paths({"d": {"type": "string", "format": "path"}}, {"d": "s3://b"}, str(tmp_path))
    assert resolved["d"] == str(tmp_path / "s3:/b")


# Values as typed on a command line -----------------------------------------------------------


def bundled_settings() -> list:
    """One case (server, setting, schema) per setting of every bundled server."""
    import runpy

    from tests.conftest import ROOT

    found = []
    for module in sorted((ROOT / "generated").glob("*/server.py")):
        definition = runpy.run_path(str(module))["SERVER"]
        found += [
            pytest.param(definition.name, name, node, id=f"{definition.name}.{name}")
            for name, node in definition.settings_schema.items()
        ]
    return found


@pytest.mark.parametrize(("server", "name", "node"), bundled_settings())
def test_every_bundled_setting_takes_text_as_text_and_names_its_type(
    server: str, name: str, node: dict
) -> None:
    """A setting that may be a string takes text as written (a URL is not JSON), nullable or not;
    any other says which JSON it expects, never "(any)"."""
    _, problems = collect_settings({name: node}, {name: "http://127.0.0.1:8899/x"}, environ={})
    malformed = collect_settings({name: node}, {name: "{not json"}, environ={})[1]
    assert not any("(any)" in problem for problem in problems + malformed), problems + malformed
    if "string" in json.dumps(node.get("type")) + json.dumps(node.get("anyOf")):
        assert not any("expects JSON" in problem for problem in problems + malformed), problems + malformed


def test_a_nullable_url_setting_takes_a_url_null_or_json_and_refuses_other_schemes() -> None:
    schema = {
        "searxng_url": {
            "anyOf": [
                {"type": "string", "format": "uri", "pattern": "^https?://[^\\s/?#]+"},
                {"type": "null"},
            ],
            "default": None,
        },
        "workers": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None},
    }
    for raw, value in (
        ("http://127.0.0.1:8899", "http://127.0.0.1:8899"),
        ('"http://127.0.0.1:8899"', "http://127.0.0.1:8899"),
        ("null", None),
    ):
        assert collect_settings(schema, {"searxng_url": raw}, environ={}) == (
            {**{"workers": None}, "searxng_url": value},
            [],
        )
    assert collect_settings(schema, {"workers": "4"}, environ={})[0]["workers"] == 4
    _, problems = collect_settings(schema, {"searxng_url": "ftp://x", "workers": "four"}, environ={})
    assert problems == [
        "setting 'searxng_url': 'ftp://x' does not match '^https?://[^\\\\s/?#]+'",
        "setting 'workers' expects JSON (integer or null): Expecting value",
    ]


def test_deferred_checks_run_once_in_the_background_per_package() -> None:
    from lynxc.runtime.startup_checks import DeferredChecks

    runs: list[str] = []

    def index_check(settings: dict) -> list[str]:
        runs.append("index")
        return [f"setting 'index_dir': {settings['index_dir']!r} is damaged"]

    def broken_check(settings: dict) -> list[str]:
        raise OSError("disk gone")

    checks = DeferredChecks({"pkg.index": index_check, "pkg.broken": broken_check}, {"index_dir": "/i"})

    async def ask() -> list[list[str]]:
        return [await checks.problems(package) for package in ("pkg.index", "pkg.index", "pkg.broken", None)]

    assert anyio.run(ask) == [
        ["setting 'index_dir': '/i' is damaged"],
        ["setting 'index_dir': '/i' is damaged"],
        ["the start-up check of pkg.broken failed: OSError: disk gone"],  # never a caller left waiting
        [],  # a user's backend: no built-in package, no check
    ]
    assert runs == ["index"]

"""What a generated `server.py` declares, and how to load one from its folder."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the records backend loads by name (the core never imports backends)
    from lynxc.runtime.backends.records.definitions import Resource, Resources


@dataclass(frozen=True)
class ToolBinding:
    name: str
    backend: str  # 'package.module:function'
    models_module: str  # file stem under models/
    input_model: str
    output_model: str | None
    caps: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ServerDefinition:
    name: str
    version: str
    title: str | None
    instructions: str | None
    folder: Path
    settings_schema: Mapping[str, Mapping[str, Any]]
    tools: tuple[ToolBinding, ...]
    # sha256 of every file of the build that server.py belongs to, by path relative to `folder`:
    # a file that differs (edited by hand, or from another build) is refused, never served.
    files_sha256: Mapping[str, str] = field(default_factory=dict)
    # A records server's collections.json (relative to `folder`), or None: the server declares none.
    collections: str | None = None
    # A server with MCP resources: its resources.json (the two list answers, beside
    # resource_sources.json; runtime/resources.py), or None: the server declares none.
    resources: str | None = None
    # A server with SQL tools: its sql.json (relative to `folder`), or None.
    sql: str | None = None
    # A server with HTTP tools: its http.json (relative to `folder`), or None.
    http: str | None = None
    # A server with prompts: its prompts.json (prompt_messages.json beside it), or None.
    prompts: str | None = None
    # A server whose prompts or resource templates complete: its completions.json, or None.
    completions: str | None = None
    # How HTTP callers are authenticated (runtime/auth/config.py reads it), or None: no one is.
    auth: Mapping[str, Any] | None = None
    transports: tuple[str, ...] = ("stdio", "http")
    # The checked bytes of those files, kept from start-up: a tool's models load on its first
    # call, and by then a rebuild may have swapped the folder; the server keeps serving its own
    # build instead of reading the new one (and nothing can change between check and import).
    _checked: dict[str, bytes] = field(default_factory=dict, init=False, repr=False, compare=False)
    _parsed: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def tools_payload(self) -> dict[str, Any]:
        """The exact `tools/list` answer the compiler wrote beside this module (its do-not-edit
        header, kept in the file under `_generated`, is not part of it)."""
        payload = json.loads(self.read_checked("tools.json"))
        payload.pop(GENERATED_KEY, None)
        return payload

    def load_models(self, binding: ToolBinding) -> ModuleType:
        relative = f"models/{binding.models_module}.py"
        name = f"lynxc_generated.{_ident(self.name)}.models.{binding.models_module}"
        if name in sys.modules:
            return sys.modules[name]
        return load_module_from_source(name, self.folder / relative, self.read_checked(relative))

    def records(self) -> Resources:
        """The declared resources (parsed once); none when the server declares none."""
        resources = self._parsed.get("resources")
        if resources is None:
            module = importlib.import_module(RECORDS_DEFINITIONS)
            text = (
                self.read_checked(self.collections) if self.collections else '{"format": 1, "resources": []}'
            )
            resources = self._parsed["resources"] = module.parse_resources(text)
        return resources

    def sql_catalog(self) -> Any:
        """The SQL tools' statements and data (sql.json, parsed once by the sql backend)."""
        return self._catalog("sql", self.sql, SQL_CATALOG, "SQL")

    def http_catalog(self) -> Any:
        """The HTTP tools' requests (http.json, parsed once by the http backend)."""
        return self._catalog("http", self.http, HTTP_CATALOG, "HTTP")

    def _catalog(self, key: str, relative: str | None, parser: str, kind: str) -> Any:
        """A declared engine's generated file, parsed once by `parser`'s parse_catalog."""
        catalog = self._parsed.get(key)
        if catalog is None:
            if not relative:
                raise DefinitionError(
                    f"{self.folder / 'server.py'} declares no {kind} tools (run `lynxc build`)"
                )
            module = importlib.import_module(parser)
            catalog = self._parsed[key] = module.parse_catalog(self.read_checked(relative))
        return catalog

    def load_record_model(self, resource: Resource) -> type:
        """The Pydantic class `Record` of one record of `resource`, from its checked model file."""
        relative = f"models/{resource.model}.py"
        name = f"lynxc_generated.{_ident(self.name)}.models.{resource.model}"
        module = sys.modules.get(name) or load_module_from_source(
            name, self.folder / relative, self.read_checked(relative)
        )
        record = getattr(module, "Record", None)
        if not isinstance(record, type):
            raise DefinitionError(f"{self.folder / relative} defines no class Record (run `lynxc build`)")
        return record

    def read_checked(self, relative: str) -> str:
        """A generated file's text, checked to be the one this server.py was built with; read
        once, then served from memory."""
        data = self._checked.get(relative)
        if data is None:
            try:
                data = (self.folder / relative).read_bytes()
            except OSError as err:
                raise DefinitionError(
                    f"{self.folder / relative}: {err.strerror} (run `lynxc build`)"
                ) from None
            expected = self.files_sha256.get(relative)
            if expected is not None and hashlib.sha256(data).hexdigest() != expected:
                raise DefinitionError(
                    f"{self.folder / relative} does not belong to the build of {self.folder / 'server.py'} "
                    "(edited by hand, or left by another build): run `lynxc build`"
                )
            self._checked[relative] = data
        return data.decode("utf-8")

    def check_files(self) -> None:
        """Refuse a generated folder whose files disagree with its server.py."""
        for relative in self.files_sha256:
            self.read_checked(relative)


# Parses collections.json; imported by name when first needed, like every backend module.
RECORDS_DEFINITIONS = "lynxc.runtime.backends.records.definitions"
SQL_CATALOG = "lynxc.runtime.backends.sql.catalog"  # parses sql.json, imported by name too
HTTP_CATALOG = "lynxc.runtime.backends.http.catalog"  # parses http.json, likewise
PROMPT_MESSAGES_FILE = "prompt_messages.json"  # how each prompt renders, beside prompts.json
GENERATED_KEY = "_generated"  # where tools.json keeps its header (compiler/wire.py writes it)


class DefinitionError(Exception):
    """A folder that does not hold a generated lynxc server."""


def load_definition(folder: Path) -> ServerDefinition:
    server_file = folder / "server.py"
    if not server_file.is_file():
        raise DefinitionError(f"{folder} holds no generated server.py (run `lynxc build` first)")
    module = load_module_from_path(f"lynxc_generated.{_ident(folder.name)}.server", server_file)
    definition = getattr(module, "SERVER", None)
    if not isinstance(definition, ServerDefinition):
        raise DefinitionError(f"{server_file} does not define SERVER as a lynxc ServerDefinition")
    definition.check_files()
    return definition


def load_module_from_path(name: str, path: Path) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise DefinitionError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_module_from_source(name: str, path: Path, source: str) -> ModuleType:
    """A module from text already read (and checked), registered under `name`."""
    spec = importlib.util.spec_from_loader(name, loader=None, origin=str(path))
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    sys.modules[name] = module  # before executing: pydantic resolves annotations through it
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)

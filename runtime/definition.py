"""What a generated `server.py` declares, and how to load one from its folder."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any


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

    def tools_payload(self) -> dict[str, Any]:
        """The exact `tools/list` answer the compiler wrote beside this module."""
        return json.loads((self.folder / "tools.json").read_text(encoding="utf-8"))

    def load_models(self, binding: ToolBinding) -> ModuleType:
        path = self.folder / "models" / f"{binding.models_module}.py"
        return load_module_from_path(
            f"lynxc_generated.{_ident(self.name)}.models.{binding.models_module}", path
        )


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


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)

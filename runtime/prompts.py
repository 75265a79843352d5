"""Prompts (issue 31): `prompts/list` from the build's prompts.json, `prompts/get` rendering the
messages of prompt_messages.json.

Templates render in Jinja2's immutable sandbox with StrictUndefined: a template reaches its
arguments and nothing of Python (the build refused any that tried), and an argument's value is
text put into the output, never a template itself. Arguments and output are bounded; a request
naming an unknown prompt, leaving out a required argument or passing an unknown one is answered
with JSON-RPC -32602 naming it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from .defaults import DEFAULT_PAGE_SIZE
from .pages import page
from .prompt_templates import (
    MAX_ARGUMENT_BYTES,
    MAX_RENDERED_BYTES,
    RenderedTooLarge,
    render_bounded,
    template_environment,
)

if TYPE_CHECKING:  # Jinja2 loads on the first prompts/get, not at start-up
    import jinja2

ResourceContents = types.TextResourceContents | types.BlobResourceContents
ReadResource = Callable[[str], Awaitable[list[ResourceContents]]]


class ResourceNotFound(Exception):
    """The reader's answer for a URI the server does not serve (runtime/resources.py has its own
    class of the same name; either is treated alike)."""

    def __init__(self, uri: str):
        super().__init__(f"Resource not found: {uri}")
        self.uri = uri


async def no_resources(uri: str) -> list[ResourceContents]:
    """The reader of a server that serves no resources."""
    raise ResourceNotFound(uri)


def invalid(message: str, **data: Any) -> MCPError:
    return MCPError(types.INVALID_PARAMS, message, data or None)


class PromptHost:
    """The prompts of one server: its list (paginated like tools) and their rendering."""

    def __init__(
        self,
        listed: Mapping[str, Any],
        rendering: Mapping[str, Any],
        read_resource: ReadResource = no_resources,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
    ):
        self._prompts = [types.Prompt.model_validate(p) for p in listed["prompts"]]
        self._render = dict(rendering["prompts"])
        self._read_resource = read_resource
        self.page_size = page_size
        self._templates: dict[tuple[str, int], jinja2.Template] = {}

    @classmethod
    def from_files(
        cls,
        listed_text: str,
        rendering_text: str,
        read_resource: ReadResource = no_resources,
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> PromptHost:
        listed = json.loads(listed_text)
        listed.pop("_generated", None)
        return cls(listed, json.loads(rendering_text), read_resource, page_size=page_size)

    def arguments(self) -> dict[str, list[str]]:
        """Every prompt and the names of its arguments."""
        return {name: list(render["arguments"]) for name, render in self._render.items()}

    async def list_prompts(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        prompts, next_cursor = page(
            "prompts", self._prompts, params.cursor if params else None, self.page_size
        )
        return types.ListPromptsResult(prompts=prompts, next_cursor=next_cursor)

    async def get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        render = self._render.get(params.name)
        if render is None:
            raise invalid(f"Unknown prompt: {params.name!r}", prompt=params.name)
        values = self._arguments(params.name, render["arguments"], params.arguments or {})
        messages: list[types.PromptMessage] = []
        size = 0
        for index, message in enumerate(render["messages"]):
            role = message["role"]
            if "image" in message:
                image = message["image"]
                messages.append(
                    types.PromptMessage(
                        role=role,
                        content=types.ImageContent(data=image["data"], mime_type=image["mime_type"]),
                    )
                )
                continue
            kind = "text" if "text" in message else "resource"
            try:
                text = render_bounded(
                    self._template(params.name, index, message[kind]), values, MAX_RENDERED_BYTES - size
                )
            except RenderedTooLarge:
                size = MAX_RENDERED_BYTES + 1
            else:
                size += len(text.encode("utf-8", "surrogatepass"))
            if size > MAX_RENDERED_BYTES:
                raise MCPError(
                    types.INTERNAL_ERROR,
                    f"prompt {params.name!r} renders to over {MAX_RENDERED_BYTES} bytes with these arguments",
                )
            if kind == "text":
                messages.append(types.PromptMessage(role=role, content=types.TextContent(text=text)))
                continue
            for contents in await self._read(text):
                size += _contents_size(contents)
                if size > MAX_RENDERED_BYTES:
                    raise MCPError(
                        types.INTERNAL_ERROR,
                        f"prompt {params.name!r}: the resources it embeds exceed {MAX_RENDERED_BYTES} bytes",
                    )
                messages.append(
                    types.PromptMessage(role=role, content=types.EmbeddedResource(resource=contents))
                )
        description = next((p.description for p in self._prompts if p.name == params.name), None)
        return types.GetPromptResult(description=description, messages=messages)

    def _arguments(
        self, prompt: str, declared: Mapping[str, Any], given: Mapping[str, Any]
    ) -> dict[str, str]:
        for name, value in given.items():
            if name not in declared:
                known = ", ".join(declared) or "none"
                raise invalid(
                    f"prompt {prompt!r} has no argument {name!r} (its arguments: {known})", argument=name
                )
            if not isinstance(value, str):
                raise invalid(f"argument {name!r} of prompt {prompt!r} must be a string", argument=name)
            if len(value.encode("utf-8", "surrogatepass")) > MAX_ARGUMENT_BYTES:
                raise invalid(
                    f"argument {name!r} of prompt {prompt!r} is over {MAX_ARGUMENT_BYTES} bytes",
                    argument=name,
                )
        for name, argument in declared.items():
            if argument["required"] and name not in given:
                raise invalid(f"prompt {prompt!r} needs argument {name!r}", argument=name)
        # An optional argument left out renders as empty text (`{% if name %}` tests it).
        return {name: given.get(name, "") for name in declared}

    def _template(self, prompt: str, index: int, text: str) -> jinja2.Template:
        key = (prompt, index)
        template = self._templates.get(key)
        if template is None:
            template = self._templates[key] = template_environment().from_string(text)
        return template

    async def _read(self, uri: str) -> list[ResourceContents]:
        try:
            return await self._read_resource(uri)
        except MCPError:
            raise
        except Exception as err:
            if type(err).__name__ == "ResourceNotFound":
                raise invalid(f"Resource not found: {uri}", uri=uri) from None
            raise MCPError(types.INTERNAL_ERROR, f"reading {uri} failed: {err}") from None


def _contents_size(contents: ResourceContents) -> int:
    if isinstance(contents, types.TextResourceContents):
        return len(contents.text.encode())
    return len(contents.blob)

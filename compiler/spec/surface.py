"""Spec format v1, the rest of an MCP server beside its tools: prompts, resources and the
completion sources of their arguments (issue 31).

Names follow the MCP specification: a *resource* is data a client reads by URI, a *prompt* a
template a user picks. lynxc's own collections of declared records are `collections:`
(models.py), so the two cannot be confused.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

# What a read of one resource may return, unless the resource says otherwise.
DEFAULT_RESOURCE_MAX_BYTES = 1_048_576
# The most values one completion/complete answer carries (the MCP specification's limit).
MAX_COMPLETION_VALUES = 100


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class CompletionSource(_Strict):
    """Where the suggestions for one argument or URI variable come from: exactly one of
    `values`, `collection` (with `field`), `sql` or `function`."""

    values: list[StrictStr] | None = Field(
        None, description="A fixed list; those starting with what the user typed are offered."
    )
    collection: StrictStr | None = Field(
        None, description="A collection of declared records whose `field` values are offered."
    )
    field: StrictStr | None = Field(None, description="With `collection`: the field, a top-level one.")
    sql: StrictStr | None = Field(
        None,
        description="A statement over the server's SQL data returning one column: $value is what the "
        "user typed, and each other argument already given is $name.",
    )
    function: StrictStr | None = Field(
        None,
        description="'package.module:function', an async function (value, arguments) -> list of strings.",
    )


class PromptArgument(_Strict):
    """One argument of a prompt (always a string on the wire)."""

    description: StrictStr = Field(description="What to pass, with an example.")
    required: StrictBool = False
    complete: CompletionSource | None = Field(None, description="Suggestions while the user types.")
    sample: StrictStr | None = Field(
        None, description="The value the build renders the prompt with; defaults to a completion value."
    )


class ImageFile(_Strict):
    file: StrictStr = Field(description="An image file beside the spec, copied into the build.")
    mime_type: StrictStr = Field(description="e.g. image/png.")


class PromptMessage(_Strict):
    """One message of a prompt: a role and exactly one of `text`, `resource` or `image`."""

    role: Literal["user", "assistant"] = "user"
    text: StrictStr | None = Field(
        None, description="A Jinja2 template (sandboxed) over the prompt's arguments."
    )
    resource: StrictStr | None = Field(
        None,
        description="A URI (a Jinja2 template over the arguments) of one of this server's resources, "
        "embedded whole in the message.",
    )
    image: ImageFile | None = None


class Prompt(_Strict):
    """A template a user picks: `prompts/list` shows it, `prompts/get` renders its messages."""

    name: StrictStr = Field(description="Unique in the server: letters, digits, _ . - (at most 64).")
    title: StrictStr | None = None
    description: StrictStr = Field(description="What the prompt asks for, and when to pick it.")
    arguments: dict[StrictStr, PromptArgument] = Field(default_factory=dict)
    messages: list[PromptMessage] = Field(min_length=1)


class RecordSource(_Strict):
    """A templated resource that reads one declared record: the URI's one variable is its key."""

    collection: StrictStr


class TemplateVariable(_Strict):
    """One variable of a URI template."""

    description: StrictStr | None = None
    complete: CompletionSource | None = None
    sample: StrictStr | None = Field(None, description="The value the build reads the resource with.")


class Resource(_Strict):
    """Data a client reads by URI: static (`uri`) or templated (`uri_template`, RFC 6570),
    served from exactly one of `file`, `text`, `record`, `sql` or `function`."""

    name: StrictStr = Field(description="Unique in the server.")
    uri: StrictStr | None = Field(None, description="A fixed URI, e.g. docs://guide.")
    uri_template: StrictStr | None = Field(
        None, description="An RFC 6570 template, e.g. pep://{number}: its variables are bound when read."
    )
    title: StrictStr | None = None
    description: StrictStr = Field(description="What the data is and when a client should read it.")
    mime_type: StrictStr = Field(description="e.g. text/markdown, application/json, image/png.")
    file: StrictStr | None = Field(
        None, description="A file beside the spec, copied into the build (text or, by MIME type, binary)."
    )
    text: StrictStr | None = Field(
        None, description="The content itself; with uri_template, a Jinja2 template over its variables."
    )
    record: RecordSource | None = Field(None, description="One declared record, as JSON.")
    sql: StrictStr | None = Field(
        None,
        description="A statement over the server's SQL data; each variable is $name; its first row, "
        "as a JSON object, is the content (no row: the resource does not exist).",
    )
    function: StrictStr | None = Field(
        None,
        description="'package.module:function', an async function (variables, ctx) -> str, bytes or "
        "a JSON value.",
    )
    variables: dict[StrictStr, TemplateVariable] = Field(
        default_factory=dict, description="With uri_template: its variables' descriptions and completions."
    )
    max_bytes: StrictInt = Field(
        DEFAULT_RESOURCE_MAX_BYTES, ge=1, description="A read whose content is larger fails with an error."
    )

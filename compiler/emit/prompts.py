"""The generated files of a server's prompts and completions (issue 31): prompts.json (exactly
the `prompts/list` answer), prompt_messages.json (how each renders) and completions.json, and
what the README says of each prompt."""

from __future__ import annotations

import json
from typing import Any

from ..ir import ServerIR

PROMPTS_FILE = "prompts.json"
PROMPT_MESSAGES_FILE = "prompt_messages.json"
COMPLETIONS_FILE = "completions.json"


def prompts_list(server: ServerIR) -> dict[str, Any]:
    return {"prompts": [prompt.wire for prompt in server.prompts]}


def prompt_messages(server: ServerIR) -> dict[str, Any]:
    return {"prompts": {prompt.name: prompt.render for prompt in server.prompts}}


def completions_document(server: ServerIR) -> dict[str, Any] | None:
    return json.loads(server.completions_json) if server.completions_json else None


def prompt_docs(server: ServerIR) -> list[dict[str, Any]]:
    """Each prompt as the README shows it: its arguments (with their completion) and messages."""
    completions = (completions_document(server) or {}).get("prompts", {})
    docs = []
    for prompt in server.prompts:
        wire, render = prompt.wire, prompt.render
        completed = completions.get(prompt.name, {})
        docs.append(
            {
                "name": prompt.name,
                "title": wire.get("title"),
                "description": wire["description"],
                "arguments": [
                    {**argument, "completion": _describe(completed.get(argument["name"]))}
                    for argument in wire.get("arguments", [])
                ],
                "messages": [_message(message) for message in render["messages"]],
            }
        )
    return docs


def _describe(source: dict[str, Any] | None) -> str:
    if source is None:
        return ""
    if "values" in source:
        return (
            "one of "
            + ", ".join(f"`{v}`" for v in source["values"][:10])
            + (", ..." if len(source["values"]) > 10 else "")
        )
    if "collection" in source:
        return f"values of `{source['field']}` in `{source['collection']}`"
    if "sql" in source:
        return "SQL: `" + " ".join(source["sql"].split()) + "`"
    return f"`{source['function']}`"


def _message(message: dict[str, Any]) -> dict[str, str]:
    if "image" in message:
        image = message["image"]
        return {"role": message["role"], "kind": "image", "body": f"{image['file']} ({image['mime_type']})"}
    kind = "text" if "text" in message else "resource"
    return {"role": message["role"], "kind": kind, "body": message[kind]}

"""Lower a server's prompts (issue 31) into PromptIR: their `prompts/list` entries and how each
renders (prompt_messages.json).

Every template is parsed and rendered here, in the sandbox the runtime renders in
(`runtime/prompts.py: template_environment`), with the sample arguments: a prompt that does not
render, reads an undeclared argument, reaches for a Python attribute, or embeds a resource the
server does not serve never reaches a build. Image files are read, checked and embedded.
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import meta, nodes

from lynxc.runtime.prompt_templates import (
    MAX_IMAGE_BYTES,
    MAX_RENDERED_BYTES,
    RenderedTooLarge,
    render_bounded,
    template_environment,
)
from lynxc.runtime.resource_media import uri_templates

from ..diagnostics import Diagnostic, Span
from ..ir import PromptIR, canonical_json
from ..rules import diagnostic
from ..spec.load import PromptSource
from ..spec.source import NodePath, SourceDoc
from ..spec.surface import Resource
from ..suggest import did_you_mean

PROMPT_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
ARGUMENT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
# Words a Jinja2 expression reads as something else than a variable.
JINJA_WORDS = frozenset(
    {"and", "or", "not", "in", "is", "if", "else", "true", "false", "none", "True", "False", "None", "loop"}
)
DEFAULT_SAMPLE = "sample"


def sample_value(sample: str | None, complete: Any) -> str:
    """What the build renders with: the declared sample, else the first completion value."""
    if sample is not None:
        return sample
    if complete is not None and complete.values:
        return complete.values[0]
    return DEFAULT_SAMPLE


def lower_prompts(
    prompts: Sequence[PromptSource], resources: Sequence[Resource], spec_dir: Path
) -> tuple[tuple[PromptIR, ...], list[Diagnostic]]:
    """The prompts' IR (in declaration order) and what is wrong with them."""
    found: list[Diagnostic] = []
    lowered: list[PromptIR] = []
    seen: set[str] = set()
    environment = template_environment()
    for source in prompts:
        prompt, doc, base = source.prompt, source.doc, source.base
        if not PROMPT_NAME.match(prompt.name):
            found.append(
                diagnostic(
                    "PROMPT_NAME_INVALID",
                    f"prompt name '{prompt.name}' does not match [A-Za-z0-9_.-]{{1,64}}",
                    doc.span((*base, "name")),
                )
            )
        elif prompt.name in seen:
            found.append(
                diagnostic(
                    "PROMPT_NAME_DUPLICATE",
                    f"prompt '{prompt.name}' is declared twice",
                    doc.span((*base, "name")),
                    "prompt names are unique in a server (tools are another namespace)",
                )
            )
        seen.add(prompt.name)
        ir, problems = _lower_prompt(source, resources, spec_dir, environment)
        found.extend(problems)
        if ir is not None:
            lowered.append(ir)
    return tuple(lowered), found


def _lower_prompt(
    source: PromptSource, resources: Sequence[Resource], spec_dir: Path, environment: jinja2.Environment
) -> tuple[PromptIR | None, list[Diagnostic]]:
    prompt, doc, base = source.prompt, source.doc, source.base
    found: list[Diagnostic] = []
    declared = list(prompt.arguments)
    for name in declared:
        if not ARGUMENT_NAME.match(name) or name in JINJA_WORDS:
            found.append(
                diagnostic(
                    "PROMPT_ARGUMENT_NAME_INVALID",
                    f"argument '{name}' of prompt '{prompt.name}' is not an identifier a template can use",
                    doc.span((*base, "arguments", name), key=True),
                    "letters, digits and _, not starting with a digit, and no Jinja2 word (and, or, "
                    "not, in, is, if, else, true, false, none, loop)",
                )
            )
    samples = {
        name: sample_value(argument.sample, argument.complete) for name, argument in prompt.arguments.items()
    }
    # As a prompts/get that leaves every optional argument out renders it: empty text.
    bare = {name: samples[name] if argument.required else "" for name, argument in prompt.arguments.items()}
    used: set[str] = set()
    rendered_ok = True
    messages: list[dict[str, Any]] = []
    for index, message in enumerate(prompt.messages):
        path = (*base, "messages", index)
        kinds = [k for k in ("text", "resource", "image") if getattr(message, k) is not None]
        if len(kinds) != 1:
            found.append(
                diagnostic(
                    "PROMPT_MESSAGE_INVALID",
                    f"message {index + 1} of prompt '{prompt.name}' holds "
                    + (" and ".join(kinds) if kinds else "none of text, resource and image"),
                    doc.span(path),
                    "write exactly one of text:, resource: or image:",
                )
            )
            rendered_ok = False
            continue
        kind = kinds[0]
        if kind == "image":
            image, problem = _image(message.image, spec_dir, doc.span((*path, "image", "file")))
            if problem is not None:
                found.append(problem)
                rendered_ok = False
            else:
                messages.append({"role": message.role, "image": image})
            continue
        template_text = getattr(message, kind)
        where = (*path, kind)
        template, names, problems = check_template(environment, template_text, doc, where, declared)
        found.extend(problems)
        used |= names
        if template is None and not names:  # unparsed: what it uses is unknown
            used |= set(declared)
        if template is None or problems:
            rendered_ok = False
            continue
        rendered = _render(template, samples, doc.span(where), prompt.name, index)
        if not isinstance(rendered, Diagnostic) and bare != samples:
            bare_render = _render(template, bare, doc.span(where), prompt.name, index)
            if isinstance(bare_render, Diagnostic):
                rendered = bare_render
        if isinstance(rendered, Diagnostic):
            found.append(rendered)
            rendered_ok = False
            continue
        if kind == "resource" and not _served(rendered, resources):
            found.append(
                diagnostic(
                    "PROMPT_RESOURCE_UNKNOWN",
                    f"message {index + 1} of prompt '{prompt.name}' embeds '{rendered}' (with the sample "
                    "arguments), which is none of this server's resources",
                    doc.span(where),
                    _resources_hint(resources),
                )
            )
            rendered_ok = False
            continue
        messages.append({"role": message.role, kind: template_text})
    for name in declared:
        if name not in used:
            found.append(
                diagnostic(
                    "PROMPT_ARGUMENT_UNUSED",
                    f"argument '{name}' of prompt '{prompt.name}' is used by none of its messages",
                    doc.span((*base, "arguments", name), key=True),
                    f"use it as {{{{ {name} }}}} in a message, or remove it",
                )
            )
    if not rendered_ok:
        return None, found
    wire: dict[str, Any] = {"name": prompt.name}
    if prompt.title is not None:
        wire["title"] = prompt.title
    wire["description"] = prompt.description
    if prompt.arguments:
        wire["arguments"] = [
            {"name": name, "description": argument.description, "required": argument.required}
            for name, argument in prompt.arguments.items()
        ]
    render = {
        "arguments": {name: {"required": argument.required} for name, argument in prompt.arguments.items()},
        "messages": messages,
    }
    return (
        PromptIR(
            name=prompt.name,
            wire_json=canonical_json(wire),
            span=doc.span((*base, "name")),
            argument_spans=tuple(
                (name, doc.span((*base, "arguments", name), key=True)) for name in prompt.arguments
            ),
            render_json=canonical_json(render),
        ),
        found,
    )


def check_template(
    environment: jinja2.Environment,
    text: str,
    doc: SourceDoc,
    where: NodePath,
    declared: Iterable[str],
) -> tuple[jinja2.Template | None, set[str], list[Diagnostic]]:
    """Parse one template; the names it reads; its syntax errors (at their line in the YAML),
    reads of undeclared names and of attributes the sandbox would refuse."""
    declared = list(declared)
    try:
        tree = environment.parse(text)
    except jinja2.TemplateSyntaxError as err:
        return (
            None,
            set(),
            [
                diagnostic(
                    "PROMPT_TEMPLATE_SYNTAX",
                    f"template syntax: {err.message}",
                    template_line_span(doc, where, err.lineno or 1),
                )
            ],
        )
    found = [
        diagnostic(
            "PROMPT_TEMPLATE_UNSAFE",
            f"the template reads '{attribute}': a template reads its arguments, never Python's attributes",
            template_line_span(doc, where, line),
        )
        for attribute, line in unsafe_attributes(tree)
    ]
    names = meta.find_undeclared_variables(tree)
    for name in sorted(names - set(declared)):
        found.append(
            diagnostic(
                "PROMPT_ARGUMENT_UNDECLARED",
                f"the template uses '{name}', which is no declared argument",
                doc.span(where),
                did_you_mean(name, declared)
                or ("declared: " + ", ".join(declared) if declared else "declare it under arguments:"),
            )
        )
    if found:
        return None, names, found
    return environment.from_string(tree), names, []


def unsafe_attributes(tree: nodes.Template) -> list[tuple[str, int]]:
    """(attribute, line) of each `_attribute` a template reads (`''.__class__`, `x['_y']`): the
    sandbox refuses them when rendering, the build refuses them before."""
    found = []
    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        attribute = node.attr if isinstance(node, nodes.Getattr) else _constant(node.arg)
        if isinstance(attribute, str) and attribute.startswith("_"):
            found.append((attribute, node.lineno))
    return found


def _constant(node: nodes.Node) -> Any:
    return node.value if isinstance(node, nodes.Const) else None


def template_line_span(doc: SourceDoc, where: NodePath, line: int) -> Span:
    """Where line `line` of a template written at `where` sits in its YAML file: a block scalar
    (`|`, `>`) starts on the line after its indicator."""
    start = doc.span(where)
    lines = doc.text.splitlines()
    if 0 < start.line <= len(lines):
        first = lines[start.line - 1][start.col - 1 :].lstrip()
        if first[:1] in ("|", ">"):
            target = start.line + line
            if target <= len(lines):
                text = lines[target - 1]
                return Span(start.file, target, len(text) - len(text.lstrip()) + 1)
            return Span(start.file, target, 1)
    if line == 1:
        return start
    return Span(start.file, start.line + line - 1, 1)


def _render(
    template: jinja2.Template, samples: Mapping[str, str], span: Span, prompt: str, index: int
) -> str | Diagnostic:
    try:
        text = render_bounded(template, dict(samples))
    except RenderedTooLarge:
        return diagnostic(
            "PROMPT_RENDER_FAILED",
            f"message {index + 1} of prompt '{prompt}' renders to over {MAX_RENDERED_BYTES} bytes",
            span,
        )
    except Exception as err:  # SecurityError, UndefinedError, a filter's own failure ...
        return diagnostic(
            "PROMPT_RENDER_FAILED",
            f"message {index + 1} of prompt '{prompt}' does not render with the sample arguments "
            f"({', '.join(f'{k}={v!r}' for k, v in samples.items()) or 'none'}): "
            f"{type(err).__name__}: {err}",
            span,
            "give each argument a `sample:` the template renders with",
        )
    return text


def resource_patterns(resources: Sequence[Resource]) -> list[tuple[str, Any]]:
    """(static uri, None) or (template text, parsed UriTemplate) for each declared resource."""
    templates = uri_templates()  # the SDK's parser, without loading the SDK (a build stays light)
    UriTemplate, InvalidUriTemplate = templates.UriTemplate, templates.InvalidUriTemplate

    patterns: list[tuple[str, Any]] = []
    for resource in resources:
        if resource.uri is not None:
            patterns.append((resource.uri, None))
        elif resource.uri_template is not None:
            try:
                patterns.append((resource.uri_template, UriTemplate.parse(resource.uri_template)))
            except InvalidUriTemplate:
                continue  # the resources lowering reports it
    return patterns


def _served(uri: str, resources: Sequence[Resource]) -> bool:
    for text, template in resource_patterns(resources):
        if template is None and text == uri:
            return True
        if template is not None and template.match(uri) is not None:
            return True
    return False


def _resources_hint(resources: Sequence[Resource]) -> str:
    patterns = [text for text, _ in resource_patterns(resources)]
    if not patterns:
        return "the server declares no resources: declare it under resources:"
    return "resources: " + ", ".join(patterns)


def _image(image: Any, spec_dir: Path, span: Span) -> tuple[dict[str, Any] | None, Diagnostic | None]:
    """The image embedded (base64) with its MIME type, or why it cannot be."""
    name = image.file
    candidate = Path(name)
    resolved = (spec_dir / candidate).resolve()
    problem = None
    if not image.mime_type.startswith("image/"):
        problem = f"mime_type '{image.mime_type}' is not an image type (image/...)"
    elif candidate.is_absolute() or not resolved.is_relative_to(spec_dir.resolve()):
        problem = f"image '{name}' must be a path relative to the spec's folder, inside it"
    elif not resolved.is_file():
        problem = f"image '{name}' is not a file beside the spec"
    elif resolved.stat().st_size > MAX_IMAGE_BYTES:
        problem = f"image '{name}' holds {resolved.stat().st_size} bytes, over the limit of {MAX_IMAGE_BYTES}"
    else:
        guessed, _ = mimetypes.guess_type(name)
        if guessed is not None and guessed != image.mime_type:
            problem = f"image '{name}' looks like {guessed}, not {image.mime_type}"
    if problem is not None:
        return None, diagnostic("PROMPT_IMAGE_INVALID", problem, span)
    data = resolved.read_bytes()
    return {
        "file": candidate.as_posix(),
        "mime_type": image.mime_type,
        "data": base64.b64encode(data).decode(),
    }, None


@dataclass(frozen=True)
class SurfaceLowering:
    """What the prompts and completions of a server lower to."""

    prompts: tuple[PromptIR, ...]
    completions_json: str  # "" when nothing completes
    diagnostics: list[Diagnostic]
    files: list[tuple[str, str]]  # (display path, sha256) of data files the SQL check read


def lower_surface(
    source: Any,
    prompts: Sequence[Any],
    resources: Sequence[Any],
    collections: Mapping[str, Mapping[str, str]],
    *,
    check_backends: bool = True,
    cache: Any = None,
) -> SurfaceLowering:
    """The server's prompts, and the completions of their arguments and of its resource
    templates' variables (spec.load's PromptSource and ResourceSource items);
    `collections` maps each declared collection to {top-level field: type}."""
    from .completions import check_completions, prompt_sites, resource_sites

    spec_dir = Path(source.server_doc.file).parent
    sources = list(prompts)
    lowered, found = lower_prompts(sources, [item.resource for item in resources], spec_dir)
    sites, problems = resource_sites(resources)
    found.extend(problems)
    checked = check_completions(
        [*prompt_sites(sources), *sites], collections, source, check_functions=check_backends, cache=cache
    )
    found.extend(checked.diagnostics)
    return SurfaceLowering(
        lowered,
        "" if checked.empty else canonical_json(checked.document),
        found,
        [*_image_files(lowered, spec_dir), *checked.files],
    )


def _image_files(prompts: Iterable[PromptIR], spec_dir: Path) -> list[tuple[str, str]]:
    """(display path, sha256) of each image the prompts embed: inputs of the build, as the spec
    files are (the header names them; a changed image rebuilds)."""
    found = {}
    for prompt in prompts:
        for message in prompt.render["messages"]:
            if "image" in message:
                image = message["image"]
                digest = hashlib.sha256(base64.b64decode(image["data"])).hexdigest()
                found[(spec_dir / image["file"]).as_posix()] = digest
    return list(found.items())


def collection_fields(collections: Iterable[Any]) -> dict[str, dict[str, str]]:
    """{collection: {top-level field: type}} of declared record collections (spec models)."""
    return {c.name: {name: f.type for name, f in c.fields.items()} for c in collections}

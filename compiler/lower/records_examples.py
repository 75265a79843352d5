"""The examples and optional parameters of the records tools' descriptions, taken from one
server's own resources.

`records_tools.yaml` writes `<<marker>>` where an example or an optional parameter's name goes.
Each marker stands for a text drawn from the declarations (a nested resource's id, a field
path, a localized path) or for nothing when no resource has what it shows: the sentence that
holds such a marker is then left out, and so is the parameter no resource can use. So a
product catalogue's tools never quote the PEPs of the bundled example server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence

from ..ir import CollectionIR, RecordFieldIR
from .collections import FieldPathInfo, field_paths

MARKER = re.compile(r"<<([a-z_]+)>>")
# A locale code to show after a localized path: any code is valid there, and this one is a
# plain two-letter example of the form the locales argument takes.
EXAMPLE_LOCALE = "fr"
# The parameters only some servers get: each is also the marker of its own name, so a server
# without it loses the parameter and every sentence that names it.
OPTIONAL_PARAMETERS = ("locales", "parents", "populate", "include", "include_limit")


def example_markers(resources: Sequence[CollectionIR]) -> dict[str, str | None]:
    """Every marker the packaged definitions may hold, by name: its text for these resources,
    or None when none of them has what the marker shows."""
    nested = next((r for r in resources if r.parents), None)
    localized = _first_path(resources, lambda info: info.field.type == "localized" and not info.in_array)
    kinds = {info.field.type for r in resources for info in field_paths(r.fields)}
    return {
        "nested_id": nested.id if nested else None,
        "nested_id_filled": _filled_id(nested, resources) if nested else None,
        "parents_example": _parents_example(nested, resources) if nested else None,
        "field_path": _field_path(resources),
        "locale_path": f"{localized}.{EXAMPLE_LOCALE}" if localized else None,
        # locales trims localized text at any depth, in arrays too, where no path can name it.
        "locales": "locales" if "localized" in kinds else None,
        "parents": "parents" if nested else None,
        "populate": "populate" if "reference" in kinds else None,
        "nested_name": nested.name if nested else None,
        "element_path": _first_path(
            resources,
            lambda info: info.in_array and not info.element and info.field.type not in ("array", "object"),
        ),
        "include": "include" if nested else None,
        "include_limit": "include_limit" if nested else None,
    }


def fill_markers(text: str, markers: Mapping[str, str | None]) -> str:
    """`text` with each marker replaced by its example, braces doubled for the description
    templates that render it next (`{{` is a literal brace). A marker without a value here is
    a bug of the packaged file (its sentence should have been left out), raised."""

    def fill(match: re.Match[str]) -> str:
        value = markers[match.group(1)]
        if value is None:
            raise ValueError(f"marker {match.group(0)} has no example for this server")
        return value.replace("{", "{{").replace("}", "}}")

    return MARKER.sub(fill, text)


def _first_path(resources: Sequence[CollectionIR], wanted: Callable[[FieldPathInfo], bool]) -> str | None:
    for resource in resources:
        for info in field_paths(resource.fields):
            if wanted(info):
                return info.path
    return None


def _field_path(resources: Sequence[CollectionIR]) -> str:
    """A path inside an object when some resource has one (it shows the dotted form), else the
    first field of the first resource that is not its key."""
    dotted = _first_path(resources, lambda info: "." in info.path and not info.in_array)
    if dotted is not None:
        return dotted
    first = resources[0]
    return next((f.name for f in first.fields if f.name != first.key), first.key)


def _example_key(resource_name: str, placeholder: str, resources: Sequence[CollectionIR]) -> str:
    """A key of the parent resource to show: 1 for an integer key, else the placeholder's name
    with -1 (a key written as text)."""
    parent = next((r for r in resources if r.name == resource_name), None)
    key: RecordFieldIR | None = (
        next((f for f in parent.fields if f.name == parent.key), None) if parent else None
    )
    return "1" if key is not None and key.type == "integer" else f"{placeholder}-1"


def _filled_id(nested: CollectionIR, resources: Sequence[CollectionIR]) -> str:
    filled = nested.id
    for parent in nested.parents:
        filled = filled.replace(
            "{" + parent.placeholder + "}", _example_key(parent.resource, parent.placeholder, resources)
        )
    return filled


def _parents_example(nested: CollectionIR, resources: Sequence[CollectionIR]) -> str:
    values = {p.placeholder: _example_key(p.resource, p.placeholder, resources) for p in nested.parents}
    return json.dumps(values, ensure_ascii=False)

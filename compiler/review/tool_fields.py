"""Judge the fields of a tool that are not schemas: `icons`, `execution`, `_meta`,
`annotations.title`, and fields no MCP revision lynxc knows.

Each is judged by what a client does with it. Icons and titles are display only. `execution.
taskSupport` decides whether a call must, may or must not run as a task (MCP 2025-11-25), so a
change can fail calls that worked. `_meta` carries extensions: MCP Apps (`io.modelcontextprotocol/
ui`) puts there which UI a host shows for the tool (`ui.resourceUri`, formerly `ui/resourceUri`)
and who may call it (`ui.visibility`: "model", "app"); a tool the model no longer sees is, for the
model, a tool removed. Any other `_meta` key, and any unknown field, is named for a reviewer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from .diff import MISSING, UNKNOWN_FIELD, Change, same_json
from .judge_context import Finding, worst_of
from .schema_alternatives import canonical

# --- execution ----------------------------------------------------------------------------

TASK_SUPPORT_DEFAULT = "forbidden"  # MCP 2025-11-25 ToolExecution: "default when absent"
# taskSupport -> how a call may run: as a plain request, as a task (a task-augmented request).
_CALL_MODES = {
    "forbidden": frozenset({"a plain call"}),
    "optional": frozenset({"a plain call", "a task"}),
    "required": frozenset({"a task"}),
}


def _task_support(tool: Mapping[str, Any]) -> Any:
    execution = tool.get("execution")
    if not isinstance(execution, dict):
        return TASK_SUPPORT_DEFAULT
    return execution.get("taskSupport", TASK_SUPPORT_DEFAULT)


def _execution(change: Change, old_tool: Mapping[str, Any], new_tool: Mapping[str, Any]) -> Finding:
    if change.path[1:] not in ((), ("taskSupport",)):
        return _unknown(change, f"execution.{_keys(change.path[1:])}")
    before, after = _task_support(old_tool), _task_support(new_tool)
    shown = f"taskSupport {_shown(before)} -> {_shown(after)}"
    if same_json(before, after):
        return Finding(
            change,
            "EXECUTION_CHANGED",
            f"taskSupport {_shown(after)} either way (absent means "
            f"{_shown(TASK_SUPPORT_DEFAULT)}); calls are unaffected",
        )
    if not all(isinstance(value, str) and value in _CALL_MODES for value in (before, after)):
        values = ", ".join(_CALL_MODES)
        return Finding(change, "TOOL_FIELD_UNKNOWN", f"{shown}: MCP knows only {values}; review it")
    lost = sorted(_CALL_MODES[before] - _CALL_MODES[after])
    if lost:
        return Finding(change, "TASK_SUPPORT_NARROWED", f"{shown}: {' and '.join(lost)} now fails")
    gained = " and ".join(sorted(_CALL_MODES[after] - _CALL_MODES[before]))
    return Finding(change, "TASK_SUPPORT_WIDENED", f"{shown}: the tool may now also run as {gained}")


# --- _meta --------------------------------------------------------------------------------

# MCP Apps: who sees the tool when `visibility` is absent or empty (ext-apps McpUiToolMeta).
_EVERYONE = ("model", "app")
_VISIBILITY = ("ui", "visibility")
_RESOURCE_URI = (("ui", "resourceUri"), ("ui/resourceUri",))  # the current form first


def _visibility(tool: Mapping[str, Any]) -> tuple[str, ...]:
    found = _meta_value(tool, _VISIBILITY)
    if not isinstance(found, list) or not found:
        return _EVERYONE
    known = [who for who in _EVERYONE if who in found]
    return (*known, *sorted({str(who) for who in found} - set(_EVERYONE)))


def _resource_uri_path(tool: Mapping[str, Any]) -> tuple[str, ...] | None:
    return next((path for path in _RESOURCE_URI if _meta_value(tool, path) is not MISSING), None)


def _resource_uri(tool: Mapping[str, Any]) -> Any:
    path = _resource_uri_path(tool)
    return None if path is None else _meta_value(tool, path)


def _meta_value(tool: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = tool.get("_meta")
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return MISSING
        node = node[key]
    return node


def _touches(change_path: tuple[str, ...], key_path: tuple[str, ...]) -> bool:
    """Whether a change at `change_path` (under Meta) may move the value at `key_path`."""
    shorter = min(len(change_path), len(key_path))
    return change_path[:shorter] == key_path[:shorter]


def _visibility_moved(before: tuple[str, ...], after: tuple[str, ...]) -> tuple[str, str] | None:
    if before == after:
        return None
    shown = f"visibility {json.dumps(list(before))} -> {json.dumps(list(after))}"
    if "model" in before and "model" not in after:
        return "TOOL_HIDDEN_FROM_MODEL", f"{shown}: the model no longer sees or calls the tool"
    if "model" in after and "model" not in before:
        return "TOOL_SHOWN_TO_MODEL", f"{shown}: the model now sees and may call a tool only the app could"
    verb = "may now" if "app" in after else "may no longer"
    return (
        "TOOL_VISIBILITY_CHANGED",
        f"{shown}: the server's app {verb} call the tool; the model sees the same",
    )


def _ui_moved(before: Any, after: Any) -> tuple[str, str] | None:
    if same_json(before, after):
        return None
    if before is None:
        return "TOOL_UI_ADDED", f"hosts now show a UI for the tool: {_shown(after)}"
    if after is None:
        return "TOOL_UI_REMOVED", f"hosts no longer show the tool's UI {_shown(before)}"
    return "TOOL_UI_CHANGED", f"hosts show another UI for the tool: {_shown(before)} -> {_shown(after)}"


def _meta(change: Change, old_tool: Mapping[str, Any], new_tool: Mapping[str, Any]) -> Finding:
    """What the keys the change touches mean: MCP Apps UI and visibility, judged on their effective
    values (an explicit default changes nothing), else the key named."""
    keys = change.path[1:]
    moved: list[tuple[str, str] | None] = []
    note = ""
    if _touches(keys, _VISIBILITY):
        moved.append(_visibility_moved(_visibility(old_tool), _visibility(new_tool)))
    # The UI is judged once, on the key that holds it (after the change, else before), so moving
    # it from `ui/resourceUri` to `ui.resourceUri` is one change of UI, not two.
    holder = _resource_uri_path(new_tool) or _resource_uri_path(old_tool)
    if holder is not None and _touches(keys, holder):
        moved.append(_ui_moved(_resource_uri(old_tool), _resource_uri(new_tool)))
    elif holder is not None and any(_touches(keys, path) for path in _RESOURCE_URI):
        note = f"; the tool's UI is now given, and judged, as {_keys(holder)}"
    found = [item for item in moved if item is not None]
    if found:
        return worst_of(change, found)
    if moved and not note:
        note = "; the tool's MCP Apps UI and visibility are the same"
    return Finding(change, "META_CHANGED", f"_meta key {_keys(keys) or '(whole)'} {change.op}{note}")


# --- icons --------------------------------------------------------------------------------


def _icons(change: Change, old_tool: Mapping[str, Any], new_tool: Mapping[str, Any]) -> Finding:
    return Finding(change, "ICONS_CHANGED", describe_icons(change.before, change.after))


def describe_icons(before: Any, after: Any) -> str:
    """What changed between two `icons` lists, in words: icons paired by `src` (then by position),
    each named by its type and URL, or the size of an inline `data:` image, never its bytes."""
    old, new = ([] if side is MISSING else side for side in (before, after))
    if not isinstance(old, list) or not isinstance(new, list):
        return "icons changed (not a list of icons on one side)"
    if sorted(map(canonical, old)) == sorted(map(canonical, new)):
        return "icons reordered"
    parts: list[str] = []
    new_by_src = {_src(icon): icon for icon in new}
    unpaired_old = [icon for icon in old if _src(icon) not in new_by_src]
    old_srcs = {_src(icon) for icon in old}
    unpaired_new = [icon for icon in new if _src(icon) not in old_srcs]
    for icon in old:
        if _src(icon) in new_by_src and not _same_icon(icon, new_by_src[_src(icon)]):
            parts.append(f"{_icon_name(icon)}: {_icon_fields_changed(icon, new_by_src[_src(icon)])}")
    for gone, came in zip(unpaired_old, unpaired_new, strict=False):
        parts.append(f"{_icon_name(gone)} replaced by {_icon_name(came)}")
    pairs = min(len(unpaired_old), len(unpaired_new))
    parts += [f"removed {_icon_name(icon)}" for icon in unpaired_old[pairs:]]
    parts += [f"added {_icon_name(icon)}" for icon in unpaired_new[pairs:]]
    return _some(parts, "; ") or "icons changed"


_LISTED = 6  # icons, or sizes of one icon, a message lists before it counts the rest


def _some(items: list[str], separator: str) -> str:
    more = f"{separator}and {len(items) - _LISTED} more" if len(items) > _LISTED else ""
    return separator.join(items[:_LISTED]) + more


def _src(icon: Any) -> str:
    return str(icon.get("src", "")) if isinstance(icon, dict) else json.dumps(icon)


def _same_icon(a: Any, b: Any) -> bool:
    return canonical(a) == canonical(b)


_URL_SHOWN = 80  # characters of a URL, or of any value, a message shows


def _icon_name(icon: Any) -> str:
    """`icon image/png (data URI, 3.2 KB) 48x48 dark` or `icon https://example.com/a.svg`."""
    if not isinstance(icon, dict):
        return "icon (not an object)"
    src = _src(icon)
    mime = icon.get("mimeType")
    if src.startswith("data:"):
        header, _, data = src.partition(",")
        mime = mime or header[5:].split(";")[0] or None
        where = f"(data URI, {_size(len(data) * 3 // 4 if ';base64' in header else len(data))})"
    else:
        where = _short(src)
    words = ["icon", *([_short(str(mime))] if mime else []), where]
    if isinstance(icon.get("sizes"), list):
        words.append(_icon_value(icon["sizes"]))
    if "theme" in icon:
        words.append(_short(str(icon["theme"])))
    return " ".join(words)


def _short(text: str) -> str:
    return text if len(text) <= _URL_SHOWN else text[: _URL_SHOWN - 1] + "…"


def _size(count: int) -> str:
    return f"{count} B" if count < 1024 else f"{count / 1024:.1f} KB"


def _icon_fields_changed(old: dict[str, Any], new: dict[str, Any]) -> str:
    """`lost sizes 48x48`, `theme "light" -> "dark"`: what changed on one icon, its src aside."""
    said = []
    for key in sorted((old.keys() | new.keys()) - {"src"}):
        before, after = old.get(key, MISSING), new.get(key, MISSING)
        if before is MISSING:
            said.append(f"gained {_short(key)} {_icon_value(after)}")
        elif after is MISSING:
            said.append(f"lost {_short(key)} {_icon_value(before)}")
        elif json.dumps(before) != json.dumps(after):
            said.append(f"{_short(key)} {_icon_value(before)} -> {_icon_value(after)}")
    return _some(said, ", ")


def _icon_value(value: Any) -> str:
    return (
        _some([_short(str(v)) for v in value], " ") if isinstance(value, list) else _short(json.dumps(value))
    )


# --- titles and unknown fields ------------------------------------------------------------


def _annotation_title(change: Change, old_tool: Mapping[str, Any], new_tool: Mapping[str, Any]) -> Finding:
    return Finding(change, "TITLE_CHANGED", annotation_title_moved(old_tool, new_tool) or "")


def annotation_title_moved(old_tool: Mapping[str, Any], new_tool: Mapping[str, Any]) -> str | None:
    """What became of annotations.title, or None when it stayed. MCP display precedence is
    title, then annotations.title, then name."""
    before, after = (_annotations(tool).get("title", MISSING) for tool in (old_tool, new_tool))
    if same_json(before, after):
        return None
    titled = new_tool.get("title") or old_tool.get("title")
    shown = " (shown only where the tool has no title)" if titled else ""
    return f"display title annotations.title {_shown(before)} -> {_shown(after)}{shown}"


def annotations_without_hints(
    change: Change, old_tool: Mapping[str, Any], new_tool: Mapping[str, Any], defaults: Mapping[str, bool]
) -> Finding:
    """`annotations` changed as a whole and no hint's effective value moved: its display title
    may have, which is what a reviewer should read, not the shape of the object. Otherwise name
    the hints written out (or dropped) at the values MCP assumes when they are absent."""
    if annotation_title_moved(old_tool, new_tool) is not None:
        return _annotation_title(change, old_tool, new_tool)
    side = _annotations(new_tool if change.op == "added" else old_tool)
    written = [f"{hint} {_shown(side[hint])}" for hint in defaults if hint in side]
    if not written:
        return Finding(change, "ANNOTATION_CHANGED", f"annotations {change.op}; effective hints are the same")
    verb = "written out" if change.op == "added" else "dropped"
    return Finding(
        change,
        "ANNOTATION_CHANGED",
        f"annotations {change.op}: {', '.join(written)} {verb}, the values MCP assumes when absent; "
        "effective hints are the same",
    )


def _annotations(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    annotations = tool.get("annotations")
    return annotations if isinstance(annotations, dict) else {}


def _shown(value: Any) -> str:
    return "(none)" if value is MISSING else _short(json.dumps(value))


def _unknown(change: Change, what: str | None = None) -> Finding:
    what = what or f"field '{_short(change.path[0].removeprefix(UNKNOWN_FIELD))}'"
    return Finding(
        change,
        "TOOL_FIELD_UNKNOWN",
        f"{what} {change.op}; not a Tool field of the MCP revisions lynxc knows; review it",
    )


def _keys(keys: tuple[str, ...]) -> str:
    return _short(" / ".join(keys))


_JUDGES: Mapping[str, Callable[[Change, Mapping[str, Any], Mapping[str, Any]], Finding]] = {
    "Icons": _icons,
    "Execution": _execution,
    "Meta": _meta,
}


# ToolAnnotations of MCP 2025-11-25: the display title and four hints (the hints are judge.py's).
ANNOTATION_FIELDS = frozenset({"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"})
_HINTS = ANNOTATION_FIELDS - {"title"}


def judges_tool_field(change: Change) -> bool:
    """Whether this module judges the change (the rest are schemas, texts and hints)."""
    section = change.path[0]
    return (
        section in _JUDGES
        or section.startswith(UNKNOWN_FIELD)
        or (section == "Annotations" and len(change.path) == 2 and change.path[1] not in _HINTS)
    )


def judge_tool_field(change: Change, old_tool: Mapping[str, Any], new_tool: Mapping[str, Any]) -> Finding:
    section = change.path[0]
    if section.startswith(UNKNOWN_FIELD):
        return _unknown(change)
    if section == "Annotations":
        if change.path[1] == "title":
            return _annotation_title(change, old_tool, new_tool)
        return _unknown(change, f"annotations.{_short(change.path[1])}")
    return _JUDGES[section](change, old_tool, new_tool)

"""Diff and judge who may call what (issue 27): the scopes a tool requires and the parameters its
caller's identity fills (the tool's `_meta` "lynxc/auth"), and how the server authenticates
callers (the top-level `_meta` "lynxc/auth" of tools/list, `ServerWire.auth`).

Judged by whether a caller who could call before still can, on the effective values of both
versions (as MCP Apps visibility is), so the shape of a change (one key, or the whole entry) does
not decide its verdict. A parameter that becomes identity-bound leaves the published inputSchema:
that removal is the finding a reviewer reads (PARAM_BOUND_TO_CLAIM, not PARAM_REMOVED), and the
`_meta` entry that binds it is said by it (`said_by`), so each parameter is one line. A change
that widens what callers may do (a parameter no longer bound, auth removed) no call reveals, so it
is a warning: a reviewer must mean it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..ir import AUTH_META_KEY
from .diff import MISSING, SEPARATOR, Change, same_json
from .judge_context import Finding, worst_of

META = "Meta"
SCHEMA_PROPERTIES = ("Input schema", "properties")
SERVER = "Server"
SERVER_AUTH = (SERVER, "auth")
# The added-parameter judgement (judge.py), and what it becomes for a parameter that was bound.
_UNBOUND = {
    "PARAM_ADDED_REQUIRED": "PARAM_CLAIM_UNBOUND_REQUIRED",
    "PARAM_ADDED_OPTIONAL": "PARAM_CLAIM_UNBOUND",
}


# --- a tool's scopes and claims -----------------------------------------------------------------


def judges_tool_auth(change: Change) -> bool:
    return change.path[:2] == (META, AUTH_META_KEY)


def judge_tool_auth(change: Change, old_tool: Mapping[str, Any], new_tool: Mapping[str, Any]) -> Finding:
    keys = change.path[2:]
    moved: list[tuple[str, str]] = []
    sayers: list[str | None] = []
    if _touches(keys, ("scopes",)):
        scopes = _scopes_moved(_scopes(old_tool), _scopes(new_tool))
        if scopes is not None:
            moved.append(scopes)
            sayers.append(None)
    if _touches(keys, ("claims",)):
        old, new = _claims(old_tool), _claims(new_tool)
        names = [keys[1]] if len(keys) > 1 else sorted(old.keys() | new.keys())
        for name in names:
            claim = _claim_moved(name, old_tool, new_tool)
            if claim is not None:
                moved.append(claim[:2])
                sayers.append(claim[2])
    if not moved:
        shown = SEPARATOR.join(change.path[1:])
        return Finding(
            change, "META_CHANGED", f"_meta key {shown} {change.op}; who may call the tool is the same"
        )
    # What the inputSchema change of a parameter says (its binding) is said there, once.
    unsaid = [item for item, sayer in zip(moved, sayers, strict=True) if sayer is None]
    if unsaid:
        return worst_of(change, unsaid)
    return replace(worst_of(change, moved), said_by=sayers[0])


def _scopes_moved(before: list[str], after: list[str]) -> tuple[str, str] | None:
    added = [scope for scope in after if scope not in before]
    removed = [scope for scope in before if scope not in after]
    shown = f"scopes {json.dumps(before)} -> {json.dumps(after)}"
    if added:
        return "TOOL_SCOPE_ADDED", f"{shown}: callers without {_names(added)} are refused (403)"
    if removed:
        return "TOOL_SCOPE_REMOVED", f"{shown}: callers no longer need {_names(removed)}"
    return None  # reordered: all of them are required either way


def _claim_moved(
    name: str, old_tool: Mapping[str, Any], new_tool: Mapping[str, Any]
) -> tuple[str, str, str | None] | None:
    """(rule, reason, the path of the inputSchema change that says it) for one parameter."""
    before, after = _claims(old_tool).get(name), _claims(new_tool).get(name)
    if same_json(before, after):
        return None
    schema_path = SEPARATOR.join((*SCHEMA_PROPERTIES, name))
    if before is None:
        said = schema_path if name in _published(old_tool) else None
        return "PARAM_BOUND_TO_CLAIM", bound_text(name, after, existed=said is not None), said
    if after is None:
        if name in _published(new_tool):
            rule = _UNBOUND[_added_rule(name, new_tool)]
            return rule, unbound_text(name, before, rule), schema_path
        return (
            "PARAM_CLAIM_UNBOUND",
            f"'{name}' no longer comes from the caller's {_claim(before)} claim and is no longer a "
            "parameter: check the tool still limits what each caller reaches",
            None,
        )
    return (
        "PARAM_CLAIM_CHANGED",
        f"'{name}' now comes from the caller's {_claim(after)} claim instead of {_claim(before)}: "
        "the same caller may now get another value, or be refused",
        None,
    )


def bound_text(name: str, claim: Any, *, existed: bool) -> str:
    if existed:
        return f"'{name}' now comes from the caller's {_claim(claim)} claim; callers that send it are refused"
    return (
        f"'{name}' is a new parameter filled from the caller's {_claim(claim)} claim; "
        "callers whose token lacks it are refused"
    )


def unbound_text(name: str, claim: Any, rule: str) -> str:
    must = "callers must now send it" if rule == "PARAM_CLAIM_UNBOUND_REQUIRED" else "callers may now send it"
    return (
        f"'{name}' no longer comes from the caller's {_claim(claim)} claim: {must}, "
        "and choose the value their identity gave"
    )


def claim_binding(finding: Finding, old_tool: Mapping[str, Any], new_tool: Mapping[str, Any]) -> Finding:
    """A top-level parameter removed from the inputSchema because it is now bound to a claim, or
    added because it no longer is: the finding of the binding, which replaces the plain removal
    or addition (an addition keeps its judgement: required or optional)."""
    change = finding.change
    if change.path[:2] != SCHEMA_PROPERTIES or len(change.path) != 3 or change.op == "changed":
        return finding
    name = change.path[2]
    before, after = _claims(old_tool).get(name), _claims(new_tool).get(name)
    if finding.rule_id == "PARAM_REMOVED" and before is None and after is not None:
        return Finding(change, "PARAM_BOUND_TO_CLAIM", bound_text(name, after, existed=True))
    if finding.rule_id in _UNBOUND and before is not None and after is None:
        rule = _UNBOUND[finding.rule_id]
        return Finding(change, rule, unbound_text(name, before, rule))
    return finding


def _added_rule(name: str, tool: Mapping[str, Any]) -> str:
    """The added-parameter rule the inputSchema change of `name` is judged under."""
    schema = tool.get("inputSchema")
    required = schema.get("required") if isinstance(schema, dict) else None
    return (
        "PARAM_ADDED_REQUIRED" if isinstance(required, list) and name in required else "PARAM_ADDED_OPTIONAL"
    )


def _auth(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = tool.get("_meta")
    auth = meta.get(AUTH_META_KEY) if isinstance(meta, dict) else None
    return auth if isinstance(auth, dict) else {}


def _scopes(tool: Mapping[str, Any]) -> list[str]:
    scopes = _auth(tool).get("scopes")
    return [str(scope) for scope in scopes] if isinstance(scopes, list) else []


def _claims(tool: Mapping[str, Any]) -> dict[str, Any]:
    claims = _auth(tool).get("claims")
    return dict(claims) if isinstance(claims, dict) else {}


def _published(tool: Mapping[str, Any]) -> Mapping[str, Any]:
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return properties if isinstance(properties, dict) else {}


def _claim(binding: Any) -> str:
    """`'email'`, or `'uid' (integer)` when the claim is not a string."""
    if not isinstance(binding, dict):
        return json.dumps(binding)
    kind = binding.get("type")
    return f"'{binding.get('claim')}'" + (f" ({kind})" if kind not in (None, "string") else "")


def _touches(change_keys: tuple[str, ...], key_path: tuple[str, ...]) -> bool:
    shorter = min(len(change_keys), len(key_path))
    return change_keys[:shorter] == key_path[:shorter]


def _names(values: list[str]) -> str:
    return ", ".join(f"'{value}'" for value in values)


# --- the server's authentication ----------------------------------------------------------------


def diff_server_auth(before: Any, after: Any) -> list[Change]:
    """Changes from one server's caller authentication to another's: one per key of the
    `lynxc/auth` object, or the whole object when it appears or disappears (None: no auth)."""
    if same_json(before, after):
        return []
    if before is None:
        return [Change("added", "", SERVER_AUTH, after=after, server=True)]
    if after is None:
        return [Change("removed", "", SERVER_AUTH, before=before, server=True)]
    if not isinstance(before, dict) or not isinstance(after, dict):
        return [Change("changed", "", SERVER_AUTH, before=before, after=after, server=True)]
    changes = []
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key, MISSING), after.get(key, MISSING)
        if not same_json(old, new):
            op = "added" if old is MISSING else "removed" if new is MISSING else "changed"
            changes.append(Change(op, "", (*SERVER_AUTH, key), before=old, after=new, server=True))
    return changes


def judge_server_auth(change: Change, before: Any, after: Any) -> Finding:
    """`before`/`after`: the whole `lynxc/auth` object of each version (None: no auth)."""
    keys = change.path[2:]
    moved: list[tuple[str, str]] = []
    if _touches(keys, ("methods",)):
        methods = _methods_moved(_methods(before), _methods(after))
        moved += [methods] if methods is not None else []
    if keys[:1] == ("scopes_supported",) and isinstance(before, dict) and isinstance(after, dict):
        old, new = before.get("scopes_supported", []), after.get("scopes_supported", [])
        moved.append(("SERVER_SCOPES_CHANGED", f"scopes_supported {json.dumps(old)} -> {json.dumps(new)}"))
    if not moved:
        shown = SEPARATOR.join(change.path[1:])
        return Finding(
            change,
            "META_CHANGED",
            f"_meta key lynxc/{shown} {change.op}; the ways to authenticate are the same",
        )
    return worst_of(change, moved)


def _methods(auth: Any) -> list[str] | None:
    if auth is None:
        return None
    methods = auth.get("methods") if isinstance(auth, dict) else None
    return [str(method) for method in methods] if isinstance(methods, list) else []


def _methods_moved(before: list[str] | None, after: list[str] | None) -> tuple[str, str] | None:
    if before is None and after is not None:
        return (
            "SERVER_AUTH_CHANGED",
            f"the server now authenticates callers ({_names(after)}): callers without a token or key "
            "are refused (401)",
        )
    if after is None and before is not None:
        return (
            "SERVER_AUTH_REMOVED",
            f"the server no longer authenticates callers (was {_names(before)}): anyone reaching "
            "its port may call every tool",
        )
    if before is None or after is None:
        return None
    shown = f"methods {json.dumps(before)} -> {json.dumps(after)}"
    lost = [method for method in before if method not in after]
    gained = [method for method in after if method not in before]
    if lost:
        also = f" ({_names(gained)} added)" if gained else ""
        return "SERVER_AUTH_CHANGED", f"{shown}: callers using {_names(lost)} lose access{also}"
    if gained:
        return "SERVER_AUTH_METHOD_ADDED", f"{shown}: callers may now also use {_names(gained)}"
    return None

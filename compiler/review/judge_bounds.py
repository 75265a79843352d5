"""A numeric range bound judged by the values it admits, not by the keyword that writes it.

`exclusiveMaximum: 1000000` and `maximum: 999999` admit the same integers; a release that
rewrites one as the other (mcp-server-fetch's `max_length`, once Pydantic changed how it
writes `gt`/`lt`) removes one keyword and adds the other, and each entry alone reads as a bound
dropped and a bound added. Both sides' bound is taken whole, from every keyword that sets it
(draft 4 spells exclusiveness as a boolean beside `maximum`), and compared.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Literal

from .schema_alternatives import admitted_types

BoundSide = Literal["upper", "lower"]
Moved = Literal["tighter", "looser", "same"]

# keyword -> the bound it sets
RANGE_KEYWORDS: Mapping[str, BoundSide] = {
    "maximum": "upper",
    "exclusiveMaximum": "upper",
    "minimum": "lower",
    "exclusiveMinimum": "lower",
}
_KEYWORDS: Mapping[BoundSide, tuple[str, str]] = {
    "upper": ("maximum", "exclusiveMaximum"),
    "lower": ("minimum", "exclusiveMinimum"),
}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def bound(node: Any, side: BoundSide) -> tuple[float, bool] | None:
    """The node's bound on that side as (value, exclusive), the tighter when two keywords set
    it; None when nothing bounds it. A bound that is not a number makes it unknown: raise."""
    if not isinstance(node, dict):
        return None
    inclusive, exclusive = _KEYWORDS[side]
    found: list[tuple[float, bool]] = []
    if inclusive in node:
        if not _number(node[inclusive]):
            raise ValueError(inclusive)
        found.append((node[inclusive], node.get(exclusive) is True))
    if exclusive in node and not isinstance(node[exclusive], bool):
        if not _number(node[exclusive]):
            raise ValueError(exclusive)
        found.append((node[exclusive], True))
    if not found:
        return None
    if side == "upper":
        return min(found, key=lambda b: (b[0], not b[1]))
    return max(found, key=lambda b: (b[0], b[1]))


def _as_integers(limit: tuple[float, bool], side: BoundSide) -> tuple[float, bool]:
    """An integer-only bound as the inclusive integer it stops at: x < 10 is x <= 9."""
    value, exclusive = limit
    if side == "upper":
        edge = math.ceil(value) - 1 if exclusive else math.floor(value)
    else:
        edge = math.floor(value) + 1 if exclusive else math.ceil(value)
    return edge, False


def bound_moved(old_node: Any, new_node: Any, side: BoundSide) -> Moved | None:
    """How the node's bound on that side moved; None when it cannot be told (a bound that is
    not a number)."""
    try:
        old, new = bound(old_node, side), bound(new_node, side)
    except ValueError:
        return None
    if old is None or new is None:
        return "same" if old == new else ("tighter" if old is None else "looser")
    if admitted_types(old_node) == admitted_types(new_node) == frozenset({"integer"}):
        old, new = _as_integers(old, side), _as_integers(new, side)
    if old == new:
        return "same"
    # Compare as upper bounds: a lower bound is an upper bound of the negated values.
    sign = 1 if side == "upper" else -1
    old_key, new_key = (sign * old[0], not old[1]), (sign * new[0], not new[1])
    return "tighter" if new_key < old_key else "looser"


def shown_bound(old_node: Any, new_node: Any, side: BoundSide) -> str:
    """The keywords that set the bound, as written on each side: 'maximum 10 -> 8' when one
    keyword moved, 'exclusiveMaximum 1000000 -> maximum 999999' when the keyword changed."""
    old, new = _written(old_node, side), _written(new_node, side)
    keywords = {keyword for keyword, _ in (*old, *new)}
    if len(keywords) == 1 and len(old) <= 1 and len(new) <= 1:
        values = [written[0][1] if written else "(none)" for written in (old, new)]
        return f"{keywords.pop()} {values[0]} -> {values[1]}"
    return " -> ".join(", ".join(f"{k} {v}" for k, v in written) or "(none)" for written in (old, new))


def _written(node: Any, side: BoundSide) -> list[tuple[str, str]]:
    if not isinstance(node, dict):
        return []
    return [(keyword, json.dumps(node[keyword])) for keyword in _KEYWORDS[side] if keyword in node]

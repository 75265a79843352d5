"""groundhog: read the web for an agent (search, read_url, research, status) on httpx and trafilatura.

`check_settings` runs when a server starts (runtime/startup_checks.py): what no settings schema
can say, such as an `allowed_networks` entry that would open more than it names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def check_settings(settings: Mapping[str, Any]) -> list[str]:
    from .addresses import parse_networks

    try:
        parse_networks(settings.get("allowed_networks") or ())
    except ValueError as err:
        return [str(err)]
    return []

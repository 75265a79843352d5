"""Did-you-mean hints."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    options = sorted(set(choices))
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if not close:
        lowered = {option.lower(): option for option in options}
        close = [lowered[word.lower()]] if word.lower() in lowered else []
    if not close:
        # A truncated name ('CAP_LITERAL') is close to exactly one longer one.
        prefixed = [option for option in options if option.lower().startswith(word.lower())]
        close = prefixed if len(prefixed) == 1 else []
    return f"did you mean '{close[0]}'?" if close else None


def one_of(choices: Iterable[str]) -> str:
    return "expected one of: " + ", ".join(sorted(choices))

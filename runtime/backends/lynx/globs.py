"""Glob patterns over '/'-separated paths relative to a source's root: one definition for the
`file_glob` search filter and a source's include/exclude settings, gitignore/pathlib style.

- `*` matches any run of characters except `/`, `?` one character except `/`, `[abc]`, `[a-z]`
  and `[!abc]` (or `[^abc]`) one character of (or not of) a set, never `/`. `\\` makes the next
  character literal (`\\[id\\].tsx`).
- `**` as a whole path segment matches zero or more folders: `**/x` is `x` in any folder, the top
  level included; `a/**/b` is `a/b`, `a/x/b`, `a/x/y/b`; `a/**` is every file under `a`.
  Elsewhere (`a**`, `**.py`) it is a plain `*`.
- A pattern with no `/` matches the file name in any folder (`*.cs` matches `c.cs` and `a/b/c.cs`).
  A `/` at the start or in the middle anchors it at the source root (`src/*.py`, `/setup.py`);
  one at the end means a folder and everything under it (`build/` is `**/build/**`).
- Matching is case-sensitive and always covers the whole path.

`glob_regex` gives the pattern as one anchored regular expression in the syntax Python's `re` and
Rust's `regex` crate (which LanceDB's filters run) read alike; `glob_sql` wraps it in a LanceDB
SQL condition; `glob_match` matches in Python, with the same translation made safe from
backtracking blow-ups (Rust's engine runs in linear time anyway)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from lynxc.runtime.errors import ToolError

MAX_GLOB_CHARS = 500

# A path segment is a tuple of tokens: a literal character (str of length 1), ANY (`?`), STAR
# (`*`) or a _Class. A pattern is a tuple of segments, with GLOBSTAR for `**` segments.
ANY = "?any"
STAR = "*star"
GLOBSTAR = ("**globstar",)
_SEPARATOR = "/sep"

# What `**/` stands for (zero or more folders, each with its '/'), and what a final `**` does
# (one or more segments). Regexes end in `$`, which in Rust's engine (no multiline flag) is the
# end of the text; Python's side uses `fullmatch`, so a path ending in a newline is no exception.
_ANY_FOLDERS = "(?:[^/]+/)*"
_ANY_PATH = "[^/]+(?:/[^/]+)*"


@dataclass(frozen=True)
class _Class:
    negated: bool
    ranges: tuple[tuple[str, str], ...]  # inclusive, `/` already taken out of positive sets


class _Invalid(Exception):
    """A rule the pattern breaks; the caller names the field."""


def glob_regex(pattern: str, field: str = "file_glob") -> str:
    """The regular expression (anchored with ^ and $) of the paths `pattern` matches."""
    return _portable(_parsed(pattern, field))


def glob_match(path: str, pattern: str, field: str = "file_glob") -> bool:
    """Whether the relative, '/'-separated `path` matches `pattern` (see the module docstring)."""
    return _python_regex(pattern, field).fullmatch(path) is not None


def glob_sql(pattern: str, column: str = "path", field: str = "file_glob") -> str:
    """A LanceDB (DataFusion) SQL condition on `column` that holds exactly for matching paths.

    The regex decides; a literal prefix (`src/lib/` of `src/lib/**/*.py`) is added as
    `LIKE 'prefix%'`, which LanceDB answers from a scalar index on the column when one exists and
    only then runs the regex on the rows it finds. The regex is always anchored at both ends,
    which keeps DataFusion's regex-to-LIKE rewrite (it forgets to escape backslashes) to its one
    exact case, a fully literal pattern turned into `=`."""
    segments = _parsed(pattern, field)
    condition = f"regexp_like({column}, {_sql_string(_portable(segments))})"
    prefix = _literal_prefix(segments)
    if prefix:
        like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        condition = f"{column} LIKE {_sql_string(like)} ESCAPE '\\' AND {condition}"
    return f"({condition})"


def check_glob(pattern: str, field: str = "file_glob") -> None:
    """Raise a ToolError naming `field` and the rule if `pattern` is not a valid glob."""
    _parsed(pattern, field)


def _shown(pattern: object) -> str:
    text = repr(pattern)
    return text if len(text) <= 80 else text[:77] + "..."


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _parsed(pattern: str, field: str) -> tuple[tuple, ...]:
    if not isinstance(pattern, str):  # settings arrive as JSON: anything may stand here
        raise ToolError(f"{field}: a glob must be a string, not {type(pattern).__name__}")
    try:
        return _parse(pattern)
    except _Invalid as err:
        raise ToolError(f"{field}: {err} (in glob {_shown(pattern)})") from None


def _python_regex(pattern: str, field: str) -> re.Pattern[str]:
    _parsed(pattern, field)  # a bad pattern fails here, naming the field
    return _compiled(pattern)


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(_atomic(_parse(pattern)))


# --- parsing ---------------------------------------------------------------------------------


@lru_cache(maxsize=512)
def _parse(pattern: str) -> tuple[tuple, ...]:
    if not pattern:
        raise _Invalid("a glob must not be empty")
    if len(pattern) > MAX_GLOB_CHARS:
        raise _Invalid(f"a glob is at most {MAX_GLOB_CHARS} characters, this one {len(pattern)}")
    if "\0" in pattern:
        raise _Invalid("a glob cannot hold a NUL character")
    if any("\ud800" <= c <= "\udfff" for c in pattern):
        raise _Invalid("a glob must be valid Unicode text (it holds a lone surrogate)")
    tokens = _tokens(pattern)
    raw: list[list] = [[]]
    for token in tokens:
        if token == _SEPARATOR:
            raw.append([])
        else:
            raw[-1].append(token)
    # gitignore: a `/` at the start or in the middle anchors; one at the end means a folder.
    folder = len(raw) > 1 and not raw[-1]
    body = list(raw)
    while len(body) > 1 and not body[-1]:
        body.pop()
    anchored = len(body) > 1
    segments: list[tuple] = []
    for segment in body:
        if not segment or segment == ["."]:
            continue  # `a//b` is `a/b` and `./a` is `a`, as in pathlib
        if segment == [".", "."]:
            raise _Invalid("`..` never matches: paths are relative to the source root")
        if segment == [STAR, STAR]:
            segments.append(GLOBSTAR)
        else:  # any other run of stars is one `*`
            segment = [t for i, t in enumerate(segment) if not (t == STAR and i and segment[i - 1] == STAR)]
            segments.append(tuple(segment))
    if not segments:
        raise _Invalid("a glob must name something: it holds only `/` or `.`")
    if folder:
        segments.append(GLOBSTAR)
    if not anchored:
        segments.insert(0, GLOBSTAR)
    # `**/**` is `**`: zero or more folders twice are zero or more folders, and a final `**`
    # (one or more segments) after zero or more folders is still one or more segments.
    return tuple(
        s for i, s in enumerate(segments) if not (s is GLOBSTAR and i and segments[i - 1] is GLOBSTAR)
    )


def _tokens(pattern: str) -> list:
    tokens: list = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            if i + 1 == len(pattern):
                raise _Invalid("it ends with an unfinished escape `\\`; write `\\\\` for a backslash")
            escaped = pattern[i + 1]
            tokens.append(_SEPARATOR if escaped == "/" else escaped)
            i += 2
        elif char == "[":
            token, i = _class(pattern, i)
            tokens.append(token)
        else:
            tokens.append({"*": STAR, "?": ANY, "/": _SEPARATOR}.get(char, char))
            i += 1
    return tokens


def _class(pattern: str, start: int) -> tuple[_Class, int]:
    """The class opening at `pattern[start]` ('[') and the index after its ']'."""
    i = start + 1
    negated = i < len(pattern) and pattern[i] in "!^"
    i += negated
    items: list[str] = []  # single characters; `a-z` ranges go straight to `ranges`
    ranges: list[tuple[str, str]] = []
    first = True
    while True:
        if i >= len(pattern):
            raise _Invalid(f"`[` at character {start + 1} is never closed; write `\\[` for a literal `[`")
        char = pattern[i]
        if char == "]" and not first:
            i += 1
            break
        if char == "[" and re.match(r"\[[:.=][a-z]*[:.=]\]", pattern[i:]):
            raise _Invalid("POSIX classes such as `[:alpha:]` are not supported; list the characters")
        if char == "\\":
            if i + 1 >= len(pattern):
                raise _Invalid(f"`[` at character {start + 1} is never closed")
            char = pattern[i + 1]
            i += 1
        i += 1
        first = False
        if i + 1 < len(pattern) and pattern[i] == "-" and pattern[i + 1] != "]":
            high = pattern[i + 1]
            i += 2
            if high == "\\":
                if i >= len(pattern):
                    raise _Invalid(f"`[` at character {start + 1} is never closed")
                high = pattern[i]
                i += 1
            if high < char:
                raise _Invalid(f"the range `{char}-{high}` runs backwards")
            ranges.append((char, high))
        else:
            items.append(char)
    ranges.extend((c, c) for c in items)
    if not negated:
        ranges = _without_slash(ranges)
        if not ranges:
            raise _Invalid("a `[...]` class must match some character other than `/`")
    return _Class(negated, tuple(ranges)), i


def _without_slash(ranges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    kept = []
    for low, high in ranges:
        if low <= "/" <= high:  # split around it: `/` is never part of a name
            if low < "/":
                kept.append((low, "."))
            if high > "/":
                kept.append(("0", high))
        else:
            kept.append((low, high))
    return kept


# --- regular expressions -----------------------------------------------------------------------


def _char(char: str) -> str:
    """One character as a regex literal both engines read the same, in or out of a class: hex
    escapes for everything but ASCII letters, digits, `_` and `/` (so no quote, backslash or
    class operator such as Rust's `&&`, `--` and `~~` ever appears bare)."""
    if char.isascii() and (char.isalnum() or char in "_/"):
        return char
    code = ord(char)
    if code < 0x80:
        return f"\\x{code:02X}"
    return f"\\u{code:04X}" if code < 0x10000 else f"\\U{code:08X}"


def _token(token: object) -> str:
    if token == STAR:
        return "[^/]*"
    if token == ANY:
        return "[^/]"
    if isinstance(token, _Class):
        body = "".join(_char(a) if a == b else f"{_char(a)}-{_char(b)}" for a, b in token.ranges)
        return f"[^/{body}]" if token.negated else f"[{body}]"
    return _char(str(token))


def _portable(segments: tuple[tuple, ...]) -> str:
    parts = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment is GLOBSTAR:
            parts.append(_ANY_PATH if last else _ANY_FOLDERS)  # _ANY_FOLDERS ends with its '/'
        else:
            parts.append("".join(_token(t) for t in segment) + ("" if last else "/"))
    return "^" + "".join(parts) + "$"


def _atomic(segments: tuple[tuple, ...]) -> str:
    """The same language as `_portable`, for Python's backtracking engine: between two stars (or
    two `**`), the earliest place the fixed-width part in between fits is always a good one, so
    it is taken in an atomic group and never retried. That keeps `*a*a*a*b` or `**/a/**/a/**/b`
    linear-ish where a plain translation backtracks through every split."""
    parts = []
    i = 0
    while i < len(segments):
        segment = segments[i]
        last = i == len(segments) - 1
        if segment is not GLOBSTAR:
            parts.append(_atomic_segment(segment) + ("" if last else "/"))
            i += 1
        elif last:
            parts.append(_ANY_PATH)
            i += 1
        else:
            j = i + 1
            while j < len(segments) and segments[j] is not GLOBSTAR:
                j += 1
            chunk = "/".join(_atomic_segment(s) for s in segments[i + 1 : j])
            if j < len(segments):  # a chunk between two `**`: its first fit is a good one
                parts.append(f"(?>(?:[^/]+/)*?{chunk}/)")
            else:
                parts.append(_ANY_FOLDERS + chunk)
            i = j
    return "^" + "".join(parts) + "$"


def _atomic_segment(segment: tuple) -> str:
    pieces: list[list] = [[]]
    for token in segment:
        if token == STAR:
            pieces.append([])
        else:
            pieces[-1].append(token)
    if len(pieces) == 1:
        return "".join(_token(t) for t in segment)
    head, *middle, tail = ("".join(_token(t) for t in piece) for piece in pieces)
    return head + "".join(f"(?>[^/]*?{m})" for m in middle) + "[^/]*" + tail


def _literal_prefix(segments: tuple[tuple, ...]) -> str:
    """The literal text every matching path starts with (`src/lib/` of `src/lib/**/*.py`)."""
    prefix = []
    for i, segment in enumerate(segments):
        if segment is GLOBSTAR:
            break
        for token in segment:
            if not (isinstance(token, str) and len(token) == 1):
                return "".join(prefix)
            prefix.append(token)
        if i < len(segments) - 1:
            prefix.append("/")
    return "".join(prefix)

"""The words full-text search matches: one function turns a record's keyword text and a query
into the same terms, so what is indexed and what is asked cannot drift apart.

Technical text is not prose: its short words and symbols are its keywords. So:
- nothing is dropped as a stop word (`with`, `as`, `in`, `is`, `not`, `yield`, `from`, `pass`
  name statements and operators);
- operators that carry meaning become word terms (`:=` -> `op_walrus`, `->` -> `op_arrow`,
  `**` -> `op_starstar`, `@` -> `op_at`, `//` -> `op_floordiv`, `%` -> `op_percent`...), the
  longest first, so `::=` (a grammar rule) is not read as `:=`; a lone `?` (the end of a question)
  is not one of them, `??` and `?.` are;
- identifiers are kept whole and split: `os.path` gives `os.path`, `os`, `path`; `__init__` gives
  `__init__` and `init`; `TypeVarTuple` gives `typevartuple`, `type`, `var`, `tuple`;
  `async_generator` gives `async_generator`, `async`, `generator`;
- an f-string (`f"..."`, `rf'...'`) and the words `f-string`/`fstring` all give `op_fstring`;
- a PEP number in any spelling (`PEP 8`, `pep-0008`, `:pep:`8``) gives `pep8` beside `pep` and `8`;
- runs of four or more of one mark (`====`, `----`) are layout and give nothing;
- everything is lower-cased; numbers are kept whole (`3.12`) and by part.

The index (loader) splits these terms on whitespace only and stems them (LanceDB's English
stemmer, applied to record and query alike), with no stop-word list. TOKENIZER names this
scheme; it is part of a resource's declaration hash (store.declaration_sha256), so a store
indexed under another scheme gets a new table generation at its next load.
"""

from __future__ import annotations

import functools
import re

TOKENIZER = "code-terms-1"

# Longest first: the alternation tries them in order at each position.
_OPERATORS = (
    ("::=", "grammar"),
    ("...", "ellipsis"),
    ("**=", "ipow"),
    ("//=", "ifloordiv"),
    (":=", "walrus"),
    ("->", "arrow"),
    ("**", "starstar"),
    ("//", "floordiv"),
    ("==", "eq"),
    ("!=", "ne"),
    ("<=", "le"),
    (">=", "ge"),
    ("<<", "lshift"),
    (">>", "rshift"),
    ("+=", "iadd"),
    ("-=", "isub"),
    ("*=", "imul"),
    ("/=", "idiv"),
    ("|=", "ior"),
    ("&=", "iand"),
    ("@=", "imatmul"),
    ("??", "nullcoalesce"),
    ("?.", "nullsafe"),
    ("@", "at"),
    ("%", "percent"),
    ("*", "star"),
    ("|", "pipe"),
    ("&", "amp"),
    ("~", "tilde"),
    ("^", "caret"),
)
_OPERATOR_TERM = {symbol: f"op_{name}" for symbol, name in _OPERATORS}
FSTRING = "op_fstring"

_PEP = r"(?P<pep>\bpep[\s:`_-]{0,3}0*(?P<pepnum>\d{1,5})(?!\d))"
_FSTRING = r"(?P<fstr>(?<![\w.])(?:[rR]?[fF]|[fF][rR])(?=[\"'])|(?<!\w)f-?strings?\b)"
_WORD = r"(?P<word>[^\W\d][\w]*(?:\.[^\W\d]\w*)*)"
_NUMBER = r"(?P<num>\d+(?:\.\d+)*)"
_OPERATOR = "(?P<op>" + "|".join(re.escape(s) for s, _ in _OPERATORS) + ")"
_TOKEN = re.compile("|".join((_PEP, _FSTRING, _WORD, _NUMBER, _OPERATOR)), re.IGNORECASE)
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# Runs of four or more of one punctuation mark are layout (reStructuredText underlines, rules),
# not operators: `====` would otherwise count as two `==` in every titled document.
_RULE = re.compile(r"([^\w\s])\1{3,}")


def terms(text: str) -> list[str]:
    """The terms of `text`, in order (a term may repeat; parts follow their whole)."""
    out: list[str] = []
    for match in _TOKEN.finditer(_RULE.sub(" ", text)):
        kind = match.lastgroup
        if kind == "pep":
            number = match.group("pepnum").lstrip("0") or "0"
            out += ["pep", number, "pep" + number]
        elif kind == "fstr":
            out.append(FSTRING)
            if "string" in match.group("fstr").lower():  # the word, not a prefix
                out += ["f", "string"]
        elif kind == "word":
            out += _word_terms(match.group("word"))
        elif kind == "num":
            number = match.group("num")
            out.append(number)
            if "." in number:
                out += number.split(".")
        else:
            out.append(_OPERATOR_TERM[match.group("op")])
    return out


def term_text(text: str) -> str:
    """`text`'s terms joined by spaces: what the `_terms` column holds and a query is sent as."""
    return " ".join(terms(text))


# Natural text repeats its words: the terms of 10,000 of bench/records_scale.py's records took
# 1.24 s of CPU without this cache, 0.83 s with it (the same terms).
@functools.lru_cache(maxsize=1 << 16)
def _word_terms(word: str) -> tuple[str, ...]:
    whole = word.lower()
    out = [whole]
    parts = word.split(".") if "." in word else [word]
    for part in parts:
        lowered = part.lower()
        if len(parts) > 1:
            out.append(lowered)
        pieces = [p for p in part.split("_") if p]
        if len(pieces) > 1 or (pieces and pieces[0] != part):
            out += [p.lower() for p in pieces if p.lower() != lowered]
        for piece in pieces:
            camel = _CAMEL.findall(piece)
            if len(camel) > 1 and piece.isascii():
                out += [c.lower() for c in camel]
    return tuple(out)


def fts_index() -> object:
    """The LanceDB index on `_terms`: the terms are made already, so split on whitespace only,
    stem (record and query alike), drop no stop word; 64 characters keep long dotted names."""
    from lancedb.index import FTS

    return FTS(base_tokenizer="whitespace", stem=True, remove_stop_words=False, max_token_length=64)

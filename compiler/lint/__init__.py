"""Lint: what an agent reads before it calls a tool, checked and scored TDQS-style.

Owns textual signals and cue lists (`signals`), the rule checks (`checks`), the score per
dimension (`score`), running them over a server (`linter`) and renderers (`render`). Kept apart
from review, as buf keeps lint and breaking apart.

May import the shared bottom modules (diagnostics, rules, wire, backticks) and
`lynxc.compiler.lower` for description formatting; never review, emit or build.
"""

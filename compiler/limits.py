"""How much spec the compiler reads before it refuses, and why each limit sits where it does.

Every limit here answers one hostile or broken input with a diagnostic in about a second,
instead of minutes of work, a traceback or an exhausted memory. Each is far above what a real
server needs: the largest bundled server is 22 KB in 4 files, nests 11 levels deep and uses no
aliases. Lowering, linting and generating models cost roughly 4 s per MB of spec on the
2-core machine the limits were measured on, so the size limit also bounds the time.
"""

from __future__ import annotations

# All the files of one server together (one YAML file, or a folder of them). At ~4 s/MB a spec
# at this limit compiles in about a second; the largest bundled server is 22 KB, one twelfth.
MAX_SPEC_BYTES = 256 * 1024

# One server's tools. A client hands every tool's definition to its model on every turn, and
# hosted APIs refuse long tool lists (OpenAI's at 128); lint's server token budget is exceeded
# long before this. Also bounds the files a spec folder may hold, checked before reading them.
MAX_TOOLS = 128

# Characters of one string in a spec (a description, a title, a pattern, a default). Lint's
# budget for a whole tool description is 500 tokens, about 2,000 characters; eight times that is
# a pasted file, not documentation, and unbounded text made linting one spec take 29 s.
MAX_STRING_CHARS = 16 * 1024

# Nesting of YAML collections, counted after aliases are expanded. A schema level costs two
# (`properties:` and the property name), so this allows 30 nested object levels. The parser,
# validation and the model generator recurse once or more per level: without a limit, 100,000
# brackets end in a RecursionError, and 64 keeps every stage far from Python's 1,000 frames.
MAX_NESTING_DEPTH = 64

# Nodes that aliases (`*name`, `<<: *name`) may add when expanded, over the whole document. A
# few shared fragments cost hundreds; ten levels of ten aliases each would expand to 10**10
# nodes (a "billion laughs" document) and never finish.
MAX_ALIAS_NODES = 10_000

# An output schema with its `$ref`s inlined, as the runtime inlines them once per tool to
# validate results fast. The bundled schemas expand to at most a few hundred nodes; thirty
# definitions that each use the next twice would expand to a billion.
MAX_SCHEMA_NODES = 20_000

# Nesting of that inlined schema, each `$ref` followed counting one level. Above
# MAX_NESTING_DEPTH because lowering adds levels (`nullable` wraps a node in anyOf); the
# runtime's validators recurse a few frames per level, and a chain of thousands of plain
# `$ref`s would exhaust the stack (and make the model generator take minutes).
MAX_SCHEMA_DEPTH = 100

# A saved tools/list (or tools.json) that `lynxc diff` and `lynxc lint` read. A 100-tool server
# answers about 235 KiB; sixty times that is no real server, and json.loads of a hostile file
# would otherwise take the memory it likes.
MAX_TOOLS_LIST_BYTES = 16 * 1024 * 1024

# CPU seconds that importing all user backends of a server (in a child process) may use. A real
# backend module that loads a heavy library at import (pandas, torch) takes a few seconds on a
# slow laptop; beyond this the import is looping, and the build says so instead of waiting. CPU
# time, which a loaded machine does not stretch (the kernel counts it: RLIMIT_CPU); the
# wall-clock backstop ends an import that sleeps or deadlocks, and is wide enough that a slow,
# busy machine importing a heavy library never reaches it.
BACKEND_IMPORT_CPU_SECONDS = 10.0
BACKEND_IMPORT_WALL_SECONDS = 120.0

# SQL tools (compiler/lower/sql). Checking a server's statements prepares each against the
# declared data in an in-memory DuckDB: milliseconds per statement, about a second of CPU time
# for the bundled server with its sample. The budget covers reading samples and a schema file;
# past it DuckDB is interrupted and the check reported, never hung. It counts CPU time, which a
# loaded machine does not stretch (work_budget.py); the wall-clock backstop ends only a check
# that waits without working, and sits where no slow machine reaches it.
SQL_CHECK_CPU_SECONDS = 30.0
SQL_CHECK_WALL_SECONDS = 600.0
# A sample stands in for the data at build time: a few rows are enough to give the types.
MAX_SQL_SAMPLE_BYTES = 64 * 1024 * 1024

# SQL tools over PostgreSQL (compiler/lower/sql/postgres). Preparing a statement takes
# milliseconds; a build database that does not answer, a lock that never frees or a schema file
# that loops must end the build with a diagnostic, not hang it. Postgres works in its own
# process, so these are wall-clock limits: a connection attempt, one statement (the schema file
# is one), and the whole check of a server's statements.
PG_CONNECT_TIMEOUT_SECONDS = 10
PG_STATEMENT_TIMEOUT_SECONDS = 60.0
PG_CHECK_WALL_SECONDS = 300.0

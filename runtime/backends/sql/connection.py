"""The DuckDB database a server's SQL tools run in: opened once per process, sandboxed, checked.

One in-memory DuckDB per (server folder, catalog, data settings, threads), opened on the first
call and reused: opening, attaching and binding the views costs far more than a call, while a
cursor of it (a connection of its own, safe to use from its own worker thread) costs ~0.1 ms.

Opening, in this order:
1. `duckdb.connect(':memory:', config={'threads': N})` and `SET GLOBAL TimeZone='UTC'` (cursors
   inherit it; TIMESTAMPTZ values are then fetched in UTC, as types.py renders them);
2. the database file, if declared, is ATTACHed as `lynxc_data`, READ_ONLY unless the spec
   allows writes: a read-only DuckDB instance cannot host the in-memory catalog the views live
   in, and temporary views are private to the connection that made them, so the views live in
   `memory.main` and every cursor resolves names through `search_path` (the database first);
3. one view per declared view, over the file or glob a setting names (views.reader_call:
   path and options are SQL literals, never code; they come from the operator, not callers);
   the path is made absolute first (`~` expanded, `.` and `..` resolved), so the view and the
   sandbox agree on what it names;
4. the sandbox: DuckDB may read only the views' files (a file's path, a glob's base folder),
   the database file and its own temporary folder (spilled sorts and joins, in a private
   folder of the system temp dir rather than `.tmp` in the server's working folder); then
   external access is switched off and the configuration locked, so no statement can read
   another file (read_csv('/etc/passwd')), write one (COPY), attach, install or load
   anything, or SET its way out. A glob whose base folder would be the root is refused;
5. the drift check: each tool's statement is bound (never run) with typed NULL parameters and
   its result columns compared with what `lynxc build` recorded, and the database's columns
   the build relied on being NOT NULL are checked to still be. A tool whose data changed
   (a column retyped, renamed, gone, now nullable) answers every call with an error saying
   what changed, while the other tools keep working.

A view whose files are missing (not yet written, being replaced) disables the tools that read
it, and each later call tries to create it again, so the tools come back once the files are
there, without a restart.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from lynxc.runtime.errors import ToolError

from .catalog import DEFAULT_THREADS, SqlCatalog, SqlDatabase, SqlTool, SqlView
from .types import UnsupportedType, fetch_statement, row_converter, same_type, type_tree
from .views import quoted, reader_call, sql_literal

T = TypeVar("T")

DATA_CATALOG = "lynxc_data"  # what the database file is attached as
VIEWS_SCHEMA = "memory.main"  # where the views live (the in-memory database's own catalog)
# DuckDB globs with * ? and [...]; `{` is taken for one too, so that a name DuckDB might
# expand is never allowed as one file (a literal name with them only widens to its folder).
GLOB_CHARACTERS = frozenset("*?[{")
TEMP_PREFIX = "lynxc-duckdb-"  # + pid + "-": the folder DuckDB spills into
# After a timeout or a cancel, how long a call keeps interrupting DuckDB before giving up on it.
STOP_GRACE_SECONDS = 10.0
_REINTERRUPT_SECONDS = 0.02


class OpenError(ToolError):
    """The data could not be opened (a setting unset, the database file missing or unreadable):
    every call says so, and the next call tries again."""


@dataclass
class Database:
    """A sandboxed DuckDB of one server, and what the drift check found per tool."""

    connection: Any  # duckdb.DuckDBPyConnection
    catalog: SqlCatalog
    search_path: str | None
    temp_folder: str | None = None  # DuckDB's temp_directory, removed on close
    # Per tool: why it cannot run (data drift), or its row converter. `problems` is replaced
    # whole when it changes (calls read it from other threads).
    problems: dict[str, str] = field(default_factory=dict)
    converters: dict[str, Callable[[tuple], dict[str, Any]]] = field(default_factory=dict)
    # Per tool: the statement a call runs (the capped one, lossy types fetched as text).
    statements: dict[str, str] = field(default_factory=dict)
    param_types: dict[str, Any] = field(default_factory=dict)  # "tool\0param" -> DuckDBPyType
    # Per view (lower-case name): why it could not be created; `pending` those to try again
    # (a reader that failed; an unset setting stays unset until the settings change).
    view_errors: dict[str, str] = field(default_factory=dict)
    pending: dict[str, tuple[SqlView, str]] = field(default_factory=dict)
    # Tool -> why it cannot run whatever the views (its types; a lost NOT NULL).
    fixed_problems: dict[str, str] = field(default_factory=dict)
    _retry_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _remove_temp: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        folder = self.temp_folder
        # Removed on close, when dropped, or at exit: whichever comes first, once.
        self._remove_temp = weakref.finalize(self, _remove_folder, folder) if folder else None

    def cursor(self) -> Any:
        """A connection of its own for one call (use it from one thread, close it after)."""
        cursor = self.connection.cursor()
        if self.search_path is not None:
            # search_path is per connection (DuckDB refuses SET GLOBAL for it) and stays
            # settable after lock_configuration; statements cannot SET (they run wrapped).
            cursor.execute(f"SET search_path = {sql_literal(self.search_path)}")
        return cursor

    def close(self) -> None:
        self.connection.close()
        if self._remove_temp is not None:
            self._remove_temp()

    def retry_views(self) -> None:
        """Create again the views whose files were missing; when one now opens, check the
        tools again. Cheap when none is pending (one dict lookup)."""
        if not self.pending:
            return
        import duckdb

        with self._retry_lock:
            created = []
            for name, (view, location) in list(self.pending.items()):
                cursor = self.cursor()
                try:
                    cursor.execute(_create_view(view, location))
                except duckdb.Error as err:
                    self.view_errors[name] = _view_error(view, location, err)
                    continue
                finally:
                    cursor.close()
                created.append(name)
            if created:
                for name in created:
                    del self.pending[name]
                    del self.view_errors[name]
                self.problems = _tool_problems(self)


def _remove_folder(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)


_swept = False


def new_temp_folder() -> str:
    """A private folder (mode 0700, a name no other process can take first) of the system temp
    dir for one DuckDB's spilled data: `lynxc-duckdb-<pid>-<random>`. The first one a process
    makes also removes those of processes that are gone (a killed server runs no exit code)."""
    global _swept
    if not _swept:
        _swept = True
        sweep_temp_folders()
    return tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-")


def sweep_temp_folders() -> None:
    """Remove this user's temp folders of processes that no longer run (POSIX only: elsewhere
    os.kill(pid, 0) is no probe)."""
    if os.name != "posix":
        return
    root = tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return
    for name in names:
        match = _TEMP_NAME.fullmatch(name)
        if match is None or _running(int(match[1])):
            continue
        path = os.path.join(root, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            _remove_folder(path)


_TEMP_NAME = re.compile(re.escape(TEMP_PREFIX) + r"(\d+)-[A-Za-z0-9_]+")


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True


# --- one database per process per server and settings -------------------------------------------

_databases: dict[tuple[Any, ...], Database] = {}
_lock = threading.Lock()


def database_for(server: Any, catalog: SqlCatalog, settings: Mapping[str, Any]) -> Database:
    """The open database of `server` for these settings, opened on first use (blocking: run it
    in a worker thread). Raises OpenError when the data cannot be opened (nothing is kept:
    the next call tries again); views that could not be created are tried again each call."""
    key = (
        str(getattr(server, "folder", id(server))),
        id(catalog),  # the catalog is kept by the entry below, so its id is not reused
        threads(catalog, settings),
        *(str(settings.get(name)) for name in catalog.data_settings()),
    )
    with _lock:
        database = _databases.get(key)
        if database is None or database.catalog is not catalog:
            database = _databases[key] = open_database(catalog, settings)
    database.retry_views()
    return database


def close_databases() -> None:
    """Close every database this process opened (tests; a server just exits)."""
    with _lock:
        for database in _databases.values():
            database.close()
        _databases.clear()


def threads(catalog: SqlCatalog, settings: Mapping[str, Any]) -> int:
    value = settings.get(catalog.threads_setting, DEFAULT_THREADS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OpenError(f"setting {catalog.threads_setting!r}: {value!r} is not a positive integer")
    return value


# --- opening --------------------------------------------------------------------------------------


def open_database(catalog: SqlCatalog, settings: Mapping[str, Any]) -> Database:
    """Open, sandbox and check the data `catalog` declares, with paths from `settings`."""
    import duckdb

    config = {"threads": threads(catalog, settings)}
    temp_folder = new_temp_folder()
    con = None
    try:
        con = duckdb.connect(":memory:", config=config)
        con.execute("SET GLOBAL TimeZone = 'UTC'")
        # Before the lock (it cannot change after); one folder per DuckDB instance: two
        # instances spilling into one folder overwrite each other's files.
        con.execute(f"SET temp_directory = {sql_literal(temp_folder)}")
        allowed: list[str] = []
        folders: list[str] = []
        search_path = None
        lost: list[str] = []
        if catalog.database is not None:
            path = _database_file(catalog, settings)
            mode = "" if catalog.database.writable else " (READ_ONLY)"
            try:
                con.execute(f"ATTACH {sql_literal(path)} AS {DATA_CATALOG}{mode}")
            except duckdb.Error as err:
                raise OpenError(
                    f"setting {catalog.database.setting!r}: cannot open the DuckDB database {path!r}: "
                    f"{first_paragraph(err)}"
                ) from None
            allowed += [path, path + ".wal"]  # a writable database logs beside itself
            search_path = f"{DATA_CATALOG}.main,{VIEWS_SCHEMA}"
            lost = _not_null_lost(con, catalog.database)
        view_errors: dict[str, str] = {}
        pending: dict[str, tuple[SqlView, str]] = {}
        for view in catalog.views:
            setting = settings.get(view.setting)
            if not isinstance(setting, str) or not setting:
                view_errors[view.name.lower()] = f"setting {view.setting!r} is not set"
                continue
            location = resolved(setting)
            base, is_glob = base_folder(location)
            if is_glob and os.path.dirname(base) == base:
                raise OpenError(
                    f"setting {view.setting!r}: the glob {setting!r} reads from the root folder, which "
                    "would let statements read every file; put the files in a folder and name it"
                )
            (folders if is_glob else allowed).append(base)
            try:
                con.execute(_create_view(view, location))
            except duckdb.Error as err:
                view_errors[view.name.lower()] = _view_error(view, location, err)
                pending[view.name.lower()] = (view, location)  # its files may come later
        _sandbox(con, [*folders, temp_folder], allowed)
        database = Database(con, catalog, search_path, temp_folder, view_errors=view_errors, pending=pending)
    except BaseException:
        if con is not None:
            con.close()
        _remove_folder(temp_folder)
        raise
    try:
        _prepare_tools(database, lost)
        database.problems = _tool_problems(database)
    except BaseException:
        database.close()
        raise
    return database


def _database_file(catalog: SqlCatalog, settings: Mapping[str, Any]) -> str:
    assert catalog.database is not None
    setting = catalog.database.setting
    path = settings.get(setting)
    if not isinstance(path, str) or not path:
        raise OpenError(f"setting {setting!r} is not set: it names the DuckDB database file to read")
    if not os.path.isfile(os.path.expanduser(path)):
        # ATTACH would create an empty database where a writable one is missing: say so instead.
        raise OpenError(f"setting {setting!r}: no DuckDB database file at {path!r}")
    return resolved(path)


def _create_view(view: SqlView, location: str) -> str:
    try:
        reader = reader_call(view.reader, location, view.options_dict())
    except (TypeError, ValueError) as err:
        raise OpenError(f"view `{view.name}`: {err}") from None
    # In the in-memory catalog by name: a cursor's search_path puts the database file first.
    return f"CREATE OR REPLACE VIEW {VIEWS_SCHEMA}.{quoted(view.name)} AS SELECT * FROM {reader}"


def _view_error(view: SqlView, location: str, err: BaseException) -> str:
    return f"view `{view.name}` cannot read setting {view.setting!r} ({location}): {first_paragraph(err)}"


def resolved(location: str) -> str:
    """A path as DuckDB will read it: `~` expanded, absolute against the working folder, `.`
    and `..` resolved as text (so `..` cannot climb out of the folder the sandbox allows)."""
    return os.path.normpath(os.path.abspath(os.path.expanduser(location)))


def base_folder(location: str) -> tuple[str, bool]:
    """(the absolute folder a glob reads under, True), or (the file's absolute path, False).

    The folder is the path up to the first segment with a glob character: `*.csv` reads
    under the working folder, `/*.csv` under the root (which open_database refuses)."""
    path = resolved(location)
    parts = Path(path).parts
    for i, part in enumerate(parts):
        if GLOB_CHARACTERS & set(part):
            return os.path.join(*parts[:i]), True  # parts[0] is the root: i >= 1
    return path, False


def _sandbox(con: Any, folders: list[str], files: list[str]) -> None:
    """Allow reading only `folders` (and below) and `files`, then turn external access off and
    lock the configuration: after this, no statement can change either."""
    directories = [os.path.join(os.path.abspath(folder), "") for folder in folders]  # trailing /
    paths = [os.path.abspath(path) for path in files]
    if directories:
        con.execute(f"SET allowed_directories = {sql_literal(directories)}")
    if paths:
        con.execute(f"SET allowed_paths = {sql_literal(paths)}")
    con.execute("SET enable_external_access = false")
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET lock_configuration = true")


# --- the drift check ------------------------------------------------------------------------------


def _not_null_lost(con: Any, database: SqlDatabase) -> list[str]:
    """The columns the build saw NOT NULL (`table.column`) that the attached database now lets
    be NULL. A table in several schemas counts as nullable if any of them is; a column gone
    altogether is left to the statements' bind check, which names it."""
    if not database.not_null:
        return []
    nullable = {
        name
        for (name,) in con.execute(
            "SELECT DISTINCT lower(table_name) || '.' || lower(column_name) FROM duckdb_columns() "
            "WHERE database_name = ? AND is_nullable",
            [DATA_CATALOG],
        ).fetchall()
    }
    return [name for name in database.not_null if name.lower() in nullable]


def _prepare_tools(database: Database, lost: list[str]) -> None:
    """Each tool's parameter types and row converter; what stops a tool whatever its views."""
    import duckdb

    catalog = database.catalog
    everywhere = None
    if lost and catalog.database is not None:
        columns = "; ".join(f"column `{name}` is no longer NOT NULL in the database" for name in lost)
        everywhere = (
            f"the data behind {catalog.database.setting} changed since lynxc build: {columns}; "
            + what_to_rebuild([catalog.database.shape])
        )
    for tool in catalog.tools.values():
        try:
            for param in tool.params:
                database.param_types[param_key(tool.name, param.name)] = duckdb.sqltype(param.type)
            columns = [column.as_dict() for column in tool.columns]
            database.converters[tool.name] = row_converter(columns)
            database.statements[tool.name] = fetch_statement(tool.wrapped, columns)
        except (duckdb.Error, UnsupportedType, ValueError) as err:
            why = first_paragraph(err)
            database.fixed_problems[tool.name] = f"{tool.name!r} cannot run: {why} (run `lynxc build`)"
            continue
        if everywhere is not None:
            # The build proved columns non-null from the lost constraint: no result can be trusted.
            database.fixed_problems[tool.name] = everywhere


def _tool_problems(database: Database) -> dict[str, str]:
    """Per tool, why it cannot run now: a fixed problem, a view it reads missing, or drift."""
    problems = dict(database.fixed_problems)
    for tool in database.catalog.tools.values():
        if tool.name in problems:
            continue
        cursor = database.cursor()
        try:
            problem = drift(cursor, database, tool, database.view_errors)
        finally:
            cursor.close()
        if problem is not None:
            problems[tool.name] = problem
    return problems


def param_key(tool: str, param: str) -> str:
    return f"{tool}\0{param}"


def drift(cursor: Any, database: Database, tool: SqlTool, view_errors: Mapping[str, str]) -> str | None:
    """Why `tool` no longer fits its data, or None. The statement is bound, never run."""
    import duckdb

    views = _views_read(tool, database.catalog)
    failed = [view_errors[name] for name in views if name in view_errors]
    if failed:
        return "; ".join(failed) + f" (so {tool.name!r} cannot run)"
    try:
        found = _result_types(cursor, database, tool)
    except duckdb.Error as err:
        return _changed(database.catalog, views, f"the statement no longer binds: {first_paragraph(err)}")
    if found is None:
        return None
    names = [name for name, _ in found]
    declared = [column.name for column in tool.columns]
    if all(names) and names != declared:  # a write statement's names are not known: ""
        return _changed(
            database.catalog, views, f"its columns are now ({', '.join(names)}), were ({', '.join(declared)})"
        )
    if len(found) != len(tool.columns):
        return _changed(database.catalog, views, f"it now has {len(found)} columns, was {len(tool.columns)}")
    changes = []
    for column, (_, live) in zip(tool.columns, found, strict=True):
        was = column.type.get("sql", "?")
        if isinstance(live, str):  # a write statement: only the type's SQL text is known
            same, now = live == was, live
        else:
            try:
                same, now = same_type(dict(column.type), type_tree(live)), str(live)
            except UnsupportedType:
                same, now = False, str(live)
        if not same:
            changes.append(f"column `{column.name}` is now {now}, was {was}")
    return _changed(database.catalog, views, "; ".join(changes)) if changes else None


def _result_types(cursor: Any, database: Database, tool: SqlTool) -> list[tuple[str, Any]] | None:
    """(name, DuckDBPyType) per result column of the statement bound with typed NULLs. A write
    statement is only prepared (it cannot be wrapped in a SELECT) and gives its types as text,
    without names; None when DuckDB cannot say before running it."""
    args = ", ".join(
        f"{quoted(p.name)} := CAST(NULL AS {database.param_types[param_key(tool.name, p.name)]})"
        for p in tool.params
    )
    if not tool.read_only:
        cursor.execute(f"PREPARE lynxc_probe AS {tool.wrapped}")
        row = cursor.execute(
            "SELECT result_types FROM duckdb_prepared_statements() WHERE name = 'lynxc_probe'"
        ).fetchone()
        cursor.execute("DEALLOCATE lynxc_probe")
        return None if not row or row[0] is None else [("", text) for text in row[0]]
    # LIMIT 0 over the capped statement: DuckDB plans an empty result and reads no rows.
    cursor.execute(f"PREPARE lynxc_probe AS SELECT * FROM ({tool.wrapped}) AS lynxc_probe LIMIT 0")
    try:
        description = cursor.execute(
            f"EXECUTE lynxc_probe({args})" if args else "EXECUTE lynxc_probe"
        ).description
    finally:
        cursor.execute("DEALLOCATE lynxc_probe")
    return [(column[0], column[1]) for column in description]


def _views_read(tool: SqlTool, catalog: SqlCatalog) -> list[str]:
    """The declared views (lower-case names) the statement names, in declaration order."""
    import duckdb

    text = tool.statement
    tokens = duckdb.tokenize(text)
    words = set()
    for i, (start, kind) in enumerate(tokens):
        if kind == duckdb.token_type.identifier:
            end = tokens[i + 1][0] if i + 1 < len(tokens) else len(text)
            words.add(text[start:end].strip().strip('"').lower())
    return [view.name.lower() for view in catalog.views if view.name.lower() in words]


def _changed(catalog: SqlCatalog, views: list[str], what: str) -> str:
    read = [view for view in catalog.views if view.name.lower() in views]
    settings, shapes = [view.setting for view in read], [view.shape for view in read]
    if not read:  # no view named: the database's tables, or what DuckDB read otherwise
        settings = [catalog.database.setting] if catalog.database else list(catalog.data_settings())
        shapes = [catalog.database.shape] if catalog.database else [view.shape for view in catalog.views]
    behind = " or ".join(dict.fromkeys(settings)) or "the server's data"
    return f"the data behind {behind} changed since lynxc build: {what}; {what_to_rebuild(shapes)}"


def what_to_rebuild(shapes: list[str]) -> str:
    """What to change before rebuilding: the build never reads the served data, it takes its
    shape from the spec (a view's `columns` or sample, a database's schema or sample)."""
    fixes = []
    for shape in dict.fromkeys(shapes):
        kind, _, path = shape.partition(": ")
        if kind == "columns":
            fixes.append("update the view's `columns` in the spec to the new data's types")
        elif kind == "sample":
            fixes.append(f"replace the sample {path} beside the spec with a sample of the new data")
        elif kind == "schema":
            fixes.append(f"update the schema {path} beside the spec to the new data's tables")
        else:  # a sql.json from before the shape was recorded
            return "rebuild against the new data"
    return "the build takes the data's shape from the spec: " + "; ".join(fixes) + ", then run `lynxc build`"


# --- one call's cursor ----------------------------------------------------------------------------


class CallStopped(ToolError):
    """The call was stopped before its statement started."""


class Call:
    """One call's cursor: used on a worker thread, interruptible from any other.

    DuckDB's `interrupt()` stops the statement running on that connection, and is lost when
    none is running yet; so a stop keeps interrupting until the worker is done. A lock keeps
    `interrupt()` off a cursor being closed."""

    def __init__(self, database: Database):
        self._database = database
        self._cursor: Any = None
        self._lock = threading.Lock()
        self._stopped = False
        self._closed = False
        self.finished = threading.Event()

    def run(self, work: Callable[[Any], T]) -> T:
        """work(cursor) on this thread; the cursor is closed after."""
        try:
            with self._lock:
                if self._stopped:
                    raise CallStopped("the call was stopped before it started")
                self._cursor = self._database.cursor()
            return work(self._cursor)
        finally:
            with self._lock:
                self._closed = True
                if self._cursor is not None:
                    self._cursor.close()
            self.finished.set()

    def interrupt(self) -> None:
        with self._lock:
            self._stopped = True
            if self._cursor is not None and not self._closed:
                self._cursor.interrupt()

    def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """Interrupt now, and again from a daemon thread until the work is done (or `grace`
        seconds passed: a statement DuckDB cannot interrupt is left to finish on its own)."""
        self.interrupt()
        if not self.finished.is_set():
            threading.Thread(target=self._keep_interrupting, args=(grace,), daemon=True).start()

    def _keep_interrupting(self, grace: float) -> None:
        waited = 0.0
        while waited < grace and not self.finished.wait(_REINTERRUPT_SECONDS):
            self.interrupt()
            waited += _REINTERRUPT_SECONDS


# A DuckDB message quotes the statement after a blank line: "LINE 3: <text>" and a caret line.
_LINE_QUOTE = re.compile(r"^\s*LINE \d+:", re.MULTILINE)


def first_paragraph(err: BaseException | str) -> str:
    """DuckDB's message for a person: without the `LINE n: ...` quote of the statement (and its
    caret) that DuckDB appends, whitespace collapsed to one line. The caller says where the
    error is its own way (the build with file:line:col; a call with the tool's name).

    The one implementation: the compiler's diagnostics and the runtime's tool errors use it.
    This module loads no DuckDB at import, so importing it for this is cheap."""
    text = str(err)
    quote = _LINE_QUOTE.search(text)
    if quote is not None:
        text = text[: quote.start()]
    return " ".join(text.split()) or (type(err).__name__ if isinstance(err, BaseException) else "")

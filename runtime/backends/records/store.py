"""The records store: where `lynxc load` writes a server's records and where its tools read them.

Layout under the `data_dir` setting:

- `lance/`: a LanceDB database holding one table per loaded generation of a resource, named
  `<resource>-<n>`. A load that keeps the resource's declaration updates the current table in
  place (new Lance versions); a load after a declaration change (or an embedder change, which
  changes the vectors' width) writes generation n+1 and moves the pointer to it.
- `CURRENT.json`: the pointer, replaced atomically (tmp + fsync + rename + directory fsync) at
  the end of a load, after every Lance commit of that load:

      {"format": 1,
       "resources": {NAME: {"table": "peps-1", "version": 7, "records": 736, "locales": [...],
                            "embedder": "minilm" | null, "dimension": 384 | null,
                            "declaration_sha256": "...", "loaded_at": ISO8601,
                            "embedded": 120 | null}},   # records with vectors (null: all)
       "retired": [{"resource": NAME, "table": "peps-1", "version": 5, "at": ISO8601}]}

  Readers only ever open a table at the version the pointer names, so a killed load leaves at
  most Lance versions (or a table) nobody reads; the next load first restores its table to the
  pointed version. `retired` lists the versions the pointer moved off in the last hour (the
  loader's bookkeeping, not for readers): they are kept that long, so a cursor keeps reading
  the version it started on, then cleaned up (old versions) or dropped (old generations).
- `load.lock`: an fcntl lock held by the one running `lynxc load`; it holds that loader's pid.
- `tmp/`: the running load's spill files (validated rows in Arrow form), removed at its end.

On object storage: `data_dir` may be a URI (`s3://bucket/prefix`, or any scheme LanceDB reads),
reached with the `data_storage` settings (LanceDB's storage_options) over the environment
(AWS_ACCESS_KEY_ID, AWS_ENDPOINT_URL, ...), as lynx-mcp's index is (object_store/location.py).
The layout is the same: `lance/` holds the tables; CURRENT.json is replaced by a single PUT,
which the store makes atomic per object (a reader gets the old pointer or the new one, whole);
the load lock is a writer lease, `_lynxc/writer-lease.json` (object_store/lease.py: conditional
writes, renewed while the load runs, checked before the pointer moves); spill files go to the
local temporary folder.

The read side (the records tools):

    store = RecordStore.for_dir(data_dir)      # one per data_dir and process
    state = store.current().resources.get(name)   # ResourceState, or None: not loaded yet
    table = await store.table(state)           # AsyncTable checked out at state.version
    table = await store.table_at(name_of_table, version)   # a cursor's version; VersionGone

`current()` re-reads CURRENT.json only when the file changed (by stat); `table()` opens each
(table, version) once per event loop. A table checked out at a version never moves to later
commits, so every query of a request (and every page of a cursor) reads one snapshot.

The write side (the loader): `read_current`, `write_current`, `load_lock`,
`declaration_sha256`, `table_name`, `generation`.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import os
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

from ..object_store.location import IndexLocation
from .definitions import Resource, Resources
from .tokens import TOKENIZER

FORMAT = 1
CURRENT_FILE = "CURRENT.json"
LOCK_FILE = "load.lock"
LANCE_DIR = "lance"
TMP_DIR = "tmp"
# A version the pointer moved off stays readable this long: far longer than any request, and
# long enough for a client to page through a cursor started on it.
KEEP_OLD_VERSIONS = timedelta(hours=1)
# (table, version) handles kept open per event loop: the current ones and a few cursors' ones.
OPEN_TABLES = 32
# A server on an object store looks for a new pointer (a HEAD request) at most this often.
REMOTE_CHECK_SECONDS = 1.0


@dataclass(frozen=True)
class ResourceState:
    """What CURRENT.json says about one loaded resource."""

    table: str
    version: int
    records: int
    locales: tuple[str, ...]
    embedder: str | None
    dimension: int | None
    declaration_sha256: str
    loaded_at: str
    # Records that have a vector: fewer than `records` after `lynxc load --embed later` until
    # `lynxc embed` fills them. None: a pointer written before loads could defer embedding
    # (every record has one), or a resource without meaning fields.
    embedded: int | None = None

    @property
    def missing_vectors(self) -> int:
        """Records without a vector yet (0 when every record has one or none can have one)."""
        if self.embedder is None or self.embedded is None:
            return 0
        return max(0, self.records - self.embedded)


@dataclass(frozen=True)
class Retired:
    """A version the pointer moved off at `at`, kept readable until `at` + KEEP_OLD_VERSIONS."""

    resource: str
    table: str
    version: int
    at: str


@dataclass(frozen=True)
class Current:
    """The parsed pointer; no resources when nothing was loaded yet."""

    resources: Mapping[str, ResourceState] = field(default_factory=dict)
    retired: tuple[Retired, ...] = ()


class StoreError(Exception):
    """The store cannot be read as it is (a CURRENT.json edited by hand, a missing table)."""


class VersionGone(StoreError):
    """A table version that is no longer kept (a cursor older than KEEP_OLD_VERSIONS)."""


class LoadBusy(StoreError):
    """Another `lynxc load` is writing this store."""


def parse_current(text: str, where: str = CURRENT_FILE) -> Current:
    try:
        document = json.loads(text)
        if document.get("format") != FORMAT:
            raise ValueError(f"format {document.get('format')!r} (this runtime reads {FORMAT})")
        resources = {
            name: ResourceState(
                table=raw["table"],
                version=int(raw["version"]),
                records=int(raw["records"]),
                locales=tuple(raw.get("locales", ())),
                embedder=raw.get("embedder"),
                dimension=raw.get("dimension"),
                declaration_sha256=raw["declaration_sha256"],
                loaded_at=raw["loaded_at"],
                embedded=None if raw.get("embedded") is None else int(raw["embedded"]),
            )
            for name, raw in document["resources"].items()
        }
        retired = tuple(
            Retired(r["resource"], r["table"], int(r["version"]), r["at"])
            for r in document.get("retired", ())
        )
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise StoreError(f"{where}: not a records store pointer ({err}); run `lynxc load` again") from None
    return Current(resources, retired)


def current_json(current: Current) -> str:
    document = {
        "format": FORMAT,
        "resources": {name: _state_json(state) for name, state in sorted(current.resources.items())},
        "retired": [asdict(r) for r in current.retired],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _state_json(state: ResourceState) -> dict[str, Any]:
    document = {**asdict(state), "locales": list(state.locales)}
    if state.embedded is None:  # every record has its vector: the pointer reads as before
        del document["embedded"]
    return document


Place = str | os.PathLike[str] | IndexLocation  # a data_dir: a folder, or a located URI
STORAGE_SETTING = "data_storage"


def store_location(data_dir: Place, options: Mapping[str, Any] | None = None) -> IndexLocation:
    """A data_dir as a location: a local folder (absolute), or an object-store URI with its
    storage options (the `data_storage` settings)."""
    if isinstance(data_dir, IndexLocation):
        return data_dir
    text = os.fspath(data_dir)
    location = IndexLocation.of(text, options or {})
    return location if location.remote else IndexLocation(os.path.abspath(location.uri))


def location_from_settings(settings: Mapping[str, Any]) -> IndexLocation:
    return store_location(settings["data_dir"], settings.get(STORAGE_SETTING))


def lance_uri(location: IndexLocation) -> str:
    return location.join(LANCE_DIR)


def spill_dir(location: IndexLocation) -> Path:
    """Where a load's spill files go: `tmp/` in a local store, the machine's temporary folder for
    an object store (spills are local files without a name, see loader.py)."""
    if location.remote:
        import tempfile

        return Path(tempfile.gettempdir()) / "lynxc-load-spill"
    return Path(location.uri) / TMP_DIR


def object_store(location: IndexLocation) -> Any:
    """An obstore store at the data_dir URI, configured as LanceDB is (lease.py's)."""
    from ..object_store.lease import _object_store

    return _object_store(location)


def read_current(data_dir: Place) -> Current:
    location = store_location(data_dir)
    if location.remote:
        import obstore

        try:
            text = bytes(obstore.get(object_store(location), CURRENT_FILE).bytes()).decode("utf-8")
        except FileNotFoundError:  # obstore's "not found" (its NotFoundError is never raised)
            return Current()
        except Exception as err:
            raise _unreadable(location, err) from None
        return parse_current(text, location.join(CURRENT_FILE))
    path = Path(location.uri) / CURRENT_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Current()
    return parse_current(text, str(path))


def _unreadable(location: IndexLocation, err: BaseException) -> StoreError:
    from ..object_store.location import describe_error

    return StoreError(location.redact(f"{location.uri}: cannot read {CURRENT_FILE}: {describe_error(err)}"))


def write_current(data_dir: Place, current: Current) -> None:
    """Replace CURRENT.json atomically: a reader (or a kill -9) sees the old pointer or the new
    one, and the new one is on disk before this returns. On an object store, one PUT: atomic per
    object, durable when it returns."""
    location = store_location(data_dir)
    if location.remote:
        import obstore

        obstore.put(object_store(location), CURRENT_FILE, current_json(current).encode("utf-8"))
        return
    directory = Path(location.uri)
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / f".{CURRENT_FILE}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(current_json(current))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, directory / CURRENT_FILE)
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)  # the rename itself
    finally:
        os.close(fd)


@contextmanager
def load_lock(data_dir: Place) -> Iterator[Any]:
    """One loader at a time per store; readers never take it. The lock dies with its process,
    so a killed load never leaves it behind. The file holds the holder's pid for the message.
    On an object store, the writer lease (object_store/lease.py): yielded, so that the loader
    checks it still holds it before it moves the pointer; it expires by itself after a crash."""
    location = store_location(data_dir)
    if location.remote:
        from ..object_store.lease import LEASE_SECONDS, IndexBusy, writer_lock

        try:
            with writer_lock(location, LEASE_SECONDS, "lynxc load") as lease:
                yield lease
        except IndexBusy as err:
            raise LoadBusy(str(err)) from None
        return
    directory = Path(location.uri)
    directory.mkdir(parents=True, exist_ok=True)
    # "a+": opening must not truncate the pid of a loader that holds the lock.
    with open(directory / LOCK_FILE, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise LoadBusy(
                f"another `lynxc load` (pid {holder}) is writing {directory}; wait for it to finish"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield None


def table_name(resource: str, generation: int) -> str:
    return f"{resource}-{generation}"


def generation(table: str, resource: str) -> int | None:
    """n of a table named `<resource>-<n>`, else None (another resource's table)."""
    prefix = resource + "-"
    rest = table[len(prefix) :] if table.startswith(prefix) else ""
    return int(rest) if rest.isdigit() else None


def declaration_sha256(resource: Resource, resources: Resources) -> str:
    """What the stored columns and the validity of records depend on: fields (names, types,
    required, enum values, nesting), key, keyword and meaning fields, parents, the key type of
    every referenced resource, and the tokenizer the keyword fields are indexed with (so a store
    indexed otherwise is indexed again). Titles, descriptions, sort, capabilities and text limits
    are left out: editing them needs no reload. A change of this hash makes the next load write a
    new table generation."""
    references = sorted({p.field.to for p in resource.references() if p.field.to})
    document = {
        "name": resource.name,
        "key": resource.key,
        "fields": [_field_shape(f) for f in resource.fields],
        "keyword": list(resource.keyword),
        "keyword_terms": TOKENIZER if resource.keyword else None,  # with columns.NAME_WEIGHT
        "meaning": list(resource.meaning),
        "parents": [asdict(p) for p in resource.parents],
        "reference_keys": {name: _key_type(resources, name) for name in references},
    }
    elements = resource.element_paths()
    if elements:  # columns of the fields of arrays' objects (added later: keeps older hashes)
        document["element_paths"] = elements
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _field_shape(f: Any) -> dict[str, Any]:
    return {
        "name": f.name,
        "type": f.type,
        "required": f.required,
        "values": list(f.values) if f.values is not None else None,
        "to": f.to,
        "items": _field_shape(f.items) if f.items is not None else None,
        "fields": [_field_shape(c) for c in f.fields] if f.fields is not None else None,
    }


def _key_type(resources: Resources, name: str) -> str | None:
    target = resources.by_name(name)
    return target.key_field.type if target is not None else None


class _LoopTables:
    """One event loop's connection and open tables (LanceDB's async objects belong to the loop
    that created them)."""

    def __init__(self) -> None:
        self.db: Any = None
        self.tables: OrderedDict[tuple[str, int], Any] = OrderedDict()
        self.lock = asyncio.Lock()


class RecordStore:
    """The read side of one store. See the module docstring."""

    _instances: ClassVar[dict[str, RecordStore]] = {}  # one per data_dir in this process

    def __init__(self, data_dir: Place, options: Mapping[str, Any] | None = None):
        self.location = store_location(data_dir, options)
        self.data_dir = self.location.uri if self.location.remote else Path(self.location.uri)
        self.lance_dir = lance_uri(self.location)
        self._current: Current = Current()
        self._stat: tuple[Any, ...] | None = None
        self._checked = 0.0
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopTables] = (
            weakref.WeakKeyDictionary()
        )

    @classmethod
    def for_dir(cls, data_dir: Place, options: Mapping[str, Any] | None = None) -> RecordStore:
        """The process's one store object for `data_dir` (so its caches are shared)."""
        location = store_location(data_dir, options)
        key = location.uri
        if key not in cls._instances:
            cls._instances[key] = cls(location)
        return cls._instances[key]

    def current(self) -> Current:
        """The pointer as on disk now; parsed again only when CURRENT.json was replaced. On an
        object store, its ETag is looked at (a HEAD) at most every REMOTE_CHECK_SECONDS."""
        if self.location.remote:
            return self._remote_current()
        path = self.data_dir / CURRENT_FILE
        try:
            info = path.stat()
        except FileNotFoundError:
            self._current, self._stat = Current(), None
            return self._current
        stat = (info.st_ino, info.st_mtime_ns, info.st_size)
        if stat != self._stat:
            self._current = read_current(self.data_dir)
            self._stat = stat
        return self._current

    def _remote_current(self) -> Current:
        import time

        import obstore

        now = time.monotonic()
        if self._stat is not None and now - self._checked < REMOTE_CHECK_SECONDS:
            return self._current
        store = object_store(self.location)
        try:
            etag = obstore.head(store, CURRENT_FILE)["e_tag"]
        except FileNotFoundError:
            self._current, self._stat, self._checked = Current(), None, now
            return self._current
        except Exception as err:
            raise _unreadable(self.location, err) from None
        if (etag,) != self._stat:
            self._current = read_current(self.location)
            self._stat = (etag,)
        self._checked = now
        return self._current

    async def table(self, state: ResourceState) -> Any:
        """The resource's table checked out at the version the pointer names."""
        return await self.table_at(state.table, state.version)

    async def table_at(self, table: str, version: int) -> Any:
        """`table` checked out at `version`; VersionGone if that version (or the table) is no
        longer kept."""
        loop = asyncio.get_running_loop()
        cache = self._loops.get(loop)
        if cache is None:
            cache = self._loops[loop] = _LoopTables()
        key = (table, version)
        found = cache.tables.get(key)
        if found is not None:
            cache.tables.move_to_end(key)
            return found
        async with cache.lock:
            import lancedb

            if cache.db is None:
                cache.db = await lancedb.connect_async(
                    self.lance_dir, storage_options=self.location.storage_options()
                )
            try:
                opened = await cache.db.open_table(table, version=version)
            except ValueError as err:  # LanceDB's "was not found" / "no longer exists"
                raise VersionGone(
                    f"version {version} of table {table} is no longer kept ({err}); "
                    f"versions stay readable {_hours(KEEP_OLD_VERSIONS)} after a newer load"
                ) from None
            cache.tables[key] = opened
            while len(cache.tables) > OPEN_TABLES:
                cache.tables.popitem(last=False)
            return opened


def _hours(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return f"{hours:g} hour" + ("" if hours == 1 else "s")

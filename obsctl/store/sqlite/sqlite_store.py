"""The SQLite store: obsctl's unit of work over one SQLite file.

A `SqliteStore` owns its connections (one for a command, one per thread for a server, whose
writes go through the writer queue of obsctl/store/sqlite/writer.py) and its transactions, and
hands out one repository per area (`store.sessions`, `store.alerts`, ...). A repository is the
area's module of SQL functions (obsctl/store/sqlite/<area>.py) bound to the calling thread's
connection, with every SQLite error turned into an obsctl error on the way out; services never
see a connection or a sqlite3 exception.
"""

from __future__ import annotations

import functools
import importlib
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import GeneratorType, ModuleType
from typing import Any, TypeVar

import sqlite_utils

from obsctl.store.sqlite import db as sqlite_db
from obsctl.store.sqlite.sqlite_errors import translate_error

T = TypeVar("T")
_STORE_ATTR = "_obsctl_store"

# Repository name on the store -> module of obsctl/store/sqlite holding its SQL.
REPOSITORIES = {
    "alerts": "alerts",
    "analytics": "analytics",
    "changes": "changes",
    "costs": "costs",
    "dashboard": "dashboard",
    "events": "events",
    "ingest": "ingest",
    "maintenance": "maintenance",
    "metrics": "metrics",
    "otlp": "otlp",
    "scorecards": "scorecards",
    "search": "search",
    "sessions": "sessions",
    "session_aggregates": "session_aggregates",
    "sla": "sla",
    "transfer": "transfer",
    "triage": "triage",
    "webhooks": "webhooks",
}


class Repository:
    """An area's SQL functions bound to the store's current connection.

    `store.sessions.get_session(session_id)` calls `obsctl.store.sqlite.sessions.get_session(conn,
    session_id)` on the calling thread's connection; SQLite errors leave it as obsctl errors
    (also those raised while a returned generator is consumed)."""

    __slots__ = ("_store", "_module", "_bound")

    def __init__(self, store: SqliteStore, module: ModuleType):
        self._store = store
        self._module = module
        self._bound: dict[str, Callable] = {}

    def __getattr__(self, name: str) -> Callable:
        try:
            return self._bound[name]
        except KeyError:
            pass
        func = getattr(self._module, name)
        if name.startswith("_") or not callable(func):
            raise AttributeError(f"{self._module.__name__} has no repository function {name!r}")
        handle = self._store._handle

        @functools.wraps(func)
        def bound(*args, **kwargs):
            try:
                result = func(handle(), *args, **kwargs)
            except sqlite3.Error as exc:
                raise translate_error(exc) from None
            if isinstance(result, GeneratorType):
                return _translating(result)
            return result

        self._bound[name] = bound
        return bound


def _translating(gen: Iterator[T]) -> Iterator[T]:
    try:
        yield from gen
    except sqlite3.Error as exc:
        raise translate_error(exc) from None


class _OneConnection:
    """A command's store: one connection, used by one thread at a time."""

    def __init__(self, handle: sqlite_utils.Database):
        self.handle = handle

    def get(self) -> sqlite_utils.Database:
        return self.handle

    def close(self) -> None:
        self.handle.close()


class SqliteStore:
    """obsctl's store over one SQLite file (see the module docstring)."""

    backend = "sqlite"
    # The price table ingest costs events with (services/pricing.pricer_of) and its file.
    pricer = None
    prices_path = None

    def __init__(self, connections, *, path: Path | None = None):
        self._connections = connections
        self.path = path
        self._handle = connections.get
        for name, module in REPOSITORIES.items():
            setattr(self, name, Repository(self, importlib.import_module(f"obsctl.store.sqlite.{module}")))

    # Opening -----------------------------------------------------------------------------

    @classmethod
    def over(cls, handle: sqlite_utils.Database, path: Path | None = None) -> SqliteStore:
        """A store over a connection already open (e.g. the writer thread's)."""
        return cls(_OneConnection(handle), path=path)

    @classmethod
    def open(cls, path: Path, mode: str, *, write_queue: int = 8, write_timeout: float = 10.0) -> SqliteStore:
        if mode == "create":
            return cls.over(sqlite_db.open_db(path), path)
        if mode == "existing":
            return cls.over(sqlite_db.open_db(path, create=False), path)
        if mode == "read":
            return cls.over(sqlite_db.open_db_readonly(path), path)
        if mode == "attach":
            return cls.over(sqlite_db.connect(path), path)
        if mode == "server":
            pool = sqlite_db.ConnectionPool(path, write_queue=write_queue, write_timeout=write_timeout)
            return cls(_PoolConnections(pool), path=path)
        raise ValueError(f"unknown store mode {mode!r}")

    def close(self) -> None:
        """Close every connection (and, in a server, stop the writer after its queued writes)."""
        self._connections.close()

    # Units of work -----------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[SqliteStore]:
        """A unit of work: commits when the block ends, rolls back when it raises.

        Takes the write lock up front (BEGIN IMMEDIATE); in a server it waits for its turn in
        the writer queue. Nested, it is a savepoint: undone alone when its block raises."""
        try:
            with sqlite_db.write_transaction(self._handle()):
                yield self
        except sqlite3.Error as exc:
            raise translate_error(exc) from None

    def run_write(self, work: Callable[[SqliteStore], T]) -> T:
        """`work(store)` in one unit of work; its result once committed. In a server the work
        runs on the writer thread (with its own store), possibly committed together with
        other writes queued at the same time, each in its own savepoint."""
        mine = self._handle()

        def on(handle: sqlite_utils.Database) -> T:
            if handle is mine:
                return work(self)
            # The writer thread's connection: one store for it, kept with the connection.
            store = getattr(handle, _STORE_ATTR, None)
            if store is None:
                store = SqliteStore.over(handle, self.path)
                setattr(handle, _STORE_ATTR, store)
            # The writer's store costs events with this store's price table.
            store.pricer, store.prices_path = self.pricer, self.prices_path
            return work(store)

        try:
            return sqlite_db.run_write(mine, on)
        except sqlite3.Error as exc:
            raise translate_error(exc) from None

    @contextmanager
    def read_snapshot(self) -> Iterator[SqliteStore]:
        """The enclosed reads all see the same data (one read transaction)."""
        try:
            with sqlite_db.read_snapshot(self._handle()):
                yield self
        except sqlite3.Error as exc:
            raise translate_error(exc) from None

    @contextmanager
    def side_reader(self) -> Iterator[SqliteStore | None]:
        """A store for reads on another thread beside this one's: its own read-only connection
        to the same file, opened and closed on that thread. None for a store without a file
        (the caller then reads on its own thread)."""
        if self.path is None:
            yield None
            return
        try:
            handle = sqlite_db.connect_readonly(self.path)
        except sqlite3.Error as exc:
            raise translate_error(exc) from None
        try:
            yield SqliteStore.over(handle, self.path)
        finally:
            handle.close()

    # Facts about the store ---------------------------------------------------------------

    @property
    def readonly(self) -> bool:
        return sqlite_db.is_readonly(self._handle())

    def schema_version(self) -> int:
        try:
            return sqlite_db.schema_version(self._handle())
        except sqlite3.Error as exc:
            raise translate_error(exc) from None

    @property
    def writes_waiting(self) -> int:
        """Writes queued for the server's writer (0 outside a server)."""
        return getattr(self._connections, "writes_waiting", 0)

    @property
    def writer_capacity(self) -> int:
        return getattr(self._connections, "writer_capacity", 0)


class _PoolConnections:
    """A server's store: one connection per thread, writes through the writer queue."""

    def __init__(self, pool: sqlite_db.ConnectionPool):
        self.pool = pool
        self.get = pool.get

    @property
    def writes_waiting(self) -> int:
        return self.pool.writer.pending

    @property
    def writer_capacity(self) -> int:
        return self.pool.writer.capacity

    def close(self) -> None:
        self.pool.close_all()


def store_over(handle: Any) -> SqliteStore:
    """A store over an open sqlite-utils handle (tests and tools that already hold one)."""
    return SqliteStore.over(handle, _path_of_handle(handle))


def _path_of_handle(handle: Any) -> Path | None:
    for _, name, filename in handle.conn.execute("PRAGMA database_list"):
        if name == "main" and filename:
            return Path(filename)
    return None

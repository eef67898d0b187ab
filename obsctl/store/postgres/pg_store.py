"""The PostgreSQL store: obsctl's unit of work over one PostgreSQL database (or one schema
of it, chosen with libpq's `options=-csearch_path=NAME` in the URL).

Connections come from a psycopg_pool pool. A thread inside `transaction()`, `run_write()` or
`read_snapshot()` keeps one connection for the whole block; a repository call outside them
borrows one for the call (or, for a generator, until it is consumed). Repositories are the
area modules of obsctl/store/postgres/<area>.py bound to that connection, as on SQLite; every
database error leaves the store as an obsctl error.

Several servers share one database: PostgreSQL's row locks order concurrent writes, and a
write that loses a deadlock or a race on a new event id is retried whole (`run_write`).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import TypeVar

import psycopg
from psycopg.adapt import Loader
from psycopg_pool import ConnectionPool, PoolTimeout

from obsctl.config import display_url
from obsctl.errors import InvalidInput, NotFound, ObsctlError, ServiceUnavailable, StorageError, StorageFull
from obsctl.store.postgres import partitions, schema

T = TypeVar("T")
log = logging.getLogger("obsctl.store.postgres")

REPOSITORIES = ("alerts", "analytics", "changes", "costs", "dashboard", "events", "ingest", "maintenance", "metrics", "otlp", "scorecards", "search",
                "sessions", "session_aggregates", "sla", "transfer", "triage", "webhooks")
CONNECT_TIMEOUT_S = 10
PING_TIMEOUT_S = 3
# A write that loses a deadlock, a serialization check or a race on a new key is redone whole.
RETRIES = 12
_LOST_TO_ANOTHER_WRITER = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure,
                           psycopg.errors.TransactionRollback)
_RETRYABLE = (*_LOST_TO_ANOTHER_WRITER, psycopg.errors.UniqueViolation)


class _SqliteNumeric(Loader):
    """NUMERIC as SQLite's NUMERIC affinity reads it back: a whole number is an int, anything
    else a float (so durations and their sums answer the same JSON on both backends)."""

    def load(self, data) -> int | float:
        text = bytes(data)
        if b"." not in text and b"e" not in text and b"N" not in text:
            return int(text)
        value = float(text)
        return int(value) if value.is_integer() and abs(value) < 2 ** 53 else value


def translate_error(exc: psycopg.Error, url: str = "") -> ObsctlError:
    """The obsctl error for any PostgreSQL error (marked `database_fault`, as on SQLite)."""
    where = f" at {display_url(url)}" if url else ""
    if isinstance(exc, psycopg.errors.DiskFull):
        error: ObsctlError = StorageFull("the disk holding the PostgreSQL database is full; nothing of "
                                         "this write was stored; free space and retry")
    elif isinstance(exc, _LOST_TO_ANOTHER_WRITER):
        error = ServiceUnavailable("the database was busy with a conflicting write; retry shortly")
    elif isinstance(exc, psycopg.errors.AdminShutdown | psycopg.errors.CannotConnectNow):
        error = ServiceUnavailable(f"PostgreSQL{where} is shutting down or starting; retry shortly")
    elif isinstance(exc, psycopg.OperationalError | PoolTimeout):
        error = ServiceUnavailable(f"cannot reach PostgreSQL{where}: {_first_line(exc)}")
    elif isinstance(exc, psycopg.DataError):
        # A value PostgreSQL cannot hold (a NUL character in text, say) that validation let
        # through: the caller's data, not a server fault.
        error = InvalidInput(f"a value cannot be stored: {_first_line(exc)}")
    elif isinstance(exc, psycopg.errors.LockNotAvailable | psycopg.errors.QueryCanceled):
        error = ServiceUnavailable("the database is busy (a lock or statement timeout); retry shortly")
    else:
        error = StorageError(f"database error: {exc}")
    error.database_fault = True
    return error


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class Repository:
    """An area's SQL functions bound to the calling thread's connection (see the module
    docstring): `store.sessions.get_session(sid)` calls
    `obsctl.store.postgres.sessions.get_session(conn, sid)`."""

    __slots__ = ("_store", "_module", "_bound")

    def __init__(self, store: PgStore, module_name: str):
        self._store = store
        self._module: str | ModuleType = module_name  # imported on first use
        self._bound: dict[str, Callable] = {}

    def __getattr__(self, name: str) -> Callable:
        try:
            return self._bound[name]
        except KeyError:
            pass
        if isinstance(self._module, str):
            self._module = importlib.import_module(self._module)
        func = getattr(self._module, name)
        if name.startswith("_") or not callable(func):
            raise AttributeError(f"{self._module.__name__} has no repository function {name!r}")
        store = self._store
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def bound(*args, **kwargs):
                def streamed():
                    with store._connection() as conn:
                        yield from func(conn, *args, **kwargs)
                return streamed()
        else:
            @functools.wraps(func)
            def bound(*args, **kwargs):
                with store._connection() as conn:
                    return func(conn, *args, **kwargs)
        self._bound[name] = bound
        return bound


class PgStore:
    """obsctl's store over one PostgreSQL database (see the module docstring)."""

    backend = "postgresql"
    # The price table ingest costs events with (services/pricing.pricer_of) and its file.
    pricer = None
    prices_path = None
    readonly = False

    def __init__(self, url: str, pool: ConnectionPool):
        self.url = url
        self.path = None
        self._pool = pool
        self._local = threading.local()
        for name in REPOSITORIES:
            setattr(self, name, Repository(self, f"obsctl.store.postgres.{name}"))

    # Opening -----------------------------------------------------------------------------

    @classmethod
    def open(cls, url: str, mode: str, *, pool_size: int = 4) -> PgStore:
        """Connect, bring the schema up to date (or, for `read`/`existing`, require one), and
        start the pool. `server` mode also creates this week's and next week's partitions."""
        try:
            conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.ProgrammingError as exc:  # a malformed URL
            raise ServiceUnavailable(f"cannot use the database URL {display_url(url)}: {exc}") from None
        except psycopg.Error as exc:
            raise translate_error(exc, url) from None
        try:
            with conn:
                if mode in ("read", "existing") and not schema.applied(conn):
                    raise NotFound(f"no obsctl database at {display_url(url)} (the schema is empty); "
                                   f"run a writing command such as obsctl ingest first")
                if mode != "attach" and schema.pending(conn):
                    schema.migrate(conn)
                if mode in ("server", "create"):
                    partitions.ensure_ahead(conn)
        except psycopg.Error as exc:
            raise translate_error(exc, url) from None
        pool = ConnectionPool(url, min_size=1, max_size=max(2, pool_size), open=False,
                              kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
                              configure=_configure, timeout=CONNECT_TIMEOUT_S, name="obsctl")
        pool.open(wait=False)
        return cls(url, pool)

    def close(self) -> None:
        self._pool.close()

    # Connections ---------------------------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        """The thread's connection inside a unit of work, else one borrowed for the call.
        Inside a unit, errors stay PostgreSQL's until the unit ends, where they are translated
        (and a lost deadlock is retried: run_write)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            yield conn
            return
        try:
            with self._pool.connection() as conn:
                yield conn
        except (psycopg.Error, PoolTimeout) as exc:
            raise translate_error(exc, self.url) from None

    @contextmanager
    def _unit(self, *, snapshot: bool = False) -> Iterator[PgStore]:
        """A transaction on the thread's connection: nested, a savepoint (a snapshot inside a
        unit is the unit); outermost, a connection borrowed for it, errors translated at its end."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            if snapshot:
                yield self
            else:
                with conn.transaction():
                    yield self
            return
        try:
            with self._outermost(snapshot=snapshot):
                yield self
        except (psycopg.Error, PoolTimeout) as exc:
            raise translate_error(exc, self.url) from None

    @contextmanager
    def _outermost(self, *, snapshot: bool = False) -> Iterator[None]:
        """Borrow a connection, make it the thread's, and run one transaction on it; errors
        are left as PostgreSQL's (the caller translates, or retries)."""
        with self._pool.connection() as conn:
            self._local.conn = conn
            try:
                with conn.transaction():
                    if snapshot:
                        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    yield
            finally:
                self._local.conn = None

    # Units of work -------------------------------------------------------------------------

    def transaction(self):
        """A unit of work: commits when the block ends, rolls back when it raises; nested, a
        savepoint undone alone when its block raises."""
        return self._unit()

    def run_write(self, work: Callable[[PgStore], T]) -> T:
        """`work(store)` in one transaction; its result once committed. A transaction that
        loses a deadlock or a race on a new key to another writer is redone whole, so `work`
        must only write through the store."""
        if getattr(self._local, "conn", None) is not None:
            with self.transaction():
                return work(self)
        for attempt in range(RETRIES):
            try:
                with self._outermost():
                    return work(self)
            except _RETRYABLE as exc:
                if attempt == RETRIES - 1:
                    raise translate_error(exc, self.url) from None
                log.debug("write retried after %s", type(exc).__name__)
                time.sleep(random.uniform(0.005, 0.02) * (attempt + 1))  # apart, not in step
            except (psycopg.Error, PoolTimeout) as exc:
                raise translate_error(exc, self.url) from None
        raise AssertionError("unreachable")

    def read_snapshot(self):
        """The enclosed reads all see the same data (one REPEATABLE READ transaction)."""
        return self._unit(snapshot=True)

    @contextmanager
    def side_reader(self) -> Iterator[PgStore]:
        """A store for reads on another thread beside this one's: this one, whose calls on
        another thread borrow their own connection from the pool."""
        yield self

    # Facts about the store -----------------------------------------------------------------

    def schema_version(self) -> int:
        with self._connection() as conn:
            return len(schema.applied(conn))

    @property
    def writes_waiting(self) -> int:
        return 0

    @property
    def writer_capacity(self) -> int:
        return 0

    def ping(self) -> None:
        """Raise ServiceUnavailable when the database cannot answer within a few seconds
        (GET /health, which a load balancer polls)."""
        try:
            with self._pool.connection(timeout=PING_TIMEOUT_S) as conn:
                conn.execute("SELECT 1").fetchone()
        except (psycopg.Error, PoolTimeout) as exc:
            raise translate_error(exc, self.url) from None


def _configure(conn: psycopg.Connection) -> None:
    conn.adapters.register_loader("numeric", _SqliteNumeric)


def connect(url: str) -> psycopg.Connection:
    """One connection configured as the store's are (tools and tests)."""
    conn = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
    _configure(conn)
    return conn

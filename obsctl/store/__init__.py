"""The store seam: every SQL statement of obsctl lives in this package.

`open_store(settings_or_url, mode=...)` is the one way in. The store it returns is a unit of
work: it owns the connections and transactions and exposes one repository per area
(`store.sessions`, `store.ingest`, `store.alerts`, `store.webhooks`, `store.sla`, `store.triage`,
...; their methods are declared in the `repositories` package). Services receive a store and use

    with store.transaction():          # a unit of work: commit, or roll back on error
        store.alerts.insert_rule(...)

    store.run_write(lambda uow: ...)   # a write the server may group with others (ingest)
    with store.read_snapshot(): ...    # reads that must see the same data

and never a connection. Database errors leave the store as obsctl errors (StorageFull,
ServiceUnavailable, StorageDamaged, StorageError). Placeholders, upserts, RETURNING and locking
are the business of the backend: SQLite is the package `obsctl/store/sqlite/` (its store in
`sqlite_store.py`, its SQL in the area modules `obsctl/store/sqlite/<area>.py`); a PostgreSQL
store (`obsctl/store/postgres/`) is a second implementation of the same methods and repository
functions.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from obsctl.store.repositories import (
    AlertsRepository,
    AnalyticsRepository,
    ChangesRepository,
    CostsRepository,
    DashboardRepository,
    EventsRepository,
    IngestRepository,
    MaintenanceRepository,
    MetricsRepository,
    OtlpRepository,
    ScorecardsRepository,
    SearchRepository,
    SessionAggregatesRepository,
    SessionsRepository,
    SlaRepository,
    TransferRepository,
    TriageRepository,
    WebhooksRepository,
)

T = TypeVar("T")
MODES = ("create", "existing", "read", "server", "attach")


class Store(Protocol):
    """What services may use of a store (see the module docstring); each area's repository is
    an attribute named after the area (obsctl/store/repositories/ declares their methods)."""

    backend: str
    readonly: bool
    # The price table that costs ingested events, and its overrides file (services/pricing.py).
    pricer: Any
    prices_path: Path | None

    alerts: AlertsRepository
    analytics: AnalyticsRepository
    changes: ChangesRepository
    costs: CostsRepository
    dashboard: DashboardRepository
    events: EventsRepository
    ingest: IngestRepository
    maintenance: MaintenanceRepository
    metrics: MetricsRepository
    otlp: OtlpRepository
    scorecards: ScorecardsRepository
    search: SearchRepository
    sessions: SessionsRepository
    session_aggregates: SessionAggregatesRepository
    sla: SlaRepository
    transfer: TransferRepository
    triage: TriageRepository
    webhooks: WebhooksRepository

    def transaction(self) -> AbstractContextManager[Store]: ...
    def run_write(self, work: Callable[[Store], T]) -> T: ...
    def read_snapshot(self) -> AbstractContextManager[Store]: ...
    def side_reader(self) -> AbstractContextManager[Store | None]:
        """A store for reads on another thread, beside this thread's (None: read here)."""
    def schema_version(self) -> int: ...
    def close(self) -> None: ...

    @property
    def writes_waiting(self) -> int:
        """Writes queued for a server's writer (0 outside a server): GET /health reports it."""

    @property
    def writer_capacity(self) -> int:
        """Places in a server's writer queue (0 outside a server): serve adds as many threads."""


def open_store(settings_or_url: Any, *, mode: str = "create", write_queue: int | None = None,
               write_timeout: float | None = None):
    """Open obsctl's store from a Settings object, a path, a `sqlite:///PATH` URL or a
    `postgresql://user@host:port/db` URL.

    mode: "create" (read-write, the database and its directory created when missing),
    "existing" (read-write, NotFound when missing), "read" (read-only, nothing created, works on
    read-only storage) or "server" (one connection per thread, every write through one bounded
    writer queue of `write_queue` places and `write_timeout` seconds) or "attach" (one
    connection to a database a server has already opened, for its background threads).
    On PostgreSQL, "server" and "attach" draw connections from a pool and writers queue in
    PostgreSQL's locks rather than in a writer queue.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    target = getattr(settings_or_url, "db_url", None) or getattr(settings_or_url, "db_path", settings_or_url)
    if write_queue is None:
        write_queue = getattr(settings_or_url, "write_queue", None) or 8
    if write_timeout is None:
        write_timeout = getattr(settings_or_url, "write_timeout", None) or 10.0
    location = _location(target)
    if location.get("db_url"):
        from obsctl.store.postgres.pg_store import PgStore

        pool_size = write_queue + 8 if mode == "server" else 4
        return PgStore.open(location["db_url"], mode, pool_size=pool_size)
    from obsctl.store.sqlite.sqlite_store import SqliteStore

    return SqliteStore.open(location["db_path"], mode, write_queue=write_queue,
                            write_timeout=write_timeout)


def _sqlite_path(target: Any) -> Path:
    return _location(target)["db_path"]


def _location(target: Any) -> dict:
    """config.database_location: the one reading of a path or URL (sqlite:///, postgresql://)."""
    from obsctl.config import database_location

    return database_location(target)

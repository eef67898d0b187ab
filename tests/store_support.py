"""A store for tests that also answers as the sqlite-utils handle under it."""

from __future__ import annotations

from obsctl.store.sqlite.db import open_db as _open_db
from obsctl.store.sqlite.sqlite_store import SqliteStore, _OneConnection


class StoreAndHandle(SqliteStore):
    """The store a test hands to services, which also answers as the sqlite-utils handle
    under it (`db.execute`, `db["events"]`), so a test can arrange and inspect rows directly
    on the same connection."""

    def __getattr__(self, name):
        return getattr(self.__dict__["_connections"].handle, name)

    def __getitem__(self, name):
        return self._connections.handle[name]


def store_and_handle(handle) -> StoreAndHandle:
    return StoreAndHandle(_OneConnection(handle), path=None)


def open_db(path, **kwargs) -> StoreAndHandle:
    """obsctl.store.sqlite.db.open_db, as a store a test can also use as the handle."""
    return store_and_handle(_open_db(path, **kwargs))


def open_db_readonly(path) -> StoreAndHandle:
    """obsctl.store.sqlite.db.open_db_readonly, as a store a test can also use as the handle."""
    from obsctl.store.sqlite.db import open_db_readonly as _open_db_readonly

    return store_and_handle(_open_db_readonly(path))


class _QmarkConnection:
    """A PostgreSQL connection that answers a test's `conn.execute(sql, params)` written with
    SQLite's ? placeholders (autocommit; `with conn:` is accepted and does nothing more)."""

    def __init__(self, conn):
        self._conn = conn

    def execute(self, sql: str, params=()):
        return self._conn.execute(sql.replace("?", "%s"), list(params) if params else None)

    def executemany(self, sql: str, rows):
        with self._conn.cursor() as cur:
            cur.executemany(sql.replace("?", "%s"), list(rows))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def close(self):
        self._conn.close()


def open_pg(url):
    """A PostgreSQL store for a test, with `.conn` (and `.execute`) for arranging and
    inspecting rows directly, as the SQLite store's handle offers."""
    from obsctl.store.postgres.pg_store import PgStore, connect

    class PgStoreAndHandle(PgStore):
        def execute(self, sql, params=()):
            return self.conn.execute(sql, params)

        def close(self):
            self.conn.close()
            super().close()

    store = PgStore.open(url, "create")
    store.__class__ = PgStoreAndHandle
    store.conn = _QmarkConnection(connect(url))
    return store


def open_any(where):
    """A test store over a SQLite path or a PostgreSQL URL (the `db_url` fixture's value), with
    `.conn.execute(sql, params)` taking ? placeholders on both."""
    if isinstance(where, str) and where.startswith("postgresql://"):
        return open_pg(where)
    return open_db(where)


def sqlite_writer_free(path) -> bool:
    """Whether another connection could start writing the SQLite file now (nobody holds its
    write lock)."""
    import sqlite3

    probe = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        probe.close()


def rollup_rows(conn) -> list[tuple]:
    """The event_stats rollup's rows in key order, with the cost to 12 decimals: it is a sum of
    floats kept by adding batches and taking pruned events away, so it may differ from a rebuild's
    sum in its last bits (the reports show 8 decimals)."""
    cursor = conn.execute("SELECT * FROM event_stats ORDER BY event_type, hour, model")
    cost = [d[0] for d in cursor.description].index("cost_usd")
    return [tuple(round(float(v), 12) if i == cost else v for i, v in enumerate(row)) for row in cursor.fetchall()]

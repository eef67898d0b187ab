"""Reading and writing whole tables for `obsctl db copy` (obsctl/store/tables.py names them)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import sqlite_utils

from obsctl.store.sqlite import bulk, event_stats, search
from obsctl.store.tables import SESSION_TOTAL_NAMES, SESSION_TOTALS, TABLE_COLUMNS


def tables(db: sqlite_utils.Database) -> list[str]:
    """The tables a copy moves, in the order they are copied (tables.py)."""
    return list(TABLE_COLUMNS)


def _columns(table: str) -> tuple[str, ...]:
    return TABLE_COLUMNS[table]  # a KeyError for any name not in the fixed list


def table_rows(db: sqlite_utils.Database, table: str, batch_size: int) -> Iterator[list[tuple]]:
    """The rows of `table` in the order they were written, `batch_size` at a time."""
    columns = _columns(table)
    cursor = db.conn.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid")
    while True:
        rows = cursor.fetchmany(batch_size)
        if not rows:
            return
        yield rows


def row_count(db: sqlite_utils.Database, table: str) -> int:
    _columns(table)
    return db.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def is_empty(db: sqlite_utils.Database) -> bool:
    """No row in any copied table."""
    return all(db.conn.execute(f"SELECT NOT EXISTS (SELECT 1 FROM {t})").fetchone()[0] for t in TABLE_COLUMNS)


def insert_rows(db: sqlite_utils.Database, table: str, rows: Sequence[tuple]) -> None:
    """Append rows read by `table_rows` (inside the copy's transaction)."""
    columns = _columns(table)
    bulk.execute_rows(db.conn, f"INSERT INTO {table} ({', '.join(columns)})",
                      bulk.placeholders(len(columns)), list(rows))


def finish_copy(db: sqlite_utils.Database) -> None:
    """Recompute the rollups from the copied rows (session_stats followed by trigger), and
    index the copied events for search in one pass (the target was empty: nothing was)."""
    event_stats.rebuild(db.conn)
    event_stats.recount(db.conn)
    search.index_existing(db.conn)
    db.conn.execute("UPDATE search_progress SET indexed_through = (SELECT COALESCE(MAX(id), 0) FROM events)")


def session_totals(db: sqlite_utils.Database) -> dict:
    """Sums over all sessions that a faithful copy keeps (the copy's verification)."""
    return dict(zip(SESSION_TOTAL_NAMES, db.conn.execute(SESSION_TOTALS).fetchone()))

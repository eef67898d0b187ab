"""Reading and writing whole tables for `obsctl db copy` on PostgreSQL (the same functions as
obsctl/store/sqlite/transfer.py)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import psycopg
from psycopg import sql

from obsctl.store.postgres import event_stats, ingest
from obsctl.store.sql import one
from obsctl.store.tables import SESSION_TOTAL_NAMES, SESSION_TOTALS, TABLE_COLUMNS

# The column that orders a table's rows as they were written.
_ARRIVAL = {"events": "id", "sla_snapshots": "id", "alert_rules": "seq", "alert_events": "seq",
            "webhooks": "seq", "webhook_deliveries": "seq"}
# Serial columns copied with their values: their sequences are moved past them at the end.
_SERIALS = (("events", "id"), ("sla_snapshots", "id"))


def tables(conn: psycopg.Connection) -> list[str]:
    """The tables a copy moves, in the order they are copied (tables.py)."""
    return list(TABLE_COLUMNS)


def _columns(table: str) -> tuple[str, ...]:
    return TABLE_COLUMNS[table]  # a KeyError for any name not in the fixed list


def _identifiers(names) -> sql.Composable:
    return sql.SQL(", ").join(sql.Identifier(n) for n in names)


def table_rows(conn: psycopg.Connection, table: str, batch_size: int) -> Iterator[list[tuple]]:
    """The rows of `table` in the order they were written, `batch_size` at a time (a
    server-side cursor: memory stays bounded at any size)."""
    columns = _columns(table)
    order = _ARRIVAL.get(table) or columns[0]
    query = sql.SQL("SELECT {} FROM {} ORDER BY {}").format(
        _identifiers(columns), sql.Identifier(table), sql.Identifier(order))
    with conn.transaction(), conn.cursor(name=f"copy_{table}") as cursor:
        cursor.itersize = batch_size
        cursor.execute(query)
        while True:
            rows = cursor.fetchmany(batch_size)
            if not rows:
                return
            yield rows


def row_count(conn: psycopg.Connection, table: str) -> int:
    _columns(table)
    return one(conn.execute(sql.SQL("SELECT COUNT(*) FROM {}").format(sql.Identifier(table))))[0]


def is_empty(conn: psycopg.Connection) -> bool:
    """No row in any copied table."""
    return all(one(conn.execute(sql.SQL("SELECT NOT EXISTS (SELECT 1 FROM {})").format(sql.Identifier(t))
                            ))[0] for t in TABLE_COLUMNS)


def insert_rows(conn: psycopg.Connection, table: str, rows: Sequence[tuple]) -> None:
    """Append rows read by `table_rows` (inside the copy's transaction), with COPY."""
    columns = _columns(table)
    if table == "events":
        ingest.partitions_of(conn).ensure(conn, {row[4] for row in rows})
        conn.execute("INSERT INTO event_keys (event_id) SELECT unnest(%s::text[])", [[row[1] for row in rows]])
    copy = sql.SQL("COPY {} ({}) FROM STDIN").format(sql.Identifier(table), _identifiers(columns))
    with conn.cursor().copy(copy) as writer:
        for row in rows:
            writer.write_row(row)


def finish_copy(conn: psycopg.Connection) -> None:
    """Recompute the rollups from the copied rows and move the serial sequences past the
    copied ids (session_stats followed by trigger)."""
    event_stats.rebuild(conn)
    event_stats.recount(conn)
    for table, column in _SERIALS:
        conn.execute(sql.SQL("SELECT setval(pg_get_serial_sequence(%s, %s), "
                             "GREATEST((SELECT MAX({}) FROM {}), 1))").format(
            sql.Identifier(column), sql.Identifier(table)), [table, column])


def session_totals(conn: psycopg.Connection) -> dict:
    """Sums over all sessions that a faithful copy keeps (the copy's verification)."""
    return dict(zip(SESSION_TOTAL_NAMES, one(conn.execute(SESSION_TOTALS))))

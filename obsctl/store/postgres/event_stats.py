"""The `event_stats` rollup on PostgreSQL: the same rules as obsctl/store/sqlite/event_stats.py
(kept by the ingest transaction; `rebuild` and `recount` when repairing)."""

from __future__ import annotations

import psycopg

import obsctl.store.event_stats_sql as event_stats_sql
from obsctl.store.sql import one

# Typed arrays, one per column of event_stats_sql.COLUMNS.
_ADD = (f"{event_stats_sql.INSERT} SELECT * FROM unnest(%s::text[], %s::int[], %s::text[], %s::bigint[], "
        f"%s::bigint[], %s::bigint[], %s::numeric[], %s::bigint[], %s::float8[], %s::bigint[], %s::bigint[], "
        f"%s::bigint[], %s::bigint[], %s::bigint[]) "
        f"{event_stats_sql.ADD}")
_REBUILD = event_stats_sql.of_events()


def add_totals(conn: psycopg.Connection, totals: dict[tuple, list]) -> None:
    """Add a batch's totals to the rollup (inside the ingest transaction): (event_type, hour,
    model or '') -> the MEASURES of store/event_stats_sql.py. The keys
    are written in order, so concurrent batches lock the rollup's rows in the same order."""
    if not totals:
        return
    keys = sorted(totals)
    columns = list(zip(*((*key, *totals[key]) for key in keys)))
    conn.execute(_ADD, [list(c) for c in columns])


def count_inserted(conn: psycopg.Connection, inserted: int) -> None:
    """Add `inserted` new events to event_totals (inside the ingest transaction, after the
    events were written). The highest id only grows; this batch's highest is the last value
    its connection drew from the ids' sequence, so nothing reads `events` here (a scan would
    wait for a partition another batch is attaching, which may wait for this batch)."""
    conn.execute("UPDATE event_totals SET events = events + %s, "
                 "max_id = GREATEST(max_id, currval(pg_get_serial_sequence('events', 'id'))) WHERE id = 1",
                 [inserted])


def is_current(conn: psycopg.Connection) -> bool:
    """Whether the rollup counts exactly the stored events (see the SQLite module)."""
    counted = one(conn.execute("SELECT COALESCE(SUM(event_count), 0) FROM event_stats"))[0]
    events, max_id = one(conn.execute("SELECT events, max_id FROM event_totals"))
    stored_max = one(conn.execute("SELECT COALESCE(MAX(id), 0) FROM events"))[0]
    return counted == events and max_id == stored_max


def rebuild(conn: psycopg.Connection) -> None:
    """Recompute the rollup from the events table (inside a write transaction)."""
    conn.execute("DELETE FROM event_stats")
    conn.execute(_REBUILD)


def recount(conn: psycopg.Connection) -> None:
    """Recompute event_totals from the events table (with `rebuild`, when repairing)."""
    conn.execute("UPDATE event_totals SET (events, max_id) = "
                 "(SELECT COUNT(*), COALESCE(MAX(id), 0) FROM events) WHERE id = 1")

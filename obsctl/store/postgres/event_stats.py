"""The `event_stats` rollup on PostgreSQL: the same rules as obsctl/store/sqlite/event_stats.py
(kept by the ingest transaction; `rebuild` and `recount` when repairing)."""

from __future__ import annotations

import psycopg

import obsctl.store.event_stats_sql as event_stats_sql

# Typed arrays, one per column of event_stats_sql.COLUMNS.
_ADD = (f"{event_stats_sql.INSERT} SELECT * FROM unnest(%s::text[], %s::int[], %s::text[], %s::bigint[], "
        f"%s::bigint[], %s::bigint[], %s::numeric[], %s::bigint[], %s::float8[], %s::bigint[], %s::bigint[], "
        f"%s::bigint[], %s::bigint[], %s::bigint[]) "
        f"{event_stats_sql.ADD}")


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


# The checks and repairs are one text for both stores.
is_current = event_stats_sql.is_current
rebuild = event_stats_sql.rebuild
recount = event_stats_sql.recount

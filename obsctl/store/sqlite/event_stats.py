"""The `event_stats` rollup: event counts, tokens, durations and costs per (event_type, hour,
model) (store/event_stats_sql.py).

Analytics' event-level sections (model usage, event types, hourly activity) would otherwise
scan every event on each request (about 0.5 s at 1M events). The ingest transaction adds
each batch's totals here (`add_totals`, called from store/sqlite/ingest.write_batch), so the rollup
commits or rolls back with the events and is never stale. A missing model is stored as ''.
`rebuild` recomputes it from the events (migration backfill, and repair when the counts
ever disagree).
"""

from __future__ import annotations

import sqlite3

import obsctl.store.event_stats_sql as event_stats_sql
from obsctl.store.sqlite import bulk

CREATE_TABLE = """
CREATE TABLE event_stats (
    event_type TEXT NOT NULL,
    hour INTEGER NOT NULL,
    model TEXT NOT NULL,
    event_count INTEGER NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    duration_sum REAL NOT NULL,
    duration_count INTEGER NOT NULL,
    PRIMARY KEY (event_type, hour, model)
) WITHOUT ROWID
"""



def add_totals(conn: sqlite3.Connection, totals: dict[tuple, list]) -> None:
    """Add a batch's totals to the rollup (inside the ingest transaction): (event_type, hour,
    model or '') -> the MEASURES of store/event_stats_sql.py (events, tokens in, tokens out,
    duration sum, durations counted, cost, priced calls, unpriced calls, cache read, cache write
    and reasoning tokens)."""
    bulk.execute_rows(conn, event_stats_sql.INSERT, bulk.placeholders(len(event_stats_sql.COLUMNS)),
                      [(*key, *acc) for key, acc in totals.items()], event_stats_sql.ADD)


def count_inserted(conn: sqlite3.Connection, inserted: int) -> None:
    """Add `inserted` new events to event_totals (inside the ingest transaction); a trigger
    takes each deleted event away."""
    conn.execute("UPDATE event_totals SET events = events + ?, max_id = (SELECT MAX(id) FROM events) "
                 "WHERE id = 1", [inserted])


# The checks and repairs are one text for both stores.
is_current = event_stats_sql.is_current
rebuild = event_stats_sql.rebuild
recount = event_stats_sql.recount

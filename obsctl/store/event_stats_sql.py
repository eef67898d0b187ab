"""The SQL of the `event_stats` rollup, one text for both stores (each store's event_stats.py
says how it is kept), and its checks and repairs: per (event_type, hour, model), the events, tokens (cache and reasoning parts included), durations
and costs.

`cost_usd` adds up the stored costs of the events, `priced_calls` counts the events that have
one, and `unpriced_calls` the events that used tokens without one (a model with no known
price), so the analytics cost per model reads this table instead of every event.
"""

from __future__ import annotations

from typing import Any

from obsctl.store.sql import one

MEASURES = ("event_count", "tokens_in", "tokens_out", "duration_sum", "duration_count", "cost_usd",
            "priced_calls", "unpriced_calls", "tokens_cache_read", "tokens_cache_write", "tokens_reasoning")
COLUMNS = ("event_type", "hour", "model", *MEASURES)

# Each measure over a group of events, in MEASURES order.
_OF_EVENTS = ("COUNT(*)", "COALESCE(SUM(tokens_in), 0)", "COALESCE(SUM(tokens_out), 0)",
              "COALESCE(SUM(duration_ms), 0)", "COUNT(duration_ms)", "COALESCE(SUM(cost_usd), 0)",
              "COUNT(cost_usd)",
              "SUM(CASE WHEN cost_usd IS NULL AND COALESCE(tokens_in, 0) + COALESCE(tokens_out, 0) > 0 "
              "THEN 1 ELSE 0 END)", "COALESCE(SUM(tokens_cache_read), 0)", "COALESCE(SUM(tokens_cache_write), 0)",
              "COALESCE(SUM(tokens_reasoning), 0)")

INSERT = f"INSERT INTO event_stats ({', '.join(COLUMNS)})"
ADD = ("ON CONFLICT (event_type, hour, model) DO UPDATE SET "
       + ", ".join(f"{m} = event_stats.{m} + excluded.{m}" for m in MEASURES))


def of_events(where: str = "", *, add: bool = False, subtract: bool = False, ordered: bool = False) -> str:
    """An INSERT of the rollup rows of the events `where` selects (a WHERE clause, or all of
    them: the rebuild of an emptied table). `add` adds them to the stored rows, `subtract`
    takes them away (prune, delete); `ordered` writes the keys in order (PostgreSQL:
    concurrent writers then lock the rollup's rows in the same order)."""
    sign = "-" if subtract else ""
    measures = ", ".join(f"{sign}{m}" for m in _OF_EVENTS)
    sql = (f"{INSERT} SELECT event_type, CAST(substr(timestamp, 12, 2) AS INTEGER), COALESCE(model, ''), "
           f"{measures} FROM events {where} GROUP BY 1, 2, 3")
    if ordered:
        sql += " ORDER BY 1, 2, 3"
    return sql + (f" {ADD}" if add or subtract else "")



def is_current(conn: Any) -> bool:
    """Whether the rollup counts exactly the stored events: its total equals event_totals',
    and no event was added behind the ingest path (the highest id is the one it recorded).
    Reads two small tables and the last entry of the events' primary key, at any size."""
    counted = one(conn.execute("SELECT COALESCE(SUM(event_count), 0) FROM event_stats"))[0]
    events, max_id = one(conn.execute("SELECT events, max_id FROM event_totals"))
    stored_max = one(conn.execute("SELECT COALESCE(MAX(id), 0) FROM events"))[0]
    return counted == events and max_id == stored_max


def rebuild(conn: Any) -> None:
    """Recompute the rollup from the events table (call inside a write transaction)."""
    conn.execute("DELETE FROM event_stats")
    conn.execute(of_events())


def recount(conn: Any) -> None:
    """Recompute event_totals from the events table (with `rebuild`, when repairing)."""
    conn.execute("UPDATE event_totals SET (events, max_id) = "
                 "(SELECT COUNT(*), COALESCE(MAX(id), 0) FROM events) WHERE id = 1")

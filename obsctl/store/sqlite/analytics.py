"""SQL aggregates behind `GET /analytics`, none of which reads every session or event.

Session-level sections read the `session_stats` rollup (sessions, events and tokens per start
day, agent and status, kept by triggers on `sessions`; schema.py m009) and two index lookups
(the earliest and latest start, the shortest and longest ended session); event-level sections
read the `event_stats` rollup (see store/sqlite/event_stats.py). Everything is read in one snapshot
so the sections agree.
"""

from __future__ import annotations

import sqlite_utils

import obsctl.store.analytics_sql as analytics_sql
from obsctl.store.analytics_sql import COST_BY_AGENT_DAY as _COST_BY_AGENT_DAY
from obsctl.store.analytics_sql import COST_BY_MODEL as _COST_BY_MODEL
from obsctl.store.analytics_sql import EVENT_TYPES as _EVENT_TYPES
from obsctl.store.analytics_sql import HOURLY as _HOURLY
from obsctl.store.analytics_sql import OVERVIEW as _OVERVIEW
from obsctl.store.analytics_sql import OVERVIEW_COLUMNS
from obsctl.store.analytics_sql import STARTS as _STARTS
from obsctl.store.sql.sessions import SESSION_DURATION_MS
from obsctl.store.sqlite import event_stats
from obsctl.store.sqlite.db import (
    is_readonly,
    read_snapshot,  # noqa: F401 (re-exported for the services)
    write_transaction,
)

# Wall-clock duration of an ended session in whole milliseconds (timestamps carry ms). The
# text must equal the expression of idx_sessions_duration (schema.py m009) for SQLite to use it.
_SESSION_DURATION_MS = SESSION_DURATION_MS["sqlite"]
_DURATIONS = analytics_sql.durations(_SESSION_DURATION_MS)
_TOP_AGENTS = analytics_sql.TOP_AGENTS.format(m="?")
_SESSIONS_BY_DAY = analytics_sql.SESSIONS_BY_DAY.format(m="?")

_MODEL_USAGE = """
SELECT model, SUM(event_count) AS calls, SUM(tokens_in), SUM(tokens_out),
       SUM(duration_sum), SUM(duration_count), SUM(tokens_cache_read), SUM(tokens_cache_write),
       SUM(tokens_reasoning)
FROM event_stats
WHERE model <> ''
GROUP BY model
ORDER BY calls DESC, model
"""


def rollup_is_current(db: sqlite_utils.Database) -> bool:
    """True when the rollup counts exactly the stored events (call inside a snapshot)."""
    return event_stats.is_current(db.conn)


def repair_rollup(db: sqlite_utils.Database) -> None:
    """Rebuild the rollup when events were written or deleted behind the ingest path.

    On a read-only connection the stored rollup cannot be fixed: a temporary one is built
    instead, which hides it for this connection only.
    """
    if is_readonly(db):
        for table in ("event_stats", "event_totals"):
            db.conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {table} AS SELECT * FROM main.{table}")
        event_stats.rebuild(db.conn)
        event_stats.recount(db.conn)
        return
    with write_transaction(db):
        if not rollup_is_current(db):
            event_stats.rebuild(db.conn)
            event_stats.recount(db.conn)


def overview(db: sqlite_utils.Database) -> dict:
    conn = db.conn
    *totals, duration_sum, ended = conn.execute(_OVERVIEW).fetchone()
    earliest, latest = conn.execute(_STARTS).fetchone()
    shortest, longest = conn.execute(_DURATIONS).fetchone()
    average = duration_sum / ended if ended else None
    return dict(zip(OVERVIEW_COLUMNS, (*totals, earliest, latest, average, shortest, longest)))


def top_agents(db: sqlite_utils.Database, limit: int) -> list[tuple]:
    """(agent_name, session_count, total_tokens), most tokens first."""
    return db.conn.execute(_TOP_AGENTS, [limit]).fetchall()


def sessions_by_day(db: sqlite_utils.Database, since: str) -> list[tuple]:
    """(day, session_count, total_tokens) for sessions started at or after `since`."""
    return db.conn.execute(_SESSIONS_BY_DAY, [since]).fetchall()


def model_usage(db: sqlite_utils.Database) -> list[tuple]:
    """(model, calls, tokens_in, tokens_out, duration_sum, duration_count, cache read, cache
    write, reasoning tokens), most calls first."""
    return db.conn.execute(_MODEL_USAGE).fetchall()


def event_type_counts(db: sqlite_utils.Database) -> list[tuple]:
    """(event_type, count) without lifecycle events, most frequent first."""
    return db.conn.execute(_EVENT_TYPES).fetchall()


def hourly_counts(db: sqlite_utils.Database) -> list[tuple]:
    """(hour 0-23 UTC, event count) for the hours that have events."""
    return db.conn.execute(_HOURLY).fetchall()


def cost_by_agent_day(db: sqlite_utils.Database) -> list[tuple]:
    """(agent_name, start day, cost_usd or None, unpriced calls, sessions) of every group."""
    return db.conn.execute(_COST_BY_AGENT_DAY).fetchall()


def cost_by_model(db: sqlite_utils.Database) -> list[tuple]:
    """(model or None, cost_usd or None, unpriced calls, calls) over the calls that used tokens,
    most cost first, unpriced models last."""
    return db.conn.execute(_COST_BY_MODEL).fetchall()

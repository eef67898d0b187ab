"""SQL aggregates behind `GET /analytics`.

Session-level sections aggregate the sessions table (which carries each session's totals);
event-level sections aggregate the small `event_stats` rollup (see store/event_stats.py)
instead of scanning every event. Everything is read in one snapshot so the sections agree.
"""

from __future__ import annotations

import sqlite_utils

from obsctl.store import event_stats
from obsctl.store.db import (
    is_readonly,
    read_snapshot,  # noqa: F401 (re-exported for the services)
    write_transaction,
)

# Wall-clock duration of an ended session in whole milliseconds (timestamps carry ms).
_SESSION_DURATION_MS = (
    "MAX(0, CAST(ROUND((julianday(ended_at) - julianday(started_at)) * 86400000.0) AS INTEGER))"
)

_OVERVIEW = f"""
SELECT COUNT(*),
       COALESCE(SUM(status = 'active'), 0),
       COALESCE(SUM(status = 'completed'), 0),
       COALESCE(SUM(status = 'error'), 0),
       COALESCE(SUM(event_count), 0),
       COALESCE(SUM(total_tokens_in), 0),
       COALESCE(SUM(total_tokens_out), 0),
       MIN(started_at), MAX(started_at),
       AVG(duration_ms), MIN(duration_ms), MAX(duration_ms)
FROM (SELECT status, event_count, total_tokens_in, total_tokens_out, started_at,
             CASE WHEN ended_at IS NOT NULL THEN {_SESSION_DURATION_MS} END AS duration_ms
      FROM sessions)
"""
OVERVIEW_COLUMNS = ("total_sessions", "active_sessions", "completed_sessions", "error_sessions",
                    "total_events", "total_tokens_in", "total_tokens_out", "earliest_session",
                    "latest_session", "duration_avg", "duration_min", "duration_max")

_TOP_AGENTS = """
SELECT agent_name, COUNT(*), SUM(total_tokens_in + total_tokens_out) AS tokens
FROM sessions NOT INDEXED
GROUP BY agent_name
ORDER BY tokens DESC, agent_name
LIMIT ?
"""

_SESSIONS_BY_DAY = """
SELECT substr(started_at, 1, 10) AS day, COUNT(*), SUM(total_tokens_in + total_tokens_out)
FROM sessions
WHERE started_at >= ?
GROUP BY day
ORDER BY day
"""

_MODEL_USAGE = """
SELECT model, SUM(event_count) AS calls, SUM(tokens_in), SUM(tokens_out),
       SUM(duration_sum), SUM(duration_count)
FROM event_stats
WHERE model <> ''
GROUP BY model
ORDER BY calls DESC, model
"""

_EVENT_TYPES = """
SELECT event_type, SUM(event_count) AS n
FROM event_stats
WHERE event_type NOT IN ('session_start', 'session_end')
GROUP BY event_type
ORDER BY n DESC, event_type
"""

_HOURLY = "SELECT hour, SUM(event_count) FROM event_stats GROUP BY hour ORDER BY hour"


def rollup_is_current(db: sqlite_utils.Database) -> bool:
    """True when the rollup counts exactly the stored events (call inside a snapshot)."""
    conn = db.conn
    counted = conn.execute("SELECT COALESCE(SUM(event_count), 0) FROM event_stats").fetchone()[0]
    return counted == conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]


def repair_rollup(db: sqlite_utils.Database) -> None:
    """Rebuild the rollup when events were written or deleted behind the ingest path.

    On a read-only connection the stored rollup cannot be fixed: a temporary one is built
    instead, which hides it for this connection only.
    """
    if is_readonly(db):
        db.conn.execute("CREATE TEMP TABLE IF NOT EXISTS event_stats AS "
                        "SELECT * FROM main.event_stats WHERE 0")
        event_stats.rebuild(db.conn)
        return
    with write_transaction(db):
        if not rollup_is_current(db):
            event_stats.rebuild(db.conn)


def overview(db: sqlite_utils.Database) -> dict:
    row = db.conn.execute(_OVERVIEW).fetchone()
    return dict(zip(OVERVIEW_COLUMNS, row))


def top_agents(db: sqlite_utils.Database, limit: int) -> list[tuple]:
    """(agent_name, session_count, total_tokens), most tokens first."""
    return db.conn.execute(_TOP_AGENTS, [limit]).fetchall()


def sessions_by_day(db: sqlite_utils.Database, since: str) -> list[tuple]:
    """(day, session_count, total_tokens) for sessions started at or after `since`."""
    return db.conn.execute(_SESSIONS_BY_DAY, [since]).fetchall()


def model_usage(db: sqlite_utils.Database) -> list[tuple]:
    """(model, calls, tokens_in, tokens_out, duration_sum, duration_count), most calls first."""
    return db.conn.execute(_MODEL_USAGE).fetchall()


def event_type_counts(db: sqlite_utils.Database) -> list[tuple]:
    """(event_type, count) without lifecycle events, most frequent first."""
    return db.conn.execute(_EVENT_TYPES).fetchall()


def hourly_counts(db: sqlite_utils.Database) -> list[tuple]:
    """(hour 0-23 UTC, event count) for the hours that have events."""
    return db.conn.execute(_HOURLY).fetchall()

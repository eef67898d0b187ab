"""Reading sessions and their events."""

from __future__ import annotations

from collections.abc import Iterator

import sqlite_utils

from obsctl.store.tables import EVENT_READ_COLUMNS, SESSION_COLUMNS

_SESSION_SELECT = f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions"
_EVENT_SELECT = f"SELECT {', '.join(EVENT_READ_COLUMNS)} FROM events"


def _rows(cursor, columns) -> list[dict]:
    return [dict(zip(columns, row)) for row in cursor]


def list_sessions(
    db: sqlite_utils.Database, *, status: str | None, limit: int, offset: int
) -> tuple[list[dict], int]:
    """Sessions newest first, with the total count for the same filter (from the session_stats
    rollup, whatever the number of sessions)."""
    where, params = ("WHERE status = ?", [status]) if status else ("", [])
    conn = db.conn
    total = conn.execute(f"SELECT COALESCE(SUM(sessions), 0) FROM session_stats {where}", params).fetchone()[0]
    # The page is found on the index alone (idx_sessions_started or idx_sessions_status_started,
    # in this order), so an offset skips index entries, not session rows.
    cursor = conn.execute(
        f"{_SESSION_SELECT} WHERE rowid IN (SELECT rowid FROM sessions {where} "
        f"ORDER BY started_at DESC, session_id LIMIT ? OFFSET ?) ORDER BY started_at DESC, session_id",
        [*params, limit, offset],
    )
    return _rows(cursor, SESSION_COLUMNS), total


def get_session(db: sqlite_utils.Database, session_id: str) -> dict | None:
    row = db.conn.execute(f"{_SESSION_SELECT} WHERE session_id = ?", [session_id]).fetchone()
    return dict(zip(SESSION_COLUMNS, row)) if row else None


def agent_names(db: sqlite_utils.Database, prefix: str, limit: int) -> list[str]:
    """The agent names starting with `prefix`, in order, read from the session_stats rollup
    (one row per day, agent and status: small whatever the number of sessions)."""
    cursor = db.conn.execute(
        "SELECT agent_name FROM session_stats WHERE substr(agent_name, 1, ?) = ? "
        "GROUP BY agent_name HAVING SUM(sessions) > 0 ORDER BY agent_name LIMIT ?",
        [len(prefix), prefix, limit])
    return [row[0] for row in cursor]


def session_ids(db: sqlite_utils.Database, prefix: str, limit: int) -> list[str]:
    """The session ids starting with `prefix`, in order: a range of the primary key."""
    cursor = db.conn.execute(
        "SELECT session_id FROM sessions WHERE session_id >= ? AND session_id < ? "
        "ORDER BY session_id LIMIT ?", [prefix, prefix + "\U0010ffff", limit])
    return [row[0] for row in cursor]


# What the explain timeline shows of each event, in this order.
TIMELINE_COLUMNS = (
    "timestamp", "event_type", "model", "tokens_in", "tokens_out", "duration_ms", "input_data",
    "output_data", "tool_call", "decision_trace", "is_error",
)
_TIMELINE_SELECT = f"SELECT {', '.join(TIMELINE_COLUMNS)} FROM events WHERE session_id = ? ORDER BY timestamp, id"


def session_timeline_rows(db: sqlite_utils.Database, session_id: str) -> list[tuple]:
    """A session's events in the order of iter_session_events, as TIMELINE_COLUMNS tuples
    (no per-row dict: explain reads every event of the session)."""
    return db.conn.execute(_TIMELINE_SELECT, [session_id]).fetchall()


def iter_session_events(db: sqlite_utils.Database, session_id: str) -> Iterator[dict]:
    """A session's events in time order (ties in arrival order), streamed from the cursor."""
    cursor = db.conn.execute(
        f"{_EVENT_SELECT} WHERE session_id = ? ORDER BY timestamp, id", [session_id]
    )
    for row in cursor:
        yield dict(zip(EVENT_READ_COLUMNS, row))

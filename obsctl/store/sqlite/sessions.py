"""Reading sessions and their events on SQLite: what the engines do differently (a session's
events streamed, its call tree's JSON, its delete, the idle sweep's reads); the rest is
written once for both stores in obsctl/store/sql/sessions.py (re-exported here for the
store's repository)."""

from __future__ import annotations

from collections.abc import Iterator

import sqlite_utils

from obsctl.store.sql.sessions import *  # noqa: F403 (the store's repository binds these)
from obsctl.store.sqlite.maintenance import SUBTRACT_STATS
from obsctl.store.tables import EVENT_READ_COLUMNS

_EVENT_SELECT = f"SELECT {', '.join(EVENT_READ_COLUMNS)} FROM events"
_TREE_SELECT = ("SELECT event_id, parent_id, timestamp, event_type, model, tool_call, duration_ms, is_error, "
                "json_extract(metadata, '$.span_name'), output_data LIKE '%\"child_error\":%' "
                "FROM events WHERE session_id = ? ORDER BY timestamp, id")


def session_tree_rows(db: sqlite_utils.Database, session_id: str) -> list[tuple]:
    """(event_id, parent_id, timestamp, event_type, model, tool_call, duration_ms, is_error,
    span_name, failed because of a child) of a session's events, in the order of
    iter_session_events (the explain call tree)."""
    return db.conn.execute(_TREE_SELECT, [session_id]).fetchall()


def iter_session_events(db: sqlite_utils.Database, session_id: str) -> Iterator[dict]:
    """A session's events in time order (ties in arrival order), streamed from the cursor."""
    cursor = db.conn.execute(
        f"{_EVENT_SELECT} WHERE session_id = ? ORDER BY timestamp, id", [session_id]
    )
    for row in cursor:
        yield dict(zip(EVENT_READ_COLUMNS, row))


# ---- housekeeping ----

def delete_session(db: sqlite_utils.Database, session_id: str) -> int | None:
    """Delete a session, its events, tags, scores and trace links (inside a write transaction);
    the number of events deleted, or None when there is no such session."""
    conn = db.conn
    if conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", [session_id]).fetchone() is None:
        return None
    # Its events leave the event_stats rollup as prune's do, so the rollup counts what a store
    # that never had them would; session_stats and event_totals follow by their triggers.
    conn.execute(SUBTRACT_STATS.format(sessions="?"), [session_id])
    conn.execute("DELETE FROM event_stats WHERE event_count <= 0")
    events = conn.execute("DELETE FROM events WHERE session_id = ?", [session_id]).rowcount
    conn.execute("DELETE FROM otlp_trace_sessions WHERE session_id = ?", [session_id])
    # Tags and scores go with the row (ON DELETE CASCADE).
    conn.execute("DELETE FROM sessions WHERE session_id = ?", [session_id])
    return events


# --- The idle sweep (services/sessions/lifecycle.py) ---------------------------------------------

def idle_candidates(db: sqlite_utils.Database, cutoff: str, after: tuple[str, str] | None,
                    limit: int) -> list[tuple]:
    """(session_id, last_event_at) of active sessions whose last event is before `cutoff` and
    that received none since (last_seen_at), in (last_event_at, session_id) order after the
    key `after`: idx_sessions_active_last_event
    holds only the active sessions (named: without statistics SQLite would take
    idx_sessions_status_started and sort every active session)."""
    low, sid = after or ("", "")
    return db.conn.execute(
        "SELECT session_id, last_event_at FROM sessions INDEXED BY idx_sessions_active_last_event "
        "WHERE status = 'active' AND last_event_at < ? "
        "AND (last_event_at > ? OR (last_event_at = ? AND session_id > ?)) "
        "AND COALESCE(last_seen_at, '') < ? "
        "ORDER BY last_event_at, session_id LIMIT ?", [cutoff, low, low, sid, cutoff, limit]).fetchall()


def latest_roots(db: sqlite_utils.Database, session_ids: list[str]) -> dict[str, tuple]:
    """The latest root event (no parent; not a session_end) of each session that has one:
    session_id -> (timestamp, duration_ms, failed), read backwards on idx_events_session_ts;
    failed: an error, or a span that failed because of its child (output_data.child_error)."""
    conn = db.conn
    found = {}
    for session_id in session_ids:
        row = conn.execute(
            "SELECT timestamp, duration_ms, is_error = 1 OR output_data LIKE '%\"child_error\":%' "
            "FROM events WHERE session_id = ? AND parent_id IS NULL "
            "AND event_type <> 'session_end' ORDER BY timestamp DESC, id DESC LIMIT 1", [session_id]).fetchone()
        if row:
            found[session_id] = tuple(row)
    return found

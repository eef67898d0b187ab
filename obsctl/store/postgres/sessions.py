"""Reading sessions and their events on PostgreSQL (the same answers as on SQLite): what the
engines do differently (a session's events streamed, its call tree's JSON, its delete, the
idle sweep's reads); the rest is written once for both stores in obsctl/store/sql/sessions.py
(re-exported here for the store's repository)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import psycopg

from obsctl.store.postgres.maintenance import SUBTRACT_STATS
from obsctl.store.sql.sessions import *  # noqa: F403 (the store's repository binds these)
from obsctl.store.tables import EVENT_READ_COLUMNS

_EVENT_SELECT = f"SELECT {', '.join(EVENT_READ_COLUMNS)} FROM events"
_TREE_SELECT = ("SELECT event_id, parent_id, timestamp, event_type, model, tool_call, duration_ms, is_error, "
                "CASE WHEN metadata LIKE '%%\"span_name\"%%' THEN metadata::jsonb ->> 'span_name' END, "
                "COALESCE(output_data LIKE '%%\"child_error\":%%', false) "
                "FROM events WHERE session_id = %s ORDER BY timestamp, id")


def session_tree_rows(conn: psycopg.Connection, session_id: str) -> list[tuple]:
    """(event_id, parent_id, timestamp, event_type, model, tool_call, duration_ms, is_error,
    span_name, failed because of a child) of a session's events (see the SQLite module)."""
    return conn.execute(_TREE_SELECT, [session_id]).fetchall()


# Rows a server-side cursor fetches at a time (stream_rows).
_STREAM_ROWS = 2000
_stream_names = itertools.count()


def stream_rows(conn: psycopg.Connection, sql: str, params: list) -> Iterator[tuple]:
    """The rows of `sql`, streamed: a server-side cursor fetches _STREAM_ROWS at a time (a
    client-side one would hold the whole result, 430 MiB for a session of 1M events), inside a
    transaction, so the reader sees one snapshot."""
    with conn.transaction(), conn.cursor(name=f"obsctl_stream_{next(_stream_names)}") as cursor:
        cursor.itersize = _STREAM_ROWS
        cursor.execute(sql, params)
        yield from cursor


def iter_session_events(conn: psycopg.Connection, session_id: str) -> Iterator[dict]:
    """A session's events in time order (ties in arrival order), streamed (stream_rows), so the
    export reads one snapshot in bounded memory."""
    for row in stream_rows(conn, f"{_EVENT_SELECT} WHERE session_id = %s ORDER BY timestamp, id", [session_id]):
        yield dict(zip(EVENT_READ_COLUMNS, row))


# ---- housekeeping ----

def delete_session(conn: psycopg.Connection, session_id: str) -> int | None:
    """Delete a session, its events (and their ids in event_keys), tags, scores and trace links
    (inside a write transaction); the number of events deleted, or None when there is no such
    session. The session row is locked first, so an ingest into it waits for the delete."""
    if conn.execute("SELECT 1 FROM sessions WHERE session_id = %s FOR UPDATE", [session_id]).fetchone() is None:
        return None
    conn.execute(SUBTRACT_STATS, [[session_id]])
    conn.execute("DELETE FROM event_stats WHERE event_count <= 0")
    conn.execute("DELETE FROM event_keys WHERE event_id IN (SELECT event_id FROM events WHERE session_id = %s)",
                 [session_id])
    events = conn.execute("DELETE FROM events WHERE session_id = %s", [session_id]).rowcount
    conn.execute("DELETE FROM otlp_trace_sessions WHERE session_id = %s", [session_id])
    conn.execute("DELETE FROM sessions WHERE session_id = %s", [session_id])
    return events


# --- The idle sweep (services/sessions/lifecycle.py) ---------------------------------------------

def idle_candidates(conn: psycopg.Connection, cutoff: str, after: tuple[str, str] | None,
                    limit: int) -> list[tuple]:
    """(session_id, last_event_at) of active sessions whose last event is before `cutoff` and
    that received none since (last_seen_at), in
    (last_event_at, session_id) order after the key `after` (idx_sessions_active_last_event)."""
    low, sid = after or ("", "")
    return conn.execute(
        "SELECT session_id, last_event_at FROM sessions WHERE status = 'active' AND last_event_at < %s "
        "AND (last_event_at, session_id) > (%s, %s) AND COALESCE(last_seen_at, '') < %s "
        "ORDER BY last_event_at, session_id LIMIT %s",
        [cutoff, low, sid, cutoff, limit]).fetchall()


def latest_roots(conn: psycopg.Connection, session_ids: list[str]) -> dict[str, tuple]:
    """The latest root event (no parent; not a session_end) of each session that has one:
    session_id -> (timestamp, duration_ms, is_error), one index probe per session."""
    if not session_ids:
        return {}
    rows = conn.execute(
        """SELECT s.id, r.timestamp, r.duration_ms, r.is_error
           FROM unnest(%s::text[]) AS s(id)
           CROSS JOIN LATERAL (
               SELECT timestamp, duration_ms,
                      is_error = 1 OR output_data LIKE '%%"child_error":%%' AS is_error FROM events
               WHERE session_id = s.id AND parent_id IS NULL AND event_type <> 'session_end'
               ORDER BY timestamp DESC, id DESC LIMIT 1) AS r""",
        [list(session_ids)]).fetchall()
    return {sid: (ts, float(duration) if duration is not None else None, is_error)
            for sid, ts, duration, is_error in rows}

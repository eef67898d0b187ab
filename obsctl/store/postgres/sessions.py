"""Reading sessions and their events (PostgreSQL; the same answers as
obsctl/store/sqlite/sessions.py)."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg

from obsctl.store.tables import EVENT_READ_COLUMNS, SESSION_COLUMNS

_SESSION_SELECT = f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions"
_EVENT_SELECT = f"SELECT {', '.join(EVENT_READ_COLUMNS)} FROM events"


def _rows(cursor, columns) -> list[dict]:
    return [dict(zip(columns, row)) for row in cursor]


def list_sessions(
    conn: psycopg.Connection, *, status: str | None, limit: int, offset: int
) -> tuple[list[dict], int]:
    """Sessions newest first, with the total count for the same filter (from the session_stats
    rollup, whatever the number of sessions)."""
    where, params = ("WHERE status = %s", [status]) if status else ("", [])
    # SUM over BIGINT is NUMERIC on PostgreSQL: cast back so the count is an int.
    total = conn.execute(f"SELECT COALESCE(SUM(sessions), 0)::bigint FROM session_stats {where}",
                         params).fetchone()[0]
    # The page is found on the index alone (idx_sessions_started or idx_sessions_status_started,
    # in this order), so an offset skips index entries, not session rows.
    cursor = conn.execute(
        f"{_SESSION_SELECT} WHERE session_id IN (SELECT session_id FROM sessions {where} "
        f"ORDER BY started_at DESC, session_id LIMIT %s OFFSET %s) ORDER BY started_at DESC, session_id",
        [*params, limit, offset],
    )
    return _rows(cursor, SESSION_COLUMNS), total


def get_session(conn: psycopg.Connection, session_id: str) -> dict | None:
    row = conn.execute(f"{_SESSION_SELECT} WHERE session_id = %s", [session_id]).fetchone()
    return dict(zip(SESSION_COLUMNS, row)) if row else None


# What the explain timeline shows of each event, in this order.
TIMELINE_COLUMNS = (
    "timestamp", "event_type", "model", "tokens_in", "tokens_out", "duration_ms", "input_data",
    "output_data", "tool_call", "decision_trace", "is_error",
)
_TIMELINE_SELECT = (f"SELECT {', '.join(TIMELINE_COLUMNS)} FROM events WHERE session_id = %s "
                    f"ORDER BY timestamp, id")


def session_timeline_rows(conn: psycopg.Connection, session_id: str) -> list[tuple]:
    """A session's events in the order of iter_session_events, as TIMELINE_COLUMNS tuples."""
    return conn.execute(_TIMELINE_SELECT, [session_id]).fetchall()


def iter_session_events(conn: psycopg.Connection, session_id: str) -> Iterator[dict]:
    """A session's events in time order (ties in arrival order), streamed from the cursor."""
    cursor = conn.execute(
        f"{_EVENT_SELECT} WHERE session_id = %s ORDER BY timestamp, id", [session_id]
    )
    for row in cursor:
        yield dict(zip(EVENT_READ_COLUMNS, row))


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
               SELECT timestamp, duration_ms, is_error FROM events
               WHERE session_id = s.id AND parent_id IS NULL AND event_type <> 'session_end'
               ORDER BY timestamp DESC, id DESC LIMIT 1) AS r""",
        [list(session_ids)]).fetchall()
    return {sid: (ts, float(duration) if duration is not None else None, is_error)
            for sid, ts, duration, is_error in rows}


def complete_idle(conn: psycopg.Connection, endings: list[tuple]) -> int:
    """Complete sessions the sweep found idle (see the SQLite module); returns how many."""
    completed = 0
    with conn.cursor() as cur:
        for ending in sorted(endings, key=lambda e: e[2]):
            cur.execute("UPDATE sessions SET status = %s, ended_at = %s, idle_ended = 1 "
                        "WHERE session_id = %s AND status = 'active' AND last_event_at = %s "
                        "AND COALESCE(last_seen_at, '') < %s", ending)
            completed += cur.rowcount
    return completed

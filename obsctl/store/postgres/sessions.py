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


def agent_names(conn: psycopg.Connection, prefix: str, limit: int) -> list[str]:
    """The agent names starting with `prefix`, in order, read from the session_stats rollup
    (one row per day, agent and status: small whatever the number of sessions)."""
    cursor = conn.execute(
        "SELECT agent_name FROM session_stats WHERE left(agent_name, %s) = %s "
        'GROUP BY agent_name HAVING SUM(sessions) > 0 ORDER BY agent_name COLLATE "C" LIMIT %s',
        [len(prefix), prefix, limit])
    return [row[0] for row in cursor]


def session_ids(conn: psycopg.Connection, prefix: str, limit: int) -> list[str]:
    """The session ids starting with `prefix`, in order: a range of the primary key (whose
    collation is C, so the range is exactly the ids with the prefix)."""
    cursor = conn.execute(
        "SELECT session_id FROM sessions WHERE session_id >= %s AND session_id < %s "
        "ORDER BY session_id LIMIT %s", [prefix, prefix + "\U0010ffff", limit])
    return [row[0] for row in cursor]


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

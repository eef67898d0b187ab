"""Reading sessions and their events."""

from __future__ import annotations

from collections.abc import Iterator

import sqlite_utils

from obsctl.models.sessions import SessionFilter
from obsctl.store import session_filter_sql
from obsctl.store.sqlite.analytics import SESSION_DURATION_MS
from obsctl.store.sqlite.maintenance import SUBTRACT_STATS
from obsctl.store.tables import EVENT_READ_COLUMNS, SESSION_COLUMNS, page_rows, session_events_page_query

_SESSION_SELECT = f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions"
_EVENT_SELECT = f"SELECT {', '.join(EVENT_READ_COLUMNS)} FROM events"


# A metadata value as text: JSON true/false spelled as PostgreSQL's ->> does (json_extract
# gives 1/0), strings as they are, numbers as their digits.
DIALECT = session_filter_sql.SessionDialect(
    mark="?", duration=SESSION_DURATION_MS, json_path=True, row_key="rowid",
    metadata="CASE json_type(metadata, {key}) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' "
             "ELSE CAST(json_extract(metadata, {key}) AS TEXT) END")


def _rows(cursor, columns) -> list[dict]:
    return [dict(zip(columns, row)) for row in cursor]


def list_sessions(db: sqlite_utils.Database, selection: SessionFilter, *, limit: int, offset: int,
                  after: tuple | None = None) -> tuple[list[dict], int]:
    """The sessions `selection` matches in its order (rows with their `sort_value`), after the
    sort key `after`, with the count of every match (store/session_filter_sql.py)."""
    conn = db.conn
    total = conn.execute(*session_filter_sql.count(selection, DIALECT)).fetchone()[0]
    sql, params = session_filter_sql.select(selection, DIALECT, ", ".join(SESSION_COLUMNS), after=after,
                                            limit=limit, offset=offset)
    return _rows(conn.execute(sql, params), (*SESSION_COLUMNS, "sort_value")), total


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


def session_timeline_rows(db: sqlite_utils.Database, session_id: str, limit: int | None = None, *,
                          last: bool = False) -> list[tuple]:
    """A session's events in the order of iter_session_events, as TIMELINE_COLUMNS tuples
    (no per-row dict: explain reads many); with `limit`, the first (or `last`) that many."""
    if limit is None:
        return db.conn.execute(_TIMELINE_SELECT, [session_id]).fetchall()
    order = "timestamp DESC, id DESC" if last else "timestamp, id"
    rows = db.conn.execute(_TIMELINE_SELECT.replace("timestamp, id", order) + " LIMIT ?", [session_id, limit]).fetchall()
    return rows[::-1] if last else rows


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


def session_events_page(db: sqlite_utils.Database, session_id: str, after: tuple[str, int] | None,
                        limit: int) -> list[tuple[int, dict]]:
    """Up to `limit` of a session's events in the order of iter_session_events, after the
    (timestamp, id) `after` (None: from the first), each with its id (a page's position)."""
    return page_rows(db.conn.execute(*session_events_page_query("?", session_id, after, limit)))


# ---- housekeeping: delete, tags, scores ----

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


def session_tags(db: sqlite_utils.Database, session_ids: list[str]) -> dict[str, dict[str, str]]:
    """{session_id: {key: value}} for those of `session_ids` that have tags, keys sorted."""
    found: dict[str, dict[str, str]] = {}
    for start in range(0, len(session_ids), 500):
        chunk = session_ids[start:start + 500]
        cursor = db.conn.execute(
            f"SELECT session_id, key, value FROM session_tags WHERE session_id IN "
            f"({','.join('?' * len(chunk))}) ORDER BY session_id, key", chunk)
        for session_id, key, value in cursor:
            found.setdefault(session_id, {})[key] = value
    return found


def set_tags(db: sqlite_utils.Database, rows: list[tuple[str, str, str]]) -> None:
    """Set (session_id, key, value) tags; a key already set takes the new value."""
    db.conn.executemany("INSERT INTO session_tags (session_id, key, value) VALUES (?, ?, ?) "
                        "ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value", rows)


def remove_tags(db: sqlite_utils.Database, session_id: str, keys: list[str]) -> None:
    """Remove these tag keys from a session (keys it does not have are ignored)."""
    db.conn.executemany("DELETE FROM session_tags WHERE session_id = ? AND key = ?",
                        [(session_id, k) for k in keys])


SCORE_COLUMNS = ("score_id", "session_id", "name", "value", "comment", "created_at")


def insert_score(db: sqlite_utils.Database, score: dict) -> None:
    db.conn.execute(f"INSERT INTO session_scores ({', '.join(SCORE_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)",
                    [score[c] for c in SCORE_COLUMNS])


def insert_scores_once(db: sqlite_utils.Database, scores: list[dict]) -> None:
    """Insert scores whose ids may already be stored (a retried export): those are kept as they are."""
    db.conn.executemany(f"INSERT INTO session_scores ({', '.join(SCORE_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?) "
                        f"ON CONFLICT (score_id) DO NOTHING", [[s[c] for c in SCORE_COLUMNS] for s in scores])


def session_scores(db: sqlite_utils.Database, session_id: str) -> list[dict]:
    """A session's scores, oldest first."""
    cursor = db.conn.execute(f"SELECT {', '.join(SCORE_COLUMNS)} FROM session_scores WHERE session_id = ? "
                             f"ORDER BY created_at, score_id", [session_id])
    return _rows(cursor, SCORE_COLUMNS)


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


def complete_idle(db: sqlite_utils.Database, endings: list[tuple]) -> int:
    """Complete sessions the sweep found idle: (status, ended_at, session_id, last_event_at,
    cutoff), each only if it is still active with that last event and received nothing since
    the cutoff (idempotent: a second sweeper, or an event that arrived since, leaves it be).
    Returns how many were completed."""
    # rowcount leaves out the rows the session_stats triggers change.
    return db.conn.executemany("UPDATE sessions SET status = ?, ended_at = ?, idle_ended = 1 "
                               "WHERE session_id = ? AND status = 'active' AND last_event_at = ? "
                               "AND COALESCE(last_seen_at, '') < ?",
                               endings).rowcount

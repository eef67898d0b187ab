"""Reading sessions and their events (PostgreSQL; the same answers as
obsctl/store/sqlite/sessions.py)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import psycopg

from obsctl.models.sessions import SessionFilter
from obsctl.store import session_filter_sql
from obsctl.store.postgres.maintenance import SUBTRACT_STATS
from obsctl.store.postgres.schema import SESSION_DURATION_MS
from obsctl.store.sql import one
from obsctl.store.tables import EVENT_READ_COLUMNS, SESSION_COLUMNS, page_rows, session_events_page_query

_SESSION_SELECT = f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions"
_EVENT_SELECT = f"SELECT {', '.join(EVENT_READ_COLUMNS)} FROM events"


DIALECT = session_filter_sql.SessionDialect(
    mark="%s", duration=SESSION_DURATION_MS, json_path=False, row_key="session_id",
    metadata="(metadata::jsonb ->> {key})")


def _rows(cursor, columns) -> list[dict]:
    return [dict(zip(columns, row)) for row in cursor]


def list_sessions(conn: psycopg.Connection, selection: SessionFilter, *, limit: int, offset: int,
                  after: tuple | None = None) -> tuple[list[dict], int]:
    """The sessions `selection` matches in its order (rows with their `sort_value`), after the
    sort key `after`, with the count of every match (store/session_filter_sql.py)."""
    total = one(conn.execute(*session_filter_sql.count(selection, DIALECT)))[0]
    sql, params = session_filter_sql.select(selection, DIALECT, ", ".join(SESSION_COLUMNS), after=after,
                                            limit=limit, offset=offset)
    return _rows(conn.execute(sql, params), (*SESSION_COLUMNS, "sort_value")), total


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


def session_timeline_rows(conn: psycopg.Connection, session_id: str, limit: int | None = None, *,
                          last: bool = False) -> list[tuple]:
    """A session's events in the order of iter_session_events, as TIMELINE_COLUMNS tuples;
    with `limit`, the first (or `last`) that many."""
    if limit is None:
        return conn.execute(_TIMELINE_SELECT, [session_id]).fetchall()
    order = "timestamp DESC, id DESC" if last else "timestamp, id"
    rows = conn.execute(_TIMELINE_SELECT.replace("timestamp, id", order) + " LIMIT %s", [session_id, limit]).fetchall()
    return rows[::-1] if last else rows


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


def session_events_page(conn: psycopg.Connection, session_id: str, after: tuple[str, int] | None,
                        limit: int) -> list[tuple[int, dict]]:
    """Up to `limit` of a session's events in the order of iter_session_events, after the
    (timestamp, id) `after` (None: from the first), each with its id (a page's position)."""
    return page_rows(conn.execute(*session_events_page_query("%s", session_id, after, limit)))


# ---- housekeeping: delete, tags, scores (the same answers as the SQLite module) ----

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


def session_tags(conn: psycopg.Connection, session_ids: list[str]) -> dict[str, dict[str, str]]:
    """{session_id: {key: value}} for those of `session_ids` that have tags, keys sorted."""
    found: dict[str, dict[str, str]] = {}
    if not session_ids:
        return found
    cursor = conn.execute("SELECT session_id, key, value FROM session_tags WHERE session_id = ANY(%s) "
                          "ORDER BY session_id, key", [list(session_ids)])
    for session_id, key, value in cursor:
        found.setdefault(session_id, {})[key] = value
    return found


def set_tags(conn: psycopg.Connection, rows: list[tuple[str, str, str]]) -> None:
    """Set (session_id, key, value) tags; a key already set takes the new value."""
    if not rows:
        return
    with conn.cursor() as cursor:
        cursor.executemany("INSERT INTO session_tags (session_id, key, value) VALUES (%s, %s, %s) "
                           "ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value",
                           sorted(rows))


def remove_tags(conn: psycopg.Connection, session_id: str, keys: list[str]) -> None:
    """Remove these tag keys from a session (keys it does not have are ignored)."""
    conn.execute("DELETE FROM session_tags WHERE session_id = %s AND key = ANY(%s)", [session_id, list(keys)])


SCORE_COLUMNS = ("score_id", "session_id", "name", "value", "comment", "created_at")


def insert_score(conn: psycopg.Connection, score: dict) -> None:
    conn.execute(f"INSERT INTO session_scores ({', '.join(SCORE_COLUMNS)}) VALUES (%s, %s, %s, %s, %s, %s)",
                 [score[c] for c in SCORE_COLUMNS])


def insert_scores_once(conn: psycopg.Connection, scores: list[dict]) -> None:
    """Insert scores whose ids may already be stored (a retried export): those are kept as they are."""
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO session_scores ({', '.join(SCORE_COLUMNS)}) VALUES (%s, %s, %s, %s, %s, %s) "
                        f"ON CONFLICT (score_id) DO NOTHING", [[s[c] for c in SCORE_COLUMNS] for s in scores])


def session_scores(conn: psycopg.Connection, session_id: str) -> list[dict]:
    """A session's scores, oldest first."""
    cursor = conn.execute(f"SELECT {', '.join(SCORE_COLUMNS)} FROM session_scores WHERE session_id = %s "
                          f"ORDER BY created_at, score_id", [session_id])
    return _rows(cursor, SCORE_COLUMNS)


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

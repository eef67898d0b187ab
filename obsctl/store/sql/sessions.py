"""Reading sessions and their events, tags and scores (the SQL behind services/sessions), for
both stores; obsctl/store/<backend>/sessions.py keeps what the engines do differently (a
session's events streamed, its call tree's JSON, its delete, and the idle sweep's reads)."""

from __future__ import annotations

from typing import Any

import obsctl.store.session_filter_sql as session_filter_sql
from obsctl.models.sessions import SessionFilter
from obsctl.store.sql import connection, execute_many, one
from obsctl.store.tables import SESSION_COLUMNS, page_rows, session_events_page_query

__all__ = ["agent_names", "agent_totals", "complete_idle", "get_session", "insert_score", "insert_scores_once",
           "list_sessions", "remove_tags", "session_events_page", "session_ids", "session_scores",
           "session_tags", "session_timeline_rows", "set_tags"]

# The wall-clock duration in ms of an ended session, as each engine's index on it is written
# (PostgreSQL's function is created by migration).
SESSION_DURATION_MS = {
    "sqlite": "MAX(0, CAST(ROUND((julianday(ended_at) - julianday(started_at)) * 86400000.0) AS INTEGER))",
    "postgresql": "obsctl_duration_ms(started_at, ended_at)",
}
# The session filter's SQL for each engine (store/session_filter_sql.py). On SQLite a metadata
# value reads as text with JSON true/false spelled as PostgreSQL's ->> does (json_extract gives
# 1/0), strings as they are, numbers as their digits.
FILTER_DIALECTS = {
    "sqlite": session_filter_sql.SessionDialect(
        mark="?", duration=SESSION_DURATION_MS["sqlite"], json_path=True, row_key="rowid",
        metadata="CASE json_type(metadata, {key}) WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' "
                 "ELSE CAST(json_extract(metadata, {key}) AS TEXT) END"),
    "postgresql": session_filter_sql.SessionDialect(
        mark="%s", duration=SESSION_DURATION_MS["postgresql"], json_path=False, row_key="session_id",
        metadata="(metadata::jsonb ->> {key})"),
}
_SESSION_SELECT = f"SELECT {', '.join(SESSION_COLUMNS)} FROM sessions"
# Text in code point order (SQLite's BINARY collation; PostgreSQL's C).
_CODE_POINT_ORDER = {"sqlite": "", "postgresql": ' COLLATE "C"'}


def _rows(cursor, columns) -> list[dict]:
    return [dict(zip(columns, row)) for row in cursor]


def list_sessions(db: Any, selection: SessionFilter, *, limit: int, offset: int,
                  after: tuple | None = None) -> tuple[list[dict], int]:
    """The sessions `selection` matches in its order (rows with their `sort_value`), after the
    sort key `after`, with the count of every match (store/session_filter_sql.py)."""
    conn, d = connection(db)
    dialect = FILTER_DIALECTS[d.name]
    total = one(conn.execute(*session_filter_sql.count(selection, dialect)))[0]
    sql, params = session_filter_sql.select(selection, dialect, ", ".join(SESSION_COLUMNS), after=after,
                                            limit=limit, offset=offset)
    return _rows(conn.execute(sql, params), (*SESSION_COLUMNS, "sort_value")), total


def get_session(db: Any, session_id: str) -> dict | None:
    conn, d = connection(db)
    row = conn.execute(f"{_SESSION_SELECT} WHERE session_id = {d.mark}", [session_id]).fetchone()
    return dict(zip(SESSION_COLUMNS, row)) if row else None


def agent_names(db: Any, prefix: str, limit: int) -> list[str]:
    """The agent names starting with `prefix`, in order, read from the session_stats rollup
    (one row per day, agent and status: small whatever the number of sessions)."""
    conn, d = connection(db)
    m = d.mark
    cursor = conn.execute(
        f"SELECT agent_name FROM session_stats WHERE substr(agent_name, 1, {m}) = {m} "
        f"GROUP BY agent_name HAVING SUM(sessions) > 0 ORDER BY agent_name{_CODE_POINT_ORDER[d.name]} LIMIT {m}",
        [len(prefix), prefix, limit])
    return [row[0] for row in cursor]


def agent_totals(db: Any, since_day: str, limit: int) -> tuple[list[tuple], int]:
    """Up to `limit` agents with sessions started on `since_day` or later, most sessions first
    (then by name), each as (agent_name, sessions, active, completed, error, event_count,
    tokens_in, tokens_out, ended, duration_sum, first_day, last_day, last_event_at), and how
    many agents there are. The session_stats rollup holds one row per day, agent and status;
    each listed agent's latest event is one probe of idx_sessions_agent_last_event."""
    conn, d = connection(db)
    m = d.mark
    grouped = (f"SELECT agent_name, SUM(sessions) AS sessions, "
               f"SUM(CASE WHEN status = 'active' THEN sessions ELSE 0 END), "
               f"SUM(CASE WHEN status = 'completed' THEN sessions ELSE 0 END), "
               f"SUM(CASE WHEN status = 'error' THEN sessions ELSE 0 END), "
               f"SUM(events), SUM(tokens_in), SUM(tokens_out), SUM(ended), SUM(duration_sum), "
               f"MIN(CASE WHEN sessions > 0 THEN day END), MAX(CASE WHEN sessions > 0 THEN day END) "
               f"FROM session_stats WHERE day >= {m} GROUP BY agent_name HAVING SUM(sessions) > 0")
    total = one(conn.execute(f"SELECT COUNT(*) FROM ({grouped}) AS a", [since_day]))[0]
    rows = conn.execute(
        f"SELECT a.*, (SELECT MAX(s.last_event_at) FROM sessions s WHERE s.agent_name = a.agent_name) "
        f"FROM ({grouped}) AS a ORDER BY a.sessions DESC, a.agent_name{_CODE_POINT_ORDER[d.name]} LIMIT {m}",
        [since_day, limit]).fetchall()
    return [tuple(row) for row in rows], total


def session_ids(db: Any, prefix: str, limit: int) -> list[str]:
    """The session ids starting with `prefix`, in order: a range of the primary key (in code
    point order on both engines, so the range is exactly the ids with the prefix)."""
    conn, d = connection(db)
    m = d.mark
    cursor = conn.execute(
        f"SELECT session_id FROM sessions WHERE session_id >= {m} AND session_id < {m} "
        f"ORDER BY session_id LIMIT {m}", [prefix, prefix + "\U0010ffff", limit])
    return [row[0] for row in cursor]


# What the explain timeline shows of each event, in this order.
TIMELINE_COLUMNS = (
    "timestamp", "event_type", "model", "tokens_in", "tokens_out", "duration_ms", "input_data",
    "output_data", "tool_call", "decision_trace", "is_error",
)


def session_timeline_rows(db: Any, session_id: str, limit: int | None = None, *,
                          last: bool = False) -> list[tuple]:
    """A session's events in the order of iter_session_events, as TIMELINE_COLUMNS tuples
    (no per-row dict: explain reads many); with `limit`, the first (or `last`) that many."""
    conn, d = connection(db)
    order = "timestamp DESC, id DESC" if last else "timestamp, id"
    sql = f"SELECT {', '.join(TIMELINE_COLUMNS)} FROM events WHERE session_id = {d.mark} ORDER BY {order}"
    if limit is None:
        return conn.execute(sql, [session_id]).fetchall()
    rows = conn.execute(f"{sql} LIMIT {d.mark}", [session_id, limit]).fetchall()
    return rows[::-1] if last else rows


def session_events_page(db: Any, session_id: str, after: tuple[str, int] | None,
                        limit: int) -> list[tuple[int, dict]]:
    """Up to `limit` of a session's events in the order of iter_session_events, after the
    (timestamp, id) `after` (None: from the first), each with its id (a page's position)."""
    conn, d = connection(db)
    return page_rows(conn.execute(*session_events_page_query(d.mark, session_id, after, limit)))


# ---- tags and scores ----

def session_tags(db: Any, session_ids: list[str]) -> dict[str, dict[str, str]]:
    """{session_id: {key: value}} for those of `session_ids` that have tags, keys sorted."""
    conn, d = connection(db)
    found: dict[str, dict[str, str]] = {}
    for start in range(0, len(session_ids), 500):
        where, params = d.in_list("session_id", session_ids[start:start + 500])
        cursor = conn.execute(f"SELECT session_id, key, value FROM session_tags WHERE {where} "
                              f"ORDER BY session_id, key", params)
        for session_id, key, value in cursor:
            found.setdefault(session_id, {})[key] = value
    return found


def set_tags(db: Any, rows: list[tuple[str, str, str]]) -> None:
    """Set (session_id, key, value) tags; a key already set takes the new value (the last
    given, when one is given twice). The rows are written in key order, so concurrent
    writers lock them in the same order."""
    conn, d = connection(db)
    m = d.mark
    execute_many(conn, f"INSERT INTO session_tags (session_id, key, value) VALUES ({m}, {m}, {m}) "
                       f"ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value",
                 sorted(rows, key=lambda row: row[:2]))


def remove_tags(db: Any, session_id: str, keys: list[str]) -> None:
    """Remove these tag keys from a session (keys it does not have are ignored)."""
    if not keys:
        return
    conn, d = connection(db)
    where, params = d.in_list("key", keys)
    conn.execute(f"DELETE FROM session_tags WHERE session_id = {d.mark} AND {where}", [session_id, *params])


SCORE_COLUMNS = ("score_id", "session_id", "name", "value", "comment", "created_at")


def _insert_scores(db: Any, scores: list[dict], conflict: str = "") -> None:
    conn, d = connection(db)
    execute_many(conn, f"INSERT INTO session_scores ({', '.join(SCORE_COLUMNS)}) "
                       f"VALUES ({', '.join([d.mark] * len(SCORE_COLUMNS))}){conflict}",
                 [[s[c] for c in SCORE_COLUMNS] for s in scores])


def insert_score(db: Any, score: dict) -> None:
    _insert_scores(db, [score])


def insert_scores_once(db: Any, scores: list[dict]) -> None:
    """Insert scores whose ids may already be stored (a retried export): those are kept as they are."""
    _insert_scores(db, scores, " ON CONFLICT (score_id) DO NOTHING")


def session_scores(db: Any, session_id: str) -> list[dict]:
    """A session's scores, oldest first."""
    conn, d = connection(db)
    cursor = conn.execute(f"SELECT {', '.join(SCORE_COLUMNS)} FROM session_scores WHERE session_id = {d.mark} "
                          f"ORDER BY created_at, score_id", [session_id])
    return _rows(cursor, SCORE_COLUMNS)


def complete_idle(db: Any, endings: list[tuple]) -> int:
    """Complete sessions the sweep found idle: (status, ended_at, session_id, last_event_at,
    cutoff), each only if it is still active with that last event and received nothing since
    the cutoff (idempotent: a second sweeper, or an event that arrived since, leaves it be);
    in session order, so concurrent sweepers lock rows in the same order. Returns how many
    were completed (each statement's rowcount: the rows the session_stats triggers change
    are not counted)."""
    conn, d = connection(db)
    m = d.mark
    cursor = conn.cursor()
    completed = 0
    try:
        for ending in sorted(endings, key=lambda e: e[2]):
            cursor.execute(f"UPDATE sessions SET status = {m}, ended_at = {m}, idle_ended = 1 "
                           f"WHERE session_id = {m} AND status = 'active' AND last_event_at = {m} "
                           f"AND COALESCE(last_seen_at, '') < {m}", ending)
            completed += cursor.rowcount
    finally:
        cursor.close()
    return completed

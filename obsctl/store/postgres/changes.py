"""The SQL behind change detection on PostgreSQL: the same reads and answers as
obsctl/store/sqlite/changes.py.

The sessions of a window come from idx_sessions_started (or idx_sessions_agent_started for
one agent) with the body and error event counts the sessions table keeps; the tokens per
model and the LLM call durations read those sessions' events through idx_events_session_ts.
"""

from __future__ import annotations

import psycopg

SESSION_COLUMNS = ("session_id", "agent_name", "started_at", "metadata", "body_events", "error_events")

def _where(agent: str | None) -> tuple[str, list]:
    if agent is None:
        return "s.started_at >= %s AND s.started_at < %s", []
    return "s.agent_name = %s AND s.started_at >= %s AND s.started_at < %s", [agent]


def window_sessions(conn: psycopg.Connection, agent: str | None, since: str,
                    until: str) -> list[dict]:
    """The sessions started in [since, until), of one agent or all, by agent then start."""
    where, params = _where(agent)
    cursor = conn.execute(
        f"SELECT {', '.join('s.' + c for c in SESSION_COLUMNS)} FROM sessions s WHERE {where} "
        "ORDER BY s.agent_name, s.started_at, s.session_id", [*params, since, until])
    return [dict(zip(SESSION_COLUMNS, row)) for row in cursor]


def window_model_tokens(conn: psycopg.Connection, agent: str | None, since: str,
                        until: str) -> list[tuple]:
    """(session_id, model, tokens_in, tokens_out, cache read, cache write, reasoning) per
    session started in [since, until) and model, for the events that carry tokens."""
    where, params = _where(agent)
    return conn.execute(
        f"""SELECT e.session_id, e.model, COALESCE(SUM(e.tokens_in), 0)::bigint, COALESCE(SUM(e.tokens_out), 0)::bigint,
        COALESCE(SUM(e.tokens_cache_read), 0)::bigint, COALESCE(SUM(e.tokens_cache_write), 0)::bigint,
        COALESCE(SUM(e.tokens_reasoning), 0)::bigint
        FROM sessions s JOIN events e ON e.session_id = s.session_id
        WHERE {where} AND (e.tokens_in > 0 OR e.tokens_out > 0)
        GROUP BY e.session_id, e.model""", [*params, since, until]).fetchall()


def llm_durations(conn: psycopg.Connection, session_ids: list[str]) -> list[float]:
    """The durations of the successful llm_call events of these sessions, sorted."""
    if not session_ids:
        return []
    rows = conn.execute(
        """SELECT duration_ms FROM events WHERE session_id = ANY(%s)
        AND event_type = 'llm_call' AND is_error = 0 AND duration_ms IS NOT NULL""", [session_ids])
    return sorted(float(r[0]) for r in rows)


def acknowledged(conn: psycopg.Connection, change_ids: list[str]) -> dict[str, dict]:
    """{change_id: {"acknowledged_at", "note"}} of the acknowledged changes among these."""
    if not change_ids:
        return {}
    rows = conn.execute(
        "SELECT change_id, acknowledged_at, note FROM change_acks WHERE change_id = ANY(%s)",
        [change_ids])
    return {cid: {"acknowledged_at": at, "note": note} for cid, at, note in rows}


def acknowledge(conn: psycopg.Connection, change_id: str, agent: str, changed_at: str, at: str,
                note: str | None) -> bool:
    """Record an acknowledgement; False (and nothing changed) when it already was."""
    cursor = conn.execute(
        "INSERT INTO change_acks (change_id, agent_name, changed_at, acknowledged_at, note) "
        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (change_id) DO NOTHING",
        [change_id, agent, changed_at, at, note])
    return cursor.rowcount == 1

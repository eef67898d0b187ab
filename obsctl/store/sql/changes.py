"""The SQL behind change detection (services/changes.py), for both stores.

The sessions of a window come from idx_sessions_started (or idx_sessions_agent_started for
one agent) with the body and error event counts the sessions table keeps; the tokens per
model and the LLM call durations read those sessions' events through idx_events_session_ts.
Sums of BIGINT come back from PostgreSQL as NUMERIC, which its store reads as an int when whole.
"""

from __future__ import annotations

from typing import Any

from obsctl.store.sql import connection

__all__ = ["SESSION_COLUMNS", "acknowledge", "acknowledged", "llm_durations", "window_model_tokens",
           "window_sessions"]

SESSION_COLUMNS = ("session_id", "agent_name", "started_at", "metadata", "body_events", "error_events")


def _where(agent: str | None, mark: str) -> tuple[str, list]:
    if agent is None:
        return f"s.started_at >= {mark} AND s.started_at < {mark}", []
    return f"s.agent_name = {mark} AND s.started_at >= {mark} AND s.started_at < {mark}", [agent]


def window_sessions(db: Any, agent: str | None, since: str, until: str) -> list[dict]:
    """The sessions started in [since, until), of one agent or all, by agent then start."""
    conn, d = connection(db)
    where, params = _where(agent, d.mark)
    cursor = conn.execute(
        f"SELECT {', '.join('s.' + c for c in SESSION_COLUMNS)} FROM sessions s WHERE {where} "
        "ORDER BY s.agent_name, s.started_at, s.session_id", [*params, since, until])
    return [dict(zip(SESSION_COLUMNS, row)) for row in cursor]


def window_model_tokens(db: Any, agent: str | None, since: str, until: str) -> list[tuple]:
    """(session_id, model, tokens_in, tokens_out, cache read, cache write, reasoning) per
    session started in [since, until) and model, for the events that carry tokens."""
    conn, d = connection(db)
    where, params = _where(agent, d.mark)
    return conn.execute(
        f"""SELECT e.session_id, e.model, COALESCE(SUM(e.tokens_in), 0), COALESCE(SUM(e.tokens_out), 0),
        COALESCE(SUM(e.tokens_cache_read), 0), COALESCE(SUM(e.tokens_cache_write), 0),
        COALESCE(SUM(e.tokens_reasoning), 0)
        FROM sessions s JOIN events e ON e.session_id = s.session_id
        WHERE {where} AND (e.tokens_in > 0 OR e.tokens_out > 0)
        GROUP BY e.session_id, e.model
        ORDER BY e.session_id, e.model""", [*params, since, until]).fetchall()


def llm_durations(db: Any, session_ids: list[str]) -> list[float]:
    """The durations of the successful llm_call events of these sessions, sorted."""
    if not session_ids:
        return []
    conn, d = connection(db)
    among, params = d.in_list("session_id", session_ids)
    rows = conn.execute(
        f"""SELECT duration_ms FROM events WHERE {among}
        AND event_type = 'llm_call' AND is_error = 0 AND duration_ms IS NOT NULL""", params)
    return sorted(float(r[0]) for r in rows)


def acknowledged(db: Any, change_ids: list[str]) -> dict[str, dict]:
    """{change_id: {"acknowledged_at", "note"}} of the acknowledged changes among these."""
    if not change_ids:
        return {}
    conn, d = connection(db)
    among, params = d.in_list("change_id", change_ids)
    rows = conn.execute(f"SELECT change_id, acknowledged_at, note FROM change_acks WHERE {among}", params)
    return {cid: {"acknowledged_at": at, "note": note} for cid, at, note in rows}


def acknowledge(db: Any, change_id: str, agent: str, changed_at: str, at: str, note: str | None) -> bool:
    """Record an acknowledgement; False (and nothing changed) when it already was."""
    conn, d = connection(db)
    m = d.mark
    cursor = conn.execute(
        f"INSERT INTO change_acks (change_id, agent_name, changed_at, acknowledged_at, note) "
        f"VALUES ({m}, {m}, {m}, {m}, {m}) ON CONFLICT (change_id) DO NOTHING",
        [change_id, agent, changed_at, at, note])
    return cursor.rowcount == 1

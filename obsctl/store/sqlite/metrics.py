"""Aggregates over the events of a time window (the SQL behind services/metrics.py).

A window is `since <= timestamp < until` (until None = open ended), optionally restricted to
the sessions of one agent. Lifecycle events (session_start/session_end) never count.

Without an agent the events are read through idx_events_ts. With an agent the plan starts
from that agent's sessions still active in the window (idx_sessions_agent_last_event:
last_event_at >= since) and reads each one's events through idx_events_session_ts. The
last_event_at/started_at bounds are implied by the window (a session's last_event_at is its
latest event and it starts no later than its first) and let SQLite skip sessions that cannot
have events in it, so the cost follows the window, not the agent's history.
"""

from __future__ import annotations

import sqlite_utils

_NOT_LIFECYCLE = "e.event_type NOT IN ('session_start', 'session_end')"
_IS_TOOL = "(e.tool_call IS NOT NULL OR e.event_type IN ('tool_call', 'tool_error'))"


def _window(since: str, until: str | None, agent: str | None) -> tuple[str, list]:
    """FROM ... WHERE ... for the non-lifecycle events of a window, and its parameters."""
    params: list = []
    if agent is None:
        sql = "FROM events e WHERE e.timestamp >= ?"
        params.append(since)
    else:
        sql = ("FROM sessions s JOIN events e ON e.session_id = s.session_id "
               "WHERE s.agent_name = ? AND s.last_event_at >= ? AND e.timestamp >= ?")
        params += [agent, since, since]
        if until is not None:
            sql += " AND s.started_at < ?"
            params.append(until)
    if until is not None:
        sql += " AND e.timestamp < ?"
        params.append(until)
    return f"{sql} AND {_NOT_LIFECYCLE}", params


def event_aggregates(db: sqlite_utils.Database, since: str, until: str | None,
                     agent: str | None) -> dict:
    """One scan of the window: counts and sums behind the event metrics."""
    where, params = _window(since, until, agent)
    row = db.conn.execute(
        f"""SELECT COUNT(*),
                   COALESCE(SUM(e.is_error), 0),
                   COUNT(e.duration_ms),
                   SUM(e.duration_ms),
                   COALESCE(SUM({_IS_TOOL}), 0),
                   COALESCE(SUM({_IS_TOOL} AND e.is_error), 0),
                   COALESCE(SUM(COALESCE(e.tokens_in, 0) + COALESCE(e.tokens_out, 0)), 0),
                   COUNT(DISTINCT e.session_id)
            {where}""",
        params,
    ).fetchone()
    keys = ("events", "errors", "durations", "duration_sum", "tool_events", "tool_errors",
            "tokens", "sessions")
    return dict(zip(keys, row))


def duration_at_rank(db: sqlite_utils.Database, since: str, until: str | None,
                     agent: str | None, rank: int) -> float | None:
    """The `rank`-th smallest duration_ms (1-based) among the window's events that have one."""
    where, params = _window(since, until, agent)
    row = db.conn.execute(
        f"SELECT e.duration_ms {where} AND e.duration_ms IS NOT NULL "
        f"ORDER BY e.duration_ms LIMIT 1 OFFSET ?",
        [*params, rank - 1],
    ).fetchone()
    return None if row is None else row[0]


def window_cost(db: sqlite_utils.Database, since: str, until: str | None,
                agent: str | None) -> float | None:
    """The USD cost stored with the window's events (None when none of them was priced)."""
    where, params = _window(since, until, agent)
    return db.conn.execute(f"SELECT SUM(e.cost_usd) {where}", params).fetchone()[0]


def sessions_started(db: sqlite_utils.Database, since: str, until: str | None,
                     agent: str | None) -> int:
    """Sessions whose started_at is in the window (idx_sessions_started / agent_started)."""
    sql, params = "SELECT COUNT(*) FROM sessions WHERE started_at >= ?", [since]
    if until is not None:
        sql += " AND started_at < ?"
        params.append(until)
    if agent is not None:
        sql += " AND agent_name = ?"
        params.append(agent)
    return db.conn.execute(sql, params).fetchone()[0]


def score_average(db: sqlite_utils.Database, name: str, since: str, until: str | None,
                  agent: str | None) -> float | None:
    """The mean value of the scores named `name` given in the window (their created_at), on
    the sessions of `agent` when given; None when there is none (idx_session_scores_name_created)."""
    sql = "SELECT AVG(c.value) FROM session_scores c"
    params: list = []
    if agent is not None:
        sql += " JOIN sessions s ON s.session_id = c.session_id AND s.agent_name = ?"
        params.append(agent)
    sql += " WHERE c.name = ? AND c.created_at >= ?"
    params += [name, since]
    if until is not None:
        sql += " AND c.created_at < ?"
        params.append(until)
    return db.conn.execute(sql, params).fetchone()[0]


# What `top_sessions` orders by: the window's tokens, its slowest event, or its events.
_TOP_ORDER = {"tokens": "tokens", "slowest": "slowest_ms", "events": "events"}


def top_sessions(db: sqlite_utils.Database, since: str, until: str | None, agent: str | None,
                 by: str, limit: int) -> list[dict]:
    """The sessions whose events in the window weigh most in a metric (`by`: tokens, slowest
    or events), with their events, errors, tokens and slowest event in the window."""
    where, params = _window(since, until, agent)
    rows = db.conn.execute(
        f"""SELECT e.session_id, COUNT(*) AS events, COALESCE(SUM(e.is_error), 0),
                   COALESCE(SUM(COALESCE(e.tokens_in, 0) + COALESCE(e.tokens_out, 0)), 0) AS tokens,
                   MAX(e.duration_ms) AS slowest_ms
            {where} GROUP BY e.session_id
            ORDER BY {_TOP_ORDER[by]} DESC, e.session_id LIMIT ?""",
        [*params, limit]).fetchall()
    return [{"session_id": sid, "events": int(events), "errors": int(errors), "tokens": int(tokens),
             "slowest_ms": None if slowest is None else float(slowest)}
            for sid, events, errors, tokens, slowest in rows]

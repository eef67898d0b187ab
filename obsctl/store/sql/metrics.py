"""Aggregates over the events of a time window (the SQL behind services/metrics.py), for both
stores.

A window is `since <= timestamp < until` (until None = open ended), optionally restricted to
the sessions of one agent. Lifecycle events (session_start/session_end) never count.

Without an agent the events are read through idx_events_ts. With an agent the plan starts
from that agent's sessions still active in the window (idx_sessions_agent_last_event:
last_event_at >= since) and reads each one's events through idx_events_session_ts. The
last_event_at/started_at bounds are implied by the window (a session's last_event_at is its
latest event and it starts no later than its first) and let the engine skip sessions that
cannot have events in it, so the cost follows the window, not the agent's history; on
PostgreSQL the timestamp bounds also prune `events` to the partitions of the window's weeks.
"""

from __future__ import annotations

from typing import Any

from obsctl.store.sql import Dialect, connection, one

__all__ = ["duration_at_rank", "event_aggregates", "score_average", "sessions_started",
           "top_sessions", "window_cost"]

_NOT_LIFECYCLE = "e.event_type NOT IN ('session_start', 'session_end')"
_IS_TOOL = "(e.tool_call IS NOT NULL OR e.event_type IN ('tool_call', 'tool_error'))"
_TOKENS = "COALESCE(SUM(COALESCE(e.tokens_in, 0) + COALESCE(e.tokens_out, 0)), 0)"


def _window(d: Dialect, since: str, until: str | None, agent: str | None) -> tuple[str, list]:
    """FROM ... WHERE ... for the non-lifecycle events of a window, and its parameters."""
    m = d.mark
    params: list = []
    if agent is None:
        sql = f"FROM events e WHERE e.timestamp >= {m}"
        params.append(since)
    else:
        sql = ("FROM sessions s JOIN events e ON e.session_id = s.session_id "
               f"WHERE s.agent_name = {m} AND s.last_event_at >= {m} AND e.timestamp >= {m}")
        params += [agent, since, since]
        if until is not None:
            sql += f" AND s.started_at < {m}"
            params.append(until)
    if until is not None:
        sql += f" AND e.timestamp < {m}"
        params.append(until)
    return f"{sql} AND {_NOT_LIFECYCLE}", params


def event_aggregates(db: Any, since: str, until: str | None, agent: str | None) -> dict:
    """One scan of the window: counts and sums behind the event metrics."""
    conn, d = connection(db)
    where, params = _window(d, since, until, agent)
    # The last column says whether a duration is fractional: SQLite's NUMERIC sum is then a
    # float, and PostgreSQL's NUMERIC sum (read as an int when whole) is made one too.
    row = one(conn.execute(
        f"""SELECT COUNT(*),
                   COALESCE(SUM(e.is_error), 0),
                   COUNT(e.duration_ms),
                   SUM(e.duration_ms),
                   COUNT(*) FILTER (WHERE {_IS_TOOL}),
                   COUNT(*) FILTER (WHERE {_IS_TOOL} AND e.is_error <> 0),
                   {_TOKENS},
                   COUNT(DISTINCT e.session_id),
                   COUNT(*) FILTER (WHERE e.duration_ms <> ROUND(e.duration_ms))
            {where}""",
        params,
    ))
    keys = ("events", "errors", "durations", "duration_sum", "tool_events", "tool_errors",
            "tokens", "sessions")
    *values, fractional = row
    result = dict(zip(keys, values))
    if fractional:
        result["duration_sum"] = float(result["duration_sum"])
    return result


def duration_at_rank(db: Any, since: str, until: str | None, agent: str | None,
                     rank: int) -> float | None:
    """The `rank`-th smallest duration_ms (1-based) among the window's events that have one."""
    conn, d = connection(db)
    where, params = _window(d, since, until, agent)
    row = conn.execute(
        f"SELECT e.duration_ms {where} AND e.duration_ms IS NOT NULL "
        f"ORDER BY e.duration_ms LIMIT 1 OFFSET {d.mark}",
        [*params, rank - 1],
    ).fetchone()
    return None if row is None else row[0]


def window_cost(db: Any, since: str, until: str | None, agent: str | None) -> float | None:
    """The USD cost stored with the window's events (None when none of them was priced)."""
    conn, d = connection(db)
    where, params = _window(d, since, until, agent)
    return one(conn.execute(f"SELECT SUM(e.cost_usd) {where}", params))[0]


def sessions_started(db: Any, since: str, until: str | None, agent: str | None) -> int:
    """Sessions whose started_at is in the window (idx_sessions_started / agent_started)."""
    conn, d = connection(db)
    m = d.mark
    sql, params = f"SELECT COUNT(*) FROM sessions WHERE started_at >= {m}", [since]
    if until is not None:
        sql += f" AND started_at < {m}"
        params.append(until)
    if agent is not None:
        sql += f" AND agent_name = {m}"
        params.append(agent)
    return one(conn.execute(sql, params))[0]


def score_average(db: Any, name: str, since: str, until: str | None,
                  agent: str | None) -> float | None:
    """The mean value of the scores named `name` given in the window (their created_at), on
    the sessions of `agent` when given; None when there is none (idx_session_scores_name_created)."""
    conn, d = connection(db)
    m = d.mark
    sql = "SELECT AVG(c.value) FROM session_scores c"
    params: list = []
    if agent is not None:
        sql += f" JOIN sessions s ON s.session_id = c.session_id AND s.agent_name = {m}"
        params.append(agent)
    sql += f" WHERE c.name = {m} AND c.created_at >= {m}"
    params += [name, since]
    if until is not None:
        sql += f" AND c.created_at < {m}"
        params.append(until)
    value = one(conn.execute(sql, params))[0]
    return None if value is None else float(value)


# What `top_sessions` orders by: the window's tokens, its slowest event, or its events.
_TOP_ORDER = {"tokens": "tokens", "slowest": "slowest_ms", "events": "events"}


def top_sessions(db: Any, since: str, until: str | None, agent: str | None, by: str,
                 limit: int) -> list[dict]:
    """The sessions whose events in the window weigh most in a metric (`by`: tokens, slowest
    or events), with their events, errors, tokens and slowest event in the window."""
    conn, d = connection(db)
    where, params = _window(d, since, until, agent)
    rows = conn.execute(
        f"""SELECT e.session_id, COUNT(*) AS events, COALESCE(SUM(e.is_error), 0),
                   {_TOKENS} AS tokens, MAX(e.duration_ms) AS slowest_ms
            {where} GROUP BY e.session_id
            ORDER BY {_TOP_ORDER[by]} DESC, e.session_id LIMIT {d.mark}""",
        [*params, limit]).fetchall()
    return [{"session_id": sid, "events": int(events), "errors": int(errors), "tokens": int(tokens),
             "slowest_ms": None if slowest is None else float(slowest)}
            for sid, events, errors, tokens, slowest in rows]

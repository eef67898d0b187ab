"""Aggregates over the events of a time window on PostgreSQL (the SQL behind
services/metrics.py): the same answers as obsctl/store/sqlite/metrics.py.

A window is `since <= timestamp < until` (until None = open ended), optionally restricted to
the sessions of one agent. Lifecycle events (session_start/session_end) never count. With an
agent, the last_event_at/started_at bounds implied by the window let the planner skip that
agent's sessions that cannot have events in it (idx_sessions_agent_last_event); the timestamp
bounds prune `events` to the partitions of the window's weeks.
"""

from __future__ import annotations

import psycopg

from obsctl.store.sql import one

_NOT_LIFECYCLE = "e.event_type NOT IN ('session_start', 'session_end')"
_IS_TOOL = "(e.tool_call IS NOT NULL OR e.event_type IN ('tool_call', 'tool_error'))"


def _window(since: str, until: str | None, agent: str | None) -> tuple[str, list]:
    """FROM ... WHERE ... for the non-lifecycle events of a window, and its parameters."""
    params: list = []
    if agent is None:
        sql = "FROM events e WHERE e.timestamp >= %s"
        params.append(since)
    else:
        sql = ("FROM sessions s JOIN events e ON e.session_id = s.session_id "
               "WHERE s.agent_name = %s AND s.last_event_at >= %s AND e.timestamp >= %s")
        params += [agent, since, since]
        if until is not None:
            sql += " AND s.started_at < %s"
            params.append(until)
    if until is not None:
        sql += " AND e.timestamp < %s"
        params.append(until)
    return f"{sql} AND {_NOT_LIFECYCLE}", params


def event_aggregates(conn: psycopg.Connection, since: str, until: str | None,
                     agent: str | None) -> dict:
    """One scan of the window: counts and sums behind the event metrics."""
    where, params = _window(since, until, agent)
    # Booleans counted as SQLite counts them (1 per true row); SUM over BIGINT/NUMERIC comes
    # back as NUMERIC, read as an int when whole (the store's loader), as on SQLite.
    row = one(conn.execute(
        f"""SELECT COUNT(*),
                   COALESCE(SUM(e.is_error), 0),
                   COUNT(e.duration_ms),
                   SUM(e.duration_ms),
                   COUNT(*) FILTER (WHERE {_IS_TOOL}),
                   COUNT(*) FILTER (WHERE {_IS_TOOL} AND e.is_error <> 0),
                   COALESCE(SUM(COALESCE(e.tokens_in, 0) + COALESCE(e.tokens_out, 0)), 0),
                   COUNT(DISTINCT e.session_id),
                   COALESCE(bool_or(e.duration_ms <> trunc(e.duration_ms)), false)
            {where}""",
        params,
    ))
    keys = ("events", "errors", "durations", "duration_sum", "tool_events", "tool_errors",
            "tokens", "sessions")
    *values, fractional = row
    result = dict(zip(keys, values))
    if fractional:  # SQLite sums as a float once one duration is fractional (a REAL)
        result["duration_sum"] = float(result["duration_sum"])
    return result


def duration_at_rank(conn: psycopg.Connection, since: str, until: str | None,
                     agent: str | None, rank: int) -> float | None:
    """The `rank`-th smallest duration_ms (1-based) among the window's events that have one."""
    where, params = _window(since, until, agent)
    row = conn.execute(
        f"SELECT e.duration_ms {where} AND e.duration_ms IS NOT NULL "
        f"ORDER BY e.duration_ms LIMIT 1 OFFSET %s",
        [*params, rank - 1],
    ).fetchone()
    return None if row is None else row[0]


def window_cost(conn: psycopg.Connection, since: str, until: str | None,
                agent: str | None) -> float | None:
    """The USD cost stored with the window's events (None when none of them was priced)."""
    where, params = _window(since, until, agent)
    return one(conn.execute(f"SELECT SUM(e.cost_usd) {where}", params))[0]


def sessions_started(conn: psycopg.Connection, since: str, until: str | None,
                     agent: str | None) -> int:
    """Sessions whose started_at is in the window (idx_sessions_started / agent_started)."""
    sql, params = "SELECT COUNT(*) FROM sessions WHERE started_at >= %s", [since]
    if until is not None:
        sql += " AND started_at < %s"
        params.append(until)
    if agent is not None:
        sql += " AND agent_name = %s"
        params.append(agent)
    return one(conn.execute(sql, params))[0]


def score_average(conn: psycopg.Connection, name: str, since: str, until: str | None,
                  agent: str | None) -> float | None:
    """The mean value of the scores named `name` given in the window (their created_at), on
    the sessions of `agent` when given; None when there is none."""
    sql = "SELECT AVG(c.value) FROM session_scores c"
    params: list = []
    if agent is not None:
        sql += " JOIN sessions s ON s.session_id = c.session_id AND s.agent_name = %s"
        params.append(agent)
    sql += " WHERE c.name = %s AND c.created_at >= %s"
    params += [name, since]
    if until is not None:
        sql += " AND c.created_at < %s"
        params.append(until)
    value = one(conn.execute(sql, params))[0]
    return None if value is None else float(value)


# What `top_sessions` orders by: the window's tokens, its slowest event, or its events.
_TOP_ORDER = {"tokens": "tokens", "slowest": "slowest_ms", "events": "events"}


def top_sessions(conn: psycopg.Connection, since: str, until: str | None, agent: str | None,
                 by: str, limit: int) -> list[dict]:
    """The sessions whose events in the window weigh most in a metric (`by`: tokens, slowest
    or events), with their events, errors, tokens and slowest event in the window."""
    where, params = _window(since, until, agent)
    rows = conn.execute(
        f"""SELECT e.session_id, COUNT(*) AS events, COALESCE(SUM(e.is_error), 0),
                   COALESCE(SUM(COALESCE(e.tokens_in, 0) + COALESCE(e.tokens_out, 0)), 0) AS tokens,
                   MAX(e.duration_ms) AS slowest_ms
            {where} GROUP BY e.session_id
            ORDER BY {_TOP_ORDER[by]} DESC, e.session_id LIMIT %s""",
        [*params, limit]).fetchall()
    return [{"session_id": sid, "events": int(events), "errors": int(errors), "tokens": int(tokens),
             "slowest_ms": None if slowest is None else float(slowest)}
            for sid, events, errors, tokens, slowest in rows]

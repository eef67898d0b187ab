"""Aggregates behind the scorecards (services/scorecards.py), for both stores; the duration
percentiles stay with each backend (obsctl/store/<backend>/scorecards.py), where the engines
rank differently.

Scorecards look at the sessions whose `started_at` is in `[since, until)` and at every
non-lifecycle event of those sessions. Each function groups either by agent (the whole
fleet, `agent=None`) or, for one agent, by day: day `i` holds the sessions started in
`[since + i * 24h, since + (i + 1) * 24h)`.

Plans: sessions are found through idx_sessions_started or idx_sessions_agent_started, and
their events through idx_events_session_stats, which covers every event column read here.
"""

from __future__ import annotations

from typing import Any

from obsctl.store.sql import Dialect, connection
from obsctl.timeutil import parse_ts

__all__ = ["event_totals", "session_totals"]

DAY_MS = 86_400_000
NOT_LIFECYCLE = "e.event_type NOT IN ('session_start', 'session_end')"
# Milliseconds since the epoch of a normalised timestamp (UTC, whole milliseconds), as an
# integer, so that the day number is an integer division and a session exactly on a day
# boundary lands in the later day.
_EPOCH_MS = {
    "sqlite": ("(CAST(strftime('%s', s.started_at) AS INTEGER) * 1000 "
               "+ CAST(substr(s.started_at, 21, 3) AS INTEGER))"),
    "postgresql": "floor(EXTRACT(EPOCH FROM s.started_at::timestamptz) * 1000)::bigint",
}
# PostgreSQL sums a group's costs in the order SQLite's plan reads them (the agent's
# sessions through idx_sessions_agent_started, each session's events through
# idx_events_session_stats), so that the float sums come out bit for bit the same.
# Sessions starting in the same millisecond go by session_id there (by rowid on SQLite).
_COST_ORDER = {
    "sqlite": "",
    "postgresql": (" ORDER BY s.agent_name, s.started_at, s.session_id, e.event_type, e.is_error, "
                   "e.duration_ms NULLS FIRST, e.tokens_in NULLS FIRST, e.tokens_out NULLS FIRST, "
                   "e.model NULLS FIRST, e.id"),
}


def grouping(d: Dialect, since: str, until: str, agent: str | None) -> tuple[str, str, list]:
    """(group expression, WHERE clause over sessions `s`, parameters); background sessions
    (work outside any agent run) are left out."""
    m = d.mark
    if agent is None:
        return ("s.agent_name", f"s.background = 0 AND s.started_at >= {m} AND s.started_at < {m}",
                [since, until])
    origin_ms = int(parse_ts(since).timestamp() * 1000)
    return (f"(({_EPOCH_MS[d.name]} - {origin_ms}) / {DAY_MS})",
            f"s.background = 0 AND s.agent_name = {m} AND s.started_at >= {m} AND s.started_at < {m}",
            [agent, since, until])


def session_totals(db: Any, since: str, until: str, agent: str | None = None) -> dict:
    """{group: (sessions, error_sessions, completed_sessions)}."""
    conn, d = connection(db)
    group, where, params = grouping(d, since, until, agent)
    cursor = conn.execute(
        f"""SELECT {group}, COUNT(*),
                   SUM(CASE WHEN s.status = 'error' THEN 1 ELSE 0 END),
                   SUM(CASE WHEN s.status = 'completed' THEN 1 ELSE 0 END)
            FROM sessions s WHERE {where} GROUP BY 1 ORDER BY 1""",
        params,
    )
    return {row[0]: row[1:] for row in cursor}


def event_totals(db: Any, since: str, until: str, agent: str | None) -> dict:
    """Per group: (events, error_events, timed_events, tokens, cost), lifecycle events left
    out; the cost is the sum stored with the events at ingest, None when none was priced."""
    conn, d = connection(db)
    group, where, params = grouping(d, since, until, agent)
    rows = conn.execute(
        f"""SELECT {group}, COUNT(*), SUM(e.is_error), COUNT(e.duration_ms),
                   COALESCE(SUM(e.tokens_in), 0) + COALESCE(SUM(e.tokens_out), 0),
                   SUM(e.cost_usd{_COST_ORDER[d.name]})
            FROM sessions s JOIN events e ON e.session_id = s.session_id
            WHERE {where} AND {NOT_LIFECYCLE}
            GROUP BY 1 ORDER BY 1""",
        params,
    ).fetchall()
    return {row[0]: row[1:6] for row in rows}

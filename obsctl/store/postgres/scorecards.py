"""Aggregates behind the scorecards (services/scorecards.py) on PostgreSQL: the same answers
and Python types as obsctl/store/sqlite/scorecards.py.

Scorecards look at the sessions whose `started_at` is in `[since, until)` and at every
non-lifecycle event of those sessions. Each function groups either by agent (the whole
fleet, `agent=None`) or, for one agent, by day: day `i` holds the sessions started in
`[since + i * 24h, since + (i + 1) * 24h)`.
"""

from __future__ import annotations

import psycopg

from obsctl.timeutil import parse_ts

_DAY_MS = 86_400_000
_NOT_LIFECYCLE = "e.event_type NOT IN ('session_start', 'session_end')"
# Milliseconds since the epoch of a normalised timestamp (UTC, whole milliseconds), as a
# BIGINT, so that the day number is an integer division and a session exactly on a day
# boundary lands in the later day (SQLite: strftime('%s') * 1000 + the milliseconds).
_EPOCH_MS = "floor(EXTRACT(EPOCH FROM s.started_at::timestamptz) * 1000)::bigint"
# The order SQLite sums a group's costs in (its plan: the agent's sessions through
# idx_sessions_agent_started, each session's events through idx_events_session_stats), so
# that the float sums come out bit for bit the same. Sessions starting in the same
# millisecond go by session_id here (by rowid on SQLite).
_SQLITE_SCAN_ORDER = ("s.agent_name, s.started_at, s.session_id, e.event_type, e.is_error, "
                      "e.duration_ms NULLS FIRST, e.tokens_in NULLS FIRST, e.tokens_out NULLS FIRST, "
                      "e.model NULLS FIRST, e.id")


def _grouping(since: str, until: str, agent: str | None) -> tuple[str, str, list]:
    """(group expression, WHERE clause over sessions `s`, parameters); background sessions
    (work outside any agent run) are left out."""
    if agent is None:
        return "s.agent_name", "s.background = 0 AND s.started_at >= %s AND s.started_at < %s", [since, until]
    origin_ms = int(parse_ts(since).timestamp() * 1000)
    return (f"(({_EPOCH_MS} - {origin_ms}::bigint) / {_DAY_MS}::bigint)",
            "s.background = 0 AND s.agent_name = %s AND s.started_at >= %s AND s.started_at < %s",
            [agent, since, until])


def session_totals(conn: psycopg.Connection, since: str, until: str,
                   agent: str | None = None) -> dict:
    """{group: (sessions, error_sessions, completed_sessions)}."""
    group, where, params = _grouping(since, until, agent)
    cursor = conn.execute(
        f"""SELECT {group}, COUNT(*),
                   SUM(CASE WHEN s.status = 'error' THEN 1 ELSE 0 END),
                   SUM(CASE WHEN s.status = 'completed' THEN 1 ELSE 0 END)
            FROM sessions s WHERE {where} GROUP BY 1 ORDER BY 1""",
        params,
    )
    return {row[0]: row[1:] for row in cursor}


def event_totals(conn: psycopg.Connection, since: str, until: str, agent: str | None) -> dict:
    """Per group: (events, error_events, timed_events, tokens, cost), lifecycle events left
    out; the cost is the sum stored with the events at ingest (summed in SQLite's order, so
    it rounds the same), None when none was priced."""
    group, where, params = _grouping(since, until, agent)
    rows = conn.execute(
        f"""SELECT {group}, COUNT(*), SUM(e.is_error), COUNT(e.duration_ms),
                   COALESCE(SUM(e.tokens_in), 0) + COALESCE(SUM(e.tokens_out), 0),
                   SUM(e.cost_usd ORDER BY {_SQLITE_SCAN_ORDER})
            FROM sessions s JOIN events e ON e.session_id = s.session_id
            WHERE {where} AND {_NOT_LIFECYCLE}
            GROUP BY 1 ORDER BY 1""",
        params,
    ).fetchall()
    return {row[0]: row[1:6] for row in rows}

def duration_percentiles(conn: psycopg.Connection, since: str, until: str, agent: str | None,
                         counts: dict) -> dict:
    """{group: (p50, p95)}: nearest-rank percentiles of each group's event durations.

    `counts` is each group's number of timed events (from event_totals). Nearest rank is
    the ceil(q * n)-th smallest of n, computed in integers as (n + 1) // 2 and
    (95 n + 99) // 100 so that no float rounding moves a rank; the ranks are numbered by
    ROW_NUMBER over each group's sorted durations. A group whose durations no longer number
    `counts[group]` (events arrived meanwhile) is left out, as on SQLite.
    """
    group, where, params = _grouping(since, until, agent)
    # (group, rank, size, 0 for p50 / 1 for p95): both ranks of a group, even when they are
    # the same row (a group of one or two durations).
    wanted = [(g, rank, counts[g], w) for g in sorted(counts) if counts[g]
              for w, rank in enumerate(((counts[g] + 1) // 2, (95 * counts[g] + 99) // 100))]
    if not wanted:
        return {}
    groups, ranks, sizes, which = (list(column) for column in zip(*wanted))
    group_type = "text" if agent is None else "bigint"
    picked = conn.execute(
        f"""WITH ranked AS (
                SELECT g, v, ROW_NUMBER() OVER (PARTITION BY g ORDER BY v) AS k,
                       COUNT(*) OVER (PARTITION BY g) AS n
                FROM (SELECT {group} AS g, e.duration_ms AS v
                      FROM sessions s JOIN events e ON e.session_id = s.session_id
                      WHERE {where} AND {_NOT_LIFECYCLE} AND e.duration_ms IS NOT NULL) d
            )
            SELECT w.which, r.g, r.v
            FROM unnest(%s::{group_type}[], %s::bigint[], %s::bigint[], %s::int[]) AS w(g, n, k, which)
            JOIN ranked r ON r.g = w.g AND r.n = w.n AND r.k = w.k
            ORDER BY r.g, w.which""",
        [*params, groups, sizes, ranks, which],
    ).fetchall()
    result: dict = {}
    for w, g, v in picked:
        result.setdefault(g, [None, None])[w] = v
    return {g: tuple(pair) for g, pair in result.items()}

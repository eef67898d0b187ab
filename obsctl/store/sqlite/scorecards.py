"""Aggregates behind the scorecards (services/scorecards.py).

Scorecards look at the sessions whose `started_at` is in `[since, until)` and at every
non-lifecycle event of those sessions. Each function groups either by agent (the whole
fleet, `agent=None`) or, for one agent, by day: day `i` holds the sessions started in
`[since + i * 24h, since + (i + 1) * 24h)`.

Plans: sessions are found through idx_sessions_started or idx_sessions_agent_started, and
their events through idx_events_session_stats, which covers every event column read here.
"""

from __future__ import annotations

import sqlite_utils

from obsctl.store.sqlite.db import read_snapshot  # noqa: F401 (re-exported for the services)
from obsctl.timeutil import parse_ts

_DAY_MS = 86_400_000
_SORTED = "scorecard_durations"
_NOT_LIFECYCLE = "e.event_type NOT IN ('session_start', 'session_end')"
# Milliseconds since the epoch of a normalised timestamp, in integers so that a session
# exactly on a day boundary lands in the later day.
_EPOCH_MS = ("(CAST(strftime('%s', s.started_at) AS INTEGER) * 1000 "
             "+ CAST(substr(s.started_at, 21, 3) AS INTEGER))")


def _grouping(since: str, until: str, agent: str | None) -> tuple[str, str, list]:
    """(group expression, WHERE clause over sessions `s`, parameters); background sessions
    (work outside any agent run) are left out."""
    if agent is None:
        return "s.agent_name", "s.background = 0 AND s.started_at >= ? AND s.started_at < ?", [since, until]
    origin_ms = int(parse_ts(since).timestamp() * 1000)
    return (f"(({_EPOCH_MS} - {origin_ms}) / {_DAY_MS})",
            "s.background = 0 AND s.agent_name = ? AND s.started_at >= ? AND s.started_at < ?",
            [agent, since, until])


def session_totals(db: sqlite_utils.Database, since: str, until: str,
                   agent: str | None = None) -> dict:
    """{group: (sessions, error_sessions, completed_sessions)}."""
    group, where, params = _grouping(since, until, agent)
    cursor = db.conn.execute(
        f"""SELECT {group}, COUNT(*), SUM(s.status = 'error'), SUM(s.status = 'completed')
            FROM sessions s WHERE {where} GROUP BY 1""",
        params,
    )
    return {row[0]: row[1:] for row in cursor}


def event_totals(db: sqlite_utils.Database, since: str, until: str, agent: str | None) -> dict:
    """Per group: (events, error_events, timed_events, tokens, cost), lifecycle events left
    out; the cost is the sum stored with the events at ingest, None when none was priced."""
    group, where, params = _grouping(since, until, agent)
    rows = db.conn.execute(
        f"""SELECT {group}, COUNT(*), SUM(e.is_error), COUNT(e.duration_ms),
                   COALESCE(SUM(e.tokens_in), 0) + COALESCE(SUM(e.tokens_out), 0), SUM(e.cost_usd)
            FROM sessions s JOIN events e ON e.session_id = s.session_id
            WHERE {where} AND {_NOT_LIFECYCLE}
            GROUP BY 1""",
        params,
    ).fetchall()
    return {row[0]: row[1:6] for row in rows}

def duration_percentiles(db: sqlite_utils.Database, since: str, until: str, agent: str | None,
                         counts: dict) -> dict:
    """{group: (p50, p95)}: nearest-rank percentiles of each group's event durations.

    `counts` is each group's number of timed events (from event_totals). Nearest rank is
    the ceil(q * n)-th smallest of n, computed in integers as (n + 1) // 2 and
    (95 n + 99) // 100 so that no float rounding moves a rank.

    SQLite (3.40) has no percentile aggregate and its window functions are slow here
    (ROW_NUMBER over 230k durations took about twice as long), so the durations are
    sorted once into a temporary table, whose rowids then follow the sorted order: the
    k-th duration of a group is at rowid (durations of earlier groups) + k.
    """
    group, where, params = _grouping(since, until, agent)
    wanted: dict[int, list[tuple]] = {}  # rowid -> (group, 0 for p50 / 1 for p95), both when they fall on one
    offset = 0
    for g in sorted(counts):  # the ORDER BY below: text in code point order, or day numbers
        n = counts[g]
        if n:
            wanted.setdefault(offset + (n + 1) // 2, []).append((g, 0))
            wanted.setdefault(offset + (95 * n + 99) // 100, []).append((g, 1))
        offset += n
    if not wanted:
        return {}
    conn = db.conn
    conn.execute(f"DROP TABLE IF EXISTS temp.{_SORTED}")
    try:
        conn.execute(
            f"""CREATE TEMP TABLE {_SORTED} AS
                SELECT {group} AS g, e.duration_ms AS v
                FROM sessions s JOIN events e ON e.session_id = s.session_id
                WHERE {where} AND {_NOT_LIFECYCLE} AND e.duration_ms IS NOT NULL
                ORDER BY 1, 2""",
            params,
        )
        picked = conn.execute(
            f"SELECT rowid, g, v FROM temp.{_SORTED} WHERE rowid IN "
            f"({', '.join('?' for _ in wanted)})", list(wanted)).fetchall()
    finally:
        conn.execute(f"DROP TABLE IF EXISTS temp.{_SORTED}")
    result: dict = {}
    for rowid, g, v in picked:
        for expected, which in wanted[rowid]:
            if expected != g:  # the counts no longer match the rows (events arrived meanwhile)
                continue
            result.setdefault(g, [None, None])[which] = v
    return {g: tuple(pair) for g, pair in result.items()}

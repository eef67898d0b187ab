"""The scorecards' duration percentiles on PostgreSQL (the same answers and Python types as
on SQLite); the other aggregates are written once for both stores in
obsctl/store/sql/scorecards.py (re-exported here for the store's repository)."""

from __future__ import annotations

import psycopg

from obsctl.store.sql import POSTGRES
from obsctl.store.sql.scorecards import *  # noqa: F403 (the store's repository binds these)
from obsctl.store.sql.scorecards import NOT_LIFECYCLE, grouping


def duration_percentiles(conn: psycopg.Connection, since: str, until: str, agent: str | None,
                         counts: dict) -> dict:
    """{group: (p50, p95)}: nearest-rank percentiles of each group's event durations.

    `counts` is each group's number of timed events (from event_totals). Nearest rank is
    the ceil(q * n)-th smallest of n, computed in integers as (n + 1) // 2 and
    (95 n + 99) // 100 so that no float rounding moves a rank; the ranks are numbered by
    ROW_NUMBER over each group's sorted durations. A group whose durations no longer number
    `counts[group]` (events arrived meanwhile) is left out, as on SQLite.
    """
    group, where, params = grouping(POSTGRES, since, until, agent)
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
                      WHERE {where} AND {NOT_LIFECYCLE} AND e.duration_ms IS NOT NULL) d
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

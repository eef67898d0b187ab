"""The scorecards' duration percentiles on SQLite; the other aggregates are written once for
both stores in obsctl/store/sql/scorecards.py (re-exported here for the store's repository)."""

from __future__ import annotations

import sqlite_utils

from obsctl.store.sql import SQLITE
from obsctl.store.sql.scorecards import *  # noqa: F403 (the store's repository binds these)
from obsctl.store.sql.scorecards import NOT_LIFECYCLE, grouping

_SORTED = "scorecard_durations"


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
    group, where, params = grouping(SQLITE, since, until, agent)
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
                WHERE {where} AND {NOT_LIFECYCLE} AND e.duration_ms IS NOT NULL
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

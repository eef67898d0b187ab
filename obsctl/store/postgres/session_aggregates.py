"""Per-session aggregates behind the explain summary and the comparison (PostgreSQL; the same
answers as obsctl/store/sqlite/session_aggregates.py)."""

from __future__ import annotations

import psycopg

# SUM over BIGINT is NUMERIC: the store's loader reads it back as SQLite does (an int). SQLite
# sums durations as a float as soon as one of them is fractional (a REAL under NUMERIC
# affinity), even when the sum is whole: the last column says so. The groups come in SQLite's
# GROUP BY order (sorted, NULLs first).
_BREAKDOWN = """
SELECT event_type, model, tool_name,
       COUNT(*), SUM(is_error), COALESCE(SUM(tokens_in), 0), COALESCE(SUM(tokens_out), 0),
       COALESCE(SUM(duration_ms), 0), COUNT(duration_ms),
       COALESCE(bool_or(duration_ms <> trunc(duration_ms)), false)
FROM events WHERE session_id = %s
GROUP BY event_type, model, tool_name
ORDER BY event_type, model NULLS FIRST, tool_name NULLS FIRST
"""

BREAKDOWN_COLUMNS = ("event_type", "model", "tool_name", "events", "errors", "tokens_in",
                     "tokens_out", "duration_sum", "duration_count")


def session_breakdown(conn: psycopg.Connection, session_id: str) -> list[dict]:
    """Event counts, errors, tokens and durations grouped by (event_type, model, tool_name)."""
    groups = []
    for *row, fractional in conn.execute(_BREAKDOWN, [session_id]):
        group = dict(zip(BREAKDOWN_COLUMNS, row))
        if fractional:
            group["duration_sum"] = float(group["duration_sum"])
        groups.append(group)
    return groups

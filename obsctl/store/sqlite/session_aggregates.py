"""Per-session aggregates behind the explain summary and the comparison."""

from __future__ import annotations

import sqlite_utils

# One pass over the session's events (found through idx_events_session_ts); the groups are
# few, so the caller folds them into per-type, per-model and per-tool maps.
_BREAKDOWN = """
SELECT event_type, model, tool_name,
       COUNT(*), SUM(is_error), COALESCE(SUM(tokens_in), 0), COALESCE(SUM(tokens_out), 0),
       COALESCE(SUM(duration_ms), 0), COUNT(duration_ms)
FROM events WHERE session_id = ?
GROUP BY event_type, model, tool_name
"""

BREAKDOWN_COLUMNS = ("event_type", "model", "tool_name", "events", "errors", "tokens_in",
                     "tokens_out", "duration_sum", "duration_count")


def session_breakdown(db: sqlite_utils.Database, session_id: str) -> list[dict]:
    """Event counts, errors, tokens and durations grouped by (event_type, model, tool_name)."""
    cursor = db.conn.execute(_BREAKDOWN, [session_id])
    return [dict(zip(BREAKDOWN_COLUMNS, row)) for row in cursor]

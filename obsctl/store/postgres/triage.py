"""The SQL behind triage and postmortems on PostgreSQL: written once for both stores in
obsctl/store/sql/triage.py and obsctl/store/sql/long_session.py; here, the baseline's
durations, which each engine hands over in its own way."""

from __future__ import annotations

import psycopg

from obsctl.store.sql.long_session import *  # noqa: F403 (a long session's reads, written once)
from obsctl.store.sql.triage import *  # noqa: F403 (the store's repository binds these)

# One array of durations per (event_type, tool_name); its NUMERIC elements load as ints when
# whole, else floats, as SQLite's json_group_array of the NUMERIC column reads back.
_DURATIONS = """
SELECT e.event_type, e.tool_name, array_agg(e.duration_ms)
FROM events e
WHERE e.session_id = ANY(%s)
  AND e.duration_ms IS NOT NULL AND e.is_error = 0
  AND e.event_type NOT IN ('session_start', 'session_end')
GROUP BY e.event_type, e.tool_name
ORDER BY e.event_type, e.tool_name NULLS FIRST
"""


def baseline_durations(conn: psycopg.Connection,
                       session_ids: list[str]) -> dict[tuple[str, str | None], list[float]]:
    """{(event_type, tool_name): sorted durations} of the successful events of these baseline
    sessions."""
    if not session_ids:
        return {}
    rows = conn.execute(_DURATIONS, [session_ids]).fetchall()
    return {(etype, tool): sorted(values) for etype, tool, values in rows}

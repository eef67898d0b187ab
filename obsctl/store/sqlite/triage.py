"""The SQL behind triage and postmortems: written once for both stores in
obsctl/store/sql/triage.py and obsctl/store/sql/long_session.py; here, the baseline's
durations, which each engine hands over in its own way."""

from __future__ import annotations

import sqlite_utils

import obsctl.store.long_session_sql as long_sql
from obsctl.store.sql.long_session import *  # noqa: F403 (a long session's reads, written once)
from obsctl.store.sql.long_session import EXACT_SQLITE as _EXACT
from obsctl.store.sql.triage import *  # noqa: F403 (the store's repository binds these)

# The durations of successful, non-lifecycle events per (event_type, tool_name), one list per
# kind: SQLite has no percentile aggregate, and ranking with window functions measured
# several times slower than sorting these few thousand numbers in Python.
_DURATIONS = f"""
SELECT e.event_type, e.tool_name, group_concat({_EXACT.format("e.duration_ms")})
FROM events e
WHERE e.session_id IN ({{ids}})
  AND e.duration_ms IS NOT NULL AND e.is_error = 0
  AND e.event_type NOT IN ('session_start', 'session_end')
GROUP BY e.event_type, e.tool_name
"""



def baseline_durations(db: sqlite_utils.Database,
                       session_ids: list[str]) -> dict[tuple[str, str | None], list[float]]:
    """{(event_type, tool_name): sorted durations} of the successful events of these baseline
    sessions."""
    if not session_ids:
        return {}
    sql = _DURATIONS.format(ids=", ".join("?" * len(session_ids)))
    rows = db.conn.execute(sql, session_ids).fetchall()
    return {(etype, tool): sorted(long_sql.numbers(values)) for etype, tool, values in rows}

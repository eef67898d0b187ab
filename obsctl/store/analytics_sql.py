"""The SQL of `GET /analytics` that is the same text on every backend: reads of the
session_stats and event_stats rollups, with the backend's placeholder (`{m}`) or its session
duration expression filled in where a query takes one (each backend's analytics.py holds the
rest: its casts and the model usage it reads)."""

OVERVIEW = """
SELECT COALESCE(SUM(sessions), 0),
       COALESCE(SUM(CASE WHEN status = 'active' THEN sessions END), 0),
       COALESCE(SUM(CASE WHEN status = 'completed' THEN sessions END), 0),
       COALESCE(SUM(CASE WHEN status = 'error' THEN sessions END), 0),
       COALESCE(SUM(events), 0),
       COALESCE(SUM(tokens_in), 0),
       COALESCE(SUM(tokens_out), 0),
       SUM(duration_sum), SUM(ended)
FROM session_stats
"""

STARTS = ("SELECT (SELECT MIN(started_at) FROM sessions), "
         "(SELECT MAX(started_at) FROM sessions)")


def durations(session_duration_ms: str) -> str:
    """The shortest and longest ended session, given the backend's duration expression (the
    same text as its idx_sessions_duration, so that the index serves it)."""
    return (f"SELECT (SELECT MIN({session_duration_ms}) FROM sessions WHERE ended_at IS NOT NULL), "
            f"(SELECT MAX({session_duration_ms}) FROM sessions WHERE ended_at IS NOT NULL)")


# With {m}, the backend's placeholder.
TOP_AGENTS = """
SELECT agent_name, SUM(sessions), SUM(tokens_in + tokens_out) AS tokens
FROM session_stats
GROUP BY agent_name
HAVING SUM(sessions) > 0
ORDER BY tokens DESC, agent_name
LIMIT {m}
"""

# `since` is the start of a day (services/analytics.first_day), so comparing days is exact.
SESSIONS_BY_DAY = """
SELECT day, SUM(sessions), SUM(tokens_in + tokens_out)
FROM session_stats
WHERE day >= substr({m}, 1, 10)
GROUP BY day
HAVING SUM(sessions) > 0
ORDER BY day
"""

OVERVIEW_COLUMNS = ("total_sessions", "active_sessions", "completed_sessions", "error_sessions",
                    "total_events", "total_tokens_in", "total_tokens_out", "earliest_session",
                    "latest_session", "duration_avg", "duration_min", "duration_max")

EVENT_TYPES = """
SELECT event_type, SUM(event_count) AS n
FROM event_stats
WHERE event_type NOT IN ('session_start', 'session_end')
GROUP BY event_type
ORDER BY n DESC, event_type
"""

HOURLY = "SELECT hour, SUM(event_count) FROM event_stats GROUP BY hour ORDER BY hour"

# Costs (stored at ingest, store/cost_sql.py), read from the rollups; a group's cost is NULL
# when none of it was priced, and an empty model name is no model.
# Per agent and start day, from session_stats (kept by triggers on sessions): (agent_name, day,
# cost_usd or None, unpriced calls, sessions).
COST_BY_AGENT_DAY = """
SELECT agent_name, day, CASE WHEN SUM(priced_sessions) > 0 THEN SUM(cost_usd) END, SUM(unpriced_calls),
       SUM(sessions)
FROM session_stats
GROUP BY agent_name, day
HAVING SUM(sessions) > 0
"""

# Per model, over the calls that used tokens, from event_stats (kept by the ingest
# transaction): (model or None, cost_usd or None, unpriced calls, calls), most cost first,
# unpriced models last.
COST_BY_MODEL = """
SELECT NULLIF(model, ''), CASE WHEN SUM(priced_calls) > 0 THEN SUM(cost_usd) END, SUM(unpriced_calls),
       SUM(priced_calls + unpriced_calls)
FROM event_stats
GROUP BY NULLIF(model, '')
HAVING SUM(priced_calls + unpriced_calls) > 0
ORDER BY SUM(priced_calls) = 0, CASE WHEN SUM(priced_calls) > 0 THEN SUM(cost_usd) END DESC,
         NULLIF(model, '') IS NULL, NULLIF(model, '')
"""

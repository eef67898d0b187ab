"""The SQL of `GET /analytics` that is the same text on every backend: parameterless reads
of the session_stats and event_stats rollups (each backend's analytics.py holds the rest:
its duration expression, placeholders and casts)."""

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

# Costs (stored at ingest, store/cost_sql.py): per agent and start day from the sessions' sums,
# per model from the events that used tokens (an empty model name is no model). A group's cost is NULL when none of it was priced.
COST_BY_AGENT_DAY = """
SELECT agent_name, substr(started_at, 1, 10) AS day, SUM(cost_usd), SUM(unpriced_calls), COUNT(*)
FROM sessions
GROUP BY agent_name, day
"""
COST_BY_MODEL = """
SELECT NULLIF(model, ''), SUM(cost_usd), SUM(CASE WHEN cost_usd IS NULL THEN 1 ELSE 0 END), COUNT(*)
FROM events
WHERE (COALESCE(tokens_in, 0) + COALESCE(tokens_out, 0)) > 0
GROUP BY NULLIF(model, '')
ORDER BY SUM(cost_usd) IS NULL, SUM(cost_usd) DESC, NULLIF(model, '') IS NULL, NULLIF(model, '')
"""

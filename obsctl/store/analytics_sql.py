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

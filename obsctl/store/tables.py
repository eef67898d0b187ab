"""The tables a whole store consists of, with their columns in one order for both backends:
what `obsctl db copy` moves (obsctl/services/transfer.py). Rollups (event_stats, event_totals,
session_stats) are not copied: the target recomputes them from what was copied.

Each entry: (table, columns, order): rows are read in `order`, the order they were written
in (SQLite's rowid, PostgreSQL's serial columns), and written to the target in that order,
so what a listing orders by arrival stays in the same order.
"""

from __future__ import annotations

# What reading a session, and an event, returns on both backends, in this order.
SESSION_COLUMNS = (
    "session_id", "agent_name", "started_at", "ended_at", "metadata", "total_tokens_in",
    "total_tokens_out", "status", "event_count", "error_count", "total_duration_ms",
    "last_event_at", "cost_usd", "unpriced_calls", "total_tokens_cache_read", "total_tokens_cache_write",
    "total_tokens_reasoning", "background",
)
EVENT_READ_COLUMNS = (
    "event_id", "session_id", "event_type", "timestamp", "model", "tokens_in", "tokens_out",
    "duration_ms", "input_data", "output_data", "tool_call", "decision_trace", "metadata",
    "agent_name", "tool_name", "is_error", "parent_id", "cost_usd", "tokens_cache_read",
    "tokens_cache_write", "tokens_reasoning",
)
# An event as ingest takes it (the bulk export's lines, models/sessions.py EventLine), in this order.
from obsctl.vocabulary import EVENT_LINE_COLUMNS  # noqa: E402,F401 (the store reads rows in it)

COPIED_TABLES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("sessions", ("session_id", "agent_name", "started_at", "ended_at", "metadata", "total_tokens_in",
                  "total_tokens_out", "status", "event_count", "error_count", "total_duration_ms",
                  "last_event_at", "body_events", "error_events", "idle_ended",
                  "last_seen_at", "cost_usd", "unpriced_calls", "total_tokens_cache_read",
                  "total_tokens_cache_write", "total_tokens_reasoning", "background")),
    ("events", ("id", "event_id", "session_id", "event_type", "timestamp", "model", "tokens_in",
                "tokens_out", "duration_ms", "input_data", "output_data", "tool_call", "decision_trace",
                "metadata", "agent_name", "tool_name", "is_error", "parent_id", "cost_usd",
                "tokens_cache_read", "tokens_cache_write", "tokens_reasoning", "tool_key")),
    ("otlp_trace_sessions", ("trace_id", "session_id")),
    ("session_tags", ("session_id", "key", "value")),
    ("cost_prices", ("id", "prices", "mixed", "updated_at", "repriced_at")),
    ("session_scores", ("score_id", "session_id", "name", "value", "comment", "created_at")),
    ("alert_rules", ("rule_id", "name", "metric", "operator", "threshold", "window_minutes",
                     "cooldown_minutes", "agent_filter", "enabled", "created_at", "updated_at",
                     "last_fired_at", "severity")),
    ("alert_events", ("alert_id", "rule_id", "rule_name", "metric", "operator", "threshold", "value",
                      "window_minutes", "agent_filter", "fired_at", "acknowledged", "acknowledged_at",
                      "resolved_at")),
    ("webhooks", ("webhook_id", "url", "format", "secret", "routing_key", "rule_ids", "enabled",
                  "created_at", "updated_at", "allow_private")),
    ("webhook_deliveries", ("delivery_id", "webhook_id", "alert_id", "event_type", "payload", "status",
                            "attempts", "last_error", "last_status_code", "next_attempt_at",
                            "created_at", "delivered_at")),
    ("sla_targets", ("agent_name", "metric", "target_value", "operator", "window_hours", "created_at",
                     "updated_at")),
    ("sla_snapshots", ("id", "agent_name", "metric", "operator", "target_value", "actual_value",
                       "status", "checked_at")),
)

TABLE_COLUMNS = dict(COPIED_TABLES)

# The sums over all sessions that a faithful copy keeps (the copy's verification), one query
# for both backends, and the names of its columns.
SESSION_TOTALS = ("SELECT COUNT(*), COALESCE(SUM(event_count), 0), COALESCE(SUM(error_count), 0), "
                  "COALESCE(SUM(total_tokens_in), 0), COALESCE(SUM(total_tokens_out), 0), "
                  "COALESCE(SUM(body_events), 0), COALESCE(SUM(error_events), 0), "
                  "COALESCE(SUM(unpriced_calls), 0) FROM sessions")
SESSION_TOTAL_NAMES = ("sessions", "events", "errors", "tokens_in", "tokens_out", "body_events",
                       "error_events", "unpriced_calls")


def session_events_page_query(mark: str, session_id: str, after: tuple[str, int] | None,
                              limit: int) -> tuple[str, list]:
    """The SQL and parameters of a page of a session's events (the stores' session_events_page),
    with the backend's placeholder `mark`: each row its id, then EVENT_READ_COLUMNS."""
    where = f"session_id = {mark}"
    params: list[object] = [session_id]
    if after is not None:
        where += f" AND (timestamp, id) > ({mark}, {mark})"
        params += list(after)
    return (f"SELECT id, {', '.join(EVENT_READ_COLUMNS)} FROM events WHERE {where} "
            f"ORDER BY timestamp, id LIMIT {mark}", [*params, limit])


def page_rows(cursor) -> list[tuple[int, dict]]:
    """(id, event) of the rows of session_events_page_query."""
    return [(row[0], dict(zip(EVENT_READ_COLUMNS, row[1:]))) for row in cursor]

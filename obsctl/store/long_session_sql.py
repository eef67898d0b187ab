"""The SQL behind the analysis of a long session (services/triage/long.py), one text for both
stores: each store passes its placeholder and the few expressions that differ (`Dialect`).

Every read is bounded or aggregated, so that triaging a session of 1M events holds neither
its rows nor its JSON:

- BREAKDOWN: one aggregate over the session's events by type, outcome, model and tool
  (counts, tokens, durations), read through idx_events_session_stats alone;
- errors: the session's failed body events in order, at most a cap, each with the successful
  events before it since the error before it (counted up to 4), and the places in the session
  of the first of them after a point (what the postmortem timeline shows);
- the first or last events (a LIMIT on idx_events_session_ts);
- the tool calls, streamed, with their input and output as JSON text, for loops.
"""

from __future__ import annotations

from dataclasses import dataclass

STEP_COLUMNS = (
    "id", "event_id", "event_type", "timestamp", "model", "tokens_in", "tokens_out",
    "duration_ms", "output_data", "tool_call", "decision_trace", "tool_name", "is_error",
    "parent_id", "tokens_cache_read", "tokens_cache_write", "tokens_reasoning",
)
LIFECYCLE = "('session_start', 'session_end')"
BREAKDOWN_COLUMNS = ("event_type", "is_error", "model", "tool_name", "events", "tokens_in", "tokens_out",
                     "duration_ms", "durations", "tokens_cache_read", "tokens_cache_write", "tokens_reasoning")


@dataclass(frozen=True)
class Dialect:
    mark: str  # the placeholder
    durations: str  # an aggregate of the group's non-null durations (JSON text or an array)
    tool_input: str  # a tool call's input (tool_call.input, else tool_input) as JSON text
    tool_output: str  # what a tool call returned (output, tool_output, else output_data)


def breakdown(d: Dialect) -> str:
    """Per (event_type, is_error, model, tool_name): BREAKDOWN_COLUMNS. Parameter: session id."""
    return f"""
SELECT event_type, is_error, model, tool_name, COUNT(*), COALESCE(SUM(tokens_in), 0),
       COALESCE(SUM(tokens_out), 0), COALESCE(SUM(duration_ms), 0), {d.durations},
       COALESCE(SUM(tokens_cache_read), 0), COALESCE(SUM(tokens_cache_write), 0), COALESCE(SUM(tokens_reasoning), 0)
FROM events WHERE session_id = {d.mark}
GROUP BY event_type, model, tool_name, is_error"""


# Successful body events counted between two errors: a postmortem cascade only asks whether
# there were more than 3 (services/postmortem/factors.CASCADE_MAX_SUCCESSES).
SUCCESSES_COUNTED = 4


def _errors_after(d: Dialect, event_types: int, columns: str, after: bool) -> str:
    """The CTEs `errs` (the failed events of the given types in order, from idx_events_session_stats,
    then sorted; after a (timestamp, id) when `after`; at most a limit) and `ordered` (each with
    the (prev_ts, prev_id) of the error before it, ('', -1) for the first)."""
    m = d.mark
    types = ", ".join([m] * event_types)
    later = f" AND timestamp >= {m} AND (timestamp, id) > ({m}, {m})" if after else ""
    return f"""
WITH errs AS (
    SELECT {columns} FROM events
    WHERE session_id = {m} AND event_type IN ({types}) AND is_error = 1{later}
    ORDER BY timestamp, id LIMIT {m}
), ordered AS (
    SELECT errs.*, COALESCE(LAG(timestamp) OVER w, '') AS prev_ts, COALESCE(LAG(id) OVER w, -1) AS prev_id
    FROM errs WINDOW w AS (ORDER BY timestamp, id)
)"""


def _between(d: Dialect) -> str:
    """The events of the session after the error before `o` and before `o` (index range)."""
    return (f"FROM events x WHERE x.session_id = {d.mark} AND x.timestamp >= o.prev_ts AND x.timestamp <= o.timestamp "
            f"AND (x.timestamp, x.id) > (o.prev_ts, o.prev_id) AND (x.timestamp, x.id) < (o.timestamp, o.id)")


def errors(d: Dialect, event_types: int) -> str:
    """The first `cap` failed events of `event_types` in order: STEP_COLUMNS, then the successful
    body events between the error before it (or the session's start) and it, counted up to
    SUCCESSES_COUNTED. Parameters: session id, the types, cap, session id."""
    return (f"{_errors_after(d, event_types, ', '.join(STEP_COLUMNS), False)}\n"
            f"SELECT {', '.join('o.' + c for c in STEP_COLUMNS)}, (SELECT COUNT(*) FROM (SELECT 1 {_between(d)} "
            f"AND x.event_type NOT IN {LIFECYCLE} LIMIT {SUCCESSES_COUNTED}) AS k)\n"
            f"FROM ordered o ORDER BY o.timestamp, o.id")


def error_places(d: Dialect, event_types: int) -> str:
    """(id, events between the error before it and it) of the first `count` failed events of
    `event_types` after a (timestamp, id); the first counts every event before it, so the
    places add up. Parameters: session id, the types, timestamp, timestamp, id, count, session id."""
    return (f"{_errors_after(d, event_types, 'id, timestamp', True)}\n"
            f"SELECT o.id, (SELECT COUNT(*) {_between(d)}) FROM ordered o ORDER BY o.timestamp, o.id")


def ends(d: Dialect, last: bool) -> str:
    """The first (or, `last`, the last, newest first) events: STEP_COLUMNS.
    Parameters: session id, limit."""
    order = "timestamp DESC, id DESC" if last else "timestamp, id"
    return (f"SELECT {', '.join(STEP_COLUMNS)} FROM events WHERE session_id = {d.mark} "
            f"ORDER BY {order} LIMIT {d.mark}")


def last_body(d: Dialect, successful: bool) -> str:
    """(timestamp, id, is_error) of the last body event (`successful`: the last that did not
    fail). Parameter: session id."""
    only = " AND is_error = 0" if successful else ""
    return (f"SELECT timestamp, id, is_error FROM events WHERE session_id = {d.mark} "
            f"AND event_type NOT IN {LIFECYCLE}{only} ORDER BY timestamp DESC, id DESC LIMIT 1")


TOOL_CALL_COLUMNS = ("id", "event_id", "timestamp", "tool_name", "is_error", "duration_ms", "input",
                     "output")


def tool_calls(d: Dialect) -> str:
    """The session's tool calls (body events with a tool) in order: TOOL_CALL_COLUMNS.
    Parameter: session id."""
    return (f"SELECT id, event_id, timestamp, tool_name, is_error, duration_ms, {d.tool_input}, "
            f"{d.tool_output} FROM events WHERE session_id = {d.mark} AND tool_name IS NOT NULL "
            f"AND event_type NOT IN {LIFECYCLE} ORDER BY timestamp, id")


def next_model_call(d: Dialect) -> str:
    """(model, is_error) of the first body event with a model after (timestamp, id).
    Parameters: session id, timestamp, timestamp, id."""
    m = d.mark
    return (f"SELECT model, is_error FROM events WHERE session_id = {m} AND timestamp >= {m} "
            f"AND (timestamp, id) > ({m}, {m}) AND model IS NOT NULL AND event_type NOT IN {LIFECYCLE} "
            f"ORDER BY timestamp, id LIMIT 1")


def slow_ids(d: Dialect, with_tool: bool) -> str:
    """(timestamp, id, event_id) of the successful events of a kind slower than a threshold.
    Parameters: session id, event type, threshold[, tool name]."""
    m = d.mark
    tool = f"tool_name = {m}" if with_tool else "tool_name IS NULL"
    return (f"SELECT timestamp, id, event_id FROM events WHERE session_id = {m} AND event_type = {m} "
            f"AND is_error = 0 AND duration_ms > {m} AND {tool}")

"""The SQL behind the analysis of a long session (services/triage/long.py), one text for both
stores: each store passes its placeholder and the few expressions that differ (`Dialect`).

Every read is bounded or aggregated, so that triaging a session of 1M events holds neither
its rows nor its JSON:

- BREAKDOWN: one aggregate over the session's events by type, outcome, model and tool
  (counts, tokens, durations), read through idx_events_session_stats alone;
- errors: the session's failed body events in order (idx_events_session_errors), at most a
  cap, each with the successful events before it since the error before it (counted up to 4)
  and, after a failed tool call, the next tool call; and the places in the session of the
  first of them after a point (what the postmortem timeline shows);
- the first or last events (a LIMIT on idx_events_session_ts);
- the tool calls that loop detection must see, streamed (`tool_calls`).
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

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
    durations: str  # an aggregate of the group's non-null durations: JSON numbers and commas
    duration: str = "duration_ms"  # one event's duration as the engine hands a float over fastest


def numbers(text: str | None) -> list[int | float]:
    """The numbers of a `durations` aggregate: whole ones as int, others as float, as the
    column reads back. One JSON array to orjson reads the million of a long session's
    breakdown about ten times faster than a loop of float() and int()."""
    return orjson.loads(f"[{text}]") if text else []


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


def _errors_after(d: Dialect, columns: str, after: bool) -> str:
    """The CTEs `errs` (the failed body events in order, from idx_events_session_errors; after a
    (timestamp, id) when `after`; at most a limit) and `ordered` (each with the (prev_ts,
    prev_id) of the error before it, ('', -1) for the first)."""
    m = d.mark
    later = f" AND timestamp >= {m} AND (timestamp, id) > ({m}, {m})" if after else ""
    return f"""
WITH errs AS (
    SELECT {columns} FROM events
    WHERE session_id = {m} AND is_error = 1 AND event_type NOT IN {LIFECYCLE}{later}
    ORDER BY timestamp, id LIMIT {m}
), ordered AS (
    SELECT errs.*, COALESCE(LAG(timestamp) OVER w, '') AS prev_ts, COALESCE(LAG(id) OVER w, -1) AS prev_id
    FROM errs WINDOW w AS (ORDER BY timestamp, id)
)"""


def _between(d: Dialect) -> str:
    """The events of the session after the error before `o` and before `o` (index range)."""
    return (f"FROM events x WHERE x.session_id = {d.mark} AND x.timestamp >= o.prev_ts AND x.timestamp <= o.timestamp "
            f"AND (x.timestamp, x.id) > (o.prev_ts, o.prev_id) AND (x.timestamp, x.id) < (o.timestamp, o.id)")


def _next_tool_call(d: Dialect, column: str) -> str:
    """`column` of the session's first tool call after a failed tool call `o` (NULL after any
    other error), through idx_events_session_tools."""
    m = d.mark
    return (f"CASE WHEN o.tool_name IS NOT NULL THEN (SELECT x.{column} FROM events x WHERE x.session_id = {m} "
            f"AND {TOOL_CALLS_WHERE} AND x.timestamp >= o.timestamp AND (x.timestamp, x.id) > (o.timestamp, o.id) "
            f"ORDER BY x.timestamp, x.id LIMIT 1) END")


def errors(d: Dialect) -> str:
    """The first `cap` failed body events in order: STEP_COLUMNS, then the successful
    body events between the error before it (or the session's start) and it, counted up to
    SUCCESSES_COUNTED, then the tool name and is_error of the tool call after a failed tool
    call (what the agent did next). Parameters: session id, cap, session id x 3."""
    return (f"{_errors_after(d, ', '.join(STEP_COLUMNS), False)}\n"
            f"SELECT {', '.join('o.' + c for c in STEP_COLUMNS)}, (SELECT COUNT(*) FROM (SELECT 1 {_between(d)} "
            f"AND x.event_type NOT IN {LIFECYCLE} LIMIT {SUCCESSES_COUNTED}) AS k), "
            f"{_next_tool_call(d, 'tool_name')}, {_next_tool_call(d, 'is_error')}\n"
            f"FROM ordered o ORDER BY o.timestamp, o.id")


def error_places(d: Dialect) -> str:
    """(id, events between the error before it and it) of the first `count` failed body events
    after a (timestamp, id); the first counts every event before it, so the places add up.
    Parameters: session id, timestamp, timestamp, id, count, session id."""
    return (f"{_errors_after(d, 'id, timestamp', True)}\n"
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


# A session's tool calls (body events with a tool), as idx_events_session_tools holds them:
# a query must say this condition word for word for SQLite to read that partial index.
TOOL_CALLS_WHERE = "tool_name IS NOT NULL AND event_type NOT IN ('session_start', 'session_end')"
TOOL_CALL_COLUMNS = ("id", "event_id", "timestamp", "tool_name", "is_error", "duration_ms", "tool_key",
                     "tool_call", "output_data")


# The share of a session's tool calls repeating often enough to loop from which all its calls
# are read (tool_calls).
WHOLE_READ_SHARE = 1 / 3


def tool_call_counts(d: Dialect, min_repeats: int) -> str:
    """(tool calls, calls whose key the session has at least `min_repeats` times, calls stored
    without a key (before m034)) of a session, from idx_events_session_tools alone.
    Parameter: session id."""
    return f"""
SELECT COALESCE(SUM(n), 0), COALESCE(SUM(CASE WHEN n >= {min_repeats} AND tool_key IS NOT NULL THEN n ELSE 0 END), 0),
       COALESCE(SUM(CASE WHEN tool_key IS NULL THEN n ELSE 0 END), 0)
FROM (SELECT tool_key, COUNT(*) AS n FROM events WHERE session_id = {d.mark} AND {TOOL_CALLS_WHERE}
      GROUP BY tool_key) AS k"""


def tool_calls(d: Dialect, min_repeats: int, counts: tuple[int, int, int]) -> str | None:
    """What to read of the session's tool calls for loop detection (services/triage/facts.
    LoopFinder), in order, given its `tool_call_counts`: TOOL_CALL_COLUMNS, or None when no
    call can be in a loop (no key repeats `min_repeats` times). Parameter: session id (twice
    for the reduced read).

    A call whose key the session has fewer times can be in no loop, and only a successful one
    changes what the finder does: it ends the run before it. The reduced read leaves the failed
    ones out, and of successful ones in a row (with nothing else between) keeps only the last,
    without their JSON. When a third or more of the calls repeat, or a call has no key, every
    call is read with its JSON: a plain walk of idx_events_session_tools costs less then than
    working out which to leave out (0.5 s against 1.2 s for 333k calls on SQLite)."""
    calls, repeated, unkeyed = counts
    if not repeated and not unkeyed:
        return None
    m = d.mark
    if unkeyed or repeated >= WHOLE_READ_SHARE * calls:
        columns = ", ".join(d.duration if c == "duration_ms" else c for c in TOOL_CALL_COLUMNS)
        return (f"SELECT {columns} FROM events WHERE session_id = {m} AND {TOOL_CALLS_WHERE} "
                f"ORDER BY timestamp, id")
    return f"""
WITH repeated AS (
    SELECT tool_key FROM events WHERE session_id = {m} AND {TOOL_CALLS_WHERE}
    GROUP BY tool_key HAVING COUNT(*) >= {min_repeats}
), kept AS (
    SELECT id, timestamp, r, LEAD(r, 1, 1) OVER (ORDER BY timestamp, id) AS r_next FROM (
        SELECT id, timestamp, is_error, CASE WHEN tool_key IN (SELECT tool_key FROM repeated) THEN 1 ELSE 0 END AS r
        FROM events WHERE session_id = {m} AND {TOOL_CALLS_WHERE}
    ) AS c WHERE r = 1 OR is_error = 0
)
SELECT e.id, e.event_id, e.timestamp, e.tool_name, e.is_error, e.{d.duration}, e.tool_key,
       CASE WHEN k.r = 1 THEN e.tool_call END, CASE WHEN k.r = 1 THEN e.output_data END
FROM kept k JOIN events e ON e.id = k.id AND e.timestamp = k.timestamp
WHERE k.r = 1 OR k.r_next = 1
ORDER BY k.timestamp, k.id"""


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

"""The SQL behind triage and postmortems.

Per-session reads go through idx_events_session_ts. Baselines are the same agent's sessions
whose started_at lies in a window (idx_sessions_agent_started) and use the totals the
sessions table already keeps; only cost (tokens per model) and latency references (duration
quantiles per event kind) read the baseline sessions' events, again through
idx_events_session_ts, and both are aggregated in SQL.
"""

from __future__ import annotations

from collections.abc import Iterator

import sqlite_utils

import obsctl.store.long_session_sql as long_sql
from obsctl.store.long_session_sql import STEP_COLUMNS

BASELINE_COLUMNS = (
    "session_id", "started_at", "ended_at", "last_event_at", "total_tokens_in",
    "total_tokens_out", "event_count", "error_count", "total_duration_ms", "metadata",
    "body_events", "error_events",
)

_LIFECYCLE = "('session_start', 'session_end')"

# The baseline sessions: the agent's most recent sessions that started in [since, until),
# newest first, at most `cap` of them; `exclude` keeps the triaged session out.
_BASELINE_IDS = """
SELECT session_id FROM sessions
WHERE agent_name = ? AND started_at >= ? AND started_at < ? AND session_id != ?
ORDER BY started_at DESC LIMIT ?
"""

_BASELINE_SESSIONS = f"""
SELECT {', '.join(BASELINE_COLUMNS)} FROM sessions
WHERE agent_name = ? AND started_at >= ? AND started_at < ? AND session_id != ?
ORDER BY started_at DESC LIMIT ?
"""

_BASELINE_MODEL_TOKENS = f"""
SELECT e.session_id, e.model, COALESCE(SUM(e.tokens_in), 0), COALESCE(SUM(e.tokens_out), 0),
       COALESCE(SUM(e.tokens_cache_read), 0), COALESCE(SUM(e.tokens_cache_write), 0),
       COALESCE(SUM(e.tokens_reasoning), 0)
FROM events e
WHERE e.session_id IN ({_BASELINE_IDS})
  AND (e.tokens_in > 0 OR e.tokens_out > 0)
GROUP BY e.session_id, e.model
"""

# A NUMERIC value as text that reads back exactly: an integer as its digits, a REAL to 17
# significant digits (SQLite's own text of a REAL, and json_group_array's, has 15, and printf
# without '!' stops at 16).
_EXACT = "CASE WHEN typeof({0}) = 'integer' THEN {0} ELSE printf('%!.17g', {0}) END"

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


def session_steps(db: sqlite_utils.Database, session_id: str) -> list[tuple]:
    """The session's events in time order (ties in arrival order), columns STEP_COLUMNS.

    input_data and metadata are left out: triage never needs them and prompts are large.
    """
    return db.conn.execute(
        f"SELECT {', '.join(STEP_COLUMNS)} FROM events WHERE session_id = ? ORDER BY timestamp, id",
        [session_id],
    ).fetchall()


def baseline_sessions(db: sqlite_utils.Database, agent: str, since: str, until: str,
                      exclude: str, cap: int) -> list[dict]:
    """Totals of the baseline sessions (columns BASELINE_COLUMNS), newest first."""
    cursor = db.conn.execute(_BASELINE_SESSIONS, [agent, since, until, exclude, cap])
    return [dict(zip(BASELINE_COLUMNS, row)) for row in cursor]


def baseline_model_tokens(db: sqlite_utils.Database, agent: str, since: str, until: str,
                          exclude: str, cap: int) -> list[tuple]:
    """(session_id, model, tokens_in, tokens_out, cache read, cache write, reasoning) per
    baseline session and model, for events that carry tokens."""
    return db.conn.execute(_BASELINE_MODEL_TOKENS, [agent, since, until, exclude, cap]).fetchall()


def baseline_durations(db: sqlite_utils.Database,
                       session_ids: list[str]) -> dict[tuple[str, str | None], list[float]]:
    """{(event_type, tool_name): sorted durations} of the successful events of these baseline
    sessions."""
    if not session_ids:
        return {}
    sql = _DURATIONS.format(ids=", ".join("?" * len(session_ids)))
    rows = db.conn.execute(sql, session_ids).fetchall()
    return {(etype, tool): sorted(exact_numbers(values)) for etype, tool, values in rows}


def recent_session_ids(db: sqlite_utils.Database, *, limit: int, min_events: int,
                       agent: str | None, since: str | None = None,
                       until: str | None = None) -> tuple[list[str], int]:
    """The `limit` most recently started sessions with at least `min_events` events (newest
    first) and how many sessions match in all; background sessions (work outside any agent
    run) are left out."""
    where, params = "WHERE event_count >= ? AND background = 0", [min_events]
    if agent is not None:
        where += " AND agent_name = ?"
        params.append(agent)
    if since is not None:
        where += " AND started_at >= ?"
        params.append(since)
    if until is not None:
        where += " AND started_at < ?"
        params.append(until)
    conn = db.conn
    total = conn.execute(f"SELECT COUNT(*) FROM sessions {where}", params).fetchone()[0]
    ids = [row[0] for row in conn.execute(
        f"SELECT session_id FROM sessions {where} ORDER BY started_at DESC, session_id LIMIT ?",
        [*params, limit],
    )]
    return ids, total


CANDIDATE_COLUMNS = ("session_id", "agent_name", "started_at", "status", "event_count",
                     "error_count", "body_events", "error_events", "cost_usd", "severity_rank")

# The error event rate as reported, in hundredths of a percent rounded half up: the integer
# arithmetic of services/rates.hundredths, so that the rank and the severity shown beside it
# compare exactly the same number.
_RATE = "((20000 * error_events + body_events) / (2 * MAX(body_events, 1)))"


def postmortem_candidates(db: sqlite_utils.Database, *, min_errors: int, limit: int,
                          agent: str | None, since: str | None,
                          high_rate: float, medium_rate: float, medium_count: int,
                          cost_floors: tuple[float, float, float]) -> tuple[list[dict], int]:
    """Sessions with at least `min_errors` error events, most severe first, and their total
    count. Each row has the columns CANDIDATE_COLUMNS.

    severity_rank follows services.postmortem.severity_for (1 = SEV-1 ... 4 = SEV-4,
    5 = none) on the session's body-event totals (events other than session_start and
    session_end, kept by ingest); the service passes its thresholds (rates in hundredths of
    a percent) so the rule is written once.
    """
    # With errors asked for, a session whose cost alone earns a severity is a candidate too.
    where, params = "WHERE (error_events >= ? OR (? > 0 AND cost_usd >= ?))", [min_errors, min_errors,
                                                                                  cost_floors[2]]
    if agent is not None:
        where += " AND agent_name = ?"
        params.append(agent)
    if since is not None:
        where += " AND started_at >= ?"
        params.append(since)
    rank = (
        f"CASE WHEN error_events = 0 THEN 5"
        f" WHEN status = 'error' AND {_RATE} >= ? THEN 1"
        f" WHEN status = 'error' OR {_RATE} >= ? THEN 2"
        f" WHEN {_RATE} >= ? OR error_events >= ? THEN 3 ELSE 4 END"
    )
    # The cost rule (SEV-2, SEV-3, SEV-4 from cost_floors down); the worse of the two wins.
    rank = (f"MIN({rank}, CASE WHEN cost_usd >= ? THEN 2 WHEN cost_usd >= ? THEN 3"
            f" WHEN cost_usd >= ? THEN 4 ELSE 5 END)")
    conn = db.conn
    total = conn.execute(f"SELECT COUNT(*) FROM sessions {where}", params).fetchone()[0]
    cursor = conn.execute(
        f"SELECT {', '.join(CANDIDATE_COLUMNS[:-1])}, {rank} AS r FROM sessions {where} "
        f"ORDER BY r, error_events DESC, started_at DESC, session_id LIMIT ?",
        [high_rate, high_rate, medium_rate, medium_count, *cost_floors, *params, limit],
    )
    return [dict(zip(CANDIDATE_COLUMNS, row)) for row in cursor], total


INCIDENT_ERROR_COLUMNS = ("session_id", "agent_name", "event_type", "timestamp", "model", "tool_name",
                          "output_data", "tool_call")


def error_events(db: sqlite_utils.Database, since: str, until: str, agent: str | None,
                 cap: int) -> list[tuple]:
    """The error events with a timestamp in [since, until), oldest first, at most `cap` of them,
    columns INCIDENT_ERROR_COLUMNS; the agent is the event's own or else its session's.
    Read through idx_events_errors_ts (only error events are in it)."""
    where, params = "WHERE e.is_error = 1 AND e.timestamp >= ? AND e.timestamp < ?", [since, until]
    if agent is not None:
        where += " AND COALESCE(e.agent_name, s.agent_name) = ?"
        params.append(agent)
    return db.conn.execute(
        f"SELECT e.session_id, COALESCE(e.agent_name, s.agent_name), e.event_type, e.timestamp, e.model, "
        f"e.tool_name, e.output_data, e.tool_call "
        f"FROM events e INDEXED BY idx_events_errors_ts JOIN sessions s ON s.session_id = e.session_id "
        f"{where} ORDER BY e.timestamp, e.id LIMIT ?", [*params, cap]).fetchall()


# The numbers of a group_concat of _EXACT (each a JSON number: a REAL's text always has a '.'
# or an exponent).
exact_numbers = long_sql.numbers


# A long session's analysis (services/triage/long.py): the SQL is in store/long_session_sql.py.
_LONG = long_sql.Dialect(
    mark="?",
    durations=f"group_concat({_EXACT.format('duration_ms')}) FILTER (WHERE duration_ms IS NOT NULL)",
)


def session_breakdown(db: sqlite_utils.Database, session_id: str) -> list[tuple]:
    """The session's events added up per (event_type, is_error, model, tool_name): the columns
    of long_session_sql.BREAKDOWN_COLUMNS, durations a list."""
    rows = db.conn.execute(long_sql.breakdown(_LONG), [session_id]).fetchall()
    return [(*row[:8], exact_numbers(row[8]), *row[9:]) for row in rows]


def session_error_rows(db: sqlite_utils.Database, session_id: str, cap: int) -> list[tuple]:
    """The first `cap` failed body events in order (long_session_sql.errors)."""
    return db.conn.execute(long_sql.errors(_LONG), [session_id, cap, session_id, session_id, session_id]).fetchall()


def session_end_rows(db: sqlite_utils.Database, session_id: str, count: int, last: bool) -> list[tuple]:
    """The first (`last`: the last, newest first) `count` events, STEP_COLUMNS."""
    return db.conn.execute(long_sql.ends(_LONG, last), [session_id, count]).fetchall()


def session_error_places(db: sqlite_utils.Database, session_id: str, after: tuple[str, int],
                         count: int) -> list[tuple[int, int]]:
    """(id, events since the error before it) of the first `count` failed body events after
    the (timestamp, id) `after`; the first counts every event before it."""
    return db.conn.execute(long_sql.error_places(_LONG), [session_id, after[0], *after, count, session_id]).fetchall()


def session_last_body(db: sqlite_utils.Database, session_id: str, successful: bool) -> tuple | None:
    return db.conn.execute(long_sql.last_body(_LONG, successful), [session_id]).fetchone()


def iter_tool_calls(db: sqlite_utils.Database, session_id: str, min_repeats: int) -> Iterator[tuple]:
    """The session's tool calls that loop detection must see, in order (long_session_sql.tool_calls),
    streamed."""
    counts = db.conn.execute(long_sql.tool_call_counts(_LONG, min_repeats), [session_id]).fetchone()
    sql = long_sql.tool_calls(_LONG, min_repeats, counts)
    if sql is None:
        return
    cursor = db.conn.execute(sql, [session_id] * sql.count("?"))
    while rows := cursor.fetchmany(2000):
        yield from rows


def next_model_call(db: sqlite_utils.Database, session_id: str, timestamp: str, row_id: int) -> tuple | None:
    return db.conn.execute(long_sql.next_model_call(_LONG),
                           [session_id, timestamp, timestamp, row_id]).fetchone()


def iter_slow_ids(db: sqlite_utils.Database, session_id: str, event_type: str, tool_name: str | None,
                  threshold: float) -> Iterator[tuple]:
    """(timestamp, id, event_id) of the kind's successful events slower than `threshold`."""
    params = [session_id, event_type, threshold] + ([tool_name] if tool_name is not None else [])
    cursor = db.conn.execute(long_sql.slow_ids(_LONG, tool_name is not None), params)
    while rows := cursor.fetchmany(2000):
        yield from rows

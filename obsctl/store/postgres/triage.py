"""The SQL behind triage and postmortems on PostgreSQL: the same reads, answers and Python
types as obsctl/store/sqlite/triage.py (see its docstring for the plans).

Per-session reads go through idx_events_session_ts; baselines are the agent's sessions in a
window (idx_sessions_agent_started) and their events, aggregated in SQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg

import obsctl.store.long_session_sql as long_sql
from obsctl.store.long_session_sql import STEP_COLUMNS
from obsctl.store.postgres.sessions import stream_rows
from obsctl.store.sql import one

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
WHERE agent_name = %s AND started_at >= %s AND started_at < %s AND session_id <> %s
ORDER BY started_at DESC LIMIT %s
"""

_BASELINE_SESSIONS = f"""
SELECT {', '.join(BASELINE_COLUMNS)} FROM sessions
WHERE agent_name = %s AND started_at >= %s AND started_at < %s AND session_id <> %s
ORDER BY started_at DESC LIMIT %s
"""

# Grouped rows come in the order SQLite's GROUP BY gives them (sorted, NULL first).
# SUM over BIGINT is NUMERIC on PostgreSQL: the store's loader reads a whole one as an int.
_BASELINE_MODEL_TOKENS = f"""
SELECT e.session_id, e.model, COALESCE(SUM(e.tokens_in), 0), COALESCE(SUM(e.tokens_out), 0),
       COALESCE(SUM(e.tokens_cache_read), 0), COALESCE(SUM(e.tokens_cache_write), 0),
       COALESCE(SUM(e.tokens_reasoning), 0)
FROM events e
WHERE e.session_id IN ({_BASELINE_IDS})
  AND (e.tokens_in > 0 OR e.tokens_out > 0)
GROUP BY e.session_id, e.model
ORDER BY e.session_id, e.model NULLS FIRST
"""

# One array of durations per (event_type, tool_name); its NUMERIC elements load as ints when
# whole, else floats, as SQLite's json_group_array of the NUMERIC column reads back.
_DURATIONS = f"""
SELECT e.event_type, e.tool_name, array_agg(e.duration_ms)
FROM events e
WHERE e.session_id = ANY(%s)
  AND e.duration_ms IS NOT NULL AND e.is_error = 0
  AND e.event_type NOT IN {_LIFECYCLE}
GROUP BY e.event_type, e.tool_name
ORDER BY e.event_type, e.tool_name NULLS FIRST
"""


def session_steps(conn: psycopg.Connection, session_id: str) -> list[tuple]:
    """The session's events in time order (ties in arrival order), columns STEP_COLUMNS.

    input_data and metadata are left out: triage never needs them and prompts are large.
    """
    return conn.execute(
        f"SELECT {', '.join(STEP_COLUMNS)} FROM events WHERE session_id = %s ORDER BY timestamp, id",
        [session_id],
    ).fetchall()


def baseline_sessions(conn: psycopg.Connection, agent: str, since: str, until: str,
                      exclude: str, cap: int) -> list[dict]:
    """Totals of the baseline sessions (columns BASELINE_COLUMNS), newest first."""
    cursor = conn.execute(_BASELINE_SESSIONS, [agent, since, until, exclude, cap])
    return [dict(zip(BASELINE_COLUMNS, row)) for row in cursor]


def baseline_model_tokens(conn: psycopg.Connection, agent: str, since: str, until: str,
                          exclude: str, cap: int) -> list[tuple]:
    """(session_id, model, tokens_in, tokens_out, cache read, cache write, reasoning) per
    baseline session and model, for events that carry tokens."""
    return conn.execute(_BASELINE_MODEL_TOKENS, [agent, since, until, exclude, cap]).fetchall()


def baseline_durations(conn: psycopg.Connection,
                       session_ids: list[str]) -> dict[tuple[str, str | None], list[float]]:
    """{(event_type, tool_name): sorted durations} of the successful events of these baseline
    sessions."""
    if not session_ids:
        return {}
    rows = conn.execute(_DURATIONS, [session_ids]).fetchall()
    return {(etype, tool): sorted(values) for etype, tool, values in rows}


def recent_session_ids(conn: psycopg.Connection, *, limit: int, min_events: int,
                       agent: str | None, since: str | None = None,
                       until: str | None = None) -> tuple[list[str], int]:
    """The `limit` most recently started sessions with at least `min_events` events (newest
    first) and how many sessions match in all."""
    where = "WHERE event_count >= %s AND background = 0"
    params: list[Any] = [min_events]
    if agent is not None:
        where += " AND agent_name = %s"
        params.append(agent)
    if since is not None:
        where += " AND started_at >= %s"
        params.append(since)
    if until is not None:
        where += " AND started_at < %s"
        params.append(until)
    total = one(conn.execute(f"SELECT COUNT(*) FROM sessions {where}", params))[0]
    ids = [row[0] for row in conn.execute(
        f"SELECT session_id FROM sessions {where} ORDER BY started_at DESC, session_id LIMIT %s",
        [*params, limit],
    )]
    return ids, total


CANDIDATE_COLUMNS = ("session_id", "agent_name", "started_at", "status", "event_count",
                     "error_count", "body_events", "error_events", "cost_usd", "severity_rank")

# The error event rate as reported, in hundredths of a percent rounded half up: the integer
# arithmetic of services/rates.hundredths (BIGINT / BIGINT divides in integers, as SQLite's
# int / int; both are non-negative, so truncation is the floor). body_events is NOT NULL, so
# GREATEST gives SQLite's MAX(body_events, 1).
_RATE = "((20000 * error_events + body_events) / (2 * GREATEST(body_events, 1)))"


def postmortem_candidates(conn: psycopg.Connection, *, min_errors: int, limit: int,
                          agent: str | None, since: str | None,
                          high_rate: float, medium_rate: float, medium_count: int,
                          cost_floors: tuple[float, float, float]) -> tuple[list[dict], int]:
    """Sessions with at least `min_errors` error events, most severe first, and their total
    count. Each row has the columns CANDIDATE_COLUMNS (see the SQLite module for the rule).
    """
    # With errors asked for, a session whose cost alone earns a severity is a candidate too.
    where = "WHERE (error_events >= %s OR (%s > 0 AND cost_usd >= %s))"
    params: list[Any] = [min_errors, min_errors, cost_floors[2]]
    if agent is not None:
        where += " AND agent_name = %s"
        params.append(agent)
    if since is not None:
        where += " AND started_at >= %s"
        params.append(since)
    rank = (
        f"CASE WHEN error_events = 0 THEN 5"
        f" WHEN status = 'error' AND {_RATE} >= %s THEN 1"
        f" WHEN status = 'error' OR {_RATE} >= %s THEN 2"
        f" WHEN {_RATE} >= %s OR error_events >= %s THEN 3 ELSE 4 END"
    )
    # The cost rule (SEV-2, SEV-3, SEV-4 from cost_floors down); the worse of the two wins.
    rank = (f"LEAST({rank}, CASE WHEN cost_usd >= %s THEN 2 WHEN cost_usd >= %s THEN 3"
            f" WHEN cost_usd >= %s THEN 4 ELSE 5 END)")
    total = one(conn.execute(f"SELECT COUNT(*) FROM sessions {where}", params))[0]
    cursor = conn.execute(
        f"SELECT {', '.join(CANDIDATE_COLUMNS[:-1])}, {rank} AS r FROM sessions {where} "
        f"ORDER BY r, error_events DESC, started_at DESC, session_id LIMIT %s",
        [high_rate, high_rate, medium_rate, medium_count, *cost_floors, *params, limit],
    )
    return [dict(zip(CANDIDATE_COLUMNS, row)) for row in cursor], total


INCIDENT_ERROR_COLUMNS = ("session_id", "agent_name", "event_type", "timestamp", "model", "tool_name",
                          "output_data", "tool_call")


def error_events(conn: psycopg.Connection, since: str, until: str, agent: str | None,
                 cap: int) -> list[tuple]:
    """As obsctl/store/sqlite/triage.error_events: the error events in [since, until), oldest
    first, at most `cap`, through the partial index idx_events_errors_ts."""
    where, params = "WHERE e.is_error = 1 AND e.timestamp >= %s AND e.timestamp < %s", [since, until]
    if agent is not None:
        where += " AND COALESCE(e.agent_name, s.agent_name) = %s"
        params.append(agent)
    return conn.execute(
        f"SELECT e.session_id, COALESCE(e.agent_name, s.agent_name), e.event_type, e.timestamp, e.model, "
        f"e.tool_name, e.output_data, e.tool_call "
        f"FROM events e JOIN sessions s ON s.session_id = e.session_id "
        f"{where} ORDER BY e.timestamp, e.id LIMIT %s", [*params, cap]).fetchall()


# A long session's analysis (services/triage/long.py): the SQL is in store/long_session_sql.py.
_CHUNK_ROWS = 2000
_LONG = long_sql.Dialect(
    mark="%s",
    # NUMERIC's text is exact and never has an exponent: 0.42 s against array_agg's 0.70 s
    # for the durations of a 1M-event session, read and parsed.
    durations="string_agg(duration_ms::text, ',') FILTER (WHERE duration_ms IS NOT NULL)",
    # A float8 is loaded in C; a NUMERIC through _SqliteNumeric in Python (0.3 s for 333k calls).
    duration="duration_ms::float8",
)


def session_breakdown(conn: psycopg.Connection, session_id: str) -> list[tuple]:
    """As obsctl/store/sqlite/triage.session_breakdown."""
    rows = conn.execute(long_sql.breakdown(_LONG), [session_id]).fetchall()
    return [(*row[:8], long_sql.numbers(row[8]), *row[9:]) for row in rows]


def session_error_rows(conn: psycopg.Connection, session_id: str, cap: int) -> list[tuple]:
    """The first `cap` failed body events in order (long_session_sql.errors)."""
    return conn.execute(long_sql.errors(_LONG), [session_id, cap, session_id, session_id, session_id]).fetchall()


def session_end_rows(conn: psycopg.Connection, session_id: str, count: int, last: bool) -> list[tuple]:
    return conn.execute(long_sql.ends(_LONG, last), [session_id, count]).fetchall()


def session_error_places(conn: psycopg.Connection, session_id: str, after: tuple[str, int],
                         count: int) -> list[tuple[int, int]]:
    """(id, events since the error before it) of the first `count` failed body events after
    the (timestamp, id) `after`; the first counts every event before it."""
    return conn.execute(long_sql.error_places(_LONG), [session_id, after[0], *after, count, session_id]).fetchall()


def session_last_body(conn: psycopg.Connection, session_id: str, successful: bool) -> tuple | None:
    return conn.execute(long_sql.last_body(_LONG, successful), [session_id]).fetchone()


def iter_tool_calls(conn: psycopg.Connection, session_id: str, min_repeats: int) -> Iterator[tuple]:
    """As obsctl/store/sqlite/triage.iter_tool_calls: in chunks of one statement's result where
    libpq has them (17 on; twice as fast as a server-side cursor here, 0.8 s against 1.8 s for
    333k calls), else through a server-side cursor (stream_rows). Nothing else may run on
    the connection until the stream ends."""
    counts = one(conn.execute(long_sql.tool_call_counts(_LONG, min_repeats), [session_id]))
    sql = long_sql.tool_calls(_LONG, min_repeats, counts)
    if sql is None:
        return
    params = [session_id] * sql.count("%s")
    if psycopg.pq.version() < 170000:
        yield from stream_rows(conn, sql, params)
    else:
        yield from conn.cursor().stream(sql, params, size=_CHUNK_ROWS)


def next_model_call(conn: psycopg.Connection, session_id: str, timestamp: str, row_id: int) -> tuple | None:
    return conn.execute(long_sql.next_model_call(_LONG), [session_id, timestamp, timestamp, row_id]).fetchone()


def iter_slow_ids(conn: psycopg.Connection, session_id: str, event_type: str, tool_name: str | None,
                  threshold: float) -> Iterator[tuple]:
    params = [session_id, event_type, threshold] + ([tool_name] if tool_name is not None else [])
    return stream_rows(conn, long_sql.slow_ids(_LONG, tool_name is not None), params)

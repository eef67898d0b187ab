"""The SQL behind triage and postmortems, written once for both stores (a long session's reads
are in obsctl/store/sql/long_session.py; the baseline's durations stay with each store, which
hands its numbers over in its own way).

Per-session reads go through idx_events_session_ts. Baselines are the same agent's sessions
whose started_at lies in a window (idx_sessions_agent_started) and use the totals the
sessions table already keeps; only cost (tokens per model) and latency references (duration
quantiles per event kind) read the baseline sessions' events, again through
idx_events_session_ts, and both are aggregated in SQL.
"""

from __future__ import annotations

from typing import Any

from obsctl.store.long_session_sql import STEP_COLUMNS
from obsctl.store.sql import connection, one

__all__ = ["BASELINE_COLUMNS", "CANDIDATE_COLUMNS", "INCIDENT_ERROR_COLUMNS", "baseline_model_tokens",
           "baseline_sessions", "error_events", "postmortem_candidates", "recent_session_ids", "session_steps"]

BASELINE_COLUMNS = (
    "session_id", "started_at", "ended_at", "last_event_at", "total_tokens_in",
    "total_tokens_out", "event_count", "error_count", "total_duration_ms", "metadata",
    "body_events", "error_events",
)


def _baseline(columns: str, m: str) -> str:
    """`columns` of the baseline sessions: the agent's most recent sessions that started in
    [since, until), newest first, at most `cap` of them; `exclude` keeps the triaged session
    out. Parameters: agent, since, until, exclude, cap."""
    return (f"SELECT {columns} FROM sessions WHERE agent_name = {m} AND started_at >= {m} AND started_at < {m} "
            f"AND session_id <> {m} ORDER BY started_at DESC LIMIT {m}")


def session_steps(db: Any, session_id: str) -> list[tuple]:
    """The session's events in time order (ties in arrival order), columns STEP_COLUMNS.

    input_data and metadata are left out: triage never needs them and prompts are large.
    """
    conn, d = connection(db)
    return conn.execute(
        f"SELECT {', '.join(STEP_COLUMNS)} FROM events WHERE session_id = {d.mark} ORDER BY timestamp, id",
        [session_id],
    ).fetchall()


def baseline_sessions_sql(m: str) -> str:
    """BASELINE_COLUMNS of the baseline sessions (_baseline), newest first."""
    return _baseline(", ".join(BASELINE_COLUMNS), m)


def baseline_model_tokens_sql(m: str) -> str:
    """The tokens of the baseline sessions per session and model (baseline_model_tokens)."""
    return f"""
SELECT e.session_id, e.model, COALESCE(SUM(e.tokens_in), 0), COALESCE(SUM(e.tokens_out), 0),
       COALESCE(SUM(e.tokens_cache_read), 0), COALESCE(SUM(e.tokens_cache_write), 0),
       COALESCE(SUM(e.tokens_reasoning), 0)
FROM events e
WHERE e.session_id IN ({_baseline("session_id", m)})
  AND (e.tokens_in > 0 OR e.tokens_out > 0)
GROUP BY e.session_id, e.model
ORDER BY e.session_id, e.model NULLS FIRST"""


def baseline_sessions(db: Any, agent: str, since: str, until: str, exclude: str, cap: int) -> list[dict]:
    """Totals of the baseline sessions (columns BASELINE_COLUMNS), newest first."""
    conn, d = connection(db)
    cursor = conn.execute(baseline_sessions_sql(d.mark), [agent, since, until, exclude, cap])
    return [dict(zip(BASELINE_COLUMNS, row)) for row in cursor]


def baseline_model_tokens(db: Any, agent: str, since: str, until: str, exclude: str, cap: int) -> list[tuple]:
    """(session_id, model, tokens_in, tokens_out, cache read, cache write, reasoning) per
    baseline session and model, for events that carry tokens, by session then model (no
    model first). A sum over BIGINT is NUMERIC on PostgreSQL: the store's loader reads a whole
    one as an int, as SQLite answers."""
    conn, d = connection(db)
    return conn.execute(baseline_model_tokens_sql(d.mark), [agent, since, until, exclude, cap]).fetchall()


def recent_session_ids(db: Any, *, limit: int, min_events: int, agent: str | None, since: str | None = None,
                       until: str | None = None) -> tuple[list[str], int]:
    """The `limit` most recently started sessions with at least `min_events` events (newest
    first) and how many sessions match in all; background sessions (work outside any agent
    run) are left out."""
    conn, d = connection(db)
    m = d.mark
    where = f"WHERE event_count >= {m} AND background = 0"
    params: list[Any] = [min_events]
    for condition, value in ((f"agent_name = {m}", agent), (f"started_at >= {m}", since),
                             (f"started_at < {m}", until)):
        if value is not None:
            where += f" AND {condition}"
            params.append(value)
    total = one(conn.execute(f"SELECT COUNT(*) FROM sessions {where}", params))[0]
    ids = [row[0] for row in conn.execute(
        f"SELECT session_id FROM sessions {where} ORDER BY started_at DESC, session_id LIMIT {m}",
        [*params, limit],
    )]
    return ids, total


CANDIDATE_COLUMNS = ("session_id", "agent_name", "started_at", "status", "event_count",
                     "error_count", "body_events", "error_events", "cost_usd", "severity_rank")


def _rate(greatest: str) -> str:
    """The error event rate as reported, in hundredths of a percent rounded half up: the
    integer arithmetic of services/rates.hundredths (an integer divided by an integer is
    truncated on both engines; both are non-negative, so truncation is the floor), so that
    the rank and the severity shown beside it compare exactly the same number."""
    return f"((20000 * error_events + body_events) / (2 * {greatest}(body_events, 1)))"


def postmortem_candidates(db: Any, *, min_errors: int, limit: int, agent: str | None, since: str | None,
                          high_rate: float, medium_rate: float, medium_count: int,
                          cost_floors: tuple[float, float, float]) -> tuple[list[dict], int]:
    """Sessions with at least `min_errors` error events, most severe first, and their total
    count. Each row has the columns CANDIDATE_COLUMNS.

    severity_rank follows services.postmortem.severity_for (1 = SEV-1 ... 4 = SEV-4,
    5 = none) on the session's body-event totals (events other than session_start and
    session_end, kept by ingest); the service passes its thresholds (rates in hundredths of
    a percent) so the rule is written once.
    """
    conn, d = connection(db)
    m = d.mark
    # With errors asked for, a session whose cost alone earns a severity is a candidate too.
    where = f"WHERE (error_events >= {m} OR ({m} > 0 AND cost_usd >= {m}))"
    params: list[Any] = [min_errors, min_errors, cost_floors[2]]
    for condition, value in ((f"agent_name = {m}", agent), (f"started_at >= {m}", since)):
        if value is not None:
            where += f" AND {condition}"
            params.append(value)
    rate = _rate(d.greatest)
    rank = (
        f"CASE WHEN error_events = 0 THEN 5"
        f" WHEN status = 'error' AND {rate} >= {m} THEN 1"
        f" WHEN status = 'error' OR {rate} >= {m} THEN 2"
        f" WHEN {rate} >= {m} OR error_events >= {m} THEN 3 ELSE 4 END"
    )
    # The cost rule (SEV-2, SEV-3, SEV-4 from cost_floors down); the worse of the two wins.
    rank = (f"{d.least}({rank}, CASE WHEN cost_usd >= {m} THEN 2 WHEN cost_usd >= {m} THEN 3"
            f" WHEN cost_usd >= {m} THEN 4 ELSE 5 END)")
    total = one(conn.execute(f"SELECT COUNT(*) FROM sessions {where}", params))[0]
    cursor = conn.execute(
        f"SELECT {', '.join(CANDIDATE_COLUMNS[:-1])}, {rank} AS r FROM sessions {where} "
        f"ORDER BY r, error_events DESC, started_at DESC, session_id LIMIT {m}",
        [high_rate, high_rate, medium_rate, medium_count, *cost_floors, *params, limit],
    )
    return [dict(zip(CANDIDATE_COLUMNS, row)) for row in cursor], total


INCIDENT_ERROR_COLUMNS = ("session_id", "agent_name", "event_type", "timestamp", "model", "tool_name",
                          "output_data", "tool_call")


def error_events(db: Any, since: str, until: str, agent: str | None, cap: int) -> list[tuple]:
    """The error events with a timestamp in [since, until), oldest first, at most `cap` of them,
    columns INCIDENT_ERROR_COLUMNS; the agent is the event's own or else its session's.
    Read through idx_events_errors_ts (only error events are in it)."""
    conn, d = connection(db)
    m = d.mark
    where = f"WHERE e.is_error = 1 AND e.timestamp >= {m} AND e.timestamp < {m}"
    params: list[Any] = [since, until]
    if agent is not None:
        where += f" AND COALESCE(e.agent_name, s.agent_name) = {m}"
        params.append(agent)
    return conn.execute(
        f"SELECT e.session_id, COALESCE(e.agent_name, s.agent_name), e.event_type, e.timestamp, e.model, "
        f"e.tool_name, e.output_data, e.tool_call "
        f"FROM events e{d.indexed_by('idx_events_errors_ts')} JOIN sessions s ON s.session_id = e.session_id "
        f"{where} ORDER BY e.timestamp, e.id LIMIT {m}", [*params, cap]).fetchall()

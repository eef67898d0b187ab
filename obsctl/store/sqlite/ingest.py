"""Writing events and maintaining session totals (one transaction per batch)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sqlite_utils

from obsctl.models.ingest import EventRow
from obsctl.store.merge import last_per_session as _last_per_session
from obsctl.store.merge import merge_end as _merge_end
from obsctl.store.merge import merge_start as _merge_start
from obsctl.store.sqlite import bulk, costs, event_stats

# The columns written, in the order of the rows' fields (models/ingest.py EventRow), then the
# event's cost (services/ingest._prepare).
EVENT_COLUMNS = (*EventRow._fields, "cost_usd")
_INSERT_EVENTS = f"INSERT INTO events ({', '.join(EVENT_COLUMNS)})"
_INSERT_EVENTS_OR_IGNORE = _INSERT_EVENTS.replace("INSERT INTO", "INSERT OR IGNORE INTO", 1)
_EVENT_ROW = bulk.placeholders(len(EVENT_COLUMNS))

# Upsert of per-session deltas: a new session gets the batch's values; an existing one adds
# them. An 'unknown' agent is replaced by the first real agent name seen. A session the idle
# sweep completed (services/sessions/lifecycle.py) is active again when an event arrives.
_INSERT_SESSIONS = """
INSERT INTO sessions (session_id, agent_name, started_at, status, total_tokens_in,
                      total_tokens_out, event_count, error_count, total_duration_ms, last_event_at,
                      body_events, error_events, cost_usd, unpriced_calls, total_tokens_cache_read,
                      total_tokens_cache_write, total_tokens_reasoning, background, last_seen_at)"""
# last_seen_at: the server's clock (when the session last received an event).
_SESSION_ROW = "(?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"
_ADD_TO_SESSIONS = """
ON CONFLICT(session_id) DO UPDATE SET
    total_tokens_in = total_tokens_in + excluded.total_tokens_in,
    total_tokens_out = total_tokens_out + excluded.total_tokens_out,
    event_count = event_count + excluded.event_count,
    error_count = error_count + excluded.error_count,
    body_events = body_events + excluded.body_events,
    error_events = error_events + excluded.error_events,
    total_duration_ms = total_duration_ms + excluded.total_duration_ms,
    cost_usd = CASE WHEN excluded.cost_usd IS NULL THEN sessions.cost_usd
                    ELSE COALESCE(sessions.cost_usd, 0) + excluded.cost_usd END,
    unpriced_calls = unpriced_calls + excluded.unpriced_calls,
    total_tokens_cache_read = total_tokens_cache_read + excluded.total_tokens_cache_read,
    total_tokens_cache_write = total_tokens_cache_write + excluded.total_tokens_cache_write,
    total_tokens_reasoning = total_tokens_reasoning + excluded.total_tokens_reasoning,
    background = MIN(sessions.background, excluded.background),
    started_at = MIN(started_at, excluded.started_at),
    last_event_at = MAX(COALESCE(last_event_at, ''), excluded.last_event_at),
    agent_name = CASE WHEN sessions.agent_name = 'unknown' THEN excluded.agent_name
                      ELSE sessions.agent_name END,
    status = CASE WHEN sessions.idle_ended = 1 THEN 'active' ELSE sessions.status END,
    ended_at = CASE WHEN sessions.idle_ended = 1 THEN NULL ELSE sessions.ended_at END,
    idle_ended = 0,
    last_seen_at = excluded.last_seen_at
"""

# session_start fills and session_end updates, one row per session (_last_per_session):
# (agent_name, metadata_json, timestamp, session_id) and (ended_at, status, final_tokens_in,
# final_tokens_out, session_id). The one-row forms are the fallback for SQLite before 3.33.
_APPLY_START = """
UPDATE sessions SET agent_name = ?, metadata = COALESCE(?, metadata),
       started_at = MIN(started_at, ?)
WHERE session_id = ?
"""
_APPLY_STARTS = """
UPDATE sessions SET agent_name = v.column1, metadata = COALESCE(v.column2, metadata),
       started_at = MIN(started_at, v.column3)
FROM (""", ") AS v WHERE sessions.session_id = v.column4"

_APPLY_END = """
UPDATE sessions SET ended_at = ?, status = ?, idle_ended = 0,
       total_tokens_in = COALESCE(?, total_tokens_in),
       total_tokens_out = COALESCE(?, total_tokens_out)
WHERE session_id = ?
"""
_APPLY_ENDS = """
UPDATE sessions SET ended_at = v.column1, status = v.column2, idle_ended = 0,
       total_tokens_in = COALESCE(v.column3, total_tokens_in),
       total_tokens_out = COALESCE(v.column4, total_tokens_out)
FROM (""", ") AS v WHERE sessions.session_id = v.column5"

_ID_CHUNK = 900


def existing_event_ids(db: sqlite_utils.Database, event_ids: Sequence[str]) -> set[str]:
    """The subset of `event_ids` already stored."""
    found: set[str] = set()
    conn = db.conn
    for start in range(0, len(event_ids), _ID_CHUNK):
        chunk = event_ids[start:start + _ID_CHUNK]
        sql = f"SELECT event_id FROM events WHERE event_id IN ({','.join('?' * len(chunk))})"
        found.update(row[0] for row in conn.execute(sql, chunk))
    return found


def write_batch(
    db: sqlite_utils.Database,
    rows: Sequence[tuple],
    session_deltas: Iterable[Sequence],
    starts: Iterable[tuple],
    ends: Iterable[tuple],
    totals: dict[tuple, list],
    *,
    skip_existing: bool = False,
    prices: str | None = None,
) -> int:
    """Write one validated batch; returns how many event rows were inserted.

    Call inside a write transaction. With `skip_existing`, events whose event_id is already
    stored are skipped (the caller compares the count and redoes the batch exactly if any
    was skipped, so session totals never count a duplicate).

    session_deltas: (session_id, agent_name, started_at, tokens_in, tokens_out, events,
    errors, duration_ms, last_event_at, body_events, error_events, cost_usd, unpriced_calls,
    cache read, cache write and reasoning tokens, background: 1 when the batch's events of the
    session are background work; a session stays background only while every batch says so),
    body_events and error_events counting only the events other than session_start/session_end,
    cost_usd None when no event of the batch was priced; starts: (agent_name, metadata_json, timestamp,
    session_id); ends: (ended_at, status, final_tokens_in, final_tokens_out, session_id).
    rows are tuples in EventRow's order (plain tuples bind fastest); totals: the rows' totals
    for the event_stats rollup, (event_type, hour, model or '') -> [events, tokens in, tokens
    out, duration sum, durations counted] (worked out by the caller, before the writer's turn);
    prices: the version of the price table that costed the rows (recorded, store/sqlite/costs.py).
    """
    conn = db.conn
    # A few statements of many rows each, not one per row (see bulk.py).
    bulk.execute_rows(conn, _INSERT_SESSIONS, _SESSION_ROW, list(session_deltas), _ADD_TO_SESSIONS)
    # The statements' own count: the search index's triggers change rows of their own.
    inserted = bulk.execute_rows(conn, _INSERT_EVENTS_OR_IGNORE if skip_existing else _INSERT_EVENTS,
                                 _EVENT_ROW, rows)
    if inserted == len(rows):  # fewer means the caller rolls back and redoes the batch
        event_stats.add_totals(conn, totals)
        event_stats.count_inserted(conn, inserted)
        if prices is not None:
            costs.record_prices(conn, prices)
    if bulk.UPDATE_FROM:
        head, tail = _APPLY_STARTS
        bulk.execute_rows(conn, head, bulk.placeholders(4), _last_per_session(starts, _merge_start), tail)
        head, tail = _APPLY_ENDS
        bulk.execute_rows(conn, head, bulk.placeholders(5), _last_per_session(ends, _merge_end), tail)
    else:
        conn.executemany(_APPLY_START, starts)
        conn.executemany(_APPLY_END, ends)
    return inserted

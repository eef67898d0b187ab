"""Writing events and maintaining session totals on PostgreSQL (one transaction per batch),
with the same rules as obsctl/store/sqlite/ingest.py.

Exactly once across servers: every stored event id is a row of `event_keys` (a partitioned
`events` cannot hold a unique index on event_id alone). A batch first claims its ids there;
a batch racing another one with the same ids waits for it on the key and then finds them
taken. Rows of shared tables are written in a fixed order (sessions and keys sorted), so two
batches do not deadlock over them; when they still do (the rollup rows the session triggers
touch), PostgreSQL aborts one and the store redoes it (pg_store.run_write).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import psycopg

from obsctl.models.ingest import EventRow
from obsctl.store.merge import last_per_session, merge_end, merge_start
from obsctl.store.postgres import costs, event_stats, partitions

EVENT_COLUMNS = (*EventRow._fields, "cost_usd")  # the rows' fields, then the event's cost
_COPY_EVENTS = f"COPY events ({', '.join(EVENT_COLUMNS)}) FROM STDIN"

_CLAIM_KEYS = "INSERT INTO event_keys (event_id) SELECT unnest(%s::text[])"
_CLAIM_NEW_KEYS = _CLAIM_KEYS + " ON CONFLICT DO NOTHING RETURNING event_id"

# Per-session deltas: a new session gets the batch's values, an existing one adds them; an
# 'unknown' agent is replaced by the first real agent name seen; a session the idle sweep
# completed is active again.
_ADD_TO_SESSIONS = """
INSERT INTO sessions AS s (session_id, agent_name, started_at, status, total_tokens_in,
                           total_tokens_out, event_count, error_count, total_duration_ms,
                           last_event_at, body_events, error_events, cost_usd, unpriced_calls,
                           total_tokens_cache_read, total_tokens_cache_write, total_tokens_reasoning,
                           background, last_seen_at)
SELECT v.session_id, v.agent_name, v.started_at, 'active', v.tokens_in, v.tokens_out, v.events,
       v.errors, v.duration, v.last_event_at, v.body_events, v.error_events, v.cost_usd, v.unpriced,
       v.cache_read, v.cache_write, v.reasoning, v.background,
       to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
FROM unnest(%s::text[], %s::text[], %s::text[], %s::bigint[], %s::bigint[], %s::bigint[],
            %s::bigint[], %s::float8[], %s::text[], %s::bigint[], %s::bigint[], %s::float8[],
            %s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], %s::smallint[])
     AS v(session_id, agent_name, started_at, tokens_in, tokens_out, events, errors, duration,
          last_event_at, body_events, error_events, cost_usd, unpriced, cache_read, cache_write,
          reasoning, background)
ON CONFLICT (session_id) DO UPDATE SET
    total_tokens_in = s.total_tokens_in + excluded.total_tokens_in,
    total_tokens_out = s.total_tokens_out + excluded.total_tokens_out,
    event_count = s.event_count + excluded.event_count,
    error_count = s.error_count + excluded.error_count,
    body_events = s.body_events + excluded.body_events,
    error_events = s.error_events + excluded.error_events,
    total_duration_ms = s.total_duration_ms + excluded.total_duration_ms,
    cost_usd = CASE WHEN excluded.cost_usd IS NULL THEN s.cost_usd
                    ELSE COALESCE(s.cost_usd, 0) + excluded.cost_usd END,
    unpriced_calls = s.unpriced_calls + excluded.unpriced_calls,
    total_tokens_cache_read = s.total_tokens_cache_read + excluded.total_tokens_cache_read,
    total_tokens_cache_write = s.total_tokens_cache_write + excluded.total_tokens_cache_write,
    total_tokens_reasoning = s.total_tokens_reasoning + excluded.total_tokens_reasoning,
    background = LEAST(s.background, excluded.background),
    started_at = LEAST(s.started_at, excluded.started_at),
    last_event_at = GREATEST(COALESCE(s.last_event_at, ''), excluded.last_event_at),
    agent_name = CASE WHEN s.agent_name = 'unknown' THEN excluded.agent_name ELSE s.agent_name END,
    status = CASE WHEN s.idle_ended = 1 THEN 'active' ELSE s.status END,
    ended_at = CASE WHEN s.idle_ended = 1 THEN NULL ELSE s.ended_at END,
    idle_ended = 0,
    last_seen_at = excluded.last_seen_at
"""

# session_start fills and session_end updates, one row per session.
_APPLY_STARTS = """
UPDATE sessions AS s SET agent_name = v.agent_name, metadata = COALESCE(v.metadata, s.metadata),
       started_at = LEAST(s.started_at, v.ts)
FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]) AS v(agent_name, metadata, ts, session_id)
WHERE s.session_id = v.session_id
"""
_APPLY_ENDS = """
UPDATE sessions AS s SET ended_at = v.ended_at, status = v.status, idle_ended = 0,
       total_tokens_in = COALESCE(v.final_in, s.total_tokens_in),
       total_tokens_out = COALESCE(v.final_out, s.total_tokens_out)
FROM unnest(%s::text[], %s::text[], %s::bigint[], %s::bigint[], %s::text[])
     AS v(ended_at, status, final_in, final_out, session_id)
WHERE s.session_id = v.session_id
"""

_PARTITIONS: dict[str, partitions.Partitions] = {}


def existing_event_ids(conn: psycopg.Connection, event_ids: Sequence[str]) -> set[str]:
    """The subset of `event_ids` already stored."""
    if not event_ids:
        return set()
    rows = conn.execute("SELECT event_id FROM event_keys WHERE event_id = ANY(%s::text[])",
                        [list(event_ids)]).fetchall()
    return {r[0] for r in rows}


def write_batch(
    conn: psycopg.Connection,
    rows: Sequence[tuple],
    session_deltas: Iterable[Sequence],
    starts: Iterable[tuple],
    ends: Iterable[tuple],
    totals: dict[tuple, list],
    *,
    skip_existing: bool = False,
    prices: str | None = None,
) -> int:
    """Write one validated batch; returns how many event rows were inserted (see the SQLite
    module for the shapes). With `skip_existing`, a batch some of whose ids are already
    stored writes no event and returns how many were new: the caller redoes it exactly."""
    if rows:  # first, before this batch holds any row lock another batch could wait for
        partitions_of(conn).ensure(conn, {row[3] for row in rows})
    keys = sorted(row[0] for row in rows)
    if skip_existing:
        claimed = len(conn.execute(_CLAIM_NEW_KEYS, [keys]).fetchall())
        if claimed != len(rows):
            return claimed
    elif keys:
        conn.execute(_CLAIM_KEYS, [keys])
    deltas = sorted(session_deltas, key=lambda delta: delta[0])  # session id: the lock order
    if deltas:
        conn.execute(_ADD_TO_SESSIONS, [list(c) for c in zip(*deltas)])
    if rows:
        with conn.cursor().copy(_COPY_EVENTS) as copy:
            for row in rows:
                copy.write_row(row)
        event_stats.add_totals(conn, totals)
        event_stats.count_inserted(conn, len(rows))
        if prices is not None:
            costs.record_prices(conn, prices)
    merged_starts = sorted(last_per_session(starts, merge_start), key=lambda u: u[-1])
    if merged_starts:
        conn.execute(_APPLY_STARTS, [list(c) for c in zip(*merged_starts)])
    merged_ends = sorted(last_per_session(ends, merge_end), key=lambda u: u[-1])
    if merged_ends:
        conn.execute(_APPLY_ENDS, [list(c) for c in zip(*merged_ends)])
    return len(rows)


def partitions_of(conn: psycopg.Connection) -> partitions.Partitions:
    """The partitions known for the database and schema `conn` works in."""
    key = conn.info.dsn
    known = _PARTITIONS.get(key)
    if known is None:
        known = _PARTITIONS.setdefault(key, partitions.Partitions())
    return known


def forget_partitions() -> None:
    """After partitions were dropped: ask the catalog again (maintenance.prune_batch)."""
    for known in _PARTITIONS.values():
        known.forget()

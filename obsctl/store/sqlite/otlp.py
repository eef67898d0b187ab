"""OTLP trace ingest storage: the trace-to-session links, moving a trace's early spans into
the session found later, and filling session fields from resource attributes.

Every function here runs inside the ingest service's write transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sqlite_utils

import obsctl.store.event_stats_sql as event_stats_sql
from obsctl.store.sqlite import costs
from obsctl.store.sqlite import ingest as event_store

_CHUNK = 900


def trace_sessions(db: sqlite_utils.Database, trace_ids: Sequence[str]) -> dict[str, str]:
    """The remembered session of each of `trace_ids` that has one."""
    found: dict[str, str] = {}
    conn = db.conn
    for start in range(0, len(trace_ids), _CHUNK):
        chunk = trace_ids[start:start + _CHUNK]
        sql = (f"SELECT trace_id, session_id FROM otlp_trace_sessions "
               f"WHERE trace_id IN ({','.join('?' * len(chunk))})")
        found.update(conn.execute(sql, chunk).fetchall())
    return found


def link_traces(db: sqlite_utils.Database, links: Iterable[tuple[str, str]]) -> None:
    """Remember (trace_id, session_id) pairs; the first session linked to a trace stays."""
    db.conn.executemany(
        "INSERT INTO otlp_trace_sessions (trace_id, session_id) VALUES (?, ?) "
        "ON CONFLICT(trace_id) DO NOTHING",
        links,
    )


# A trace's events have ids "<trace id>:<span id>", so a range on the unique event_id index
# finds them; ';' is the character after ':'.
_TRACE_TOTALS = """
SELECT COUNT(*), COALESCE(SUM(tokens_in), 0), COALESCE(SUM(tokens_out), 0),
       COALESCE(SUM(is_error), 0), COALESCE(SUM(duration_ms), 0), MIN(timestamp), MAX(timestamp),
       COALESCE(SUM(event_type NOT IN ('session_start', 'session_end')), 0),
       COALESCE(SUM(is_error AND event_type NOT IN ('session_start', 'session_end')), 0)
FROM events WHERE event_id >= ? AND event_id < ? AND session_id = ?
"""

_SUBTRACT = """
UPDATE sessions SET
    event_count = event_count - :count, total_tokens_in = total_tokens_in - :tokens_in,
    total_tokens_out = total_tokens_out - :tokens_out, error_count = error_count - :errors,
    body_events = body_events - :body, error_events = error_events - :body_errors,
    total_duration_ms = total_duration_ms - :duration,
    started_at = COALESCE((SELECT MIN(timestamp) FROM events WHERE session_id = :sid), started_at),
    last_event_at = (SELECT MAX(timestamp) FROM events WHERE session_id = :sid)
WHERE session_id = :sid
"""


def move_trace_events(db: sqlite_utils.Database, trace_id: str, from_session: str,
                      to_session: str) -> int:
    """Move the events of `trace_id` stored in `from_session` to `to_session`.

    Spans exported before the trace's session id was known were stored in a session named
    after the trace; once the session is known they join it. Totals move with them, and
    the source session is deleted when nothing is left in it. Returns the events moved.
    """
    conn = db.conn
    low, high = f"{trace_id}:", f"{trace_id};"
    count, tokens_in, tokens_out, errors, duration, first, last, body, body_errors = conn.execute(
        _TRACE_TOTALS, [low, high, from_session]).fetchone()
    if not count:
        return 0
    source = conn.execute("SELECT agent_name, metadata, background FROM sessions WHERE session_id = ?",
                          [from_session]).fetchone()
    agent, metadata, background = source if source else ("unknown", None, 0)
    # The target session is created or credited first: events may only point at a session.
    event_store.write_batch(db, [], [(to_session, agent, first, tokens_in, tokens_out, count,
                                      errors, duration, last, body, body_errors, None, 0, 0, 0, 0,
                                      background)], [], [], {})
    conn.execute("UPDATE sessions SET metadata = ? WHERE session_id = ? AND metadata IS NULL",
                 [metadata, to_session])
    conn.execute("UPDATE events SET session_id = ? WHERE event_id >= ? AND event_id < ? "
                 "AND session_id = ?", [to_session, low, high, from_session])
    # Scores given to the trace's session (evaluation results that came before the session was
    # known) follow its events.
    conn.execute("UPDATE session_scores SET session_id = ? WHERE session_id = ?", [to_session, from_session])
    remaining = conn.execute("SELECT EXISTS(SELECT 1 FROM events WHERE session_id = ?)",
                             [from_session]).fetchone()[0]
    if remaining:
        conn.execute(_SUBTRACT, {"count": count, "tokens_in": tokens_in, "tokens_out": tokens_out,
                                 "errors": errors, "duration": duration, "body": body,
                                 "body_errors": body_errors, "sid": from_session})
    else:
        conn.execute("DELETE FROM sessions WHERE session_id = ?", [from_session])
    # Costs and cache tokens move with the events: both sessions' sums again from what each now holds.
    costs.recount_costs(conn, [to_session, from_session] if remaining else [to_session])
    return count


def fill_session_metadata(db: sqlite_utils.Database, pairs: Iterable[tuple[str, str]]) -> None:
    """Set (metadata_json, session_id) on sessions that have no metadata yet."""
    db.conn.executemany(
        "UPDATE sessions SET metadata = ? WHERE session_id = ? AND metadata IS NULL", pairs)


def session_agents(db: sqlite_utils.Database, session_ids: Sequence[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    conn = db.conn
    for start in range(0, len(session_ids), _CHUNK):
        chunk = session_ids[start:start + _CHUNK]
        sql = (f"SELECT session_id, agent_name FROM sessions "
               f"WHERE session_id IN ({','.join('?' * len(chunk))})")
        found.update(conn.execute(sql, chunk).fetchall())
    return found


def set_session_agents(db: sqlite_utils.Database, pairs: Iterable[tuple[str, str]]) -> None:
    """Set (agent_name, session_id)."""
    db.conn.executemany("UPDATE sessions SET agent_name = ? WHERE session_id = ?", pairs)


def lock_traces(db: sqlite_utils.Database, trace_ids: Sequence[str]) -> None:
    """Serialise requests settling the usage of these traces: SQLite already runs one write
    transaction at a time."""


def _by_trace(event_ids: Sequence[str]) -> dict[str, list[str]]:
    """Event ids `<trace id>:<span id>` grouped by trace id."""
    traces: dict[str, list[str]] = {}
    for event_id in event_ids:
        traces.setdefault(event_id.partition(":")[0], []).append(event_id)
    return traces


def model_call_children(db: sqlite_utils.Database, parent_ids: Sequence[str]) -> list[tuple]:
    """(parent_id, event_type, metadata) of the stored events that may be model calls (type
    llm_call or error) whose parent is one of `parent_ids` (span event ids): a range of each
    trace's event ids on the unique index."""
    found: list[tuple] = []
    conn = db.conn
    for trace_id, ids in _by_trace(parent_ids).items():
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            found.extend(conn.execute(
                f"SELECT parent_id, event_type, metadata FROM events WHERE event_id >= ? AND event_id < ? "
                f"AND event_type IN ('llm_call', 'error') AND parent_id IN ({','.join('?' * len(chunk))})",
                [f"{trace_id}:", f"{trace_id};", *chunk]).fetchall())
    return found


def failed_children(db: sqlite_utils.Database, parent_ids: Sequence[str]) -> set[str]:
    """The `parent_ids` (span event ids) with a stored child that failed: an error, or a span
    that failed because of its own child (`output_data.child_error`)."""
    found: set[str] = set()
    conn = db.conn
    for trace_id, ids in _by_trace(parent_ids).items():
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            found.update(row[0] for row in conn.execute(
                f"SELECT DISTINCT parent_id FROM events WHERE event_id >= ? AND event_id < ? "
                f"AND parent_id IN ({','.join('?' * len(chunk))}) "
                f"AND (is_error = 1 OR output_data LIKE '%\"child_error\":%')",
                [f"{trace_id}:", f"{trace_id};", *chunk]))
    return found


def counted_usage(db: sqlite_utils.Database, event_ids: Sequence[str]) -> list[tuple]:
    """(event_id, session_id, event_type, timestamp, model, tokens_in, tokens_out, metadata,
    tokens_cache_read, tokens_cache_write, tokens_reasoning) of the stored events among
    `event_ids` whose token counts are counted."""
    found: list[tuple] = []
    conn = db.conn
    for start in range(0, len(event_ids), _CHUNK):
        chunk = event_ids[start:start + _CHUNK]
        found.extend(conn.execute(
            f"SELECT event_id, session_id, event_type, timestamp, model, tokens_in, tokens_out, metadata, "
            f"tokens_cache_read, tokens_cache_write, tokens_reasoning "
            f"FROM events WHERE event_id IN ({','.join('?' * len(chunk))}) "
            f"AND (tokens_in IS NOT NULL OR tokens_out IS NOT NULL) ORDER BY event_id", chunk).fetchall())
    return found


def retract_usage(db: sqlite_utils.Database, rows: Sequence[tuple]) -> None:
    """Stop counting the usage of some events: (event_id, session_id, event_type, timestamp,
    model, tokens_in, tokens_out, metadata) as counted_usage read them (counts 0 for none),
    with the metadata to store. Their token and cost columns become NULL and the counts are
    taken off their sessions' totals (costs and cache tokens recounted) and the event_stats rollup."""
    conn = db.conn
    # The events leave the rollup as they are and come back without their usage.
    chunks = [[r[0] for r in rows[i:i + _CHUNK]] for i in range(0, len(rows), _CHUNK)]
    for chunk in chunks:
        conn.execute(event_stats_sql.of_events(f"WHERE event_id IN ({','.join('?' * len(chunk))})",
                                               subtract=True), chunk)
    conn.executemany("UPDATE events SET tokens_in = NULL, tokens_out = NULL, tokens_cache_read = NULL, "
                     "tokens_cache_write = NULL, tokens_reasoning = NULL, cost_usd = NULL, metadata = ? "
                     "WHERE event_id = ?",
                     [(r[7], r[0]) for r in rows])
    for chunk in chunks:
        conn.execute(event_stats_sql.of_events(f"WHERE event_id IN ({','.join('?' * len(chunk))})", add=True),
                     chunk)
    conn.executemany("UPDATE sessions SET total_tokens_in = total_tokens_in - ?, "
                     "total_tokens_out = total_tokens_out - ? WHERE session_id = ?",
                     [(r[5], r[6], r[1]) for r in rows])
    costs.recount_costs(conn, sorted({r[1] for r in rows}))


# --- GenAI log records (services/otlp/logs.py) -----------------------------------------

def _loads(text: str | None):
    import orjson

    return None if text is None else orjson.loads(text)


def event_contents(db: sqlite_utils.Database, event_ids: Sequence[str]) -> dict[str, tuple]:
    """(input_data, output_data, metadata, session_id), the objects parsed, of each of
    `event_ids` that is stored."""
    found: dict[str, tuple] = {}
    conn = db.conn
    for start in range(0, len(event_ids), _CHUNK):
        chunk = event_ids[start:start + _CHUNK]
        sql = (f"SELECT event_id, input_data, output_data, metadata, session_id FROM events "
               f"WHERE event_id IN ({','.join('?' * len(chunk))})")
        for event_id, input_data, output_data, metadata, session_id in conn.execute(sql, chunk):
            found[event_id] = (_loads(input_data), _loads(output_data), _loads(metadata), session_id)
    return found


def set_event_contents(db: sqlite_utils.Database, rows: Iterable[tuple]) -> None:
    """Set (input_data_json, output_data_json, metadata_json, event_id)."""
    db.conn.executemany("UPDATE events SET input_data = ?, output_data = ?, metadata = ? "
                        "WHERE event_id = ?", rows)


def span_log_events(db: sqlite_utils.Database, span_event_ids: Sequence[str]) -> dict[str, list]:
    """The events of log records stored before their span, per span event id: ids
    `<span event id>:<key>` (a range on the unique event_id index per span, ';' following
    ':', in one statement per chunk), each as (event_id, input_data, output_data, metadata),
    in event id order (the caller orders them by the records' times)."""
    found: dict[str, list] = {}
    conn = db.conn
    for start in range(0, len(span_event_ids), _CHUNK):
        chunk = span_event_ids[start:start + _CHUNK]
        sql = (f"SELECT v.column1, e.event_id, e.input_data, e.output_data, e.metadata "
               f"FROM (VALUES {','.join(['(?)'] * len(chunk))}) AS v "
               f"JOIN events e ON e.event_id > v.column1 || ':' AND e.event_id < v.column1 || ';'")
        for span_event, e, i, o, m in conn.execute(sql, chunk):
            found.setdefault(span_event, []).append((e, _loads(i), _loads(o), _loads(m)))
    return found

"""OTLP trace ingest storage on PostgreSQL: the trace-to-session links, moving a trace's
early spans into the session found later, and filling session fields from resource
attributes; the same rules as obsctl/store/sqlite/otlp.py.

Every function here runs inside the ingest service's write transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import psycopg

import obsctl.store.event_stats_sql as event_stats_sql
from obsctl.store.postgres import costs
from obsctl.store.sql import one

# The answers' keys in SQLite's order: it looks ids up in chunks of _CHUNK, each in index order.
_CHUNK = 900
_SQLITE_ORDER = f"ORDER BY (w.n - 1) / {_CHUNK}, {{key}}"


def trace_sessions(conn: psycopg.Connection, trace_ids: Sequence[str]) -> dict[str, str]:
    """The remembered session of each of `trace_ids` that has one."""
    return _pairs_for(conn, "otlp_trace_sessions", "trace_id", "session_id", trace_ids)


def _pairs_for(conn: psycopg.Connection, table: str, key: str, value: str, ids: Sequence[str]) -> dict:
    """{key: value} of the rows of `table` whose `key` is one of `ids`, in SQLite's order
    (`table`, `key` and `value` are this module's constants, never input)."""
    if not ids:
        return {}
    return dict(conn.execute(
        f"""SELECT t.{key}, t.{value} FROM {table} t
            JOIN (SELECT id, MIN(n) AS n FROM unnest(%s::text[]) WITH ORDINALITY AS w(id, n)
                  GROUP BY id) w ON t.{key} = w.id
            {_SQLITE_ORDER.format(key="t." + key)}""",
        [list(ids)]).fetchall())


def link_traces(conn: psycopg.Connection, links: Iterable[tuple[str, str]]) -> None:
    """Remember (trace_id, session_id) pairs; the first session linked to a trace stays."""
    links = list(links)
    if links:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO otlp_trace_sessions (trace_id, session_id) VALUES (%s, %s) "
                "ON CONFLICT (trace_id) DO NOTHING",
                links,
            )


# A trace's events have ids "<trace id>:<span id>", so a range on idx_events_event_id (text
# in byte order, COLLATE "C") finds them; ';' is the character after ':'.
# The durations' sum is SQLite's: exact (an integer) when every duration is whole, else the
# sum of the durations as doubles, added in the order SQLite reads them (its plan goes through
# idx_events_session_stats), so that the float comes out bit for bit the same.
_TRACE_TOTALS = """
SELECT COUNT(*), COALESCE(SUM(tokens_in), 0), COALESCE(SUM(tokens_out), 0),
       COALESCE(SUM(is_error), 0), COALESCE(SUM(duration_ms), 0),
       COALESCE(bool_and(duration_ms = trunc(duration_ms)), true), SUM(duration_ms::float8 ORDER BY event_type, model NULLS FIRST, tool_name NULLS FIRST,
                                      is_error, duration_ms NULLS FIRST, tokens_in NULLS FIRST,
                                      tokens_out NULLS FIRST, id),
       MIN(timestamp), MAX(timestamp),
       COALESCE(SUM(CASE WHEN event_type NOT IN ('session_start', 'session_end') THEN 1 ELSE 0 END), 0),
       COALESCE(SUM(CASE WHEN is_error <> 0 AND event_type NOT IN ('session_start', 'session_end')
                         THEN 1 ELSE 0 END), 0)
FROM events WHERE event_id >= %s AND event_id < %s AND session_id = %s
"""

_SUBTRACT = """
UPDATE sessions SET
    event_count = event_count - %(count)s, total_tokens_in = total_tokens_in - %(tokens_in)s,
    total_tokens_out = total_tokens_out - %(tokens_out)s, error_count = error_count - %(errors)s,
    body_events = body_events - %(body)s, error_events = error_events - %(body_errors)s,
    total_duration_ms = total_duration_ms - %(duration)s,
    started_at = COALESCE((SELECT MIN(timestamp) FROM events WHERE session_id = %(sid)s), started_at),
    last_event_at = (SELECT MAX(timestamp) FROM events WHERE session_id = %(sid)s)
WHERE session_id = %(sid)s
"""


def move_trace_events(conn: psycopg.Connection, trace_id: str, from_session: str,
                      to_session: str) -> int:
    """Move the events of `trace_id` stored in `from_session` to `to_session`.

    Spans exported before the trace's session id was known were stored in a session named
    after the trace; once the session is known they join it. Totals move with them, and
    the source session is deleted when nothing is left in it. Returns the events moved.

    Changing session_id leaves each event in its partition (they are partitioned by
    timestamp), so the move is one UPDATE, as on SQLite.
    """
    from obsctl.store.postgres import ingest as event_store  # (imported when first needed)

    low, high = f"{trace_id}:", f"{trace_id};"
    (count, tokens_in, tokens_out, errors, exact_duration, whole, float_duration, first, last,
     body, body_errors) = one(conn.execute(_TRACE_TOTALS, [low, high, from_session]))
    if not count:
        return 0
    duration = exact_duration if whole else float_duration
    source = conn.execute("SELECT agent_name, metadata, background FROM sessions WHERE session_id = %s",
                          [from_session]).fetchone()
    agent, metadata, background = source if source else ("unknown", None, 0)
    # The target session is created or credited first: events may only point at a session.
    event_store.write_batch(conn, [], [(to_session, agent, first, tokens_in, tokens_out, count,
                                        errors, duration, last, body, body_errors, None, 0, 0, 0, 0,
                                      background)], [], [], {})
    conn.execute("UPDATE sessions SET metadata = %s WHERE session_id = %s AND metadata IS NULL",
                 [metadata, to_session])
    conn.execute("UPDATE events SET session_id = %s WHERE event_id >= %s AND event_id < %s "
                 "AND session_id = %s", [to_session, low, high, from_session])
    # Scores given to the trace's session follow its events (see the SQLite module).
    conn.execute("UPDATE session_scores SET session_id = %s WHERE session_id = %s", [to_session, from_session])
    remaining = one(conn.execute("SELECT EXISTS(SELECT 1 FROM events WHERE session_id = %s)",
                             [from_session]))[0]
    if remaining:
        conn.execute(_SUBTRACT, {"count": count, "tokens_in": tokens_in, "tokens_out": tokens_out,
                                 "errors": errors, "duration": duration, "body": body,
                                 "body_errors": body_errors, "sid": from_session})
    else:
        conn.execute("DELETE FROM sessions WHERE session_id = %s", [from_session])
    # Costs move with the events: both sessions' sums again from what each now holds.
    costs.recount_costs(conn, [to_session, from_session] if remaining else [to_session])
    return count


def fill_session_metadata(conn: psycopg.Connection, pairs: Iterable[tuple[str, str]]) -> None:
    """Set (metadata_json, session_id) on sessions that have no metadata yet."""
    pairs = list(pairs)
    if pairs:
        with conn.cursor() as cur:
            cur.executemany(
                "UPDATE sessions SET metadata = %s WHERE session_id = %s AND metadata IS NULL", pairs)


def session_agents(conn: psycopg.Connection, session_ids: Sequence[str]) -> dict[str, str]:
    """The agent name of each of `session_ids` that is stored."""
    return _pairs_for(conn, "sessions", "session_id", "agent_name", session_ids)


def set_session_agents(conn: psycopg.Connection, pairs: Iterable[tuple[str, str]]) -> None:
    """Set (agent_name, session_id)."""
    pairs = list(pairs)
    if pairs:
        with conn.cursor() as cur:
            cur.executemany("UPDATE sessions SET agent_name = %s WHERE session_id = %s", pairs)


def lock_traces(conn: psycopg.Connection, trace_ids: Sequence[str]) -> None:
    """Serialise requests settling the usage of these traces (one transaction-scoped advisory
    lock per trace, taken in one order so two requests never wait for each other in a cycle):
    otherwise a parent and its model-call child stored at once by two servers could each miss
    the other and both count."""
    if trace_ids:
        conn.execute(
            """SELECT pg_advisory_xact_lock(k) FROM (
                   SELECT DISTINCT hashtext('obsctl-trace:' || current_schema() || ':' || t) AS k
                   FROM unnest(%s::text[]) AS t ORDER BY k) AS keys""",
            [list(trace_ids)])


def model_call_children(conn: psycopg.Connection, parent_ids: Sequence[str]) -> list[tuple]:
    """(parent_id, event_type, metadata) of the stored events that may be model calls (type
    llm_call or error) whose parent is one of `parent_ids` (span event ids): a range of each
    trace's event ids on idx_events_event_id."""
    traces: dict[str, list[str]] = {}
    for event_id in parent_ids:
        traces.setdefault(event_id.partition(":")[0], []).append(event_id)
    found: list[tuple] = []
    for trace_id, ids in traces.items():
        found.extend(conn.execute(
            "SELECT parent_id, event_type, metadata FROM events WHERE event_id >= %s AND event_id < %s "
            "AND event_type IN ('llm_call', 'error') AND parent_id = ANY(%s::text[])",
            [f"{trace_id}:", f"{trace_id};", ids]).fetchall())
    return found


def failed_children(conn: psycopg.Connection, parent_ids: Sequence[str]) -> set[str]:
    """The `parent_ids` with a stored child that failed (see the SQLite module)."""
    traces: dict[str, list[str]] = {}
    for event_id in parent_ids:
        traces.setdefault(event_id.partition(":")[0], []).append(event_id)
    found: set[str] = set()
    for trace_id, ids in traces.items():
        found.update(row[0] for row in conn.execute(
            "SELECT DISTINCT parent_id FROM events WHERE event_id >= %s AND event_id < %s "
            "AND parent_id = ANY(%s::text[]) AND (is_error = 1 OR output_data LIKE '%%\"child_error\":%%')",
            [f"{trace_id}:", f"{trace_id};", ids]).fetchall())
    return found


def counted_usage(conn: psycopg.Connection, event_ids: Sequence[str]) -> list[tuple]:
    """(event_id, session_id, event_type, timestamp, model, tokens_in, tokens_out, metadata,
    tokens_cache_read, tokens_cache_write, tokens_reasoning) of the stored events among
    `event_ids` whose token counts are counted."""
    if not event_ids:
        return []
    return conn.execute(
        "SELECT event_id, session_id, event_type, timestamp, model, tokens_in, tokens_out, metadata, "
        "tokens_cache_read, tokens_cache_write, tokens_reasoning "
        "FROM events WHERE event_id = ANY(%s::text[]) "
        "AND (tokens_in IS NOT NULL OR tokens_out IS NOT NULL) ORDER BY event_id",
        [list(event_ids)]).fetchall()


def retract_usage(conn: psycopg.Connection, rows: Sequence[tuple]) -> None:
    """Stop counting the usage of some events (see the SQLite module): token columns NULL,
    the counts taken off their sessions' totals and the event_stats rollup."""
    ids = [list(sorted(r[0] for r in rows))]
    # The events leave the rollup as they are and come back without their usage.
    conn.execute(event_stats_sql.of_events("WHERE event_id = ANY(%s)", subtract=True, ordered=True), ids)
    with conn.cursor() as cur:
        cur.executemany("UPDATE events SET tokens_in = NULL, tokens_out = NULL, tokens_cache_read = NULL, "
                        "tokens_cache_write = NULL, tokens_reasoning = NULL, cost_usd = NULL, metadata = %s "
                        "WHERE event_id = %s AND timestamp = %s", [(r[7], r[0], r[3]) for r in rows])
        cur.executemany("UPDATE sessions SET total_tokens_in = total_tokens_in - %s, "
                        "total_tokens_out = total_tokens_out - %s WHERE session_id = %s",
                        [(r[5], r[6], r[1]) for r in sorted(rows, key=lambda r: r[1])])
    conn.execute(event_stats_sql.of_events("WHERE event_id = ANY(%s)", add=True, ordered=True), ids)
    costs.recount_costs(conn, sorted({r[1] for r in rows}))


# --- GenAI log records (services/otlp/logs.py) -----------------------------------------

def _loads(text: str | None):
    import orjson

    return None if text is None else orjson.loads(text)


def event_contents(conn: psycopg.Connection, event_ids: Sequence[str]) -> dict[str, tuple]:
    """As obsctl/store/sqlite/otlp.event_contents: (input_data, output_data, metadata, session_id)."""
    if not event_ids:
        return {}
    rows = conn.execute("SELECT event_id, input_data, output_data, metadata, session_id FROM events "
                        "WHERE event_id = ANY(%s::text[])", [list(event_ids)]).fetchall()
    return {e: (_loads(i), _loads(o), _loads(m), s) for e, i, o, m, s in rows}


def set_event_contents(conn: psycopg.Connection, rows: Iterable[tuple]) -> None:
    """Set (input_data_json, output_data_json, metadata_json, event_id)."""
    rows = list(rows)
    if rows:
        with conn.cursor() as cur:
            cur.executemany("UPDATE events SET input_data = %s, output_data = %s, metadata = %s "
                            "WHERE event_id = %s", rows)


def span_log_events(conn: psycopg.Connection, span_event_ids: Sequence[str]) -> dict[str, list]:
    """The events of log records stored before their span, per span event id: ids
    `<span event id>:<key>` (a range on idx_events_event_id, byte order; ';' follows ':'),
    each as (event_id, input_data, output_data, metadata), in event id order (the caller
    orders them by the records' times)."""
    if not span_event_ids:
        return {}
    rows = conn.execute(
        """SELECT s.id, e.event_id, e.input_data, e.output_data, e.metadata
           FROM unnest(%s::text[]) AS s(id)
           JOIN events e ON e.event_id > s.id || ':' AND e.event_id < s.id || ';'
           ORDER BY s.id, e.event_id""",
        [list(span_event_ids)]).fetchall()
    found: dict[str, list] = {}
    for span_event, e, i, o, m in rows:
        found.setdefault(span_event, []).append((e, _loads(i), _loads(o), _loads(m)))
    return found

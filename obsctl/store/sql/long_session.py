"""The reads of a long session's analysis (services/triage/long.py), written once for both
stores: the SQL text is in obsctl/store/long_session_sql.py, and what differs between the
engines is its `Dialect` (how durations are aggregated and handed over) and how a long result
is streamed. obsctl/store/sqlite/triage.py and obsctl/store/postgres/triage.py re-export these.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import obsctl.store.long_session_sql as long_sql
from obsctl.store.sql import connection, one

__all__ = ["iter_slow_ids", "iter_tool_calls", "next_model_call", "session_breakdown", "session_end_rows",
           "session_error_places", "session_error_rows", "session_last_body"]

# A SQLite NUMERIC as text that reads back exactly: an integer as its digits, a REAL to 17
# significant digits (SQLite's own text of a REAL, and json_group_array's, has 15, and printf
# without '!' stops at 16).
EXACT_SQLITE = "CASE WHEN typeof({0}) = 'integer' THEN {0} ELSE printf('%!.17g', {0}) END"

_DIALECTS = {
    "sqlite": long_sql.Dialect(
        mark="?",
        durations=f"group_concat({EXACT_SQLITE.format('duration_ms')}) FILTER (WHERE duration_ms IS NOT NULL)",
    ),
    "postgresql": long_sql.Dialect(
        mark="%s",
        # NUMERIC's text is exact and never has an exponent: 0.42 s against array_agg's 0.70 s
        # for the durations of a 1M-event session, read and parsed.
        durations="string_agg(duration_ms::text, ',') FILTER (WHERE duration_ms IS NOT NULL)",
        # A float8 is loaded in C; a NUMERIC through the store's loader in Python (0.3 s for
        # 333k calls).
        duration="duration_ms::float8",
    ),
}
_CHUNK_ROWS = 2000


def _long(handle: Any) -> tuple[Any, long_sql.Dialect]:
    conn, d = connection(handle)
    return conn, _DIALECTS[d.name]


def _stream(handle: Any, sql: str, params: list) -> Iterator[tuple]:
    """The rows of `sql`, _CHUNK_ROWS at a time. PostgreSQL: in chunks of one statement's result
    where libpq has them (17 on; twice as fast as a server-side cursor, 0.8 s against 1.8 s for
    333k rows), else through a server-side cursor; nothing else may run on the connection
    until the stream ends."""
    conn, d = connection(handle)
    if d.name == "sqlite":
        cursor = conn.execute(sql, params)
        while rows := cursor.fetchmany(_CHUNK_ROWS):
            yield from rows
        return
    import psycopg

    if psycopg.pq.version() >= 170000:
        yield from conn.cursor().stream(sql, params, size=_CHUNK_ROWS)
    else:
        from obsctl.store.postgres.sessions import stream_rows

        yield from stream_rows(conn, sql, params)


def session_breakdown(db: Any, session_id: str) -> list[tuple]:
    """The session's events added up per (event_type, is_error, model, tool_name): the columns
    of long_session_sql.BREAKDOWN_COLUMNS, durations a list."""
    conn, d = _long(db)
    rows = conn.execute(long_sql.breakdown(d), [session_id]).fetchall()
    return [(*row[:8], long_sql.numbers(row[8]), *row[9:]) for row in rows]


def session_error_rows(db: Any, session_id: str, cap: int) -> list[tuple]:
    """The first `cap` failed body events in order (long_session_sql.errors)."""
    conn, d = _long(db)
    return conn.execute(long_sql.errors(d), [session_id, cap, session_id, session_id, session_id]).fetchall()


def session_end_rows(db: Any, session_id: str, count: int, last: bool) -> list[tuple]:
    """The first (`last`: the last, newest first) `count` events, STEP_COLUMNS."""
    conn, d = _long(db)
    return conn.execute(long_sql.ends(d, last), [session_id, count]).fetchall()


def session_error_places(db: Any, session_id: str, after: tuple[str, int], count: int) -> list[tuple[int, int]]:
    """(id, events since the error before it) of the first `count` failed body events after
    the (timestamp, id) `after`; the first counts every event before it."""
    conn, d = _long(db)
    return conn.execute(long_sql.error_places(d), [session_id, after[0], *after, count, session_id]).fetchall()


def session_last_body(db: Any, session_id: str, successful: bool) -> tuple | None:
    conn, d = _long(db)
    return conn.execute(long_sql.last_body(d, successful), [session_id]).fetchone()


def iter_tool_calls(db: Any, session_id: str, min_repeats: int) -> Iterator[tuple]:
    """The session's tool calls that loop detection must see, in order (long_session_sql.tool_calls),
    streamed."""
    conn, d = _long(db)
    counts = one(conn.execute(long_sql.tool_call_counts(d, min_repeats), [session_id]))
    sql = long_sql.tool_calls(d, min_repeats, counts)
    if sql is not None:
        yield from _stream(db, sql, [session_id] * sql.count(d.mark))


def next_model_call(db: Any, session_id: str, timestamp: str, row_id: int) -> tuple | None:
    conn, d = _long(db)
    return conn.execute(long_sql.next_model_call(d), [session_id, timestamp, timestamp, row_id]).fetchone()


def iter_slow_ids(db: Any, session_id: str, event_type: str, tool_name: str | None,
                  threshold: float) -> Iterator[tuple]:
    """(timestamp, id, event_id) of the kind's successful events slower than `threshold`."""
    _, d = _long(db)
    params = [session_id, event_type, threshold] + ([tool_name] if tool_name is not None else [])
    yield from _stream(db, long_sql.slow_ids(d, tool_name is not None), params)

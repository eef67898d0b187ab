"""SQL aggregates behind `GET /analytics` on PostgreSQL: the same reads as
obsctl/store/sqlite/analytics.py (the session_stats and event_stats rollups and two index
lookups), answering the same values and types.

SUM over BIGINT is NUMERIC on PostgreSQL; the store's NUMERIC loader reads whole sums as int,
as SQLite answers them. event_stats.duration_sum is REAL on SQLite, so its sums are floats.
"""

from __future__ import annotations

import psycopg

import obsctl.store.analytics_sql as analytics_sql
from obsctl.store.analytics_sql import COST_BY_AGENT_DAY as _COST_BY_AGENT_DAY
from obsctl.store.analytics_sql import COST_BY_MODEL as _COST_BY_MODEL
from obsctl.store.analytics_sql import EVENT_TYPES as _EVENT_TYPES
from obsctl.store.analytics_sql import HOURLY as _HOURLY
from obsctl.store.analytics_sql import OVERVIEW as _OVERVIEW
from obsctl.store.analytics_sql import OVERVIEW_COLUMNS
from obsctl.store.analytics_sql import STARTS as _STARTS
from obsctl.store.postgres import event_stats
from obsctl.store.postgres.schema import SESSION_DURATION_MS
from obsctl.store.sql import one

_DURATIONS = analytics_sql.durations(SESSION_DURATION_MS)
_TOP_AGENTS = analytics_sql.TOP_AGENTS.format(m="%s")
_SESSIONS_BY_DAY = analytics_sql.SESSIONS_BY_DAY.format(m="%s")

_MODEL_USAGE = """
SELECT model, SUM(event_count) AS calls, SUM(tokens_in), SUM(tokens_out),
       SUM(duration_sum)::float8, SUM(duration_count), SUM(tokens_cache_read)::bigint,
       SUM(tokens_cache_write)::bigint, SUM(tokens_reasoning)::bigint
FROM event_stats
WHERE model <> ''
GROUP BY model
ORDER BY calls DESC, model
"""


# A rebuild that loses a deadlock to an ingest transaction is redone.
_REPAIR_ATTEMPTS = 3


def rollup_is_current(conn: psycopg.Connection) -> bool:
    """True when the rollup counts exactly the stored events (call inside a snapshot)."""
    return event_stats.is_current(conn)


def repair_rollup(conn: psycopg.Connection) -> None:
    """Rebuild the rollup when events were written or deleted behind the ingest path.

    The rollup is locked against other writers of it (ingest, prune, another repair) for the
    rebuild, as SQLite's write transaction does, so no batch is counted twice or missed."""
    for attempt in range(_REPAIR_ATTEMPTS):
        try:
            with conn.transaction():
                conn.execute("LOCK TABLE event_stats IN SHARE ROW EXCLUSIVE MODE")
                if not event_stats.is_current(conn):
                    event_stats.rebuild(conn)
                    event_stats.recount(conn)
            return
        except psycopg.errors.DeadlockDetected:
            if attempt == _REPAIR_ATTEMPTS - 1 or not conn.autocommit or conn.info.transaction_status:
                raise


def overview(conn: psycopg.Connection) -> dict:
    *totals, duration_sum, ended = one(conn.execute(_OVERVIEW))
    earliest, latest = one(conn.execute(_STARTS))
    shortest, longest = one(conn.execute(_DURATIONS))
    average = duration_sum / ended if ended else None
    return dict(zip(OVERVIEW_COLUMNS, (*totals, earliest, latest, average, shortest, longest)))


def top_agents(conn: psycopg.Connection, limit: int) -> list[tuple]:
    """(agent_name, session_count, total_tokens), most tokens first."""
    return conn.execute(_TOP_AGENTS, [limit]).fetchall()


def sessions_by_day(conn: psycopg.Connection, since: str) -> list[tuple]:
    """(day, session_count, total_tokens) for sessions started at or after `since`."""
    return conn.execute(_SESSIONS_BY_DAY, [since]).fetchall()


def model_usage(conn: psycopg.Connection) -> list[tuple]:
    """(model, calls, tokens_in, tokens_out, duration_sum, duration_count, cache read, cache
    write, reasoning tokens), most calls first."""
    return conn.execute(_MODEL_USAGE).fetchall()


def event_type_counts(conn: psycopg.Connection) -> list[tuple]:
    """(event_type, count) without lifecycle events, most frequent first."""
    return conn.execute(_EVENT_TYPES).fetchall()


def hourly_counts(conn: psycopg.Connection) -> list[tuple]:
    """(hour 0-23 UTC, event count) for the hours that have events."""
    return conn.execute(_HOURLY).fetchall()


def cost_by_agent_day(conn: psycopg.Connection) -> list[tuple]:
    """(agent_name, start day, cost_usd or None, unpriced calls, sessions) of every group."""
    return conn.execute(_COST_BY_AGENT_DAY).fetchall()


def cost_by_model(conn: psycopg.Connection) -> list[tuple]:
    """(model or None, cost_usd or None, unpriced calls, calls) over the calls that used tokens,
    most cost first, unpriced models last."""
    return conn.execute(_COST_BY_MODEL).fetchall()

"""Stored costs on PostgreSQL: the price table that costed the events, and recosting them all
(`db reprice`). Ingest costs each event as it stores it (services/ingest._prepare) and adds the
costs to its session (store/postgres/ingest.py); the SQL is store/cost_sql.py's."""

from __future__ import annotations

import psycopg

from obsctl.store import cost_sql

_NOW = "to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')"
_RECORD, _REPRICED, _SET_MODEL_COSTS, _SESSION_COSTS, _UNSPLIT_USAGE, _SET_USAGE_PARTS = (
    sql.format(p="%s", now=_NOW) for sql in (cost_sql.RECORD, cost_sql.REPRICED, cost_sql.SET_MODEL_COSTS,
                                            cost_sql.SESSION_COSTS, cost_sql.UNSPLIT_USAGE,
                                            cost_sql.SET_USAGE_PARTS))


def record_prices(conn: psycopg.Connection, prices: str) -> None:
    """Note that costs were just written with the price table `prices` (the ingest transaction)."""
    conn.execute(_RECORD, [prices])


def price_table(conn: psycopg.Connection) -> dict | None:
    """The price table of the stored costs: {prices, mixed, updated_at, repriced_at}; None
    before any event was costed."""
    return cost_sql.price_row(conn.execute(cost_sql.PRICE_TABLE).fetchone())


def stored_models(conn: psycopg.Connection) -> list[str]:
    """The models named by stored events, in order."""
    return [r[0] for r in conn.execute(cost_sql.STORED_MODELS)]


def set_model_costs(conn: psycopg.Connection, model: str, rates: tuple | None) -> int:
    """Recost the events of `model` at `rates` (services/pricing.ModelPrice.rates(); NULL costs
    when None); returns how many."""
    return conn.execute(_SET_MODEL_COSTS, [*(rates or (None,) * 5), model]).rowcount


def unsplit_usage(conn: psycopg.Connection, after_id: int, limit: int) -> list[tuple]:
    """(id, event_id, tokens_in, tokens_out, metadata) of up to `limit` counted events after
    `after_id` with no cache or reasoning counts whose kept span attributes may hold some."""
    return conn.execute(_UNSPLIT_USAGE, [after_id, *cost_sql.UNSPLIT_PATTERNS, limit]).fetchall()


def set_usage_parts(conn: psycopg.Connection, rows: list[tuple]) -> None:
    """Set (cache read, cache write, reasoning, event_id) of some events."""
    with conn.cursor() as cur:
        cur.executemany(_SET_USAGE_PARTS, rows)


def recount_session_costs(conn: psycopg.Connection) -> int:
    """Every session's cost_usd, unpriced_calls and cache and reasoning token totals again from
    its events; returns how many."""
    return conn.execute(_SESSION_COSTS).rowcount


def recount_rollup_costs(conn: psycopg.Connection) -> None:
    """The event_stats rollup again from the events, with their new costs (after repricing);
    ingest's additions to it wait until the transaction ends."""
    from obsctl.store.postgres import event_stats

    conn.execute("LOCK TABLE event_stats IN SHARE ROW EXCLUSIVE MODE")
    event_stats.rebuild(conn)


def recount_costs(conn: psycopg.Connection, session_ids: list[str]) -> None:
    """cost_usd and unpriced_calls of some sessions again from their events (within the
    writing transaction: OTLP trace moves and usage retraction)."""
    conn.execute(_SESSION_COSTS + " WHERE session_id = ANY(%s)", [list(session_ids)])


def mark_repriced(conn: psycopg.Connection, prices: str) -> None:
    """Every stored cost now comes from the price table `prices`."""
    conn.execute(_REPRICED, [prices])

"""Stored costs on SQLite: the price table that costed the events, and recosting them all
(`db reprice`). Ingest costs each event as it stores it (services/ingest._prepare) and adds the
costs to its session (store/sqlite/ingest.py); the SQL is store/cost_sql.py's."""

from __future__ import annotations

import sqlite3

import sqlite_utils

from obsctl.store import cost_sql

_NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
_RECORD, _REPRICED, _SET_MODEL_COSTS, _SESSION_COSTS, _UNSPLIT_USAGE, _SET_USAGE_PARTS = (
    sql.format(p="?", now=_NOW) for sql in (cost_sql.RECORD, cost_sql.REPRICED, cost_sql.SET_MODEL_COSTS,
                                            cost_sql.SESSION_COSTS, cost_sql.UNSPLIT_USAGE,
                                            cost_sql.SET_USAGE_PARTS))


def record_prices(conn: sqlite3.Connection, prices: str) -> None:
    """Note that costs were just written with the price table `prices` (the ingest transaction)."""
    conn.execute(_RECORD, [prices])


def price_table(db: sqlite_utils.Database) -> dict | None:
    """The price table of the stored costs: {prices, mixed, updated_at, repriced_at}; None
    before any event was costed."""
    return cost_sql.price_row(db.conn.execute(cost_sql.PRICE_TABLE).fetchone())


def stored_models(db: sqlite_utils.Database) -> list[str]:
    """The models named by stored events, in order."""
    return [r[0] for r in db.conn.execute(cost_sql.STORED_MODELS)]


def set_model_costs(db: sqlite_utils.Database, model: str, rates: tuple | None) -> int:
    """Recost the events of `model` at `rates` (services/pricing.ModelPrice.rates(); NULL costs
    when None); returns how many."""
    return db.conn.execute(_SET_MODEL_COSTS, [*(rates or (None,) * 5), model]).rowcount


def unsplit_usage(db: sqlite_utils.Database, after_id: int, limit: int) -> list[tuple]:
    """(id, event_id, tokens_in, tokens_out, metadata) of up to `limit` counted events after
    `after_id` with no cache or reasoning counts whose kept span attributes may hold some."""
    return db.conn.execute(_UNSPLIT_USAGE, [after_id, *cost_sql.UNSPLIT_PATTERNS, limit]).fetchall()


def set_usage_parts(db: sqlite_utils.Database, rows: list[tuple]) -> None:
    """Set (cache read, cache write, reasoning, event_id) of some events."""
    db.conn.executemany(_SET_USAGE_PARTS, rows)


def recount_session_costs(db: sqlite_utils.Database) -> int:
    """Every session's cost_usd, unpriced_calls and cache and reasoning token totals again from
    its events; returns how many."""
    return db.conn.execute(_SESSION_COSTS).rowcount


def recount_rollup_costs(db: sqlite_utils.Database) -> None:
    """The event_stats rollup again from the events, with their new costs (after repricing)."""
    from obsctl.store.sqlite import event_stats

    event_stats.rebuild(db.conn)


def recount_costs(conn: sqlite3.Connection, session_ids: list[str]) -> None:
    """cost_usd and unpriced_calls of some sessions again from their events (within the
    writing transaction: OTLP trace moves and usage retraction)."""
    conn.executemany(_SESSION_COSTS + " WHERE session_id = ?", [(s,) for s in session_ids])


def mark_repriced(db: sqlite_utils.Database, prices: str) -> None:
    """Every stored cost now comes from the price table `prices`."""
    db.conn.execute(_REPRICED, [prices])

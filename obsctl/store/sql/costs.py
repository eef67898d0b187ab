"""Stored costs, for both stores: the price table that costed the events, and recosting them all
(`db reprice`). Ingest costs each event as it stores it (services/ingest._prepare) and adds the
costs to its session (the stores' ingest.py); the SQL is store/cost_sql.py's. Rebuilding the
rollup differs between the engines and stays in each store's costs.py."""

from __future__ import annotations

from functools import cache
from typing import Any

from obsctl.store import cost_sql
from obsctl.store.sql import Dialect, connection, execute_many

__all__ = ["mark_repriced", "price_table", "record_prices", "recount_costs", "recount_session_costs",
           "set_model_costs", "set_usage_parts", "stored_models", "unsplit_usage"]

_STATEMENTS = ("RECORD", "REPRICED", "SET_MODEL_COSTS", "SESSION_COSTS", "UNSPLIT_USAGE", "SET_USAGE_PARTS")


@cache
def _sql(d: Dialect) -> dict[str, str]:
    """cost_sql's statements with the dialect's placeholder and clock."""
    return {name: getattr(cost_sql, name).format(p=d.mark, now=d.now) for name in _STATEMENTS}


def record_prices(db: Any, prices: str) -> None:
    """Note that costs were just written with the price table `prices` (the ingest transaction)."""
    conn, d = connection(db)
    conn.execute(_sql(d)["RECORD"], [prices])


def price_table(db: Any) -> dict | None:
    """The price table of the stored costs: {prices, mixed, updated_at, repriced_at}; None
    before any event was costed."""
    conn, _ = connection(db)
    return cost_sql.price_row(conn.execute(cost_sql.PRICE_TABLE).fetchone())


def stored_models(db: Any) -> list[str]:
    """The models named by stored events, in order."""
    conn, _ = connection(db)
    return [r[0] for r in conn.execute(cost_sql.STORED_MODELS)]


def set_model_costs(db: Any, model: str, rates: tuple | None) -> int:
    """Recost the events of `model` at `rates` (services/pricing.ModelPrice.rates(); NULL costs
    when None); returns how many."""
    conn, d = connection(db)
    return conn.execute(_sql(d)["SET_MODEL_COSTS"], [*(rates or (None,) * 5), model]).rowcount


def unsplit_usage(db: Any, after_id: int, limit: int) -> list[tuple]:
    """(id, event_id, tokens_in, tokens_out, metadata) of up to `limit` counted events after
    `after_id` with no cache or reasoning counts whose kept span attributes may hold some."""
    conn, d = connection(db)
    return conn.execute(_sql(d)["UNSPLIT_USAGE"], [after_id, *cost_sql.UNSPLIT_PATTERNS, limit]).fetchall()


def set_usage_parts(db: Any, rows: list[tuple]) -> None:
    """Set (cache read, cache write, reasoning, event_id) of some events."""
    conn, d = connection(db)
    execute_many(conn, _sql(d)["SET_USAGE_PARTS"], rows)


def recount_session_costs(db: Any) -> int:
    """Every session's cost_usd, unpriced_calls and cache and reasoning token totals again from
    its events; returns how many."""
    conn, d = connection(db)
    return conn.execute(_sql(d)["SESSION_COSTS"]).rowcount


def recount_costs(db: Any, session_ids: list[str]) -> None:
    """cost_usd and unpriced_calls (and the cache and reasoning totals) of some sessions again
    from their events (within the writing transaction: OTLP trace moves and usage retraction)."""
    conn, d = connection(db)
    for start in range(0, len(session_ids), _CHUNK):
        among, params = d.in_list("session_id", session_ids[start:start + _CHUNK])
        conn.execute(f"{_sql(d)['SESSION_COSTS']} WHERE {among}", params)


# Ids per statement: well within SQLite's limit of parameters.
_CHUNK = 500


def mark_repriced(db: Any, prices: str) -> None:
    """Every stored cost now comes from the price table `prices`."""
    conn, d = connection(db)
    conn.execute(_sql(d)["REPRICED"], [prices])

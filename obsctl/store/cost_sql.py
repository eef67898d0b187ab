"""The SQL of stored costs, the same on both backends but for the placeholder (`{p}`) and the
clock (`{now}`): store/sqlite/costs.py and store/postgres/costs.py fill them in."""

from __future__ import annotations

# Which events are calls that used tokens (priced, or counted as unpriced).
USED_TOKENS = "(COALESCE({t}tokens_in, 0) + COALESCE({t}tokens_out, 0)) > 0"

# One row: the price table of the latest costs written, and whether costs written before them
# came from another one (then `obsctl db reprice` makes them agree).
RECORD = """
INSERT INTO cost_prices (id, prices, mixed, updated_at) VALUES (1, {p}, 0, {now})
ON CONFLICT (id) DO UPDATE SET
    mixed = CASE WHEN cost_prices.prices = excluded.prices THEN cost_prices.mixed ELSE 1 END,
    prices = excluded.prices, updated_at = excluded.updated_at
"""
REPRICED = """
INSERT INTO cost_prices (id, prices, mixed, updated_at, repriced_at) VALUES (1, {p}, 0, {now}, {now})
ON CONFLICT (id) DO UPDATE SET prices = excluded.prices, mixed = 0,
    updated_at = excluded.updated_at, repriced_at = excluded.repriced_at
"""
# A database with events from before costs were stored: their price table is "none", so the
# first costs written mark the table mixed (db info then says to run `obsctl db reprice`).
NOT_COSTED = """
INSERT INTO cost_prices (id, prices, mixed, updated_at)
SELECT 1, 'none', 0, {now} WHERE EXISTS (SELECT 1 FROM events)
"""
PRICE_TABLE = "SELECT prices, mixed, updated_at, repriced_at FROM cost_prices WHERE id = 1"
STORED_MODELS = "SELECT DISTINCT model FROM events WHERE model IS NOT NULL ORDER BY 1"
# The rates are services/pricing.ModelPrice.rates(): input, cache read, cache write, output,
# reasoning; the arithmetic is ModelPrice.usage_cost's, in the same order.
SET_MODEL_COSTS = f"""
UPDATE events SET cost_usd = CASE WHEN {USED_TOKENS.format(t='')}
    THEN (COALESCE(tokens_in, 0) - COALESCE(tokens_cache_read, 0) - COALESCE(tokens_cache_write, 0)) * {{p}}
         + COALESCE(tokens_cache_read, 0) * {{p}} + COALESCE(tokens_cache_write, 0) * {{p}}
         + (COALESCE(tokens_out, 0) - COALESCE(tokens_reasoning, 0)) * {{p}} + COALESCE(tokens_reasoning, 0) * {{p}} END
WHERE model = {{p}}
"""
# Counted spans stored before the cache and reasoning columns existed (m031) whose kept span
# attributes may hold those counts: a page after an id (the parameters: the id, UNSPLIT_PATTERNS,
# then the page size).
UNSPLIT_USAGE = f"""
SELECT id, event_id, tokens_in, tokens_out, metadata FROM events
WHERE id > {{p}} AND {USED_TOKENS.format(t='')} AND tokens_cache_read IS NULL AND tokens_cache_write IS NULL
  AND tokens_reasoning IS NULL AND metadata LIKE {{p}}
  AND (metadata LIKE {{p}} OR metadata LIKE {{p}} OR metadata LIKE {{p}})
ORDER BY id LIMIT {{p}}
"""
UNSPLIT_PATTERNS = ('%"attributes"%', "%cache%", "%reasoning%", "%usage_details%")
SET_USAGE_PARTS = ("UPDATE events SET tokens_cache_read = {p}, tokens_cache_write = {p}, tokens_reasoning = {p} "
                   "WHERE event_id = {p}")
# A session's costs and its cache and reasoning token totals again from its events.
_OF_SESSION = "FROM events e WHERE e.session_id = sessions.session_id"
SESSION_COSTS = f"""
UPDATE sessions SET
    cost_usd = (SELECT SUM(e.cost_usd) {_OF_SESSION}),
    unpriced_calls = (SELECT COUNT(*) {_OF_SESSION} AND e.cost_usd IS NULL AND {USED_TOKENS.format(t='e.')}),
    total_tokens_cache_read = (SELECT COALESCE(SUM(e.tokens_cache_read), 0) {_OF_SESSION}),
    total_tokens_cache_write = (SELECT COALESCE(SUM(e.tokens_cache_write), 0) {_OF_SESSION}),
    total_tokens_reasoning = (SELECT COALESCE(SUM(e.tokens_reasoning), 0) {_OF_SESSION})
"""


def price_row(row) -> dict | None:
    """The price table row as a dict (None when no cost was ever written)."""
    return None if row is None else {"prices": row[0], "mixed": bool(row[1]), "updated_at": row[2],
                                     "repriced_at": row[3]}


# session_stats' cost columns per (start day, agent, status), from the sessions table
# (migration m040 on both stores), and the SET that copies them from the alias x.
SESSION_STATS_COSTS = ("SELECT substr(started_at, 1, 10) AS day, agent_name, status, COALESCE(SUM(cost_usd), 0) "
                       "AS cost_usd, COUNT(cost_usd) AS priced_sessions, SUM(unpriced_calls) AS unpriced_calls "
                       "FROM sessions GROUP BY 1, 2, 3")
SESSION_STATS_COSTS_SET = ("cost_usd = x.cost_usd, priced_sessions = x.priced_sessions, "
                           "unpriced_calls = x.unpriced_calls")

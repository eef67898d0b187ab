"""Stored costs on PostgreSQL: written once for both stores in obsctl/store/sql/costs.py;
rebuilding the rollup after a reprice is this engine's own."""

from __future__ import annotations

import psycopg

from obsctl.store.sql.costs import *  # noqa: F403 (the store's repository binds these)


def recount_rollup_costs(conn: psycopg.Connection) -> None:
    """The event_stats rollup again from the events, with their new costs (after repricing);
    ingest's additions to it wait until the transaction ends."""
    from obsctl.store.postgres import event_stats

    conn.execute("LOCK TABLE event_stats IN SHARE ROW EXCLUSIVE MODE")
    event_stats.rebuild(conn)

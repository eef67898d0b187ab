"""Stored costs on SQLite: written once for both stores in obsctl/store/sql/costs.py;
rebuilding the rollup after a reprice is this engine's own."""

from __future__ import annotations

import sqlite_utils

from obsctl.store.sql.costs import *  # noqa: F403 (the store's repository binds these)


def recount_rollup_costs(db: sqlite_utils.Database) -> None:
    """The event_stats rollup again from the events, with their new costs (after repricing)."""
    from obsctl.store.sqlite import event_stats

    event_stats.rebuild(db.conn)

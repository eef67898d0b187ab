"""Aggregates over the events of a time window: written once for both stores in
obsctl/store/sql/metrics.py."""

from obsctl.store.sql.metrics import *  # noqa: F403 (the store's repository binds these)

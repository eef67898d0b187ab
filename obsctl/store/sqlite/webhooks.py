"""Webhooks and their delivery outbox on SQLite: written once for both stores in
obsctl/store/sql/webhooks.py but for claiming a delivery, which the write lock serialises here."""

from __future__ import annotations

import sqlite_utils

from obsctl.store.sql.webhooks import *  # noqa: F403 (the store's repository binds these)
from obsctl.store.sql.webhooks import CLAIM_KEYS


def claim_due(db: sqlite_utils.Database, now: str, lease_until: str) -> dict | None:
    """Take the next due pending delivery of an enabled webhook (inside a write transaction).

    Claiming moves next_attempt_at to `lease_until`, so no other sender (the server's
    background thread, a cron `alerts evaluate`) picks it up while it is being attempted;
    if this process dies mid-attempt, the lease runs out and the delivery is retried.
    """
    row = db.conn.execute(
        "SELECT d.delivery_id, d.payload, d.attempts, d.created_at, w.webhook_id, w.url, w.secret, "
        "w.allow_private "
        "FROM webhook_deliveries d JOIN webhooks w ON w.webhook_id = d.webhook_id "
        "WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND w.enabled = 1 "
        "ORDER BY d.next_attempt_at, d.created_at LIMIT 1",
        [now],
    ).fetchone()
    if row is None:
        return None
    db.conn.execute("UPDATE webhook_deliveries SET next_attempt_at = ? WHERE delivery_id = ?",
                    [lease_until, row[0]])
    return dict(zip(CLAIM_KEYS, row))


def claim_failed(db: sqlite_utils.Database, delivery_id: str, lease_until: str) -> dict | None:
    """Take a failed delivery of an enabled webhook back as a pending claim leased until
    `lease_until` (inside a write transaction), for a retry now; None when it is not failed or
    its webhook is disabled."""
    changed = db.conn.execute(
        "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ? "
        "WHERE delivery_id = ? AND status = 'failed' "
        "AND webhook_id IN (SELECT webhook_id FROM webhooks WHERE enabled = 1)",
        [lease_until, delivery_id],
    ).rowcount
    if not changed:
        return None
    row = db.conn.execute(
        "SELECT d.delivery_id, d.payload, d.attempts, d.created_at, w.webhook_id, w.url, w.secret, "
        "w.allow_private "
        "FROM webhook_deliveries d JOIN webhooks w ON w.webhook_id = d.webhook_id "
        "WHERE d.delivery_id = ?",
        [delivery_id],
    ).fetchone()
    return dict(zip(CLAIM_KEYS, row))

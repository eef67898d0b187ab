"""Webhooks and their delivery outbox on PostgreSQL: written once for both stores in
obsctl/store/sql/webhooks.py but for claiming a delivery. Several servers may share the database:
`claim_due` locks the delivery it takes with FOR UPDATE SKIP LOCKED, so a sender never waits for,
nor takes, a delivery another sender is claiming; once that claim commits, the delivery's lease
keeps it out of everyone's way."""

from __future__ import annotations

import psycopg

from obsctl.store.sql.webhooks import *  # noqa: F403 (the store's repository binds these)
from obsctl.store.sql.webhooks import CLAIM_KEYS


def claim_due(conn: psycopg.Connection, now: str, lease_until: str) -> dict | None:
    """Take the next due pending delivery of an enabled webhook (inside a write transaction).

    Claiming moves next_attempt_at to `lease_until`, so no other sender (the server's
    background thread, a cron `alerts evaluate`, another server on the same database) picks
    it up while it is being attempted; if this process dies mid-attempt, the lease runs out
    and the delivery is retried. Until the claiming transaction commits, the delivery's row
    is locked: other senders skip it (SKIP LOCKED) and take the next due one, or none.
    """
    row = conn.execute(
        "SELECT d.delivery_id, d.payload, d.attempts, d.created_at, w.webhook_id, w.url, w.secret, "
        "w.allow_private "
        "FROM webhook_deliveries d JOIN webhooks w ON w.webhook_id = d.webhook_id "
        "WHERE d.status = 'pending' AND d.next_attempt_at <= %s AND w.enabled = 1 "
        "ORDER BY d.next_attempt_at, d.created_at, d.seq LIMIT 1 "
        "FOR UPDATE OF d SKIP LOCKED",
        [now],
    ).fetchone()
    if row is None:
        return None
    conn.execute("UPDATE webhook_deliveries SET next_attempt_at = %s WHERE delivery_id = %s",
                 [lease_until, row[0]])
    return dict(zip(CLAIM_KEYS, row))


def claim_failed(conn: psycopg.Connection, delivery_id: str, lease_until: str) -> dict | None:
    """Take a failed delivery of an enabled webhook back as a pending claim leased until
    `lease_until` (inside a write transaction), for a retry now; None when it is not failed or
    its webhook is disabled. The row stays locked until the claim commits, so two retries of
    one delivery cannot both take it."""
    row = conn.execute(
        "UPDATE webhook_deliveries d SET status = 'pending', next_attempt_at = %s "
        "FROM webhooks w WHERE w.webhook_id = d.webhook_id AND d.delivery_id = %s "
        "AND d.status = 'failed' AND w.enabled = 1 "
        "RETURNING d.delivery_id, d.payload, d.attempts, d.created_at, w.webhook_id, w.url, w.secret, "
        "w.allow_private",
        [lease_until, delivery_id],
    ).fetchone()
    return dict(zip(CLAIM_KEYS, row)) if row else None

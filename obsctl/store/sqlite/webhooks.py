"""Webhooks and their delivery outbox."""

from __future__ import annotations

from collections.abc import Iterable

import sqlite_utils

from obsctl.store.sqlite.records import RecordTable

WEBHOOK_COLUMNS = ("webhook_id", "url", "format", "secret", "routing_key", "rule_ids", "enabled",
                   "allow_private", "created_at", "updated_at")
UPDATABLE_WEBHOOK_COLUMNS = frozenset({"url", "format", "secret", "routing_key", "rule_ids",
                                       "enabled", "allow_private", "updated_at"})
DELIVERY_COLUMNS = ("delivery_id", "webhook_id", "alert_id", "event_type", "payload", "status",
                    "attempts", "last_error", "last_status_code", "next_attempt_at", "created_at",
                    "delivered_at")
_LISTED_DELIVERY_COLUMNS = tuple(c for c in DELIVERY_COLUMNS if c != "payload")
_WEBHOOKS = RecordTable("webhooks", WEBHOOK_COLUMNS, ["webhook_id"])


def insert_webhook(db: sqlite_utils.Database, webhook: dict) -> None:
    _WEBHOOKS.insert(db, webhook)


def get_webhook(db: sqlite_utils.Database, webhook_id: str) -> dict | None:
    return _WEBHOOKS.get(db, webhook_id)


def list_webhooks(db: sqlite_utils.Database, *, enabled_only: bool = False) -> list[dict]:
    return _WEBHOOKS.select(db, "enabled = 1" if enabled_only else "", order_by="created_at, rowid")


def update_webhook(db: sqlite_utils.Database, webhook_id: str, changes: dict) -> bool:
    return _WEBHOOKS.update(db, [webhook_id], changes, UPDATABLE_WEBHOOK_COLUMNS)


def delete_webhook(db: sqlite_utils.Database, webhook_id: str) -> bool:
    """Delete a webhook; its deliveries go with it (ON DELETE CASCADE)."""
    return _WEBHOOKS.delete(db, webhook_id)


def disable_webhook(db: sqlite_utils.Database, webhook_id: str, updated_at: str) -> None:
    _WEBHOOKS.update(db, [webhook_id], {"enabled": 0, "updated_at": updated_at},
                     UPDATABLE_WEBHOOK_COLUMNS)


def insert_deliveries(db: sqlite_utils.Database, deliveries: Iterable[dict]) -> None:
    db.conn.executemany(
        f"INSERT INTO webhook_deliveries ({', '.join(DELIVERY_COLUMNS)}) "
        f"VALUES ({', '.join('?' for _ in DELIVERY_COLUMNS)})",
        [[d[c] for c in DELIVERY_COLUMNS] for d in deliveries],
    )


def expire_pending(db: sqlite_utils.Database, created_before: str, message: str) -> int:
    """Give up on pending deliveries created before `created_before`."""
    return db.conn.execute(
        "UPDATE webhook_deliveries SET status = 'failed', last_error = ? "
        "WHERE status = 'pending' AND created_at < ?",
        [message, created_before],
    ).rowcount


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
    keys = ("delivery_id", "payload", "attempts", "created_at", "webhook_id", "url", "secret",
            "allow_private")
    return dict(zip(keys, row))


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
    keys = ("delivery_id", "payload", "attempts", "created_at", "webhook_id", "url", "secret",
            "allow_private")
    return dict(zip(keys, row))


def record_attempt(db: sqlite_utils.Database, delivery_id: str, attempts_before: int, *, status: str,
                   error: str | None, status_code: int | None, next_attempt_at: str,
                   delivered_at: str | None) -> bool:
    """Record the outcome of the attempt claimed with `attempts_before` attempts made.

    False (nothing written) when the delivery is no longer that pending claim: it was
    cancelled (rule or webhook removed) or deleted while the attempt was in progress."""
    return db.conn.execute(
        "UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, last_error = ?, "
        "last_status_code = ?, next_attempt_at = ?, delivered_at = ? "
        "WHERE delivery_id = ? AND status = 'pending' AND attempts = ?",
        [status, error, status_code, next_attempt_at, delivered_at, delivery_id, attempts_before],
    ).rowcount > 0


def cancel_pending_for_rule(db: sqlite_utils.Database, rule_id: str, message: str) -> int:
    """Mark failed, with `message`, the pending deliveries of a rule's alerts (inside the
    transaction that deletes the rule, before its alert events go)."""
    return db.conn.execute(
        "UPDATE webhook_deliveries SET status = 'failed', last_error = ? WHERE status = 'pending' "
        "AND alert_id IN (SELECT alert_id FROM alert_events WHERE rule_id = ?)",
        [message, rule_id],
    ).rowcount


def next_due_at(db: sqlite_utils.Database) -> str | None:
    """When the earliest pending delivery of an enabled webhook is due (None: none pending)."""
    return db.conn.execute(
        "SELECT MIN(d.next_attempt_at) FROM webhook_deliveries d "
        "JOIN webhooks w ON w.webhook_id = d.webhook_id WHERE d.status = 'pending' AND w.enabled = 1"
    ).fetchone()[0]


def list_deliveries(db: sqlite_utils.Database, *, webhook_id: str | None, status: str | None,
                    alert_id: str | None, limit: int) -> tuple[list[dict], int]:
    """Deliveries newest first (without payloads), and how many match."""
    clauses, params = [], []
    for column, value in (("webhook_id", webhook_id), ("status", status), ("alert_id", alert_id)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    where = f"WHERE {' AND '.join(clauses)} " if clauses else ""
    total = db.conn.execute(f"SELECT COUNT(*) FROM webhook_deliveries {where}", params).fetchone()[0]
    cursor = db.conn.execute(
        f"SELECT {', '.join(_LISTED_DELIVERY_COLUMNS)} FROM webhook_deliveries {where}"
        f"ORDER BY created_at DESC, rowid DESC LIMIT ?",
        [*params, limit],
    )
    return [dict(zip(_LISTED_DELIVERY_COLUMNS, row)) for row in cursor], total


def get_delivery(db: sqlite_utils.Database, delivery_id: str) -> dict | None:
    row = db.conn.execute(
        f"SELECT {', '.join(_LISTED_DELIVERY_COLUMNS)} FROM webhook_deliveries WHERE delivery_id = ?",
        [delivery_id],
    ).fetchone()
    return dict(zip(_LISTED_DELIVERY_COLUMNS, row)) if row else None

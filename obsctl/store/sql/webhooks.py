"""Webhooks and their delivery outbox, for both stores. Claiming a delivery differs between the
engines and stays in each store's webhooks.py.

Several servers may share a PostgreSQL database: the firing transaction lists the enabled
webhooks with the dialect's `keep_rows` (FOR KEY SHARE), so none is deleted until it commits (a
concurrent removal then waits, and takes the new deliveries with it), as SQLite's write lock
does; removing a rule first locks its row (`lock_rows`), so a firing of the rule in progress
commits before its pending deliveries are looked for.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from obsctl.store.sql import connection, insert_rows
from obsctl.store.sql.records import RecordTable

__all__ = ["CLAIM_KEYS", "DELIVERY_COLUMNS", "UPDATABLE_WEBHOOK_COLUMNS", "WEBHOOK_COLUMNS",
           "cancel_pending_for_rule", "delete_webhook", "disable_webhook", "expire_pending", "get_delivery",
           "get_webhook", "insert_deliveries", "insert_webhook", "list_deliveries", "list_webhooks",
           "next_due_at", "record_attempt", "update_webhook"]

WEBHOOK_COLUMNS = ("webhook_id", "url", "format", "secret", "routing_key", "rule_ids", "enabled",
                   "allow_private", "created_at", "updated_at")
UPDATABLE_WEBHOOK_COLUMNS = frozenset({"url", "format", "secret", "routing_key", "rule_ids",
                                       "enabled", "allow_private", "updated_at"})
DELIVERY_COLUMNS = ("delivery_id", "webhook_id", "alert_id", "event_type", "payload", "status",
                    "attempts", "last_error", "last_status_code", "next_attempt_at", "created_at",
                    "delivered_at")
# What a claim returns (the stores' claim_due and claim_failed).
CLAIM_KEYS = ("delivery_id", "payload", "attempts", "created_at", "webhook_id", "url", "secret",
              "allow_private")
_LISTED_DELIVERY_COLUMNS = tuple(c for c in DELIVERY_COLUMNS if c != "payload")
_LISTED_DELIVERY_SELECT = f"SELECT {', '.join(_LISTED_DELIVERY_COLUMNS)} FROM webhook_deliveries"
_WEBHOOKS = RecordTable("webhooks", WEBHOOK_COLUMNS, ["webhook_id"])


def insert_webhook(db: Any, webhook: dict) -> None:
    _WEBHOOKS.insert(db, webhook)


def get_webhook(db: Any, webhook_id: str) -> dict | None:
    return _WEBHOOKS.get(db, webhook_id)


def list_webhooks(db: Any, *, enabled_only: bool = False) -> list[dict]:
    """Webhooks in creation order; the enabled ones (for the firing transaction) kept from
    being deleted until it commits."""
    _, d = connection(db)
    if enabled_only:
        return _WEBHOOKS.select(db, "enabled = 1", order_by=("created_at", d.arrival), lock=d.keep_rows)
    return _WEBHOOKS.select(db, order_by=("created_at", d.arrival))


def update_webhook(db: Any, webhook_id: str, changes: dict) -> bool:
    return _WEBHOOKS.update(db, [webhook_id], changes, UPDATABLE_WEBHOOK_COLUMNS)


def delete_webhook(db: Any, webhook_id: str) -> bool:
    """Delete a webhook; its deliveries go with it (ON DELETE CASCADE)."""
    return _WEBHOOKS.delete(db, webhook_id)


def disable_webhook(db: Any, webhook_id: str, updated_at: str) -> None:
    _WEBHOOKS.update(db, [webhook_id], {"enabled": 0, "updated_at": updated_at}, UPDATABLE_WEBHOOK_COLUMNS)


def insert_deliveries(db: Any, deliveries: Iterable[dict]) -> None:
    insert_rows(db, "webhook_deliveries", DELIVERY_COLUMNS,
                [[delivery[c] for c in DELIVERY_COLUMNS] for delivery in deliveries])


def expire_pending(db: Any, created_before: str, message: str) -> int:
    """Give up on pending deliveries created before `created_before`."""
    conn, d = connection(db)
    return conn.execute(
        f"UPDATE webhook_deliveries SET status = 'failed', last_error = {d.mark} "
        f"WHERE status = 'pending' AND created_at < {d.mark}", [message, created_before]).rowcount


def record_attempt(db: Any, delivery_id: str, attempts_before: int, *, status: str, error: str | None,
                   status_code: int | None, next_attempt_at: str, delivered_at: str | None) -> bool:
    """Record the outcome of the attempt claimed with `attempts_before` attempts made.

    False (nothing written) when the delivery is no longer that pending claim: it was
    cancelled (rule or webhook removed) or deleted while the attempt was in progress."""
    conn, d = connection(db)
    m = d.mark
    return conn.execute(
        f"UPDATE webhook_deliveries SET status = {m}, attempts = attempts + 1, last_error = {m}, "
        f"last_status_code = {m}, next_attempt_at = {m}, delivered_at = {m} "
        f"WHERE delivery_id = {m} AND status = 'pending' AND attempts = {m}",
        [status, error, status_code, next_attempt_at, delivered_at, delivery_id, attempts_before],
    ).rowcount > 0


def cancel_pending_for_rule(db: Any, rule_id: str, message: str) -> int:
    """Mark failed, with `message`, the pending deliveries of a rule's alerts (inside the
    transaction that deletes the rule, before its alert events go). The rule's row is locked
    first (see the module docstring)."""
    conn, d = connection(db)
    if d.lock_rows:
        conn.execute(f"SELECT 1 FROM alert_rules WHERE rule_id = {d.mark}{d.lock_rows}", [rule_id])
    return conn.execute(
        f"UPDATE webhook_deliveries SET status = 'failed', last_error = {d.mark} WHERE status = 'pending' "
        f"AND alert_id IN (SELECT alert_id FROM alert_events WHERE rule_id = {d.mark})",
        [message, rule_id]).rowcount


def next_due_at(db: Any) -> str | None:
    """When the earliest pending delivery of an enabled webhook is due (None: none pending)."""
    conn, _ = connection(db)
    return conn.execute(
        "SELECT MIN(d.next_attempt_at) FROM webhook_deliveries d "
        "JOIN webhooks w ON w.webhook_id = d.webhook_id WHERE d.status = 'pending' AND w.enabled = 1"
    ).fetchone()[0]


def list_deliveries(db: Any, *, webhook_id: str | None, status: str | None, alert_id: str | None,
                    limit: int) -> tuple[list[dict], int]:
    """Deliveries newest first (without payloads), and how many match."""
    conn, d = connection(db)
    clauses, params = [], []
    for column, value in (("webhook_id", webhook_id), ("status", status), ("alert_id", alert_id)):
        if value is not None:
            clauses.append(f"{column} = {d.mark}")
            params.append(value)
    where = f"WHERE {' AND '.join(clauses)} " if clauses else ""
    total = conn.execute(f"SELECT COUNT(*) FROM webhook_deliveries {where}", params).fetchone()[0]
    cursor = conn.execute(f"{_LISTED_DELIVERY_SELECT} {where}ORDER BY created_at DESC, {d.arrival} DESC "
                          f"LIMIT {d.mark}", [*params, limit])
    return [dict(zip(_LISTED_DELIVERY_COLUMNS, row)) for row in cursor], total


def get_delivery(db: Any, delivery_id: str) -> dict | None:
    conn, d = connection(db)
    row = conn.execute(f"{_LISTED_DELIVERY_SELECT} WHERE delivery_id = {d.mark}", [delivery_id]).fetchone()
    return dict(zip(_LISTED_DELIVERY_COLUMNS, row)) if row else None

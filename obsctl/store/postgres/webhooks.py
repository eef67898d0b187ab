"""Webhooks and their delivery outbox on PostgreSQL: the same functions as
obsctl/store/sqlite/webhooks.py. `seq` orders rows created in the same instant, as SQLite's
rowid does.

Several servers may share the database: `claim_due` locks the delivery it takes with
FOR UPDATE SKIP LOCKED, so a sender never waits for, nor takes, a delivery another sender is
claiming; once that claim commits, the delivery's lease keeps it out of everyone's way."""

from __future__ import annotations

from collections.abc import Iterable

import psycopg
from psycopg import sql

from obsctl.store.postgres.records import RecordTable

WEBHOOK_COLUMNS = ("webhook_id", "url", "format", "secret", "routing_key", "rule_ids", "enabled",
                   "allow_private", "created_at", "updated_at")
UPDATABLE_WEBHOOK_COLUMNS = frozenset({"url", "format", "secret", "routing_key", "rule_ids",
                                       "enabled", "allow_private", "updated_at"})
DELIVERY_COLUMNS = ("delivery_id", "webhook_id", "alert_id", "event_type", "payload", "status",
                    "attempts", "last_error", "last_status_code", "next_attempt_at", "created_at",
                    "delivered_at")
_LISTED_DELIVERY_COLUMNS = tuple(c for c in DELIVERY_COLUMNS if c != "payload")
_WEBHOOKS = RecordTable("webhooks", WEBHOOK_COLUMNS, ["webhook_id"])
_DELIVERIES = RecordTable("webhook_deliveries", DELIVERY_COLUMNS, ["delivery_id"])
_LISTED_DELIVERY_SELECT = sql.SQL("SELECT {} FROM webhook_deliveries").format(
    sql.SQL(", ").join(sql.Identifier(c) for c in _LISTED_DELIVERY_COLUMNS))
_CLAIM_KEYS = ("delivery_id", "payload", "attempts", "created_at", "webhook_id", "url", "secret",
               "allow_private")


def insert_webhook(conn: psycopg.Connection, webhook: dict) -> None:
    _WEBHOOKS.insert(conn, webhook)


def get_webhook(conn: psycopg.Connection, webhook_id: str) -> dict | None:
    return _WEBHOOKS.get(conn, webhook_id)


def list_webhooks(conn: psycopg.Connection, *, enabled_only: bool = False) -> list[dict]:
    """Webhooks in creation order. The enabled ones are listed by the firing transaction, to
    queue deliveries to them: FOR KEY SHARE keeps each from being deleted until it commits
    (a concurrent removal then waits, and takes the new deliveries with it), as SQLite's
    write lock does."""
    if enabled_only:
        return _WEBHOOKS.select(conn, "enabled = 1", order_by=("created_at", "seq"), lock="FOR KEY SHARE")
    return _WEBHOOKS.select(conn, order_by=("created_at", "seq"))


def update_webhook(conn: psycopg.Connection, webhook_id: str, changes: dict) -> bool:
    return _WEBHOOKS.update(conn, [webhook_id], changes, UPDATABLE_WEBHOOK_COLUMNS)


def delete_webhook(conn: psycopg.Connection, webhook_id: str) -> bool:
    """Delete a webhook; its deliveries go with it (ON DELETE CASCADE)."""
    return _WEBHOOKS.delete(conn, webhook_id)


def disable_webhook(conn: psycopg.Connection, webhook_id: str, updated_at: str) -> None:
    _WEBHOOKS.update(conn, [webhook_id], {"enabled": 0, "updated_at": updated_at},
                     UPDATABLE_WEBHOOK_COLUMNS)


def insert_deliveries(conn: psycopg.Connection, deliveries: Iterable[dict]) -> None:
    _DELIVERIES.insert_many(conn, deliveries)


def expire_pending(conn: psycopg.Connection, created_before: str, message: str) -> int:
    """Give up on pending deliveries created before `created_before`."""
    return conn.execute(
        "UPDATE webhook_deliveries SET status = 'failed', last_error = %s "
        "WHERE status = 'pending' AND created_at < %s",
        [message, created_before],
    ).rowcount


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
    return dict(zip(_CLAIM_KEYS, row))


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
    return dict(zip(_CLAIM_KEYS, row)) if row else None


def record_attempt(conn: psycopg.Connection, delivery_id: str, attempts_before: int, *, status: str,
                   error: str | None, status_code: int | None, next_attempt_at: str,
                   delivered_at: str | None) -> bool:
    """Record the outcome of the attempt claimed with `attempts_before` attempts made.

    False (nothing written) when the delivery is no longer that pending claim: it was
    cancelled (rule or webhook removed) or deleted while the attempt was in progress."""
    return conn.execute(
        "UPDATE webhook_deliveries SET status = %s, attempts = attempts + 1, last_error = %s, "
        "last_status_code = %s, next_attempt_at = %s, delivered_at = %s "
        "WHERE delivery_id = %s AND status = 'pending' AND attempts = %s",
        [status, error, status_code, next_attempt_at, delivered_at, delivery_id, attempts_before],
    ).rowcount > 0


def cancel_pending_for_rule(conn: psycopg.Connection, rule_id: str, message: str) -> int:
    """Mark failed, with `message`, the pending deliveries of a rule's alerts (inside the
    transaction that deletes the rule, before its alert events go).

    Locks the rule's row first, so that a firing of the rule in progress (which holds it, see
    alerts.last_fired_at) commits before the pending deliveries are looked for: its
    deliveries are cancelled too, as on SQLite, where the write lock orders the two."""
    conn.execute("SELECT 1 FROM alert_rules WHERE rule_id = %s FOR UPDATE", [rule_id])
    return conn.execute(
        "UPDATE webhook_deliveries SET status = 'failed', last_error = %s WHERE status = 'pending' "
        "AND alert_id IN (SELECT alert_id FROM alert_events WHERE rule_id = %s)",
        [message, rule_id],
    ).rowcount


def next_due_at(conn: psycopg.Connection) -> str | None:
    """When the earliest pending delivery of an enabled webhook is due (None: none pending)."""
    return conn.execute(
        "SELECT MIN(d.next_attempt_at) FROM webhook_deliveries d "
        "JOIN webhooks w ON w.webhook_id = d.webhook_id WHERE d.status = 'pending' AND w.enabled = 1"
    ).fetchone()[0]


def list_deliveries(conn: psycopg.Connection, *, webhook_id: str | None, status: str | None,
                    alert_id: str | None, limit: int) -> tuple[list[dict], int]:
    """Deliveries newest first (without payloads), and how many match."""
    clauses, params = [], []
    for column, value in (("webhook_id", webhook_id), ("status", status), ("alert_id", alert_id)):
        if value is not None:
            clauses.append(sql.SQL("{} = %s").format(sql.Identifier(column)))
            params.append(value)
    where = sql.SQL("WHERE ") + sql.SQL(" AND ").join(clauses) + sql.SQL(" ") if clauses else sql.SQL("")
    total = conn.execute(sql.SQL("SELECT COUNT(*) FROM webhook_deliveries {}").format(where),
                         params).fetchone()[0]
    cursor = conn.execute(
        sql.SQL("{} {}ORDER BY created_at DESC, seq DESC LIMIT %s").format(_LISTED_DELIVERY_SELECT, where),
        [*params, limit],
    )
    return [dict(zip(_LISTED_DELIVERY_COLUMNS, row)) for row in cursor], total


def get_delivery(conn: psycopg.Connection, delivery_id: str) -> dict | None:
    row = conn.execute(sql.SQL("{} WHERE delivery_id = %s").format(_LISTED_DELIVERY_SELECT),
                       [delivery_id]).fetchone()
    return dict(zip(_LISTED_DELIVERY_COLUMNS, row)) if row else None

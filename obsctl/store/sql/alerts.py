"""Alert rules and alert events (fired alerts), for both stores.

Two evaluations at once (cron on one host, the API on another) must fire a rule once. On SQLite
the write lock serialises their firing transactions; on PostgreSQL `last_fired_at`, which the
firing transaction calls first, locks the rules' rows (FOR UPDATE, in rule_id order so two
evaluators cannot deadlock): the second evaluator waits for the first to commit, then reads the
last_fired_at the first one stamped and finds the rule in cooldown. Rows created in the same
instant keep their creation order (the dialect's `arrival` column).
"""

from __future__ import annotations

from typing import Any

from obsctl.store.sql import connection
from obsctl.store.sql.records import RecordTable

__all__ = ["ALERT_COLUMNS", "RULE_COLUMNS", "UPDATABLE_RULE_COLUMNS", "acknowledge_alert", "delete_rule",
           "get_alert", "get_rule", "insert_rule", "last_fired_at", "list_alerts", "list_rules",
           "record_firing", "resolve_alerts", "unresolved_alerts", "update_rule"]

RULE_COLUMNS = (
    "rule_id", "name", "metric", "operator", "threshold", "window_minutes", "cooldown_minutes",
    "agent_filter", "enabled", "created_at", "updated_at", "last_fired_at", "severity",
)
ALERT_COLUMNS = (
    "alert_id", "rule_id", "rule_name", "metric", "operator", "threshold", "value",
    "window_minutes", "agent_filter", "fired_at", "acknowledged", "acknowledged_at", "resolved_at",
)
# Columns a partial update may set (never rule_id, created_at or last_fired_at).
UPDATABLE_RULE_COLUMNS = frozenset({
    "name", "metric", "operator", "threshold", "window_minutes", "cooldown_minutes",
    "agent_filter", "enabled", "updated_at", "severity",
})

_RULES = RecordTable("alert_rules", RULE_COLUMNS, ["rule_id"])
_ALERT_SELECT = f"SELECT {', '.join(ALERT_COLUMNS)} FROM alert_events"


def insert_rule(db: Any, rule: dict) -> None:
    _RULES.insert(db, rule)


def get_rule(db: Any, rule_id: str) -> dict | None:
    return _RULES.get(db, rule_id)


def list_rules(db: Any, *, enabled_only: bool = False) -> list[dict]:
    """Rules in creation order."""
    _, d = connection(db)
    return _RULES.select(db, "enabled = 1" if enabled_only else "", order_by=("created_at", d.arrival))


def update_rule(db: Any, rule_id: str, changes: dict) -> bool:
    """Apply `changes` (column -> value); False when the rule does not exist."""
    return _RULES.update(db, [rule_id], changes, UPDATABLE_RULE_COLUMNS)


def delete_rule(db: Any, rule_id: str) -> bool:
    """Delete a rule; its alert events go with it (ON DELETE CASCADE)."""
    return _RULES.delete(db, rule_id)


def last_fired_at(db: Any, rule_ids: list[str]) -> dict[str, str | None]:
    """Current last_fired_at of some rules (re-read inside the firing transaction). On
    PostgreSQL it locks the rules' rows until that transaction ends (see the module docstring),
    so a concurrent evaluation waits here and then sees this one's firings."""
    if not rule_ids:
        return {}
    conn, d = connection(db)
    among, params = d.in_list("rule_id", rule_ids)
    cursor = conn.execute(f"SELECT rule_id, last_fired_at FROM alert_rules WHERE {among} "
                          f"ORDER BY rule_id{d.lock_rows}", params)
    return dict(cursor.fetchall())


def record_firing(db: Any, alert: dict) -> None:
    """Insert an alert event and stamp its rule's last_fired_at (inside a transaction)."""
    conn, d = connection(db)
    m = d.mark
    conn.execute(f"INSERT INTO alert_events ({', '.join(ALERT_COLUMNS)}) VALUES ({', '.join([m] * len(ALERT_COLUMNS))})",
                 [alert[c] for c in ALERT_COLUMNS])
    conn.execute(f"UPDATE alert_rules SET last_fired_at = {m} WHERE rule_id = {m}",
                 [alert["fired_at"], alert["rule_id"]])


def list_alerts(db: Any, *, limit: int, unacknowledged: bool, rule_id: str | None) -> tuple[list[dict], int]:
    """Alert events newest first, and how many match the filters."""
    conn, d = connection(db)
    clauses, params = [], []
    if unacknowledged:
        clauses.append("acknowledged = 0")
    if rule_id is not None:
        clauses.append(f"rule_id = {d.mark}")
        params.append(rule_id)
    where = f"WHERE {' AND '.join(clauses)} " if clauses else ""
    total = conn.execute(f"SELECT COUNT(*) FROM alert_events {where}", params).fetchone()[0]
    cursor = conn.execute(f"{_ALERT_SELECT} {where}ORDER BY fired_at DESC, {d.arrival} DESC LIMIT {d.mark}",
                          [*params, limit])
    return [dict(zip(ALERT_COLUMNS, row)) for row in cursor], total


def get_alert(db: Any, alert_id: str) -> dict | None:
    conn, d = connection(db)
    row = conn.execute(f"{_ALERT_SELECT} WHERE alert_id = {d.mark}", [alert_id]).fetchone()
    return dict(zip(ALERT_COLUMNS, row)) if row else None


def acknowledge_alert(db: Any, alert_id: str, at: str) -> bool:
    """Mark acknowledged; a second acknowledgement keeps the first timestamp."""
    conn, d = connection(db)
    cursor = conn.execute(
        f"UPDATE alert_events SET acknowledged = 1, acknowledged_at = COALESCE(acknowledged_at, {d.mark}) "
        f"WHERE alert_id = {d.mark}", [at, alert_id])
    return cursor.rowcount > 0


def unresolved_alerts(db: Any, rule_ids: list[str]) -> list[dict]:
    """The alerts of these rules not yet resolved, oldest first (a rule fires again after its
    cooldown while still firing: several can be open)."""
    if not rule_ids:
        return []
    conn, d = connection(db)
    among, params = d.in_list("rule_id", rule_ids)
    cursor = conn.execute(f"{_ALERT_SELECT} WHERE resolved_at IS NULL AND {among} "
                          f"ORDER BY fired_at, {d.arrival}", params)
    return [dict(zip(ALERT_COLUMNS, row)) for row in cursor]


def resolve_alerts(db: Any, alert_ids: list[str], at: str) -> None:
    """Stamp resolved_at on these alerts (those already resolved keep theirs)."""
    if alert_ids:
        conn, d = connection(db)
        among, params = d.in_list("alert_id", alert_ids)
        conn.execute(f"UPDATE alert_events SET resolved_at = {d.mark} WHERE resolved_at IS NULL AND {among}",
                     [at, *params])

"""Alert rules and alert events (fired alerts)."""

from __future__ import annotations

import sqlite_utils

from obsctl.store.sqlite.records import RecordTable

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


def insert_rule(db: sqlite_utils.Database, rule: dict) -> None:
    _RULES.insert(db, rule)


def get_rule(db: sqlite_utils.Database, rule_id: str) -> dict | None:
    return _RULES.get(db, rule_id)


def list_rules(db: sqlite_utils.Database, *, enabled_only: bool = False) -> list[dict]:
    """Rules in creation order."""
    return _RULES.select(db, "enabled = 1" if enabled_only else "", order_by="created_at, rowid")


def update_rule(db: sqlite_utils.Database, rule_id: str, changes: dict) -> bool:
    """Apply `changes` (column -> value); False when the rule does not exist."""
    return _RULES.update(db, [rule_id], changes, UPDATABLE_RULE_COLUMNS)


def delete_rule(db: sqlite_utils.Database, rule_id: str) -> bool:
    """Delete a rule; its alert events go with it (ON DELETE CASCADE)."""
    return _RULES.delete(db, rule_id)


def last_fired_at(db: sqlite_utils.Database, rule_ids: list[str]) -> dict[str, str | None]:
    """Current last_fired_at of some rules (re-read inside the firing transaction)."""
    if not rule_ids:
        return {}
    marks = ",".join("?" for _ in rule_ids)
    cursor = db.conn.execute(
        f"SELECT rule_id, last_fired_at FROM alert_rules WHERE rule_id IN ({marks})", rule_ids)
    return dict(cursor.fetchall())


def record_firing(db: sqlite_utils.Database, alert: dict) -> None:
    """Insert an alert event and stamp its rule's last_fired_at (inside a transaction)."""
    db.conn.execute(
        f"INSERT INTO alert_events ({', '.join(ALERT_COLUMNS)}) "
        f"VALUES ({', '.join('?' for _ in ALERT_COLUMNS)})",
        [alert[c] for c in ALERT_COLUMNS],
    )
    db.conn.execute("UPDATE alert_rules SET last_fired_at = ? WHERE rule_id = ?",
                    [alert["fired_at"], alert["rule_id"]])


def list_alerts(db: sqlite_utils.Database, *, limit: int, unacknowledged: bool,
                rule_id: str | None) -> tuple[list[dict], int]:
    """Alert events newest first, and how many match the filters."""
    clauses, params = [], []
    if unacknowledged:
        clauses.append("acknowledged = 0")
    if rule_id is not None:
        clauses.append("rule_id = ?")
        params.append(rule_id)
    where = f"WHERE {' AND '.join(clauses)} " if clauses else ""
    total = db.conn.execute(f"SELECT COUNT(*) FROM alert_events {where}", params).fetchone()[0]
    cursor = db.conn.execute(f"{_ALERT_SELECT} {where}ORDER BY fired_at DESC, rowid DESC LIMIT ?",
                             [*params, limit])
    return [dict(zip(ALERT_COLUMNS, row)) for row in cursor], total


def get_alert(db: sqlite_utils.Database, alert_id: str) -> dict | None:
    row = db.conn.execute(f"{_ALERT_SELECT} WHERE alert_id = ?", [alert_id]).fetchone()
    return dict(zip(ALERT_COLUMNS, row)) if row else None


def acknowledge_alert(db: sqlite_utils.Database, alert_id: str, at: str) -> bool:
    """Mark acknowledged; a second acknowledgement keeps the first timestamp."""
    cursor = db.conn.execute(
        "UPDATE alert_events SET acknowledged = 1, acknowledged_at = COALESCE(acknowledged_at, ?) "
        "WHERE alert_id = ?",
        [at, alert_id],
    )
    return cursor.rowcount > 0


def unresolved_alerts(db: sqlite_utils.Database, rule_ids: list[str]) -> list[dict]:
    """The alerts of these rules not yet resolved, oldest first (a rule fires again after its
    cooldown while still firing: several can be open)."""
    if not rule_ids:
        return []
    marks = ",".join("?" for _ in rule_ids)
    cursor = db.conn.execute(
        f"SELECT {', '.join(ALERT_COLUMNS)} FROM alert_events "
        f"WHERE resolved_at IS NULL AND rule_id IN ({marks}) ORDER BY fired_at, rowid", rule_ids)
    return [dict(zip(ALERT_COLUMNS, row)) for row in cursor]


def resolve_alerts(db: sqlite_utils.Database, alert_ids: list[str], at: str) -> None:
    """Stamp resolved_at on these alerts (those already resolved keep theirs)."""
    if alert_ids:
        marks = ",".join("?" for _ in alert_ids)
        db.conn.execute(f"UPDATE alert_events SET resolved_at = ? "
                        f"WHERE resolved_at IS NULL AND alert_id IN ({marks})", [at, *alert_ids])

"""Alert rules and alert events (fired alerts) on PostgreSQL: the same functions as
obsctl/store/sqlite/alerts.py. `seq` orders rows created in the same instant, as SQLite's
rowid does.

Two evaluations at once (cron on one host, the API on another) must fire a rule once. On
SQLite the write lock serialises their firing transactions; here `last_fired_at`, which the
firing transaction calls first, locks the rules' rows (FOR UPDATE, in rule_id order so two
evaluators cannot deadlock): the second evaluator waits for the first to commit, then reads
the last_fired_at the first one stamped and finds the rule in cooldown."""

from __future__ import annotations

import psycopg
from psycopg import sql

from obsctl.store.postgres.records import RecordTable

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
_ALERT_COLUMN_LIST = sql.SQL(", ").join(sql.Identifier(c) for c in ALERT_COLUMNS)
_ALERT_SELECT = sql.SQL("SELECT {} FROM alert_events").format(_ALERT_COLUMN_LIST)
_ALERT_INSERT = sql.SQL("INSERT INTO alert_events ({}) VALUES ({})").format(
    _ALERT_COLUMN_LIST, sql.SQL(", ").join(sql.Placeholder() for _ in ALERT_COLUMNS))


def insert_rule(conn: psycopg.Connection, rule: dict) -> None:
    _RULES.insert(conn, rule)


def get_rule(conn: psycopg.Connection, rule_id: str) -> dict | None:
    return _RULES.get(conn, rule_id)


def list_rules(conn: psycopg.Connection, *, enabled_only: bool = False) -> list[dict]:
    """Rules in creation order."""
    return _RULES.select(conn, "enabled = 1" if enabled_only else "", order_by=("created_at", "seq"))


def update_rule(conn: psycopg.Connection, rule_id: str, changes: dict) -> bool:
    """Apply `changes` (column -> value); False when the rule does not exist."""
    return _RULES.update(conn, [rule_id], changes, UPDATABLE_RULE_COLUMNS)


def delete_rule(conn: psycopg.Connection, rule_id: str) -> bool:
    """Delete a rule; its alert events go with it (ON DELETE CASCADE)."""
    return _RULES.delete(conn, rule_id)


def last_fired_at(conn: psycopg.Connection, rule_ids: list[str]) -> dict[str, str | None]:
    """Current last_fired_at of some rules (re-read inside the firing transaction).

    Locks the rules' rows until that transaction ends (see the module docstring), so a
    concurrent evaluation waits here and then sees this one's firings."""
    if not rule_ids:
        return {}
    cursor = conn.execute(
        "SELECT rule_id, last_fired_at FROM alert_rules WHERE rule_id = ANY(%s) "
        "ORDER BY rule_id FOR UPDATE",
        [list(rule_ids)])
    return dict(cursor.fetchall())


def record_firing(conn: psycopg.Connection, alert: dict) -> None:
    """Insert an alert event and stamp its rule's last_fired_at (inside a transaction)."""
    conn.execute(_ALERT_INSERT, [alert[c] for c in ALERT_COLUMNS])
    conn.execute("UPDATE alert_rules SET last_fired_at = %s WHERE rule_id = %s",
                 [alert["fired_at"], alert["rule_id"]])


def list_alerts(conn: psycopg.Connection, *, limit: int, unacknowledged: bool,
                rule_id: str | None) -> tuple[list[dict], int]:
    """Alert events newest first, and how many match the filters."""
    clauses, params = [], []
    if unacknowledged:
        clauses.append(sql.SQL("acknowledged = 0"))
    if rule_id is not None:
        clauses.append(sql.SQL("rule_id = %s"))
        params.append(rule_id)
    where = sql.SQL("WHERE ") + sql.SQL(" AND ").join(clauses) + sql.SQL(" ") if clauses else sql.SQL("")
    total = conn.execute(sql.SQL("SELECT COUNT(*) FROM alert_events {}").format(where),
                         params).fetchone()[0]
    cursor = conn.execute(sql.SQL("{} {}ORDER BY fired_at DESC, seq DESC LIMIT %s").format(
        _ALERT_SELECT, where), [*params, limit])
    return [dict(zip(ALERT_COLUMNS, row)) for row in cursor], total


def get_alert(conn: psycopg.Connection, alert_id: str) -> dict | None:
    row = conn.execute(sql.SQL("{} WHERE alert_id = %s").format(_ALERT_SELECT), [alert_id]).fetchone()
    return dict(zip(ALERT_COLUMNS, row)) if row else None


def acknowledge_alert(conn: psycopg.Connection, alert_id: str, at: str) -> bool:
    """Mark acknowledged; a second acknowledgement keeps the first timestamp."""
    cursor = conn.execute(
        "UPDATE alert_events SET acknowledged = 1, acknowledged_at = COALESCE(acknowledged_at, %s) "
        "WHERE alert_id = %s",
        [at, alert_id],
    )
    return cursor.rowcount > 0


def unresolved_alerts(conn: psycopg.Connection, rule_ids: list[str]) -> list[dict]:
    """The alerts of these rules not yet resolved, oldest first (a rule fires again after its
    cooldown while still firing: several can be open)."""
    if not rule_ids:
        return []
    marks = ",".join("%s" for _ in rule_ids)
    cursor = conn.execute(
        f"SELECT {', '.join(ALERT_COLUMNS)} FROM alert_events "
        f"WHERE resolved_at IS NULL AND rule_id IN ({marks}) ORDER BY fired_at, seq", rule_ids)
    return [dict(zip(ALERT_COLUMNS, row)) for row in cursor]


def resolve_alerts(conn: psycopg.Connection, alert_ids: list[str], at: str) -> None:
    """Stamp resolved_at on these alerts (those already resolved keep theirs)."""
    if alert_ids:
        marks = ",".join("%s" for _ in alert_ids)
        conn.execute(f"UPDATE alert_events SET resolved_at = %s "
                        f"WHERE resolved_at IS NULL AND alert_id IN ({marks})", [at, *alert_ids])

"""SLA targets and their compliance snapshots (the SQL behind services/sla*.py).

A target is identified by the pair (agent_name, metric). A snapshot is one check result of
one target, copied (operator, target value) at check time so that history stays true after a
target changes or is removed.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlite_utils

from obsctl.store.sqlite.records import RecordTable

TARGET_COLUMNS = ("agent_name", "metric", "operator", "target_value", "window_hours",
                  "created_at", "updated_at")
SNAPSHOT_COLUMNS = ("agent_name", "metric", "operator", "target_value", "actual_value", "status",
                    "checked_at")
_TARGETS = RecordTable("sla_targets", TARGET_COLUMNS, ["agent_name", "metric"])
_SNAPSHOT_SELECT = f"SELECT {', '.join(SNAPSHOT_COLUMNS)} FROM sla_snapshots"


def get_target(db: sqlite_utils.Database, agent_name: str, metric: str) -> dict | None:
    return _TARGETS.get(db, agent_name, metric)


def list_targets(db: sqlite_utils.Database) -> list[dict]:
    """Every target, by agent then metric (the primary key's order: no sort needed)."""
    return _TARGETS.select(db, order_by="agent_name, metric")


def insert_target(db: sqlite_utils.Database, target: dict) -> None:
    _TARGETS.insert(db, target)


def update_target(db: sqlite_utils.Database, target: dict) -> None:
    _TARGETS.update(db, [target["agent_name"], target["metric"]], target,
                    ("operator", "target_value", "window_hours", "updated_at"))


def delete_target(db: sqlite_utils.Database, agent_name: str, metric: str) -> bool:
    """Remove one target (its snapshots stay as history); False when there was none."""
    return _TARGETS.delete(db, agent_name, metric)


def insert_snapshots(db: sqlite_utils.Database, snapshots: Iterable[dict]) -> None:
    db.conn.executemany(
        f"INSERT INTO sla_snapshots ({', '.join(SNAPSHOT_COLUMNS)}) "
        f"VALUES ({', '.join('?' for _ in SNAPSHOT_COLUMNS)})",
        [[s[c] for c in SNAPSHOT_COLUMNS] for s in snapshots],
    )


def list_snapshots(db: sqlite_utils.Database, *, since: str, agent_name: str | None,
                   limit: int) -> tuple[list[dict], int]:
    """Snapshots checked at or after `since`, newest check first (a check's results in the
    order they were recorded), at most `limit`, with the total count for the same filter.

    Uses idx_sla_snapshots_agent with an agent, idx_sla_snapshots_checked without.
    """
    where, params = "WHERE checked_at >= ?", [since]
    if agent_name is not None:
        where += " AND agent_name = ?"
        params.append(agent_name)
    conn = db.conn
    total = conn.execute(f"SELECT COUNT(*) FROM sla_snapshots {where}", params).fetchone()[0]
    cursor = conn.execute(f"{_SNAPSHOT_SELECT} {where} ORDER BY checked_at DESC, id LIMIT ?",
                          [*params, limit])
    return [dict(zip(SNAPSHOT_COLUMNS, row)) for row in cursor], total


def latest_snapshots(db: sqlite_utils.Database) -> list[tuple[str, str, dict | None]]:
    """For every current target (by agent, metric): (agent_name, metric, its most recent
    snapshot or None when it was never checked).

    Each lookup walks idx_sla_snapshots_agent backwards from the agent's newest check, so
    the cost does not grow with the length of the history.
    """
    cursor = db.conn.execute(
        f"""SELECT t.agent_name, t.metric, {', '.join('s.' + c for c in SNAPSHOT_COLUMNS)}
            FROM sla_targets t
            LEFT JOIN sla_snapshots s ON s.id = (
                SELECT x.id FROM sla_snapshots x
                WHERE x.agent_name = t.agent_name AND x.metric = t.metric
                ORDER BY x.checked_at DESC, x.id DESC LIMIT 1)
            ORDER BY t.agent_name, t.metric"""
    )
    latest = []
    for row in cursor:
        snapshot = dict(zip(SNAPSHOT_COLUMNS, row[2:]))
        latest.append((row[0], row[1], snapshot if snapshot["checked_at"] is not None else None))
    return latest

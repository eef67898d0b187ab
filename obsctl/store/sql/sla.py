"""SLA targets and their compliance snapshots (the SQL behind services/sla*.py), for both stores.

A target is identified by the pair (agent_name, metric). A snapshot is one check result of
one target, copied (operator, target value) at check time so that history stays true after a
target changes or is removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from obsctl.store.sql import connection, insert_rows
from obsctl.store.sql.records import RecordTable

__all__ = ["SNAPSHOT_COLUMNS", "TARGET_COLUMNS", "delete_target", "get_target", "insert_snapshots",
           "insert_target", "latest_snapshots", "list_snapshots", "list_targets", "update_target"]

TARGET_COLUMNS = ("agent_name", "metric", "operator", "target_value", "window_hours",
                  "created_at", "updated_at")
SNAPSHOT_COLUMNS = ("agent_name", "metric", "operator", "target_value", "actual_value", "status",
                    "checked_at")
_TARGETS = RecordTable("sla_targets", TARGET_COLUMNS, ["agent_name", "metric"])
_SNAPSHOT_SELECT = f"SELECT {', '.join(SNAPSHOT_COLUMNS)} FROM sla_snapshots"


def get_target(db: Any, agent_name: str, metric: str) -> dict | None:
    return _TARGETS.get(db, agent_name, metric)


def list_targets(db: Any) -> list[dict]:
    """Every target, by agent then metric (the primary key's order)."""
    return _TARGETS.select(db, order_by=("agent_name", "metric"))


def insert_target(db: Any, target: dict) -> None:
    _TARGETS.insert(db, target)


def update_target(db: Any, target: dict) -> None:
    _TARGETS.update(db, [target["agent_name"], target["metric"]], target,
                    ("operator", "target_value", "window_hours", "updated_at"))


def delete_target(db: Any, agent_name: str, metric: str) -> bool:
    """Remove one target (its snapshots stay as history); False when there was none."""
    return _TARGETS.delete(db, agent_name, metric)


def insert_snapshots(db: Any, snapshots: Iterable[dict]) -> None:
    """Insert in the order given (the ids, and so the order within one check, follow it)."""
    insert_rows(db, "sla_snapshots", SNAPSHOT_COLUMNS, [[s[c] for c in SNAPSHOT_COLUMNS] for s in snapshots])


def list_snapshots(db: Any, *, since: str, agent_name: str | None, limit: int) -> tuple[list[dict], int]:
    """Snapshots checked at or after `since`, newest check first (a check's results in the
    order they were recorded), at most `limit`, with the total count for the same filter.

    Uses idx_sla_snapshots_agent with an agent, idx_sla_snapshots_checked without.
    """
    conn, d = connection(db)
    where, params = f"WHERE checked_at >= {d.mark}", [since]
    if agent_name is not None:
        where += f" AND agent_name = {d.mark}"
        params.append(agent_name)
    total = conn.execute(f"SELECT COUNT(*) FROM sla_snapshots {where}", params).fetchone()[0]
    cursor = conn.execute(f"{_SNAPSHOT_SELECT} {where} ORDER BY checked_at DESC, id LIMIT {d.mark}",
                          [*params, limit])
    return [dict(zip(SNAPSHOT_COLUMNS, row)) for row in cursor], total


def latest_snapshots(db: Any) -> list[tuple[str, str, dict | None]]:
    """For every current target (by agent, metric): (agent_name, metric, its most recent
    snapshot or None when it was never checked).

    Each lookup walks idx_sla_snapshots_agent backwards from the agent's newest check, so
    the cost does not grow with the length of the history.
    """
    conn, _ = connection(db)
    cursor = conn.execute(
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

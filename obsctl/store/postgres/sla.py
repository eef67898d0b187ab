"""SLA targets and their compliance snapshots on PostgreSQL: the same functions as
obsctl/store/sqlite/sla.py.

A target is identified by the pair (agent_name, metric). A snapshot is one check result of
one target, copied (operator, target value) at check time so that history stays true after a
target changes or is removed.
"""

from __future__ import annotations

from collections.abc import Iterable

import psycopg
from psycopg import sql

from obsctl.store.postgres.records import RecordTable

TARGET_COLUMNS = ("agent_name", "metric", "operator", "target_value", "window_hours",
                  "created_at", "updated_at")
SNAPSHOT_COLUMNS = ("agent_name", "metric", "operator", "target_value", "actual_value", "status",
                    "checked_at")
_TARGETS = RecordTable("sla_targets", TARGET_COLUMNS, ["agent_name", "metric"])
_SNAPSHOTS = RecordTable("sla_snapshots", SNAPSHOT_COLUMNS, ["id"])
_SNAPSHOT_SELECT = sql.SQL("SELECT {} FROM sla_snapshots").format(
    sql.SQL(", ").join(sql.Identifier(c) for c in SNAPSHOT_COLUMNS))
_LATEST = sql.SQL("""SELECT t.agent_name, t.metric, {}
    FROM sla_targets t
    LEFT JOIN sla_snapshots s ON s.id = (
        SELECT x.id FROM sla_snapshots x
        WHERE x.agent_name = t.agent_name AND x.metric = t.metric
        ORDER BY x.checked_at DESC, x.id DESC LIMIT 1)
    ORDER BY t.agent_name, t.metric""").format(
    sql.SQL(", ").join(sql.Identifier("s", c) for c in SNAPSHOT_COLUMNS))


def get_target(conn: psycopg.Connection, agent_name: str, metric: str) -> dict | None:
    return _TARGETS.get(conn, agent_name, metric)


def list_targets(conn: psycopg.Connection) -> list[dict]:
    """Every target, by agent then metric (the primary key's order)."""
    return _TARGETS.select(conn, order_by=("agent_name", "metric"))


def insert_target(conn: psycopg.Connection, target: dict) -> None:
    _TARGETS.insert(conn, target)


def update_target(conn: psycopg.Connection, target: dict) -> None:
    _TARGETS.update(conn, [target["agent_name"], target["metric"]], target,
                    ("operator", "target_value", "window_hours", "updated_at"))


def delete_target(conn: psycopg.Connection, agent_name: str, metric: str) -> bool:
    """Remove one target (its snapshots stay as history); False when there was none."""
    return _TARGETS.delete(conn, agent_name, metric)


def insert_snapshots(conn: psycopg.Connection, snapshots: Iterable[dict]) -> None:
    """Insert in the order given (the ids, and so the order within one check, follow it)."""
    _SNAPSHOTS.insert_many(conn, snapshots)


def list_snapshots(conn: psycopg.Connection, *, since: str, agent_name: str | None,
                   limit: int) -> tuple[list[dict], int]:
    """Snapshots checked at or after `since`, newest check first (a check's results in the
    order they were recorded), at most `limit`, with the total count for the same filter.

    Uses idx_sla_snapshots_agent with an agent, idx_sla_snapshots_checked without.
    """
    where, params = "WHERE checked_at >= %s", [since]
    if agent_name is not None:
        where += " AND agent_name = %s"
        params.append(agent_name)
    total = conn.execute(sql.SQL("SELECT COUNT(*) FROM sla_snapshots ") + sql.SQL(where),
                         params).fetchone()[0]
    cursor = conn.execute(
        sql.SQL("{} {} ORDER BY checked_at DESC, id LIMIT %s").format(_SNAPSHOT_SELECT, sql.SQL(where)),
        [*params, limit])
    return [dict(zip(SNAPSHOT_COLUMNS, row)) for row in cursor], total


def latest_snapshots(conn: psycopg.Connection) -> list[tuple[str, str, dict | None]]:
    """For every current target (by agent, metric): (agent_name, metric, its most recent
    snapshot or None when it was never checked).

    Each lookup walks idx_sla_snapshots_agent backwards from the agent's newest check, so
    the cost does not grow with the length of the history.
    """
    latest = []
    for row in conn.execute(_LATEST):
        snapshot = dict(zip(SNAPSHOT_COLUMNS, row[2:]))
        latest.append((row[0], row[1], snapshot if snapshot["checked_at"] is not None else None))
    return latest

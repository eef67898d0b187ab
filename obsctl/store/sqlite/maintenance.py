"""Retention and database administration SQL: prune, info, integrity check, backup."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlite_utils

import obsctl.store.event_stats_sql as event_stats_sql
from obsctl.store.sqlite.db import write_transaction

TABLES = ("sessions", "events", "alert_rules", "alert_events", "webhooks", "webhook_deliveries",
          "sla_targets", "sla_snapshots")

# A session's last activity: its latest event, its end, or its start.
_LAST_ACTIVITY = "MAX(COALESCE(last_event_at, started_at), COALESCE(ended_at, ''), started_at)"

# The events of the sessions `{sessions}` selects (an IN list) leave the event_stats rollup:
# prune's batch, or sessions.delete_session's one id.
SUBTRACT_STATS = event_stats_sql.of_events("WHERE session_id IN ({sessions})", subtract=True)


def count_prunable(db: sqlite_utils.Database, cutoff: str) -> tuple[int, int]:
    """(sessions, events) whose last activity is before `cutoff`."""
    sessions, events = db.conn.execute(
        f"SELECT COUNT(*), COALESCE(SUM(event_count), 0) FROM sessions WHERE {_LAST_ACTIVITY} < ?",
        [cutoff],
    ).fetchone()
    return sessions, events


# The same, for the events `temp.prune_events` lists (part of one big session's events).
SUBTRACT_EVENT_STATS = SUBTRACT_STATS.replace("session_id IN ({sessions})", "id IN (SELECT id FROM temp.prune_events)")


def prune_batch(db: sqlite_utils.Database, cutoff: str, batch_sessions: int,
                batch_events: int | None = None) -> tuple[int, int]:
    """Delete up to `batch_sessions` inactive sessions and their events in one transaction.

    With `batch_events`, the sessions are taken while their events fit in it (at least one);
    a session with more events than that alone loses only its oldest `batch_events` events
    here and goes in a later call. SQLite has one writer: a transaction deleting a million
    events would hold it for half a minute, and every ingest would wait. Meanwhile the session
    is still listed, with fewer events (the next call goes on with it).

    Returns (sessions, events) deleted; the analytics rollup is adjusted in the same
    transaction so it stays exact.
    """
    conn = db.conn
    with write_transaction(db):
        rows = conn.execute(f"SELECT session_id, event_count FROM sessions WHERE {_LAST_ACTIVITY} < ? LIMIT ?",
                            [cutoff, batch_sessions]).fetchall()
        if not rows:
            return 0, 0
        chosen: list[str] = []
        events_in = 0
        for session_id, count in rows:
            if chosen and batch_events is not None and events_in + count > batch_events:
                break
            chosen.append(session_id)
            events_in += count
        if batch_events is not None and events_in > batch_events:
            deleted = _prune_oldest_events(conn, chosen[0], batch_events)
            if deleted:
                return 0, deleted
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS prune_batch (session_id TEXT PRIMARY KEY)")
        conn.execute("DELETE FROM temp.prune_batch")
        conn.executemany("INSERT INTO temp.prune_batch VALUES (?)", [(s,) for s in chosen])
        if _has_table(conn, "event_stats"):
            conn.execute(SUBTRACT_STATS.format(sessions="SELECT session_id FROM temp.prune_batch"))
            conn.execute("DELETE FROM event_stats WHERE event_count <= 0")
        events = conn.execute(
            "DELETE FROM events WHERE session_id IN (SELECT session_id FROM temp.prune_batch)").rowcount
        conn.execute("DELETE FROM sessions WHERE session_id IN (SELECT session_id FROM temp.prune_batch)")
        conn.execute("DELETE FROM temp.prune_batch")
    return len(chosen), events


def _prune_oldest_events(conn: sqlite3.Connection, session_id: str, count: int) -> int:
    """Delete a session's oldest `count` events (inside prune's transaction), keeping the rollup exact."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS prune_events (id INTEGER PRIMARY KEY)")
    conn.execute("DELETE FROM temp.prune_events")
    conn.execute("INSERT INTO temp.prune_events SELECT id FROM events WHERE session_id = ? "
                 "ORDER BY timestamp, id LIMIT ?", [session_id, count])
    if _has_table(conn, "event_stats"):
        conn.execute(SUBTRACT_EVENT_STATS)
        conn.execute("DELETE FROM event_stats WHERE event_count <= 0")
    deleted = conn.execute("DELETE FROM events WHERE id IN (SELECT id FROM temp.prune_events)").rowcount
    conn.execute("DELETE FROM temp.prune_events")
    return deleted


def _has_table(conn, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [name]).fetchone() is not None


def table_counts(db: sqlite_utils.Database, *, damaged: bool = False) -> dict[str, int | None]:
    """Rows per table; in a `damaged` file a table that cannot be counted is None."""
    conn = db.conn
    counts: dict[str, int | None] = {}
    for table in TABLES:
        if not _has_table(conn, table):
            continue
        try:
            counts[table] = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        except sqlite3.DatabaseError:
            if not damaged:
                raise
            counts[table] = None
    return counts


def pragmas(db: sqlite_utils.Database, path: Path | None = None) -> dict:
    conn = db.conn
    journal_mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    if journal_mode == "delete" and path is not None and _file_says_wal(path):
        journal_mode = "wal"  # an immutable (read-only storage) open reports "delete"
    return {
        "journal_mode": journal_mode,
        "page_size": conn.execute("PRAGMA page_size").fetchone()[0],
        "page_count": conn.execute("PRAGMA page_count").fetchone()[0],
        "freelist_count": conn.execute("PRAGMA freelist_count").fetchone()[0],
        "sqlite_version": conn.execute("SELECT sqlite_version()").fetchone()[0],
    }


def _file_says_wal(path: Path) -> bool:
    """Bytes 18-19 of the database header are 2 for a WAL database."""
    try:
        with open(path, "rb") as f:
            header = f.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[18] == 2 and header[19] == 2


def quick_check(db: sqlite_utils.Database, max_problems: int = 20) -> list[str]:
    """SQLite's `PRAGMA quick_check`: the problems found (at most `max_problems`), [] if none."""
    try:
        rows = [r[0] for r in db.conn.execute(f"PRAGMA quick_check({int(max_problems)})")]
    except sqlite3.DatabaseError as exc:  # damage the check itself cannot get past
        return [str(exc)]
    return [] if rows == ["ok"] else rows


def backup_to(db: sqlite_utils.Database, dest: Path) -> None:
    """A consistent copy of the live database (one read snapshot; writers keep going in WAL)."""
    db.conn.execute("VACUUM INTO ?", [str(dest)])

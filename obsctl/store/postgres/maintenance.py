"""Retention and database administration on PostgreSQL: prune, info, integrity check, backup
(the same functions as obsctl/store/sqlite/maintenance.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import psycopg
from psycopg import sql

import obsctl.store.event_stats_sql as event_stats_sql
from obsctl.errors import InvalidInput
from obsctl.store.postgres import partitions, schema
from obsctl.store.postgres.ingest import forget_partitions
from obsctl.store.sql import one

TABLES = ("sessions", "events", "alert_rules", "alert_events", "webhooks", "webhook_deliveries",
          "sla_targets", "sla_snapshots")

# A session's last activity: its latest event, its end, or its start. No argument can be NULL
# (started_at is NOT NULL), so GREATEST answers as SQLite's scalar MAX does.
_LAST_ACTIVITY = "GREATEST(COALESCE(last_event_at, started_at), COALESCE(ended_at, ''), started_at)"

# The events of the sessions in the list parameter leave the event_stats rollup (prune, and
# sessions.delete_session with one id).
SUBTRACT_STATS = event_stats_sql.of_events("WHERE session_id = ANY(%s)", subtract=True, ordered=True)


def count_prunable(conn: psycopg.Connection, cutoff: str) -> tuple[int, int]:
    """(sessions, events) whose last activity is before `cutoff`."""
    sessions, events = one(conn.execute(
        f"SELECT COUNT(*), COALESCE(SUM(event_count), 0) FROM sessions WHERE {_LAST_ACTIVITY} < %s",
        [cutoff],
    ))
    return sessions, events


def prune_batch(conn: psycopg.Connection, cutoff: str, batch_sessions: int,
                batch_events: int | None = None) -> tuple[int, int]:
    """Delete up to `batch_sessions` inactive sessions and their events in one transaction.

    `batch_events` is SQLite's bound (its one writer waits for the whole delete); here
    writers do not queue behind a delete (row locks), so sessions go whole.

    Returns (sessions, events) deleted; the analytics rollup is adjusted in the same
    transaction so it stays exact, and the deleted events' ids leave `event_keys`.

    The chosen sessions are locked first (in key order, so two pruners cannot deadlock); a
    session that an ingest revived meanwhile is re-checked against the cutoff and skipped."""
    with conn.transaction():
        ids = [r[0] for r in conn.execute(
            f"SELECT session_id FROM sessions WHERE {_LAST_ACTIVITY} < %s "
            f"ORDER BY session_id LIMIT %s FOR UPDATE", [cutoff, batch_sessions])]
        if not ids:
            return 0, 0
        conn.execute(SUBTRACT_STATS, [ids])
        conn.execute("DELETE FROM event_stats WHERE event_count <= 0")
        events = _drop_whole_weeks(conn, ids)
        conn.execute("DELETE FROM event_keys WHERE event_id IN "
                     "(SELECT event_id FROM events WHERE session_id = ANY(%s))", [ids])
        events += conn.execute("DELETE FROM events WHERE session_id = ANY(%s)", [ids]).rowcount
        conn.execute("DELETE FROM sessions WHERE session_id = ANY(%s)", [ids])
    return len(ids), events


# How long a prune waits for the exclusive lock a partition's drop takes on `events` (every
# ingest and read waits behind it meanwhile); when it cannot have it, the week's events are
# deleted row by row instead.
_DROP_LOCK_TIMEOUT = "200ms"


def _drop_whole_weeks(conn: psycopg.Connection, ids: list[str]) -> int:
    """Drop the weekly partitions of `events` whose every event belongs to a session of the
    batch (`ids`, locked by the caller), instead of deleting their rows one by one; returns
    how many events went with them. Their ids leave event_keys and event_totals counts them
    out, as the row-by-row path does; the caller has already taken them out of event_stats.
    This week's and later partitions are kept (servers create them ahead and remember them)."""
    this_week = partitions.monday_of(datetime.now(UTC).date())
    names = [r[0] for r in conn.execute(
        "SELECT DISTINCT c.relname FROM events e JOIN pg_class c ON c.oid = e.tableoid "
        "WHERE e.session_id = ANY(%s) ORDER BY 1", [ids])]
    dropped = 0
    for name in names:
        monday = _week_of_partition(name)
        if monday is None or monday >= this_week:
            continue
        if not _only_batch(conn, name, ids):
            continue
        try:
            with conn.transaction():  # a savepoint: on a lock timeout, fall back to row deletes
                previous = one(conn.execute("SELECT current_setting('lock_timeout')"))[0]
                conn.execute("SELECT set_config('lock_timeout', %s, true)", [_DROP_LOCK_TIMEOUT])
                conn.execute(sql.SQL("LOCK TABLE events, {} IN ACCESS EXCLUSIVE MODE").format(
                    sql.Identifier(name)))
                conn.execute("SELECT set_config('lock_timeout', %s, true)", [previous])
                # Recheck under the lock: an ingest may have written to the week meanwhile.
                if not _only_batch(conn, name, ids):
                    continue
                part = sql.Identifier(name)
                count = one(conn.execute(sql.SQL("SELECT COUNT(*) FROM {}").format(part)))[0]
                conn.execute(sql.SQL("DELETE FROM event_keys WHERE event_id IN (SELECT event_id FROM {})")
                             .format(part))
                conn.execute(sql.SQL("DROP TABLE {}").format(part))
                # What the delete trigger does for each deleted row.
                conn.execute("UPDATE event_totals SET events = events - %s WHERE id = 1", [count])
                dropped += count
                forget_partitions()  # this process's ingest asks the catalog again
        except (psycopg.errors.LockNotAvailable, psycopg.errors.DeadlockDetected):
            continue
    return dropped


def _week_of_partition(name: str) -> date | None:
    if not name.startswith(partitions.PREFIX):
        return None
    try:
        monday = datetime.strptime(name[len(partitions.PREFIX):], "%Y%m%d").date()
    except ValueError:
        return None
    return monday if partitions.partition_name(monday) == name and monday.weekday() == 0 else None


def _only_batch(conn: psycopg.Connection, name: str, ids: list[str]) -> bool:
    """Whether every event of the partition `name` belongs to a session of `ids`."""
    return not one(conn.execute(sql.SQL("SELECT EXISTS (SELECT 1 FROM {} WHERE session_id <> ALL(%s))").format(
        sql.Identifier(name)), [ids]))[0]


def _has_table(conn: psycopg.Connection, name: str) -> bool:
    return one(conn.execute("SELECT to_regclass(%s) IS NOT NULL", [name]))[0]


def table_counts(conn: psycopg.Connection, *, damaged: bool = False) -> dict[str, int | None]:
    """Rows per table; when `damaged`, a table that cannot be counted is None."""
    counts: dict[str, int | None] = {}
    for table in TABLES:
        if not _has_table(conn, table):
            continue
        query = sql.SQL("SELECT COUNT(*) FROM {}").format(sql.Identifier(table))
        if not damaged:
            counts[table] = one(conn.execute(query))[0]
            continue
        try:
            with conn.transaction():  # a failed count must not abort an enclosing transaction
                counts[table] = one(conn.execute(query))[0]
        except psycopg.DatabaseError:
            counts[table] = None
    return counts


def pragmas(conn: psycopg.Connection, path: Path | None = None) -> dict:
    """What `obsctl db info` reports of the engine: PostgreSQL's version, the database and
    schema the store works in and the database's size on disk. (SQLite's journal mode, page
    size and page counts have no PostgreSQL counterpart.)"""
    version, database, schema_name, size = one(conn.execute(
        "SELECT current_setting('server_version'), current_database(), current_schema(), "
        "pg_database_size(current_database())"))
    return {
        "postgresql_version": version,
        "database": database,
        "schema": schema_name,
        "database_size_bytes": size,
    }


def quick_check(conn: psycopg.Connection, max_problems: int = 20) -> list[str]:
    """A cheap check of the store (PostgreSQL keeps its own pages consistent): every migration
    applied, the event_totals row present, and no index left invalid (a failed concurrent
    build). The problems found (at most `max_problems`), [] if none."""
    problems = [f"migration {name} is not applied" for name in schema.pending(conn)]
    if _has_table(conn, "event_totals") and not one(conn.execute(
            "SELECT EXISTS (SELECT 1 FROM event_totals WHERE id = 1)"))[0]:
        problems.append("the event_totals row is missing")
    problems += [f"index {name} is invalid" for (name,) in conn.execute(
        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE c.relnamespace = current_schema()::regnamespace AND NOT i.indisvalid "
        "ORDER BY c.relname")]
    return problems[:max(0, int(max_problems))]


def backup_to(conn: psycopg.Connection, dest: Path) -> None:
    """PostgreSQL cannot write a file backup from the server: use pg_dump."""
    raise InvalidInput(
        f"obsctl db backup writes SQLite files only; a PostgreSQL store cannot be copied to "
        f"{dest} from the server: back it up with pg_dump instead, e.g. "
        f"pg_dump -Fc URL > obsctl.dump (and pg_restore to restore it)")

"""The weekly partitions of `events` (PostgreSQL only).

`events` is range-partitioned on its ISO-8601 `timestamp` text, one partition per week from
Monday 00:00 UTC (`events_w20261116` holds 2026-11-16 to 2026-11-22). Ingest creates the
partitions of the weeks a batch touches before writing it (`ensure`), and a server creates
this week's and next week's when it starts (`ensure_ahead`), so the default partition
(`events_default`) only catches timestamps that do not start with a date, which validation
never lets through. `prune` drops a week's partition whole when every session with events in
it is pruned (maintenance.py).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

import psycopg
from psycopg import sql

from obsctl.store.sql import one

_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
PREFIX = "events_w"


def monday_of(day: date) -> date:
    """The Monday starting the week of `day` (a partition's first day)."""
    return day - timedelta(days=day.weekday())


def week_of(timestamp: str) -> date | None:
    """The Monday starting the week of an ISO timestamp, None when it has no date."""
    if not _DAY.match(timestamp):
        return None
    try:
        day = date.fromisoformat(timestamp[:10])
    except ValueError:
        return None
    return monday_of(day)


def partition_name(monday: date) -> str:
    return f"{PREFIX}{monday:%Y%m%d}"


def create(conn: psycopg.Connection, monday: date) -> None:
    """Create the partition of the week starting `monday` (call under the partition lock,
    when it does not exist). Made as a table and then attached: ATTACH PARTITION takes a lock
    on `events` that inserts and reads do not wait for (CREATE TABLE ... PARTITION OF would
    hold every other batch until this one commits); the indexes and the foreign key come
    with the attachment; the generated search vector comes with the copied columns."""
    name = sql.Identifier(partition_name(monday))
    conn.execute(sql.SQL("CREATE TABLE {} (LIKE events INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING GENERATED)").format(name))
    conn.execute(sql.SQL("ALTER TABLE events ATTACH PARTITION {} FOR VALUES FROM ({}) TO ({})").format(
        name, sql.Literal(monday.isoformat()), sql.Literal((monday + timedelta(days=7)).isoformat())))


def _in_default(conn: psycopg.Connection, monday: date) -> bool:
    # Rows of that week already in the default partition (written while another server had
    # just dropped the week's partition): they stay there, still found by every query.
    return one(conn.execute("SELECT EXISTS (SELECT 1 FROM events_default WHERE timestamp >= %s AND timestamp < %s)",
                        [monday.isoformat(), (monday + timedelta(days=7)).isoformat()]))[0]


def existing(conn: psycopg.Connection) -> set[str]:
    rows = conn.execute(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
        "WHERE i.inhparent = 'events'::regclass").fetchall()
    return {r[0] for r in rows}


class Partitions:
    """The partitions a store knows to exist, so that ingest asks the catalog only for a
    week it has not seen yet."""

    def __init__(self):
        self._known: set[date] = set()
        self._lock = threading.Lock()

    def ensure(self, conn: psycopg.Connection, timestamps: Iterable[str]) -> None:
        """Create the partitions of the weeks of `timestamps` that are missing (inside the
        writing transaction: the new partition commits or rolls back with the batch). Only
        weeks found in the catalog are remembered: one created here may still roll back."""
        weeks = {week for week in map(week_of, timestamps) if week is not None} - self._known
        if not weeks:
            return
        present = existing(conn)
        found = {m for m in weeks if partition_name(m) in present}
        missing = sorted(weeks - found)
        if missing:
            # One creator at a time across servers; then look again, another may have won.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('obsctl-partition:' || current_schema()))")
            present = existing(conn)
            for monday in missing:
                if partition_name(monday) not in present and not _in_default(conn, monday):
                    create(conn, monday)
        with self._lock:
            self._known.update(found)

    def forget(self) -> None:
        """After partitions were dropped (prune): ask the catalog again next time."""
        with self._lock:
            self._known.clear()


def ensure_ahead(conn: psycopg.Connection, now: datetime | None = None) -> None:
    """Create this week's and next week's partitions (a server, at start)."""
    today = (now or datetime.now(UTC)).date()
    monday = monday_of(today)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('obsctl-partition:' || current_schema()))")
        present = existing(conn)
        for week in (monday, monday + timedelta(days=7)):
            if partition_name(week) not in present:
                create(conn, week)

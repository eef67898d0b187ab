"""Reading events across sessions in bulk and in arrival order on PostgreSQL (the same
answers as obsctl/store/sqlite/events.py).

The bulk export reads through a server-side cursor, a batch of rows at a time.

A follow position is `XID-ID`: the transaction that stored the event (`events.ingest_xid`,
migration m020) and the event's id. Ids come from a sequence, and concurrent ingest
transactions commit them out of order: a reader that has seen id 101 committed may later see
id 100 commit. So a follow reads in (ingest_xid, id) order and only events stored by
transactions older than the oldest one still running (`pg_snapshot_xmin`): every transaction
that may still add events then has a larger xid than any position handed out, and no event
is skipped. A long write transaction (a prune, `db copy`) delays what a follow sees until it ends.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg

from obsctl.errors import InvalidInput
from obsctl.models.sessions import EventSelection
from obsctl.store.sql import POSTGRES
from obsctl.store.sql.events import EVENT_FROM, selection_where

# Stored by a transaction that has ended, and older than every running one.
_SETTLED = "e.ingest_xid < pg_snapshot_xmin(pg_current_snapshot())"
BATCH_ROWS = 2000


def iter_events(conn: psycopg.Connection, selection: EventSelection) -> Iterator[tuple]:
    """The selected events in time order (ties in arrival order), as tuples of
    EVENT_LINE_COLUMNS then the session's agent_name, status, total_tokens_in, total_tokens_out:
    read through a server-side cursor BATCH_ROWS at a time, in one transaction."""
    clauses, params = selection_where(POSTGRES, selection)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    with conn.transaction(), conn.cursor(name="obsctl_export") as cursor:
        cursor.itersize = BATCH_ROWS
        cursor.execute(f"SELECT {EVENT_FROM}{where} ORDER BY e.timestamp, e.id", params)
        yield from cursor


def events_after(conn: psycopg.Connection, position: str | None, selection: EventSelection,
                 limit: int) -> list[tuple[str, tuple]]:
    """(position, row) of the first `limit` selected events stored after `position` (None: the
    start), in arrival order; rows as iter_events'. An indexed read from the position on
    (idx_events_ingest_order)."""
    xid, event_id = _parse(position)
    clauses, params = selection_where(POSTGRES, selection)
    clauses[:0] = ["(e.ingest_xid, e.id) > (%s::xid8, %s)", _SETTLED]
    params[:0] = [xid, event_id]
    cursor = conn.execute(f"SELECT e.ingest_xid::text, e.id, {EVENT_FROM} WHERE {' AND '.join(clauses)} "
                          f"ORDER BY e.ingest_xid, e.id LIMIT %s", [*params, limit])
    return [(f"{row[0]}-{row[1]}", row[2:]) for row in cursor]


def latest_events(conn: psycopg.Connection, selection: EventSelection,
                  count: int) -> tuple[str, list[tuple[str, tuple]]]:
    """The position of the last settled event, and the last `count` selected events up to it
    (oldest first), as events_after's."""
    top = conn.execute(f"SELECT e.ingest_xid::text, e.id FROM events e WHERE {_SETTLED} "
                       f"ORDER BY e.ingest_xid DESC, e.id DESC LIMIT 1").fetchone()
    if top is None:
        return "0-0", []
    rows: list[tuple[str, tuple]] = []
    if count:
        clauses, params = selection_where(POSTGRES, selection)
        clauses.insert(0, "(e.ingest_xid, e.id) <= (%s::xid8, %s)")
        params[:0] = [top[0], top[1]]
        cursor = conn.execute(f"SELECT e.ingest_xid::text, e.id, {EVENT_FROM} WHERE {' AND '.join(clauses)} "
                              f"ORDER BY e.ingest_xid DESC, e.id DESC LIMIT %s", [*params, count])
        rows = [(f"{row[0]}-{row[1]}", row[2:]) for row in cursor]
        rows.reverse()
    return f"{top[0]}-{top[1]}", rows


def _parse(position: str | None) -> tuple[str, int]:
    if position is None:
        return "0", 0
    xid, sep, event_id = position.partition("-") if type(position) is str else ("", "", "")
    if sep and xid.isdigit() and event_id.isdigit() and len(xid) <= 19 and len(event_id) <= 19:
        return xid, int(event_id)
    raise InvalidInput(f"{str(position)[:40]!r} is not a position in this server's events (a position "
                       f"is what a follow gave as an event's id)")

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
from obsctl.store.tables import EVENT_LINE_COLUMNS

_FROM = (f"{', '.join('e.' + c for c in EVENT_LINE_COLUMNS)}, s.agent_name, s.status, "
         f"s.total_tokens_in, s.total_tokens_out FROM events e JOIN sessions s ON s.session_id = e.session_id")
# Stored by a transaction that has ended, and older than every running one.
_SETTLED = "e.ingest_xid < pg_snapshot_xmin(pg_current_snapshot())"
BATCH_ROWS = 2000


def _where(selection: EventSelection) -> tuple[list[str], list]:
    clauses: list[str] = []
    params: list = []
    if selection.since is not None:
        clauses.append("e.timestamp >= %s")
        params.append(selection.since)
    if selection.until is not None:
        clauses.append("e.timestamp < %s")
        params.append(selection.until)
    for column, values in (("s.agent_name", selection.agents), ("s.status", selection.statuses),
                           ("e.session_id", selection.session_ids), ("e.event_type", selection.event_types)):
        if values:
            clauses.append(f"{column} = ANY(%s)")
            params.append(list(values))
    return clauses, params


def iter_events(conn: psycopg.Connection, selection: EventSelection) -> Iterator[tuple]:
    """The selected events in time order (ties in arrival order), as tuples of
    EVENT_LINE_COLUMNS then the session's agent_name, status, total_tokens_in, total_tokens_out:
    read through a server-side cursor BATCH_ROWS at a time, in one transaction."""
    clauses, params = _where(selection)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    with conn.transaction(), conn.cursor(name="obsctl_export") as cursor:
        cursor.itersize = BATCH_ROWS
        cursor.execute(f"SELECT {_FROM}{where} ORDER BY e.timestamp, e.id", params)
        yield from cursor


def events_after(conn: psycopg.Connection, position: str | None, selection: EventSelection,
                 limit: int) -> list[tuple[str, tuple]]:
    """(position, row) of the first `limit` selected events stored after `position` (None: the
    start), in arrival order; rows as iter_events'. An indexed read from the position on
    (idx_events_ingest_order)."""
    xid, event_id = _parse(position)
    clauses, params = _where(selection)
    clauses[:0] = ["(e.ingest_xid, e.id) > (%s::xid8, %s)", _SETTLED]
    params[:0] = [xid, event_id]
    cursor = conn.execute(f"SELECT e.ingest_xid::text, e.id, {_FROM} WHERE {' AND '.join(clauses)} "
                          f"ORDER BY e.ingest_xid, e.id LIMIT %s", [*params, limit])
    return [(f"{row[0]}-{row[1]}", row[2:]) for row in cursor]


def latest_events(conn: psycopg.Connection, selection: EventSelection,
                  count: int) -> tuple[str, list[tuple[str, tuple]]]:
    """The position of the last settled event, and the last `count` selected events up to it
    (oldest first), as events_after's."""
    if True:
        top = conn.execute(f"SELECT e.ingest_xid::text, e.id FROM events e WHERE {_SETTLED} "
                           f"ORDER BY e.ingest_xid DESC, e.id DESC LIMIT 1").fetchone()
        if top is None:
            return "0-0", []
        rows: list[tuple[str, tuple]] = []
        if count:
            clauses, params = _where(selection)
            clauses.insert(0, "(e.ingest_xid, e.id) <= (%s::xid8, %s)")
            params[:0] = [top[0], top[1]]
            cursor = conn.execute(f"SELECT e.ingest_xid::text, e.id, {_FROM} WHERE {' AND '.join(clauses)} "
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

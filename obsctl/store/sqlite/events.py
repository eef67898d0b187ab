"""Reading events across sessions in bulk and in arrival order: the bulk export and the
follow (`obsctl tail`, `GET /events/stream`).

A follow position is the event's rowid (`events.id`): SQLite has one writer at a time, so ids
are committed in increasing order and "every event with an id above N" never misses one that
commits later with a smaller id. (PostgreSQL's store needs more for that; see its module.)
"""

from __future__ import annotations

from collections.abc import Iterator

import sqlite_utils

from obsctl.errors import InvalidInput
from obsctl.models.sessions import EventSelection
from obsctl.store.sql import SQLITE
from obsctl.store.sql.events import EVENT_FROM, selection_where


def iter_events(db: sqlite_utils.Database, selection: EventSelection) -> Iterator[tuple]:
    """The selected events in time order (ties in arrival order), streamed from one cursor
    (one read transaction: the export sees one state of the database), as tuples of
    EVENT_LINE_COLUMNS then the session's agent_name, status, total_tokens_in, total_tokens_out."""
    clauses, params = selection_where(SQLITE, selection)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    cursor = db.conn.execute(f"SELECT {EVENT_FROM}{where} ORDER BY e.timestamp, e.id", params)
    while rows := cursor.fetchmany(1000):
        yield from rows


def events_after(db: sqlite_utils.Database, position: str | None, selection: EventSelection,
                 limit: int) -> list[tuple[str, tuple]]:
    """(position, row) of the first `limit` selected events stored after `position` (None: the
    start), in arrival order; rows as iter_events'. An indexed read from the position on."""
    clauses, params = selection_where(SQLITE, selection)
    clauses.insert(0, "e.id > ?")
    params.insert(0, _parse(position))
    cursor = db.conn.execute(f"SELECT e.id, {EVENT_FROM} WHERE {' AND '.join(clauses)} "
                             f"ORDER BY e.id LIMIT ?", [*params, limit])
    return [(str(row[0]), row[1:]) for row in cursor]


def latest_events(db: sqlite_utils.Database, selection: EventSelection,
                  count: int) -> tuple[str, list[tuple[str, tuple]]]:
    """The position of the last stored event, and the last `count` selected events up to it
    (oldest first), as events_after's."""
    top = db.conn.execute("SELECT COALESCE(MAX(id), 0) FROM events").fetchone()[0]
    rows: list[tuple[str, tuple]] = []
    if count:
        clauses, params = selection_where(SQLITE, selection)
        clauses.insert(0, "e.id <= ?")
        params.insert(0, top)
        cursor = db.conn.execute(f"SELECT e.id, {EVENT_FROM} WHERE {' AND '.join(clauses)} "
                                 f"ORDER BY e.id DESC LIMIT ?", [*params, count])
        rows = [(str(row[0]), row[1:]) for row in cursor]
        rows.reverse()
    return str(top), rows


def _parse(position: str | None) -> int:
    if position is None:
        return 0
    if type(position) is str and position.isdigit() and len(position) <= 19:
        return int(position)
    raise InvalidInput(f"{str(position)[:40]!r} is not a position in this server's events (a position is "
                       f"what a follow gave as an event's id)")

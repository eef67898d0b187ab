"""Following events as they arrive (`obsctl tail`, `GET /events/stream`, live pages).

A follow reads "the events stored after position P" again and again. A position is an opaque
string the store hands out with each event (the rowid on SQLite; the storing transaction and
the id on PostgreSQL, see obsctl/store/postgres/events.py): it follows the order in which
events were stored, not their timestamps, which agents set and which arrive out of order.
Each read is an indexed range read from the position on, in its own short transaction: a
follower holds no connection, lock or writer between reads.

Reuse: `events_after` is the one read. A page or a worker that shows new events keeps the
`position` of the last page it got and asks again with it; `latest_events` starts a follow
(the last N events and the position after them).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from obsctl.models.sessions import EventSelection
from obsctl.params import IntParam
from obsctl.services.sessions.bulk_export import event_line
from obsctl.store import Store

# Events returned by one read at most; a follower that gets a full page asks again at once.
PAGE = IntParam("limit", 1, 5000, default=500)
# Events shown before following (`tail -n`).
LINES = IntParam("lines", 0, 1000, default=10)
# Seconds between reads while nothing arrives.
POLL_SECONDS = 1.0


@dataclass(frozen=True)
class FeedEvent:
    """One followed event: its position (to resume after it), its session's agent (the event's
    own agent_name is often unset) and the event as a bulk export's line (models EventLine).
    `as_dict()` is its JSON (models FollowedEvent): `obsctl tail --json` prints one a line and
    `GET /events/stream` sends one per message."""

    position: str
    agent_name: str
    event: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"position": self.position, "agent_name": self.agent_name, "event": self.event}


@dataclass(frozen=True)
class FeedPage:
    """Events in arrival order, and the position to ask from next (the last event's, or the
    position asked from when nothing new arrived)."""

    events: list[FeedEvent] = field(default_factory=list)
    position: str | None = None


def _feed(rows: list[tuple[str, tuple]]) -> list[FeedEvent]:
    return [FeedEvent(position, row[-4], _parsed(event_line(row))) for position, row in rows]


def _parsed(line: dict[str, Any]) -> dict[str, Any]:
    # JSON columns as objects, for whoever shows them (the export splices the stored text).
    for name, value in line.items():
        if isinstance(value, orjson.Fragment):
            line[name] = orjson.loads(bytes(orjson.dumps(value)))
    return line


def events_after(store: Store, position: str | None, selection: EventSelection = EventSelection(),
                 limit: int | None = None) -> FeedPage:
    """The selected events stored after `position` (None: from the first event ever stored),
    oldest first, at most `limit` (default 500). Raises InvalidInput for a position this store
    did not hand out. Cheap enough to call every second: one indexed read."""
    limit = PAGE.resolve(limit)
    rows = store.events.events_after(position, selection, limit)
    return FeedPage(_feed(rows), rows[-1][0] if rows else position)


def latest_events(store: Store, selection: EventSelection = EventSelection(),
                  count: int | None = None) -> FeedPage:
    """The last `count` selected events (default 10; 0 for none), oldest first, and the
    position of the last stored event: where a follow that starts now goes on from."""
    count = LINES.resolve(count)
    position, rows = store.events.latest_events(selection, count)
    return FeedPage(_feed(rows), position)


def follow_events(store: Store, selection: EventSelection = EventSelection(), *,
                  lines: int | None = None, after: str | None = None, follow: bool = True,
                  stop: threading.Event | None = None,
                  poll_seconds: float = POLL_SECONDS) -> Iterator[FeedEvent]:
    """The last `lines` selected events, then every selected event as it is stored, until
    `stop` is set (or forever). With `after`, the events stored after that position instead of
    the last `lines` (a resumed follow). Reads every `poll_seconds` while nothing arrives.
    Without `follow`, only the first part: the last `lines` events (or those after `after`)."""
    stop = stop or threading.Event()
    if after is None:
        page = latest_events(store, selection, lines)
        yield from page.events
        position = page.position
    else:
        position = after
        if not follow:
            yield from events_after(store, position, selection).events
    while follow and not stop.is_set():
        page = events_after(store, position, selection)
        yield from page.events
        position = page.position
        if len(page.events) < PAGE.resolve(None):
            stop.wait(poll_seconds)

"""Remote search: `obsctl.services.search.search_events` answered by a server's HTTP API."""

from __future__ import annotations

from obsctl.client.http import Client


def search_events(client: Client, q: str | None, *, agent: list[str] | None = None, since: str | None = None,
                  until: str | None = None, session: str | None = None, event_type: str | None = None,
                  sort: str | None = None, limit: int | None = None, mark_start: str | None = None,
                  mark_end: str | None = None) -> dict:
    return client.get_json("/search", {"q": q, "agent": agent, "since": since, "until": until,
                                       "session": session, "type": event_type, "sort": sort, "limit": limit,
                                       "mark_start": mark_start, "mark_end": mark_end})

"""Remote incidents: the use case of `obsctl.services.incidents` answered by a server's HTTP
API, with the client in place of the store, returning what the service returns."""

from __future__ import annotations

from obsctl.client.http import Client


def list_incidents(client: Client, *, since: str | None = None, until: str | None = None,
                   agent: str | None = None, min_sessions: int | None = None,
                   gap_minutes: int | None = None, limit: int | None = None) -> dict:
    return client.get_json("/incidents", {"since": since, "until": until, "agent": agent,
                                          "min_sessions": min_sessions, "gap_minutes": gap_minutes,
                                          "limit": limit})

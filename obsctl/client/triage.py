"""Remote triage: the use cases of `obsctl.services.triage` (one session, the batch) answered
by a server's HTTP API. Each function has its service's name and parameters, with the client
in place of the store, and returns what the service returns. `pricer` is accepted and unused:
the server prices with its own table."""

from __future__ import annotations

from obsctl.client.http import Client
from obsctl.client.paths import api_path


def triage_session(client: Client, session_id: str, *, pricer=None) -> dict:
    # A session named "batch" is asked for as /triage/%62atch: /triage/batch is the batch route.
    return client.get_json(api_path("/triage/{}", session_id, absent=f"session {session_id!r} not found"))


def triage_batch(client: Client, *, pricer=None, limit: int | None = None,
                 min_events: int | None = None, agent: str | None = None,
                 since: str | None = None, until: str | None = None) -> dict:
    return client.get_json("/triage/batch", {"limit": limit, "min_events": min_events, "agent": agent,
                                             "since": since, "until": until})

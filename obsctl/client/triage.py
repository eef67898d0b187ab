"""Remote triage: the use cases of `obsctl.services.triage` (one session, the batch) answered
by a server's HTTP API. Each function has its service's name and parameters, with the client
in place of the store, and returns what the service returns. `pricer` is accepted and unused:
the server prices with its own table."""

from __future__ import annotations

from obsctl.client.http import Client, api_path
from obsctl.errors import InvalidInput


def triage_session(client: Client, session_id: str, *, pricer=None) -> dict:
    if session_id == "batch":
        # GET /triage/batch is the batch route: the API cannot name a session called "batch".
        # An unknown one fails as it does locally; an existing one needs the database.
        client.get_json(api_path("sessions", session_id))
        raise InvalidInput("the HTTP API cannot triage a session named 'batch' (GET /triage/batch is "
                           "the batch of recent sessions); run `obsctl triage show batch` on the "
                           "database itself, without --url")
    return client.get_json(api_path("triage", session_id))


def triage_batch(client: Client, *, pricer=None, limit: int | None = None,
                 min_events: int | None = None, agent: str | None = None) -> dict:
    return client.get_json("/triage/batch", {"limit": limit, "min_events": min_events, "agent": agent})

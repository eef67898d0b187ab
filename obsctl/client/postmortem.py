"""Remote postmortems: a session's and an incident's report, answered by a server's HTTP API
(the candidates are a read declared in models/postmortem.py). Each function has its
service's name and parameters, with the client in place of the store, and returns what the
service returns. `pricer` is accepted and unused: the server prices with its own table."""

from __future__ import annotations

from obsctl.client.http import Client
from obsctl.client.paths import api_path


def postmortem_session(client: Client, session_id: str, *, pricer=None) -> dict:
    # A POST without a body that changes nothing: safe to send again after a timeout.
    path = api_path("/postmortem/{}", session_id, absent=f"session {session_id!r} not found")
    return client.post_json(path, None, idempotent=True)


def postmortem_incident(client: Client, incident_id: str, *, pricer=None, since: str | None = None,
                        until: str | None = None, gap_minutes: int | None = None) -> dict:
    path = api_path("/postmortem/incidents/{}", incident_id, absent=f"incident {incident_id!r} not found")
    return client.get_json(path, {"since": since, "until": until, "gap_minutes": gap_minutes})

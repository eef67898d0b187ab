"""Remote triage of one session, answered by a server's HTTP API (the batch is a read declared
in models/triage.py): the service's name and parameters, with the client in place of the
store, returning what the service returns. `pricer` is accepted and unused: the server prices
with its own table."""

from __future__ import annotations

from obsctl.client.http import Client
from obsctl.client.paths import api_path


def triage_session(client: Client, session_id: str, *, pricer=None) -> dict:
    # A session named "batch" is asked for as /triage/%62atch: /triage/batch is the batch route.
    return client.get_json(api_path("/triage/{}", session_id, absent=f"session {session_id!r} not found"))

"""Remote postmortem of a session (a POST), answered by a server's HTTP API; an incident's
postmortem and the candidates are reads declared in models/postmortem.py. `pricer` is accepted
and unused: the server prices with its own table."""

from __future__ import annotations

from obsctl.client.http import Client
from obsctl.client.paths import api_path


def postmortem_session(client: Client, session_id: str, *, pricer=None) -> dict:
    # A POST without a body that changes nothing: safe to send again after a timeout.
    path = api_path("/postmortem/{}", session_id, absent=f"session {session_id!r} not found")
    return client.post_json(path, None, idempotent=True)

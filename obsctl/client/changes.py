"""Remote changes: the use cases of `obsctl.services.changes` answered by a server's HTTP API.
`pricer` is accepted and unused: the server prices with its own settings."""

from __future__ import annotations

from obsctl.client.http import Client
from obsctl.client.paths import api_path


def acknowledge_change(client: Client, change_id: str, *, pricer=None, note: str | None = None) -> dict:
    path = api_path("/changes/{}/acknowledge", change_id, absent=f"change id {change_id!r} is not AGENT@TIME")
    return client.put_json(path, None if note is None else {"note": note})

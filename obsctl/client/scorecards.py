"""Remote scorecards: the use cases of `obsctl.services.scorecards` (every agent's, one
agent's) answered by a server's HTTP API. Each function has its service's name and
parameters, with the client in place of the store, and returns what the service returns.
`settings` is accepted and unused: the server grades with its own settings."""

from __future__ import annotations

from typing import Any

from obsctl.client.http import Client
from obsctl.client.paths import api_path
from obsctl.errors import NotFound
from obsctl.services.scorecards import check_days, no_sessions_message


def list_scorecards(client: Client, settings=None, *, days: Any = None) -> list[dict]:
    return client.get_json("/scorecards", {"days": days})


def get_scorecard(client: Client, settings, agent: str, *, days: Any = None) -> dict:
    if agent == "":  # no URL names it: the service's own checks and answer
        raise NotFound(no_sessions_message(agent, check_days(days)))
    return client.get_json(api_path("/scorecards/{}", agent, absent=""), {"days": days})

"""Remote SLA: the use cases of `obsctl.services.sla` (targets, check, history, summary)
answered by a server's HTTP API. Each function has its service's name and parameters, with
the client in place of the store, and returns what the service returns. `settings` is
accepted and unused: the server checks with its own settings and clock."""

from __future__ import annotations

from typing import Any

from obsctl.client.http import Client
from obsctl.services.sla import HISTORY_HOURS, check_agent

_TARGETS = "/sla/targets"


def put_target(client: Client, body: Any) -> tuple[dict, bool]:
    # The route answers 201 for a new target and 200 for an update: that is `created`.
    response = client.request("PUT", _TARGETS, json=body)
    return client.decode(response), response.status_code == 201


def delete_target(client: Client, agent_name: Any, metric: Any) -> dict:
    # The pair goes as a JSON body, as the API specifies: query parameters would read an
    # empty agent name as none given, and the error would not be the service's.
    response = client.request("DELETE", _TARGETS, json={"agent_name": agent_name, "metric": metric})
    return client.decode(response)


def check_sla(client: Client, settings=None) -> dict:
    # Records one snapshot per target: not sent again once it may have reached the server.
    return client.post_json("/sla/check", None)


def sla_history(client: Client, *, agent_name: str | None = None, hours: int | None = None,
                limit: int | None = None) -> dict:
    if agent_name == "":
        # The API reads an empty agent_name as "every agent"; the service refuses it. Refuse it
        # here with the service's own checks, in its order.
        HISTORY_HOURS.check(hours)
        check_agent(agent_name)
    return client.get_json("/sla/history", {"agent_name": agent_name, "hours": hours, "limit": limit})


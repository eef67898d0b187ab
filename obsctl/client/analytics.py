"""Remote analytics: `GET /analytics`, the same report as `obsctl.services.analytics`."""

from __future__ import annotations

from obsctl.client.http import Client


def get_analytics(client: Client) -> dict:
    return client.get_json("/analytics")

"""Remote configuration as code: the use cases of `obsctl.services.configuration` answered by
a server's HTTP API. The document arrives with its secrets already read from the client's
environment (services/configuration/file.py); `settings` is accepted and unused: the server
validates webhooks with its own settings."""

from __future__ import annotations

from typing import Any

from obsctl.client.http import Client


def apply_config(client: Client, settings, document: Any, *, dry_run: bool = False,
                 prune: bool = False) -> dict:
    # Applying twice changes nothing the second time, so a retry after a lost answer is safe.
    params = {"dry_run": "true" if dry_run else None, "prune": "true" if prune else None}
    return client.post_json("/apply", document, params, idempotent=True)


def export_config(client: Client) -> dict:
    return client.get_json("/config")

"""Remote alerts: the use cases of `obsctl.services.alerts` (rules, evaluation, alert events)
answered by a server's HTTP API. Each function has its service's name and parameters, with
the client in place of the store, and returns what the service returns."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from obsctl.client.http import Client
from obsctl.client.paths import api_path
from obsctl.errors import InvalidInput
from obsctl.timeutil import format_ts

# -- rules (obsctl.services.alerts.rules) ------------------------------------------------------


def create_rule(client: Client, body: Any) -> dict:
    # Not repeated after a timeout: a second POST would create a second rule.
    return client.post_json("/alerts/rules", body)


def update_rule(client: Client, rule_id: str, body: Any) -> dict:
    return client.put_json(api_path("/alerts/rules/{}", rule_id, absent=f"alert rule {rule_id!r} not found"), body)


def delete_rule(client: Client, rule_id: str) -> dict:
    return client.delete(api_path("/alerts/rules/{}", rule_id, absent=f"alert rule {rule_id!r} not found"))


# -- evaluation and alert events (obsctl.services.alerts) --------------------------------------


def evaluate_alerts(client: Client, settings, *, at: datetime | None = None, dry_run: bool = False) -> dict:
    """The server evaluates its rules with its own settings (prices) and clock, and starts
    delivering the webhooks of what fired itself (see `obsctl.client.webhooks.deliver_due`).
    A dry run (which may name a past moment) records and sends nothing."""
    if not dry_run:
        if at is not None:
            raise InvalidInput("a server evaluates alert rules at its own time; `at` needs a dry run")
        # Not repeated after a timeout: evaluating again could fire the rules a second time.
        return client.post_json("/alerts/evaluate", None)
    params = {"dry_run": "true", "at": format_ts(at) if at is not None else None}
    return client.post_json("/alerts/evaluate", None, params, idempotent=True)


def acknowledge_alert(client: Client, alert_id: str) -> dict:
    path = api_path("/alerts/events/{}/acknowledge", alert_id, absent=f"alert {alert_id!r} not found")
    return client.put_json(path, None)

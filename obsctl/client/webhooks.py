"""Remote webhooks: the use cases of `obsctl.services.webhooks` (CRUD, test sends, the delivery
log) answered by a server's HTTP API. Each function has its service's name and parameters,
with the client in place of the store, and returns what the service returns.

The `settings` parameters are accepted and not sent: what they decide locally (whether a
private or loopback URL may be saved or reached, timeouts) is the server's own setting."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from obsctl.client.http import Client
from obsctl.client.paths import api_path
from obsctl.errors import InvalidInput
from obsctl.services.webhooks.delivery import DeliveryReport


def create_webhook(client: Client, settings, body: Any) -> dict:
    # Not repeated after a timeout: a second POST would register a second webhook.
    return client.post_json("/webhooks", body)


def _absent(webhook_id: str) -> str:
    return f"webhook {webhook_id!r} not found"


def update_webhook(client: Client, settings, webhook_id: str, body: Any) -> dict:
    return client.put_json(api_path("/webhooks/{}", webhook_id, absent=_absent(webhook_id)), body)


def delete_webhook(client: Client, webhook_id: str) -> dict:
    return client.delete(api_path("/webhooks/{}", webhook_id, absent=_absent(webhook_id)))


def send_webhook_test(client: Client, settings, webhook_id: str, *,
                      timeout: float | None = None) -> dict:
    """The server sends the sample alert, with its own attempt deadline."""
    if timeout is not None:
        raise InvalidInput("a server sends test deliveries with its own timeout; `timeout` cannot be sent")
    # Not repeated after a timeout: the receiver would get a second sample alert.
    return client.post_json(api_path("/webhooks/{}/test", webhook_id, absent=_absent(webhook_id)), None)


def retry_delivery(client: Client, settings, delivery_id: str, *, timeout: float | None = None) -> dict:
    """The server attempts the delivery, with its own attempt deadline."""
    if timeout is not None:
        raise InvalidInput("a server retries deliveries with its own timeout; `timeout` cannot be sent")
    # Not repeated after a timeout: the receiver would get the delivery twice.
    return client.post_json(api_path("/webhooks/deliveries/{}/retry", delivery_id,
                                     absent=f"delivery {delivery_id!r} not found"), None)


def deliver_due(client: Client, settings, *, at: datetime | None = None,
                timeout: float | None = None, budget: float | None = None,
                should_stop: Callable[[], bool] | None = None) -> DeliveryReport:
    """Nothing to do here: a server sends the deliveries that are due itself (its background
    sender, woken by `POST /alerts/evaluate`, or a pass inside that request), so a remote
    command attempts none and reports none."""
    return DeliveryReport(sent_by=client.server)

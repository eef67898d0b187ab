"""`/webhooks`: webhook CRUD, test sends, the delivery log and retries; the background sender."""

from __future__ import annotations

from flask import Blueprint, Flask

import obsctl.models.webhooks as models
from obsctl.models.webhooks import (
    Webhook,
    WebhookDeleted,
    WebhookDelivery,
    WebhookInput,
    WebhookUpdate,
)
from obsctl.services import webhooks as service
from obsctl.web.http import get_settings, get_store, json_body, json_response
from obsctl.web.openapi_util import (
    error_responses,
    json_content,
    operation,
    path_param,
    ref,
)
from obsctl.web.reads import serve_reads

blueprint = Blueprint("webhooks", __name__)
RATE_GROUP = "webhooks"
# GET /webhooks, /webhooks/{webhook_id} and /webhooks/deliveries, declared in models/webhooks.py.
READ_PATHS, READ_MODELS = serve_reads(blueprint, models)
SENDER_KEY = "obsctl_webhook_sender"


def start_background(app: Flask):
    """Start the webhook sender of a served app; returns it (it has `stop()`)."""
    from obsctl.services.webhooks.sender import WebhookSender

    sender = WebhookSender(app.extensions["obsctl"].settings).start()
    app.extensions[SENDER_KEY] = sender
    return sender


@blueprint.post("/webhooks")
def create_webhook():
    return json_response(service.create_webhook(get_store(), get_settings(), json_body()), 201)


@blueprint.post("/webhooks/deliveries/<delivery_id>/retry")
def retry_delivery(delivery_id: str):
    return json_response(service.retry_delivery(get_store(), get_settings(), delivery_id))


@blueprint.put("/webhooks/<webhook_id>")
def update_webhook(webhook_id: str):
    return json_response(service.update_webhook(get_store(), get_settings(), webhook_id, json_body()))


@blueprint.delete("/webhooks/<webhook_id>")
def delete_webhook(webhook_id: str):
    return json_response(service.delete_webhook(get_store(), webhook_id))


@blueprint.post("/webhooks/<webhook_id>/test")
def test_webhook(webhook_id: str):
    return json_response(service.send_webhook_test(get_store(), get_settings(), webhook_id))


OPENAPI_MODELS = (WebhookInput, WebhookUpdate, Webhook, WebhookDeleted, WebhookDelivery)

_WEBHOOK_ID = path_param("webhook_id", "Webhook id")

OPENAPI_PATHS = {
    "/webhooks": {
        "post": operation(
            "webhooks", "Register a webhook for fired alerts",
            request=json_content(ref(WebhookInput)), status=201, ok=json_content(ref(Webhook), "Created (the only response with the secret)"),
            errors=error_responses(400)),
    },
    "/webhooks/deliveries/{delivery_id}/retry": {
        "post": operation(
            "webhooks", "Attempt a failed delivery once more, now; returns the delivery after the attempt",
            params=[path_param("delivery_id", "Delivery id")], ok=json_content(ref(WebhookDelivery)),
            errors=error_responses(404, 409)),
    },
    "/webhooks/{webhook_id}": {
        "put": operation(
            "webhooks", "Update some fields of a webhook", params=[_WEBHOOK_ID],
            request=json_content(ref(WebhookUpdate)),
            ok=json_content(ref(Webhook)), errors=error_responses(400, 404)),
        "delete": operation(
            "webhooks", "Delete a webhook and its delivery log", params=[_WEBHOOK_ID],
            ok=json_content(ref(WebhookDeleted)), errors=error_responses(404)),
    },
    "/webhooks/{webhook_id}/test": {
        "post": operation(
            "webhooks", "Send a sample alert once, now (not retried); returns the delivery",
            params=[_WEBHOOK_ID], ok=json_content(ref(WebhookDelivery)),
            errors=error_responses(404)),
    },
}

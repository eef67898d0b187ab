"""`/webhooks`: webhook CRUD, test sends and the delivery log; the background sender."""

from __future__ import annotations

from flask import Blueprint, Flask, request

from obsctl.services import webhooks as service
from obsctl.services.webhooks.payloads import FORMATS
from obsctl.web.http import get_settings, get_store, int_arg, json_body, json_response, str_arg
from obsctl.web.openapi_util import (
    NOT_BLANK,
    error_responses,
    int_query_param,
    json_content,
    operation,
    path_param,
    query_param,
)

blueprint = Blueprint("webhooks", __name__)
RATE_GROUP = "webhooks"
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


@blueprint.get("/webhooks")
def list_webhooks():
    return json_response(service.list_webhooks(get_store()))


@blueprint.get("/webhooks/deliveries")
def list_deliveries():
    return json_response(service.list_deliveries(
        get_store(),
        webhook_id=str_arg("webhook_id"),
        status=request.args.get("status"),  # an empty status is invalid, not "any"
        alert_id=str_arg("alert_id"),
        limit=int_arg("limit"),
    ))


@blueprint.get("/webhooks/<webhook_id>")
def get_webhook(webhook_id: str):
    return json_response(service.get_webhook(get_store(), webhook_id))


@blueprint.put("/webhooks/<webhook_id>")
def update_webhook(webhook_id: str):
    return json_response(service.update_webhook(get_store(), get_settings(), webhook_id, json_body()))


@blueprint.delete("/webhooks/<webhook_id>")
def delete_webhook(webhook_id: str):
    return json_response(service.delete_webhook(get_store(), webhook_id))


@blueprint.post("/webhooks/<webhook_id>/test")
def test_webhook(webhook_id: str):
    return json_response(service.send_webhook_test(get_store(), get_settings(), webhook_id))


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


# The scheme is matched case-insensitively, like urlsplit does; a host must follow "//".
HTTP_URL = "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]"
_WRITABLE = {
    "url": {"type": "string", "minLength": 1, "maxLength": 2048, "pattern": HTTP_URL,
            "description": "http(s) URL in plain form: no user info, backslash, fragment, "
                           "control or non-ASCII character, IPv6 zone id or non-dotted IPv4 host. "
                           "Private and loopback hosts need OBSCTL_WEBHOOK_ALLOW_PRIVATE=1 in the "
                           "process that sets it; link-local and metadata hosts are always refused"},
    "format": {"type": "string", "enum": list(FORMATS), "default": "generic"},
    "secret": {"type": ["string", "null"],
               "description": "Standard Webhooks secret whsec_<base64>, 'generate' to have one "
                              "made, or null for unsigned deliveries"},
    "routing_key": {"type": ["string", "null"], "minLength": 1, "maxLength": 256, "pattern": NOT_BLANK,
                    "description": "PagerDuty Events API v2 integration key (format pagerduty only)"},
    "rule_ids": {"type": ["array", "null"], "items": {"type": "string"},
                 "description": "Rules whose alerts are sent; empty = every rule"},
    "enabled": {"type": "boolean", "default": True},
}
_WEBHOOK_PROPERTIES = {
    "webhook_id": {"type": "string"},
    "url": {"type": "string",
            "description": "Whole only in the response of the call that set it; elsewhere user "
                           "info, path segments after the first, token-like segments and query "
                           "values are masked as ***"},
    "format": {"type": "string", "enum": list(FORMATS)},
    "rule_ids": {"type": "array", "items": {"type": "string"}},
    "enabled": {"type": "boolean"},
    "has_secret": {"type": "boolean"},
    "has_routing_key": {"type": "boolean"},
    "allow_private": {"type": "boolean",
                      "description": "Whether private and loopback destinations were allowed "
                                     "(OBSCTL_WEBHOOK_ALLOW_PRIVATE) when the URL was set; "
                                     "senders honour it"},
    "created_at": _ref("Timestamp"),
    "updated_at": _ref("Timestamp"),
}
_WEBHOOK_REQUIRED = list(_WEBHOOK_PROPERTIES)

OPENAPI_SCHEMAS = {
    "WebhookInput": {"type": "object", "required": ["url"], "properties": _WRITABLE,
                     "additionalProperties": False},
    "WebhookUpdate": {"type": "object", "properties": _WRITABLE, "additionalProperties": False,
                      "description": "Any subset of the webhook fields"},
    "Webhook": {"type": "object", "required": _WEBHOOK_REQUIRED, "properties": {
        **_WEBHOOK_PROPERTIES,
        "secret": {"type": ["string", "null"],
                   "description": "Only in the response of the call that set it"},
        "routing_key": {"type": ["string", "null"],
                        "description": "Only in the response of the call that set it"},
    }},
    "WebhookDelivery": {
        "type": "object",
        "required": ["delivery_id", "webhook_id", "alert_id", "event_type", "status", "attempts",
                     "last_status_code", "last_error", "created_at", "next_attempt_at", "delivered_at"],
        "properties": {
            "delivery_id": {"type": "string", "description": "Also the webhook-id header"},
            "webhook_id": {"type": "string"},
            "alert_id": {"type": ["string", "null"]},
            "event_type": {"type": "string", "enum": ["alert.fired", "webhook.test"]},
            "status": {"type": "string", "enum": list(service.DELIVERY_STATUSES)},
            "attempts": {"type": "integer", "minimum": 0},
            "last_status_code": {"type": ["integer", "null"]},
            "last_error": {"type": ["string", "null"]},
            "created_at": _ref("Timestamp"),
            "next_attempt_at": {"type": ["string", "null"], "description": "While pending"},
            "delivered_at": {"type": ["string", "null"]},
        },
    },
}

_WEBHOOK_ID = path_param("webhook_id", "Webhook id")

OPENAPI_PATHS = {
    "/webhooks": {
        "post": operation(
            "webhooks", "Register a webhook for fired alerts",
            request={"content": {"application/json": {"schema": _ref("WebhookInput")}}},
            status=201, ok=json_content(_ref("Webhook"), "Created (the only response with the secret)"),
            errors=error_responses(400)),
        "get": operation("webhooks", "All webhooks (secrets never listed, URLs masked)", ok=json_content({
            "type": "object", "required": ["webhooks", "total"], "properties": {
                "webhooks": {"type": "array", "items": _ref("Webhook")},
                "total": {"type": "integer", "minimum": 0}}})),
    },
    "/webhooks/deliveries": {
        "get": operation(
            "webhooks", "Delivery log, newest first: status, attempts and last error of each",
            params=[
                query_param("webhook_id", {"type": "string"}),
                query_param("alert_id", {"type": "string"}),
                query_param("status", {"type": "string", "enum": list(service.DELIVERY_STATUSES)}),
                int_query_param(service.DELIVERIES_LIMIT, "Deliveries to return"),
            ],
            ok=json_content({"type": "object", "required": ["deliveries", "total"], "properties": {
                "deliveries": {"type": "array", "items": _ref("WebhookDelivery")},
                "total": {"type": "integer", "minimum": 0}}}),
            errors=error_responses(400)),
    },
    "/webhooks/{webhook_id}": {
        "get": operation("webhooks", "One webhook", params=[_WEBHOOK_ID],
                         ok=json_content(_ref("Webhook")), errors=error_responses(404)),
        "put": operation(
            "webhooks", "Update some fields of a webhook", params=[_WEBHOOK_ID],
            request={"content": {"application/json": {"schema": _ref("WebhookUpdate")}}},
            ok=json_content(_ref("Webhook")), errors=error_responses(400, 404)),
        "delete": operation(
            "webhooks", "Delete a webhook and its delivery log", params=[_WEBHOOK_ID],
            ok=json_content({"type": "object", "required": ["deleted", "webhook_id"], "properties": {
                "deleted": {"type": "boolean", "const": True}, "webhook_id": {"type": "string"}}}),
            errors=error_responses(404)),
    },
    "/webhooks/{webhook_id}/test": {
        "post": operation(
            "webhooks", "Send a sample alert once, now (not retried); returns the delivery",
            params=[_WEBHOOK_ID], ok=json_content(_ref("WebhookDelivery")),
            errors=error_responses(404)),
    },
}

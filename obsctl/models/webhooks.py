"""Webhooks and their deliveries (`/webhooks`), as declared models, and the limits of a
webhook's fields.

Validation itself is services/webhooks (one message per problem, the CLI's and the API's
alike; URL safety in url_safety.py); it reads its limits from here, and these declarations
state the same limits for the OpenAPI document.
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

from obsctl.models.common import NOT_BLANK, Count, Timestamp, enum_of, within
from obsctl.models.reads import NoParameters, PathParam, Read
from obsctl.params import IntParam

FORMATS = ("generic", "slack", "pagerduty")
DELIVERY_STATUSES = ("pending", "delivered", "failed")
EVENT_TYPES = ("alert.fired", "alert.resolved", "alert.acknowledged", "webhook.test")
MAX_URL_LEN = 2048
MAX_KEY_LEN = 256
# The scheme is matched case-insensitively, like urlsplit does; a host must follow "//".
HTTP_URL = "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]"

Url = Annotated[str, Meta(
    min_length=1, max_length=MAX_URL_LEN, pattern=HTTP_URL,
    description="http(s) URL in plain form: no user info, backslash, fragment, control or "
                "non-ASCII character, IPv6 zone id or non-dotted IPv4 host. Private and loopback "
                "hosts need OBSCTL_WEBHOOK_ALLOW_PRIVATE=1 in the process that sets it; "
                "link-local and metadata hosts are always refused")]
Secret = Annotated[str | None, Meta(
    description="Standard Webhooks secret whsec_<base64>, 'generate' to have one made, or null "
                "for unsigned deliveries")]
RoutingKey = Annotated[
    Annotated[str, Meta(min_length=1, max_length=MAX_KEY_LEN, pattern=NOT_BLANK)] | None,
    Meta(description="PagerDuty Events API v2 integration key (format pagerduty only)")]
RuleIds = Annotated[list[str] | None, Meta(description="Rules whose alerts are sent; empty = every rule")]
Format = Annotated[str, enum_of(FORMATS)]


class WebhookInput(Struct, forbid_unknown_fields=True, kw_only=True):
    """A new webhook"""

    url: Url
    format: Format = "generic"
    secret: Secret | UnsetType = UNSET
    routing_key: RoutingKey | UnsetType = UNSET
    rule_ids: RuleIds | UnsetType = UNSET
    enabled: bool = True


class WebhookUpdate(Struct, forbid_unknown_fields=True, kw_only=True):
    """Any subset of the webhook fields"""

    url: Url | UnsetType = UNSET
    format: Format | UnsetType = UNSET
    secret: Secret | UnsetType = UNSET
    routing_key: RoutingKey | UnsetType = UNSET
    rule_ids: RuleIds | UnsetType = UNSET
    enabled: bool | UnsetType = UNSET


_SHOWN_ONCE = "Only in the response of the call that set it"


class Webhook(Struct, kw_only=True):
    webhook_id: str
    url: Annotated[str, Meta(
        description="Whole only in the response of the call that set it; elsewhere user info, "
                    "path segments after the first, token-like segments and query values are "
                    "masked as ***")]
    format: Format
    rule_ids: list[str]
    enabled: bool
    has_secret: bool
    has_routing_key: bool
    allow_private: Annotated[bool, Meta(
        description="Whether private and loopback destinations were allowed "
                    "(OBSCTL_WEBHOOK_ALLOW_PRIVATE) when the URL was set; senders honour it")]
    created_at: Timestamp
    updated_at: Timestamp
    secret: Annotated[str | None, Meta(description=_SHOWN_ONCE)] | UnsetType = UNSET
    routing_key: Annotated[str | None, Meta(description=_SHOWN_ONCE)] | UnsetType = UNSET


class WebhookList(Struct):
    webhooks: list[Webhook]
    total: Count


class WebhookDeleted(Struct):
    deleted: Literal[True]
    webhook_id: str


class WebhookDelivery(Struct):
    """One delivery of an alert (or a test) to a webhook"""

    delivery_id: Annotated[str, Meta(description="Also the webhook-id header")]
    webhook_id: str
    alert_id: str | None
    event_type: Annotated[str, enum_of(EVENT_TYPES)]
    status: Annotated[str, enum_of(DELIVERY_STATUSES)]
    attempts: Count
    last_status_code: int | None
    last_error: str | None
    created_at: Timestamp
    next_attempt_at: Annotated[str | None, Meta(description="While pending")]
    delivered_at: Timestamp | None


class WebhookDeliveryList(Struct):
    deliveries: list[WebhookDelivery]
    total: Count


WEBHOOKS = Read("/webhooks", "obsctl.services.webhooks:list_webhooks", NoParameters, WebhookList,
                summary="All webhooks (secrets never listed, URLs masked)", tag="webhooks", errors=())


DELIVERIES_LIMIT = IntParam("limit", 1, 500, default=50, capped=True)


class DeliveriesQuery(Struct, kw_only=True):
    webhook_id: str | None = None
    alert_id: str | None = None
    # An empty status is refused, not read as "any status".
    status: Annotated[str, enum_of(DELIVERY_STATUSES), Meta(extra={"keep_empty": True})] | None = None
    limit: Annotated[int, within(DELIVERIES_LIMIT, description="Deliveries to return")] | None = None


DELIVERIES = Read("/webhooks/deliveries", "obsctl.services.webhooks:list_deliveries", DeliveriesQuery,
                  WebhookDeliveryList,
                  summary="Delivery log, newest first: status, attempts and last error of each", tag="webhooks")
WEBHOOK = Read("/webhooks/{webhook_id}", "obsctl.services.webhooks:get_webhook", NoParameters, Webhook,
               summary="One webhook", tag="webhooks", errors=(404,),
               path_params=(PathParam("webhook_id", "Webhook id", "webhook {!r} not found", converter="string"),))

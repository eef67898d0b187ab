"""Webhooks: create, list, update, delete, test; the delivery log; queueing fired alerts.

A webhook is `webhook_id`, `url`, `format` (generic, slack, pagerduty), `rule_ids` (empty =
every rule), `enabled`, an optional Standard Webhooks `secret` (`whsec_<base64>`; send the word
`generate` to have one made) and, for PagerDuty, a `routing_key`. Secrets and routing keys are
credentials: only the call that set them returns them; listings say `has_secret` and
`has_routing_key`. URLs often carry credentials too (a Slack hook path, a token in the query):
only the call that set a URL returns it whole; everywhere else it is masked (`mask_url`).

`allow_private` records whether private and loopback destinations were allowed
(OBSCTL_WEBHOOK_ALLOW_PRIVATE) in the process that set the URL; senders honour it, so a cron
job started without the setting still delivers to a receiver registered through a server
that had it. Link-local and metadata addresses are refused whatever it says.

Where a URL leads is asked of DNS (`check_urls`) before the transaction that saves it opens:
a lookup can take seconds, and no write (an ingest) may wait behind one. The checks inside
the transaction only read those answers.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import uuid
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from obsctl.errors import Conflict, InvalidInput, NotFound
from obsctl.jsonutil import describe_value, dumps, loads_column
from obsctl.models.webhooks import DELIVERIES_LIMIT, DELIVERY_STATUSES, FORMATS, MAX_KEY_LEN
from obsctl.services.webhooks.payloads import build_payload
from obsctl.services.webhooks.url_safety import check_destinations, parse_webhook_url
from obsctl.store import Store
from obsctl.timeutil import now_iso

SECRET_PREFIX = "whsec_"
SECRET_BYTES = (24, 64)  # Standard Webhooks: 24 to 64 random bytes
WRITABLE = ("url", "format", "secret", "routing_key", "rule_ids", "enabled")
MASK = "***"
# A path segment that looks like a token (long, letters and digits): masked even when first.
_TOKEN_LIKE = re.compile(r"(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9_-]{16,}")


def mask_url(url: str) -> str:
    """A webhook URL with what may be a credential replaced by ***: user info, every path
    segment after the first (Slack, Discord, Mattermost and Teams hooks keep their token
    there), a first segment that looks like a token, and every query value.

    https://hooks.slack.com/services/T0/B0/XXXX -> https://hooks.slack.com/services/***
    """
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
    except ValueError:
        return MASK
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    segments = parts.path.split("/")[1:]  # the path starts with "/" (or is empty)
    path = ""
    if segments:
        first = MASK if _TOKEN_LIKE.fullmatch(segments[0]) else segments[0]
        path = "/" + first + (f"/{MASK}" if len(segments) > 1 else "")
    query = "&".join(f"{p.partition('=')[0]}={MASK}" if "=" in p else MASK
                     for p in parts.query.split("&")) if parts.query else ""
    return f"{parts.scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def webhook_view(row: dict, *, reveal: bool = False) -> dict:
    """The public form of a webhook (URL masked); `reveal` shows the whole URL and adds the
    secret and routing key (create only)."""
    view = {
        "webhook_id": row["webhook_id"],
        "url": row["url"] if reveal else mask_url(row["url"]),
        "format": row["format"],
        "rule_ids": loads_column(row["rule_ids"]) or [],
        "enabled": bool(row["enabled"]),
        "has_secret": row["secret"] is not None,
        "has_routing_key": row["routing_key"] is not None,
        "allow_private": bool(row["allow_private"]),
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }
    if reveal:
        view["secret"] = row["secret"]
        view["routing_key"] = row["routing_key"]
    return view


def delivery_view(row: dict) -> dict:
    """The public form of a delivery; next_attempt_at only while it is pending."""
    return {
        "delivery_id": row["delivery_id"],
        "webhook_id": row["webhook_id"],
        "alert_id": row["alert_id"],
        "event_type": row["event_type"],
        "status": row["status"],
        "attempts": row["attempts"],
        "last_status_code": row["last_status_code"],
        "last_error": row["last_error"],
        "created_at": row["created_at"],
        "next_attempt_at": row["next_attempt_at"] if row["status"] == "pending" else None,
        "delivered_at": row["delivered_at"],
    }


def generate_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(os.urandom(32)).decode()


def _check_secret(value: Any) -> str | None:
    if value is None:
        return None
    if value == "generate":
        return generate_secret()
    low, high = SECRET_BYTES
    problem = f"secret must be 'generate' or a Standard Webhooks secret whsec_<base64 of {low}-{high} bytes>"
    if type(value) is not str or not value.startswith(SECRET_PREFIX):
        raise InvalidInput(problem)
    try:
        raw = base64.b64decode(value[len(SECRET_PREFIX):], validate=True)
    except (binascii.Error, ValueError):
        raise InvalidInput(f"{problem}: the part after whsec_ is not base64") from None
    if not low <= len(raw) <= high:
        raise InvalidInput(f"{problem}: it decodes to {len(raw)} bytes")
    return value


def check_format(value: Any) -> str:
    """A webhook format name, else InvalidInput naming the formats."""
    if type(value) is not str or value not in FORMATS:
        raise InvalidInput(f"format must be one of {', '.join(FORMATS)}; got {describe_value(value)}")
    return value


UrlChecks = Mapping[str, InvalidInput | None]


def check_urls(settings, urls: Iterable[Any]) -> dict[str, InvalidInput | None]:
    """Where each webhook URL leads, DNS included: {url: the error refusing it, or None}.

    Called before a transaction opens; the lookups run side by side within one deadline
    (url_safety.check_destinations). Values that are not strings are left to the field
    checks, which refuse them without a lookup."""
    return check_destinations([u for u in urls if type(u) is str],
                              allow_private=settings.webhook_allow_private)


def _is_masked_echo(body: dict, current: dict | None) -> bool:
    """The URL sent back as a listing shows it (masked): it means "unchanged"."""
    return (current is not None and "url" in body and body["url"] != current["url"]
            and body["url"] == mask_url(current["url"]))


def _urls_to_check(body: Any, current: dict | None) -> list:
    """The URL a create or update `body` would set, as a list (empty: none)."""
    if type(body) is not dict or "url" not in body or _is_masked_echo(body, current):
        return []
    return [body["url"]]


def _checked_url(url: Any, checked: UrlChecks) -> str:
    """`url` as `check_urls` judged it (no lookup here: this runs inside transactions)."""
    if type(url) is not str:
        parse_webhook_url(url)  # InvalidInput
    if url not in checked:
        # Only when the stored webhook changed between the check and this write (a masked
        # URL sent back no longer stands for its URL): nothing was looked up for it.
        raise Conflict("the webhook changed while this change was being checked; send it again")
    problem = checked[url]
    if problem is not None:
        raise problem
    return url


def _check_fields(store, settings, body: Any, current: dict | None, checked: UrlChecks) -> dict:
    """Validate a create (current None) or partial update body into column values; the URL
    was checked beforehand (`checked`, from check_urls)."""
    if type(body) is not dict:
        raise InvalidInput("the webhook must be a JSON object")
    unknown = [k for k in body if k not in WRITABLE]
    if unknown:
        raise InvalidInput(f"unknown webhook field {unknown[0]!r}; fields are {', '.join(WRITABLE)}")
    fields: dict = {}
    if _is_masked_echo(body, current):
        body = {k: v for k, v in body.items() if k != "url"}  # sent back as listed: unchanged
    if "url" in body or current is None:
        if "url" not in body:
            raise InvalidInput("missing required webhook field: url")
        fields["url"] = _checked_url(body["url"], checked)
        fields["allow_private"] = 1 if settings.webhook_allow_private else 0
    if "format" in body:
        fields["format"] = check_format(body["format"])
    if "secret" in body:
        fields["secret"] = _check_secret(body["secret"])
    if "routing_key" in body:
        key = body["routing_key"]
        if key is not None and (type(key) is not str or not key.strip() or len(key) > MAX_KEY_LEN):
            raise InvalidInput(f"routing_key must be a non-empty string of at most {MAX_KEY_LEN} "
                               f"characters, or null")
        fields["routing_key"] = key
    if "rule_ids" in body:
        fields["rule_ids"] = dumps(_check_rule_ids(store, body["rule_ids"]))
    if "enabled" in body:
        if type(body["enabled"]) is not bool:
            raise InvalidInput(f"enabled must be true or false; got {describe_value(body['enabled'])}")
        fields["enabled"] = 1 if body["enabled"] else 0
    merged = {**(current or {"format": "generic", "routing_key": None}), **fields}
    if merged["format"] == "pagerduty" and not merged["routing_key"]:
        raise InvalidInput("a pagerduty webhook needs a routing_key (the integration key of a "
                           "PagerDuty Events API v2 service)")
    if merged["format"] != "pagerduty" and merged["routing_key"]:
        raise InvalidInput("routing_key only applies to format pagerduty")
    return fields


def _check_rule_ids(store, rule_ids: Any) -> list[str]:
    if rule_ids is None:
        return []
    if type(rule_ids) is not list or any(type(r) is not str for r in rule_ids):
        raise InvalidInput("rule_ids must be an array of rule ids (empty = every rule)")
    for rule_id in rule_ids:
        if store.alerts.get_rule(rule_id) is None:
            raise InvalidInput(f"rule_ids: alert rule {rule_id!r} does not exist")
    return list(dict.fromkeys(rule_ids))


def require_webhook(store: Store, webhook_id: str) -> dict:
    row = store.webhooks.get_webhook(webhook_id)
    if row is None:
        raise NotFound(f"webhook {webhook_id!r} not found")
    return row


def check_webhook_fields(store: Store, settings, body: Any, current: dict | None = None, *,
                         checked: UrlChecks) -> dict:
    """The column values a create (`current` None) or a partial update of `current` (a stored
    row) would write; InvalidInput naming the first bad field. The URL's destination is read
    from `checked` (check_urls, asked before the transaction)."""
    return _check_fields(store, settings, body, current, checked)


def create_webhook(store: Store, settings, body: Any, *, checked: UrlChecks | None = None) -> dict:
    """Create a webhook; the response is the only one that shows its secret."""
    return insert_webhook(store, settings, body, f"wh_{uuid.uuid4().hex[:16]}", checked=checked)


def insert_webhook(store: Store, settings, body: Any, webhook_id: str, *,
                   checked: UrlChecks | None = None) -> dict:
    """Create the webhook `webhook_id` (a new id, generated or chosen by a configuration
    file) from its fields, as create_webhook does. `checked`: the URL checks made already
    (check_urls), when the caller is inside a transaction; otherwise they are made here."""
    if checked is None:
        checked = check_urls(settings, _urls_to_check(body, None))
    fields = _check_fields(store, settings, body, None, checked)
    now = now_iso()
    row = {"format": "generic", "secret": None, "routing_key": None, "rule_ids": "[]",
           "enabled": 1, "allow_private": 0, **fields, "webhook_id": webhook_id,
           "created_at": now, "updated_at": now}
    with store.transaction():
        store.webhooks.insert_webhook(row)
    return webhook_view(row, reveal=True)


def list_webhooks(store: Store) -> dict:
    hooks = [webhook_view(r) for r in store.webhooks.list_webhooks()]
    return {"webhooks": hooks, "total": len(hooks)}


def get_webhook(store: Store, webhook_id: str) -> dict:
    return webhook_view(require_webhook(store, webhook_id))


def update_webhook(store: Store, settings, webhook_id: str, body: Any, *,
                   checked: UrlChecks | None = None) -> dict:
    """Partial update; a URL, secret or routing key set by this call is shown in its response.
    `checked` as for insert_webhook."""
    if checked is None:
        checked = check_urls(settings, _urls_to_check(body, require_webhook(store, webhook_id)))
    with store.transaction():
        current = require_webhook(store, webhook_id)
        fields = _check_fields(store, settings, body, current, checked)
        if fields:
            fields["updated_at"] = now_iso()
            store.webhooks.update_webhook(webhook_id, fields)
        view = webhook_view(require_webhook(store, webhook_id))
    for name in ("url", "secret", "routing_key"):
        if fields.get(name) is not None:
            view[name] = fields[name]
    return view


def delete_webhook(store: Store, webhook_id: str) -> dict:
    """Delete a webhook and its delivery log."""
    with store.transaction():
        if not store.webhooks.delete_webhook(webhook_id):
            raise NotFound(f"webhook {webhook_id!r} not found")
    return {"deleted": True, "webhook_id": webhook_id}


def check_delivery_status(status: str | None) -> str | None:
    """A delivery status filter (None: any), else InvalidInput naming the statuses."""
    if status is not None and status not in DELIVERY_STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(DELIVERY_STATUSES)}; got {describe_value(status)}")
    return status


def list_deliveries(store: Store, *, webhook_id: str | None = None,
                    status: str | None = None, alert_id: str | None = None,
                    limit: int | None = None) -> dict:
    """`{"deliveries": [...], "total": N}` newest first; limit default 50, 1-500 (more counts as 500)."""
    status = check_delivery_status(status)
    limit = DELIVERIES_LIMIT.resolve(limit)
    rows, total = store.webhooks.list_deliveries(webhook_id=webhook_id, status=status,
                                        alert_id=alert_id, limit=limit)
    return {"deliveries": [delivery_view(r) for r in rows], "total": total}


def retry_delivery(store: Store, settings, delivery_id: str, *, timeout: float | None = None) -> dict:
    """Attempt a failed delivery once more, now, and return it as the log shows it after the
    attempt (delivered, or failed/pending with the new last_error). Only failed alert
    deliveries of enabled webhooks can be retried (a test send is sent anew with `webhooks
    test`): NotFound for an unknown id, Conflict otherwise."""
    from obsctl.services.webhooks.delivery import retry_failed

    with store.read_snapshot():
        delivery = store.webhooks.get_delivery(delivery_id)
    if delivery is None:
        raise NotFound(f"delivery {delivery_id!r} not found")
    if delivery["event_type"] == "webhook.test":
        raise Conflict(f"delivery {delivery_id} is a test send, which is not retried; send another "
                       f"with: obsctl webhooks test {delivery['webhook_id']}")
    if not retry_failed(store, settings, delivery_id, timeout=timeout):
        with store.read_snapshot():
            delivery = store.webhooks.get_delivery(delivery_id)
        if delivery is None:
            raise NotFound(f"delivery {delivery_id!r} not found")
        if delivery["status"] != "failed":
            raise Conflict(f"delivery {delivery_id} is {delivery['status']}: only failed deliveries "
                           f"can be retried")
        raise Conflict(f"webhook {delivery['webhook_id']} is disabled; enable it first: "
                       f"obsctl webhooks update {delivery['webhook_id']} --enable")
    with store.read_snapshot():
        retried = store.webhooks.get_delivery(delivery_id)
    if retried is None:  # removed with its webhook meanwhile
        raise NotFound(f"delivery {delivery_id!r} not found")
    return delivery_view(retried)


def enabled_webhooks(store: Store) -> list[dict]:
    return store.webhooks.list_webhooks(enabled_only=True)


def enqueue_alert(store: Store, hooks: list[dict], alert: dict, rule: dict,
                  now: str, *, event_type: str = "alert.fired") -> int:
    """Queue one pending delivery of `event_type` (alert.fired, alert.resolved,
    alert.acknowledged) per webhook that wants this rule (inside the transaction that changed
    the alert, so the change and its deliveries commit together). Returns how many."""
    deliveries = []
    for hook in hooks:
        wanted = loads_column(hook["rule_ids"]) or []
        if wanted and alert["rule_id"] not in wanted:
            continue
        deliveries.append({
            "delivery_id": f"msg_{uuid.uuid4().hex}", "webhook_id": hook["webhook_id"],
            "alert_id": alert["alert_id"], "event_type": event_type,
            "payload": dumps(build_payload(hook, event_type, alert, rule)),
            "status": "pending", "attempts": 0, "last_error": None, "last_status_code": None,
            "next_attempt_at": now, "created_at": now, "delivered_at": None,
        })
    store.webhooks.insert_deliveries(deliveries)
    return len(deliveries)


def send_webhook_test(store: Store, settings, webhook_id: str, *,
                 timeout: float | None = None) -> dict:
    """Send a sample alert to the webhook once, now, and record it in the delivery log.

    Test deliveries are not retried: the result (delivered or failed, with the receiver's
    status code or the error) is returned and logged with event_type webhook.test.
    """
    from obsctl.services.webhooks.delivery import send_test

    return delivery_view(send_test(store, settings, require_webhook(store, webhook_id), timeout=timeout))

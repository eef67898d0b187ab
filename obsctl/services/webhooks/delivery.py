"""Sending webhook deliveries from the outbox: signing, one attempt, retries with backoff.

Each pass (`deliver_due`) claims due pending deliveries one at a time under a short write
transaction (a lease, so two senders never attempt the same delivery at once), makes one HTTP
attempt, and records the outcome. An attempt has one deadline for everything (DNS, connect,
TLS, sending, reading the answer; ATTEMPT_TIMEOUT_S by default) and the lease is longer than
that deadline plus a generous margin for recording, so a live sender's claim never runs out
under it, however slowly a receiver answers. A failed attempt is retried later with
exponential backoff capped at 60 s, by the next pass (the next `alerts evaluate`, or the
server's background sender), until 24 hours after the alert; then it is marked failed.
A 410 Gone answer ends the delivery at once and disables the webhook (the receiver said it
does not want any more). Receivers may see a delivery twice only if a sender dies between
sending and recording; the `webhook-id` header (the delivery id) is the same on every try,
for de-duplication.

Where a delivery may go is checked at every attempt with the parser and address rules of
url_safety, honouring the private-address decision stored with the webhook (or the
sender's own setting); the connection goes to the checked address (webhook_http).

Signatures follow Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256 of
"{id}.{timestamp}.{body}" keyed with the base64-decoded secret>`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import logging
import ssl
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import obsctl.services.webhooks.transport as webhook_http
from obsctl import __version__
from obsctl.errors import InvalidInput
from obsctl.jsonutil import dumps
from obsctl.services.webhooks.payloads import build_payload, pagerduty_test_resolve, sample_alert
from obsctl.services.webhooks.url_safety import (
    PrivateDestination,
    Resolver,
    UnresolvableHost,
    check_destination,
)
from obsctl.store import Store
from obsctl.timeutil import format_ts, now, parse_ts

log = logging.getLogger("obsctl.webhooks")
# Library practice: shown where the application configures logging (`obsctl serve`), silent
# in the CLI, which prints its own one-line summary instead.
log.addHandler(logging.NullHandler())

ATTEMPT_TIMEOUT_S = 10.0
MAX_BACKOFF_S = 60
GIVE_UP_AFTER = timedelta(hours=24)
# Added to the attempt deadline to make the claim: room for recording the result even when
# the database is busy. With the default deadline the claim lasts two minutes.
LEASE_MARGIN_S = 110.0
PASS_BUDGET_S = 20.0
_ERROR_BODY_CHARS = 200


def lease_for(timeout: float) -> timedelta:
    """How long a claim lasts for attempts with this deadline: always longer than one."""
    return timedelta(seconds=timeout + LEASE_MARGIN_S)


@dataclass
class AttemptResult:
    ok: bool
    status_code: int | None = None
    error: str | None = None
    permanent: bool = False  # never worth retrying (a refused destination, 410 Gone)
    gone: bool = False  # the receiver answered 410 Gone: disable the webhook


@dataclass
class DeliveryReport:
    """What one pass did: attempts made, and how they ended."""

    attempted: int = 0
    delivered: int = 0
    retrying: int = 0
    failed: int = 0
    expired: int = 0
    last_error: str | None = None
    last_failure: str | None = None  # the error of the last delivery that failed for good
    sent_by: str | None = None  # the server that sends them instead (remote mode): none attempted here


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The Standard Webhooks `webhook-signature` value for one message."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    content = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def request_headers(secret: str | None, msg_id: str, body: bytes,
                    timestamp: int | None = None) -> dict[str, str]:
    """Headers of one attempt; signed when the webhook has a secret."""
    timestamp = int(time.time()) if timestamp is None else timestamp
    headers = {"Content-Type": "application/json", "User-Agent": f"obsctl-webhooks/{__version__}",
               "webhook-id": msg_id, "webhook-timestamp": str(timestamp)}
    if secret:
        headers["webhook-signature"] = sign(secret, msg_id, timestamp, body)
    return headers


def backoff_seconds(failed_attempts: int) -> int:
    """Wait after the n-th failed attempt: 1, 2, 4, ... capped at 60 seconds."""
    return min(MAX_BACKOFF_S, 2 ** max(0, failed_attempts - 1))


def attempt(url: str, body: bytes, headers: dict, *, allow_private: bool, timeout: float,
            resolver: Resolver | None = None, ssl_context: ssl.SSLContext | None = None) -> AttemptResult:
    """One POST, all of it (DNS included) within `timeout` seconds; redirects are not followed.

    The URL is parsed and its host resolved once; every address is checked and the
    connection goes to a checked one (DNS cannot change the answer in between).
    """
    deadline = time.monotonic() + timeout
    try:
        target, addresses = check_destination(url, allow_private=allow_private, require_resolution=True,
                                              resolver=resolver, dns_timeout=timeout)
    except PrivateDestination as exc:
        # Settings and DNS answers change: not worth losing the alert over; retried.
        return AttemptResult(False, error=f"refused for now: {exc.message}")
    except InvalidInput as exc:  # a refused destination (UnsafeDestination) or malformed URL
        return AttemptResult(False, error=f"refused: {exc.message}", permanent=True)
    except UnresolvableHost as exc:
        return AttemptResult(False, error=str(exc))
    try:
        answer = webhook_http.post(target, addresses, body, headers, deadline=deadline,
                                   ssl_context=ssl_context, error_body_bytes=_ERROR_BODY_CHARS)
    except webhook_http.AttemptTimeout:
        return AttemptResult(False, error=f"timed out after {timeout:g} s (one deadline for connecting, "
                                          f"sending and the whole answer)")
    except webhook_http.ConnectFailed as exc:
        return AttemptResult(False, error=f"connection failed: {exc}")
    except ssl.SSLCertVerificationError as exc:
        return AttemptResult(False, error=f"TLS certificate check failed: {exc.verify_message}")
    except ssl.SSLError as exc:
        return AttemptResult(False, error=f"TLS failed: {exc.reason or exc}")
    except http.client.HTTPException as exc:
        return AttemptResult(False, error=f"invalid answer: {type(exc).__name__} {str(exc)[:120]}".strip())
    except OSError as exc:
        return AttemptResult(False, error=f"connection failed: {webhook_http.describe_os_error(exc)}")
    if 200 <= answer.status < 300:
        return AttemptResult(True, answer.status)
    text = answer.body.decode("utf-8", "replace")
    detail = f": {' '.join(text.split())}" if text.strip() else ""
    if answer.status == 410:
        return AttemptResult(False, 410, f"HTTP 410 Gone{detail}: the receiver wants no more deliveries; "
                                         f"the webhook was disabled", permanent=True, gone=True)
    if 300 <= answer.status < 400:
        detail += " (redirects are not followed)"
    return AttemptResult(False, answer.status, f"HTTP {answer.status}{detail}")


def deliver_due(store: Store, settings, *, at: datetime | None = None,
                timeout: float | None = None, budget: float | None = None,
                should_stop: Callable[[], bool] | None = None) -> DeliveryReport:
    """Attempt every delivery due at `at` (default now) once, within `budget` seconds.

    Deliveries rescheduled during the pass are not due until after its start, so each is
    tried at most once per pass; what is left over stays pending for the next pass.
    """
    timeout = ATTEMPT_TIMEOUT_S if timeout is None else timeout
    budget = PASS_BUDGET_S if budget is None else budget
    pass_start = at or now()
    due = format_ts(pass_start)
    report = DeliveryReport()
    started = time.monotonic()
    with store.transaction():
        report.expired = store.webhooks.expire_pending(format_ts(pass_start - GIVE_UP_AFTER),
                                              "gave up: not delivered within 24 hours")
    if report.expired:
        report.last_failure = "gave up: not delivered within 24 hours"
    while time.monotonic() - started < budget and not (should_stop and should_stop()):
        clock = at or now()
        with store.transaction():
            claim = store.webhooks.claim_due(due, format_ts(clock + lease_for(timeout)))
        if claim is None:
            break
        _attempt_claimed(store, settings, claim, at, timeout, report)
    return report


def _allow_private(settings, webhook: dict) -> bool:
    """The decision stored with the webhook when its URL was set, or this process's setting."""
    return bool(webhook.get("allow_private")) or settings.webhook_allow_private


def _attempt_claimed(store, settings, claim: dict, at: datetime | None, timeout: float,
                     report: DeliveryReport) -> None:
    body = claim["payload"].encode()
    headers = request_headers(claim["secret"], claim["delivery_id"], body)
    result = attempt(claim["url"], body, headers, allow_private=_allow_private(settings, claim),
                     timeout=timeout)
    report.attempted += 1
    finished = at or now()
    finished_ts = format_ts(finished)
    failures = claim["attempts"] + 1
    if result.ok:
        status, next_at, delivered_at, error = "delivered", finished_ts, finished_ts, None
    else:
        next_time = finished + timedelta(seconds=backoff_seconds(failures))
        error = result.error
        if result.permanent or next_time >= parse_ts(claim["created_at"]) + GIVE_UP_AFTER:
            status, next_at = "failed", finished_ts
        else:
            status, next_at = "pending", format_ts(next_time)
        delivered_at = None
        log.warning("webhook delivery %s to %s failed (attempt %d): %s", claim["delivery_id"],
                    claim["webhook_id"], failures, error)
    with store.transaction():
        recorded = store.webhooks.record_attempt(claim["delivery_id"], claim["attempts"], status=status,
                                        error=error, status_code=result.status_code,
                                        next_attempt_at=next_at, delivered_at=delivered_at)
        if result.gone:
            store.webhooks.disable_webhook(claim["webhook_id"], finished_ts)
    if not recorded:
        # Cancelled meanwhile (its rule or webhook was removed): nothing to count.
        log.info("webhook delivery %s was cancelled during its attempt", claim["delivery_id"])
        return
    if status == "delivered":
        report.delivered += 1
    elif status == "pending":
        report.retrying += 1
        report.last_error = error
    else:
        report.failed += 1
        report.last_error = report.last_failure = error


def retry_failed(store: Store, settings, delivery_id: str, *, timeout: float | None = None) -> bool:
    """Attempt a failed delivery once more, now; False when it is not a failed delivery of an
    enabled webhook. A retry that fails again goes back to the automatic retries while the
    delivery is younger than 24 hours, and stays failed after that."""
    timeout = ATTEMPT_TIMEOUT_S if timeout is None else timeout
    with store.transaction():
        claim = store.webhooks.claim_failed(delivery_id, format_ts(now() + lease_for(timeout)))
    if claim is None:
        return False
    _attempt_claimed(store, settings, claim, None, timeout, DeliveryReport())
    return True


def send_test(store: Store, settings, webhook: dict, *,
              timeout: float | None = None) -> dict:
    """Send a sample alert once and log it as a webhook.test delivery (never retried). A
    PagerDuty test trigger is followed by its resolve, so it leaves no incident open; a resolve
    that fails is named in the delivery's last_error."""
    timeout = ATTEMPT_TIMEOUT_S if timeout is None else timeout
    sent_at = format_ts(now())
    alert, rule = sample_alert(webhook["webhook_id"], sent_at)
    body = dumps(build_payload(webhook, "webhook.test", alert, rule)).encode()
    delivery_id = f"msg_{uuid.uuid4().hex}"
    result = attempt(webhook["url"], body, request_headers(webhook["secret"], delivery_id, body),
                     allow_private=_allow_private(settings, webhook), timeout=timeout)
    error = result.error
    if result.ok and webhook["format"] == "pagerduty":
        closing = dumps(pagerduty_test_resolve(webhook)).encode()
        resolved = attempt(webhook["url"], closing, request_headers(webhook["secret"], f"{delivery_id}-resolve",
                                                                   closing),
                           allow_private=_allow_private(settings, webhook), timeout=timeout)
        if not resolved.ok:
            error = f"the trigger was delivered, but its resolve failed: {resolved.error}"
    done = format_ts(now())
    row = {
        "delivery_id": delivery_id, "webhook_id": webhook["webhook_id"], "alert_id": None,
        "event_type": "webhook.test", "payload": body.decode(),
        "status": "delivered" if result.ok else "failed", "attempts": 1,
        "last_error": error, "last_status_code": result.status_code,
        "next_attempt_at": done, "created_at": sent_at, "delivered_at": done if result.ok else None,
    }
    with store.transaction():
        store.webhooks.insert_deliveries([row])
        if result.gone:
            store.webhooks.disable_webhook(webhook["webhook_id"], done)
    return row

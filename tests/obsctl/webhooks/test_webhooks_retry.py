"""Retrying a failed delivery by hand: `obsctl webhooks retry`, POST
/webhooks/deliveries/<id>/retry and the service behind both, against a real receiver."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from obsctl.errors import Conflict, NotFound
from obsctl.services import webhooks
from obsctl.services.webhooks.delivery import deliver_due
from tests.obsctl.webhooks.test_webhooks_delivery import AT, fire
from tests.webhook_receiver import Receiver


@pytest.fixture
def settings(private_ok):
    return private_ok


def failed_delivery(db, settings, url: str) -> dict:
    """One alert delivery to `url` that gave up (fired at AT, more than 24 hours ago)."""
    webhooks.create_webhook(db, settings, {"url": url})
    fire(db, settings)
    deliver_due(db, settings, at=AT + timedelta(hours=25), timeout=2)
    [delivery] = webhooks.list_deliveries(db)["deliveries"]
    assert (delivery["status"], delivery["attempts"]) == ("failed", 0)
    assert delivery["last_error"] == "gave up: not delivered within 24 hours"
    return delivery


def test_retry_delivers_a_failed_delivery(db, settings, receiver):
    delivery = failed_delivery(db, settings, receiver.url)
    retried = webhooks.retry_delivery(db, settings, delivery["delivery_id"])
    assert (retried["status"], retried["attempts"], retried["last_status_code"], retried["last_error"]) == (
        "delivered", 1, 200, None)
    assert retried["delivered_at"] is not None and retried["next_attempt_at"] is None
    [request] = receiver.accepted
    assert request["headers"]["webhook-id"] == delivery["delivery_id"]
    assert json.loads(request["body"])["alert"]["alert_id"] == delivery["alert_id"]
    assert webhooks.list_deliveries(db)["deliveries"] == [retried]


def test_a_retry_that_fails_again_stays_failed_after_24_hours(db, settings):
    down = Receiver(mode="fail").start()
    try:
        delivery = failed_delivery(db, settings, down.url)
        retried = webhooks.retry_delivery(db, settings, delivery["delivery_id"], timeout=2)
    finally:
        down.stop()
    assert (retried["status"], retried["attempts"], retried["last_status_code"]) == ("failed", 1, 500)
    assert retried["last_error"] == "HTTP 500: receiver broken"
    assert len(down.requests) == 1


def test_only_failed_alert_deliveries_of_enabled_webhooks_are_retried(db, settings, receiver):
    delivery = failed_delivery(db, settings, receiver.url)
    with pytest.raises(NotFound, match="delivery 'msg_nope' not found"):
        webhooks.retry_delivery(db, settings, "msg_nope")
    webhooks.update_webhook(db, settings, delivery["webhook_id"], {"enabled": False})
    with pytest.raises(Conflict, match=f"webhook {delivery['webhook_id']} is disabled; enable it first"):
        webhooks.retry_delivery(db, settings, delivery["delivery_id"])
    webhooks.update_webhook(db, settings, delivery["webhook_id"], {"enabled": True})
    webhooks.retry_delivery(db, settings, delivery["delivery_id"])
    with pytest.raises(Conflict, match="is delivered: only failed deliveries can be retried"):
        webhooks.retry_delivery(db, settings, delivery["delivery_id"])
    assert len(receiver.accepted) == 1

    receiver.mode = "fail"
    test_send = webhooks.send_webhook_test(db, settings, delivery["webhook_id"])
    assert test_send["status"] == "failed"
    with pytest.raises(Conflict, match="is a test send, which is not retried"):
        webhooks.retry_delivery(db, settings, test_send["delivery_id"])


def test_api_and_cli_retry_the_same_way(db, settings, make_app, cli, receiver):
    first = failed_delivery(db, settings, receiver.url)
    client = make_app({"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}).test_client()
    answer = client.post(f"/webhooks/deliveries/{first['delivery_id']}/retry")
    assert answer.status_code == 200
    assert answer.get_json() == client.get("/webhooks/deliveries").get_json()["deliveries"][0]
    assert answer.get_json()["status"] == "delivered"
    again = client.post(f"/webhooks/deliveries/{first['delivery_id']}/retry")
    assert again.status_code == 409 and "only failed deliveries" in again.get_json()["error"]
    missing = client.post("/webhooks/deliveries/msg_nope/retry")
    assert (missing.status_code, missing.get_json()) == (404, {"error": "delivery 'msg_nope' not found"})

    fire(db, settings, count=2, at=AT + timedelta(hours=1))
    deliver_due(db, settings, at=AT + timedelta(hours=26), timeout=2)
    second = webhooks.list_deliveries(db, status="failed")["deliveries"][0]
    shown = cli("webhooks", "retry", second["delivery_id"], "--json",
                env={"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"})
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout) == webhooks.list_deliveries(db, status="delivered")["deliveries"][0]
    assert json.loads(shown.stdout)["delivery_id"] == second["delivery_id"]
    refused = cli("webhooks", "retry", second["delivery_id"])
    assert refused.exit_code == 1 and "only failed deliveries can be retried" in refused.stderr
    assert cli("webhooks", "retry", "msg_nope").exit_code == 1
    assert len(receiver.accepted) == 2


def test_cli_retry_that_fails_exits_1(db, settings, cli):
    down = Receiver(mode="fail").start()
    try:
        delivery = failed_delivery(db, settings, down.url)
        result = cli("webhooks", "retry", delivery["delivery_id"], env={"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"})
    finally:
        down.stop()
    assert result.exit_code == 1
    assert result.stdout == f"failed {delivery['delivery_id']}: HTTP 500: receiver broken\n"

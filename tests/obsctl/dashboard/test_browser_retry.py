"""The Retry button of the Webhooks page in a real browser: a delivery that gave up on a
receiver that was down is retried from the page, reaches a real receiver on 127.0.0.1 and
shows as delivered, on each store."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from obsctl.config import Settings
from obsctl.services import webhooks
from obsctl.services.storage import open_store
from obsctl.services.webhooks.delivery import deliver_due
from tests import backends
from tests.conftest import _require, start_server
from tests.obsctl.dashboard.conftest import API_KEY, chromium_unavailable_reason, screenshot
from tests.obsctl.dashboard.test_browser import log_in
from tests.obsctl.webhooks.test_webhooks_delivery import AT, fire
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.e2e
ALLOW_PRIVATE = {"OBSCTL_WEBHOOK_ALLOW_PRIVATE": "1"}


@pytest.fixture(params=backends.BACKENDS)
def failed_delivery_server(request, tmp_path):
    """`obsctl serve` over a database holding one failed delivery to a receiver now up."""
    _require("Chromium", chromium_unavailable_reason())
    schema = None
    if request.param == "postgresql":
        _require("PostgreSQL", backends.unavailable_reason())
        schema, db_url = backends.new_schema()
    else:
        db_url = str(tmp_path / "obsctl.db")
    receiver = Receiver().start()
    settings = Settings.from_env(ALLOW_PRIVATE, db_path=db_url)
    store = open_store(settings)
    try:
        hook = webhooks.create_webhook(store, settings, {"url": receiver.url})
        fire(store, settings)  # at AT, long ago: the delivery gives up 24 hours later
        deliver_due(store, settings, at=AT + timedelta(hours=25), timeout=2)
        [delivery] = webhooks.list_deliveries(store)["deliveries"]
    finally:
        store.close()
    server = start_server(db_url, tmp_path, {"OBSCTL_RATE_LIMITS": "off", "SERVICE_API_KEY": API_KEY,
                                              **ALLOW_PRIVATE})
    server.backend = request.param
    try:
        yield server, receiver, hook, delivery
    finally:
        server.stop()
        receiver.stop()
        if schema:
            backends.drop_schema(schema)


def test_retry_button_delivers_a_failed_delivery(browser, failed_delivery_server):
    server, receiver, hook, delivery = failed_delivery_server
    assert (delivery["status"], delivery["attempts"]) == ("failed", 0)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        log_in(page, server, "/ui/webhooks?status=failed")
        rows = page.locator('section[aria-labelledby="deliveries-h"] tbody tr')
        assert rows.count() == 1
        row = rows.first
        assert "gave up: not delivered within 24 hours" in row.inner_text()
        assert receiver.accepted == []
        page.get_by_role("button", name=f"Retry the alert.fired delivery to {hook['webhook_id']}"
                                        f" created at {delivery['created_at']}").click()
        page.wait_for_load_state()
        # Back on the page, still filtered on failed: the delivery has left the list.
        assert page.url.endswith("/ui/webhooks?status=failed")
        assert rows.count() == 1 and rows.first.inner_text() == "No deliveries."
        page.goto(server.url + "/ui/webhooks")
        assert rows.count() == 1
        row = rows.first
        assert "delivered" in row.inner_text() and row.get_by_role("button", name="Retry").count() == 0
        screenshot(page, server.backend, "webhooks-retried")
    finally:
        context.close()
    [request] = receiver.accepted
    assert request["headers"]["webhook-id"] == delivery["delivery_id"]
    assert json.loads(request["body"])["alert"]["alert_id"] == delivery["alert_id"]


"""Several servers on one PostgreSQL database claim different deliveries (SKIP LOCKED)."""

from __future__ import annotations

import threading

import pytest

ROW = {"url": "https://93.184.215.14/hook", "format": "generic", "secret": None,
       "routing_key": None, "rule_ids": "[]", "enabled": 1, "allow_private": 0,
       "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z"}
NOW = "2026-01-01T12:00:00.000Z"
LEASE = "2026-01-01T12:02:00.000Z"


def delivery(delivery_id: str, due: str) -> dict:
    return {"delivery_id": delivery_id, "webhook_id": "wh_1", "alert_id": None,
            "event_type": "alert.fired", "payload": "{}", "status": "pending", "attempts": 0,
            "last_error": None, "last_status_code": None, "next_attempt_at": due,
            "created_at": "2026-01-01T11:00:00.000Z", "delivered_at": None}


@pytest.mark.postgresql_only
def test_a_claim_in_progress_is_skipped_not_waited_for(db, db_url, backend):
    from tests.store_support import open_pg

    with db.transaction():
        db.webhooks.insert_webhook({**ROW, "webhook_id": "wh_1"})
        db.webhooks.insert_deliveries([delivery("d_1", "2026-01-01T11:00:00.000Z"),
                                       delivery("d_2", "2026-01-01T11:30:00.000Z")])
    other = open_pg(db_url)
    try:
        claims = {}

        def claim_elsewhere(name: str) -> None:
            with other.transaction():
                claims[name] = other.webhooks.claim_due(NOW, LEASE)

        def claim_in_thread(name: str) -> None:
            thread = threading.Thread(target=claim_elsewhere, args=(name,))
            thread.start()
            thread.join(10)
            assert not thread.is_alive(), "the second server waited for the first one's claim"

        with db.transaction():
            first = db.webhooks.claim_due(NOW, LEASE)
            assert first["delivery_id"] == "d_1"  # the earliest due
            # The first claim is not committed yet: its row is locked, and another server
            # takes the next due delivery instead of waiting.
            claim_in_thread("second")
            assert claims["second"]["delivery_id"] == "d_2"
            # The first is still locked, the second leased: nothing left to claim.
            claim_in_thread("third")
            assert claims["third"] is None
        # Committed: the first claim's lease keeps it out of the way too.
        claim_in_thread("after")
        assert claims["after"] is None
        leased = {d["delivery_id"]: d["next_attempt_at"]
                  for d in db.webhooks.list_deliveries(webhook_id=None, status=None, alert_id=None,
                                                       limit=10)[0]}
        assert leased == {"d_1": LEASE, "d_2": LEASE}
        # Once a lease runs out, the delivery can be claimed again.
        with other.transaction():
            again = other.webhooks.claim_due("2026-01-01T12:03:00.000Z", "2026-01-01T12:05:00.000Z")
        assert again["delivery_id"] == "d_1" and again["attempts"] == 0
    finally:
        other.close()

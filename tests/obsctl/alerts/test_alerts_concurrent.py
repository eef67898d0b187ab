"""Two `alerts evaluate` runs at once (cron on one host, the API on another) fire a rule once:
the second waits for the first one's firing transaction and then sees its last_fired_at."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from obsctl.services import alerts
from obsctl.services.alerts import rules as alert_rules
from obsctl.services.ingest import ingest_events
from obsctl.timeutil import format_ts
from tests.conftest import event

AT = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def open_store(db_url, backend):
    from tests.store_support import open_db, open_pg

    return open_db(db_url) if backend == "sqlite" else open_pg(db_url)


def test_an_evaluation_waits_for_a_concurrent_firing_and_respects_its_cooldown(db, db_url, backend,
                                                                              settings):
    ingest_events(db, [event("s", "error", agent_name="alpha", timestamp="2026-01-01T11:59:00Z")])
    rule = alert_rules.create_rule(db, {"name": "errors", "metric": "error_rate", "operator": ">",
                                        "threshold": 10, "cooldown_minutes": 15})
    other = open_store(db_url, backend)
    results = {}

    def evaluate_elsewhere():
        results["body"] = alerts.evaluate_alerts(other, settings, at=AT)

    try:
        # The first evaluator's firing transaction, held open after it re-read and stamped.
        thread = threading.Thread(target=evaluate_elsewhere)
        with db.transaction():
            assert db.alerts.last_fired_at([rule["rule_id"]]) == {rule["rule_id"]: None}
            db.alerts.record_firing({
                "alert_id": "alert_first", "rule_id": rule["rule_id"], "rule_name": "errors",
                "metric": "error_rate", "operator": ">", "threshold": 10.0, "value": 100.0,
                "window_minutes": 60, "agent_filter": None, "fired_at": format_ts(AT),
                "acknowledged": 0, "acknowledged_at": None, "resolved_at": None})
            thread.start()
            thread.join(1.0)
            assert thread.is_alive(), "the second evaluation fired without waiting for the first"
        thread.join(30)
        assert not thread.is_alive()
    finally:
        other.close()
    (result,) = results["body"]["results"]
    assert result["status"] == "cooldown" and results["body"]["fired"] == 0
    assert alerts.list_alert_events(db)["total"] == 1


def test_removing_a_rule_while_it_fires_cancels_the_new_deliveries_too(db, db_url, backend, settings):
    from obsctl.services import webhooks

    rule = alert_rules.create_rule(db, {"name": "errors", "metric": "error_rate", "operator": ">",
                                        "threshold": 10})
    hook = webhooks.create_webhook(db, settings, {"url": "https://93.184.215.14/hook"})
    other = open_store(db_url, backend)
    thread = threading.Thread(target=alert_rules.delete_rule, args=(other, rule["rule_id"]))
    try:
        with db.transaction():  # a firing of the rule, held open
            db.alerts.last_fired_at([rule["rule_id"]])
            db.alerts.record_firing({
                "alert_id": "alert_first", "rule_id": rule["rule_id"], "rule_name": "errors",
                "metric": "error_rate", "operator": ">", "threshold": 10.0, "value": 100.0,
                "window_minutes": 60, "agent_filter": None, "fired_at": format_ts(AT),
                "acknowledged": 0, "acknowledged_at": None, "resolved_at": None})
            db.webhooks.insert_deliveries([{
                "delivery_id": "msg_1", "webhook_id": hook["webhook_id"], "alert_id": "alert_first",
                "event_type": "alert.fired", "payload": "{}", "status": "pending", "attempts": 0,
                "last_error": None, "last_status_code": None, "next_attempt_at": format_ts(AT),
                "created_at": format_ts(AT), "delivered_at": None}])
            thread.start()
            thread.join(1.0)
            assert thread.is_alive(), "the rule was removed under a firing in progress"
        thread.join(30)
        assert not thread.is_alive()
    finally:
        other.close()
    assert db.alerts.get_rule(rule["rule_id"]) is None
    (delivery,) = webhooks.list_deliveries(db)["deliveries"]
    assert delivery["status"] == "failed"
    assert delivery["last_error"] == f"cancelled: alert rule {rule['rule_id']} was removed"

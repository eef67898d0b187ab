"""An alert's life in every integration: it fires, may be acknowledged, and is resolved when an
evaluation finds its rule's condition gone; each step reaches the webhooks of its rule, with
the payloads captured by a real receiver."""

from __future__ import annotations

import json
from datetime import timedelta

import orjson
import pytest

from obsctl.errors import InvalidInput
from obsctl.services import alerts, webhooks
from obsctl.services.alerts import rules as alert_rules
from obsctl.services.ingest import ingest_events
from obsctl.services.webhooks.delivery import deliver_due
from obsctl.services.webhooks.payloads import SLACK_HEADER_MAX, SLACK_TEXT_MAX
from obsctl.timeutil import iso_minus
from tests.conftest import event
from tests.obsctl.webhooks.test_webhooks import AT, fire_one

# The Events API v2 fields of each action (developer.pagerduty.com, "Send an Event"): a
# trigger carries a payload; acknowledge and resolve name the incident by its dedup_key.
PD_TRIGGER_KEYS = {"routing_key", "event_action", "dedup_key", "client", "payload"}
PD_PAYLOAD_REQUIRED = {"summary", "source", "severity"}
PD_SEVERITIES = {"critical", "error", "warning", "info"}


def _recover(db, settings, minutes: int = 1) -> dict:
    """Raise the rule's threshold out of reach and evaluate again: the condition is gone."""
    rule = alert_rules.list_rules(db)["rules"][0]
    alert_rules.update_rule(db, rule["rule_id"], {"threshold": 100})
    return alerts.evaluate_alerts(db, settings, at=AT + timedelta(minutes=minutes))


def _bodies(captured) -> list[dict]:
    return [json.loads(r["body"]) for r in captured.accepted]


def test_pagerduty_trigger_acknowledge_resolve_share_one_dedup_key(db, private_ok, receiver):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "format": "pagerduty",
                                             "routing_key": "R0UTING"})
    rule = fire_one(db, private_ok)
    alert_id = alerts.list_alert_events(db)["events"][0]["alert_id"]
    alerts.acknowledge_alert(db, alert_id, at=AT + timedelta(seconds=30))
    alerts.acknowledge_alert(db, alert_id, at=AT + timedelta(seconds=40))  # again: nothing more is sent
    body = _recover(db, private_ok)
    assert body["results"][0] | {"value": None} == {**body["results"][0], "status": "resolved",
                                                    "alert_id": alert_id, "value": None}
    deliver_due(db, private_ok, at=AT + timedelta(minutes=2))
    trigger, ack, resolve = _bodies(receiver)
    key = f"obsctl-{rule['rule_id']}"
    assert set(trigger) == PD_TRIGGER_KEYS and trigger["event_action"] == "trigger"
    assert set(trigger["payload"]) >= PD_PAYLOAD_REQUIRED and trigger["payload"]["severity"] in PD_SEVERITIES
    assert len(trigger["payload"]["summary"]) <= 1024
    assert ack == {"routing_key": "R0UTING", "event_action": "acknowledge", "dedup_key": key}
    assert resolve == {"routing_key": "R0UTING", "event_action": "resolve", "dedup_key": key}
    assert trigger["dedup_key"] == key
    log = webhooks.list_deliveries(db)["deliveries"]
    assert sorted(d["event_type"] for d in log) == ["alert.acknowledged", "alert.fired", "alert.resolved"]
    assert {d["status"] for d in log} == {"delivered"}


def test_generic_webhooks_hear_resolved_and_acknowledged(db, private_ok, receiver):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url})
    fire_one(db, private_ok)
    alert_id = alerts.list_alert_events(db)["events"][0]["alert_id"]
    acked = alerts.acknowledge_alert(db, alert_id, at=AT + timedelta(minutes=1))
    _recover(db, private_ok, minutes=5)
    deliver_due(db, private_ok, at=AT + timedelta(minutes=6))
    fired, ack, resolved = _bodies(receiver)
    assert [fired["type"], ack["type"], resolved["type"]] == ["alert.fired", "alert.acknowledged", "alert.resolved"]
    assert ack["alert"]["acknowledged_at"] == acked["acknowledged_at"] and ack["alert"]["resolved_at"] is None
    assert resolved["alert"]["alert_id"] == alert_id
    assert resolved["alert"]["resolved_at"] == "2026-01-01T12:05:00.000Z"
    assert resolved["alert"]["firing_since"] == "2026-01-01T12:00:00.000Z"
    assert resolved["alert"]["resolved_value"] == 100.0
    stored = alerts.list_alert_events(db)["events"][0]
    assert stored["resolved_at"] == "2026-01-01T12:05:00.000Z"


def test_slack_says_still_firing_then_recovered(db, private_ok, receiver):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "format": "slack"})
    rule = fire_one(db, private_ok, cooldown_minutes=10)
    # Still true after the cooldown: fires again, and Slack says since when.
    ingest_events(db, [event("s2", "error", agent_name="alpha", timestamp="2026-01-01T12:14:00Z")])
    again = alerts.evaluate_alerts(db, private_ok, at=AT + timedelta(minutes=15))
    assert again["results"][0]["status"] == "fired"
    alert_rules.update_rule(db, rule["rule_id"], {"threshold": 100})
    alerts.evaluate_alerts(db, private_ok, at=AT + timedelta(minutes=20))
    deliver_due(db, private_ok, at=AT + timedelta(minutes=21))
    first, second, recovered = _bodies(receiver)
    assert first["text"].startswith("[obsctl] errors: error_rate = 100% &gt; 10% over the last 1 hour")
    assert second["text"].startswith("Still firing since 2026-01-01T12:00:00.000Z: [obsctl] errors")
    assert recovered["blocks"][0]["text"]["text"] == "Resolved: errors"
    assert recovered["text"] == ("[obsctl] resolved: errors: error_rate = 100%, no longer &gt; 100% over the "
                                 "last 1 hour (firing since 2026-01-01T12:00:00.000Z)")
    for body in (first, second, recovered):
        assert len(body["text"]) <= SLACK_TEXT_MAX
        assert len(body["blocks"][0]["text"]["text"]) <= SLACK_HEADER_MAX
    # Both alerts of the rule are resolved, the delivery names the latest.
    assert all(a["resolved_at"] for a in alerts.list_alert_events(db)["events"])


def test_no_data_and_a_quiet_rule_resolve_nothing(db, private_ok, receiver):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url})
    rule = fire_one(db, private_ok)
    # No events in the window at all: no data is not a recovery.
    later = alerts.evaluate_alerts(db, private_ok, at=AT + timedelta(days=1))
    assert later["results"][0]["status"] == "no_data"
    assert alerts.list_alert_events(db)["events"][0]["resolved_at"] is None
    # A rule that never fired has nothing to resolve.
    quiet = alert_rules.create_rule(db, {"name": "quiet", "metric": "error_rate", "operator": ">",
                                         "threshold": 100})
    body = alerts.evaluate_alerts(db, private_ok, at=AT + timedelta(minutes=1))
    statuses = {r["rule_id"]: r["status"] for r in body["results"]}
    # The first rule still holds (in its cooldown): still firing, not resolved.
    assert statuses[quiet["rule_id"]] == "ok" and statuses[rule["rule_id"]] == "cooldown"


def test_the_cli_prints_resolved_lines(db, cli):
    ingest_events(db, [event("s", "error", agent_name="alpha", timestamp=iso_minus(timedelta(minutes=1)))])
    rule = alert_rules.create_rule(db, {"name": "errors", "metric": "error_rate", "operator": ">",
                                        "threshold": 10})
    fired = cli("alerts", "evaluate", "--exit-code")
    assert fired.exit_code == 3 and fired.stdout.startswith("FIRED alert_")
    alert_rules.update_rule(db, rule["rule_id"], {"threshold": 100})
    result = cli("alerts", "evaluate", "--exit-code")
    assert result.exit_code == 0  # a resolution is not a firing
    (line,) = result.stdout.splitlines()
    assert line.startswith("RESOLVED alert_") and line.endswith("errors: error_rate = 100, no longer > 100")
    assert cli("alerts", "evaluate").stdout == ""  # resolved once


@pytest.mark.parametrize("fmt", ["generic", "slack", "pagerduty"])
def test_acknowledging_a_resolved_alert_sends_nothing(db, private_ok, receiver, fmt):
    extra = {"routing_key": "R0UTING"} if fmt == "pagerduty" else {}
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "format": fmt, **extra})
    fire_one(db, private_ok)
    _recover(db, private_ok)
    alerts.acknowledge_alert(db, alerts.list_alert_events(db)["events"][0]["alert_id"], at=AT + timedelta(minutes=1))
    deliver_due(db, private_ok, at=AT + timedelta(minutes=2))
    assert len(receiver.accepted) == 2  # fired, resolved


# --- replay: evaluating a past moment without recording anything ---------------------------


def _history(db) -> dict:
    """Errors at 11:59 on 2026-01-01 and a success at 13:30; an error_rate rule over 60 min."""
    ingest_events(db, [event("s", "error", agent_name="alpha", timestamp="2026-01-01T11:59:00Z"),
                       event("t", "llm_call", agent_name="alpha", timestamp="2026-01-01T13:30:00Z")])
    return alert_rules.create_rule(db, {"name": "errors", "metric": "error_rate", "operator": ">",
                                        "threshold": 10})


def test_a_dry_run_at_a_past_moment_records_and_sends_nothing(db, private_ok, receiver):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url})
    rule = _history(db)
    body = alerts.evaluate_alerts(db, private_ok, at=AT, dry_run=True)
    assert (body["dry_run"], body["would_fire"], body["fired"]) == (True, 1, 0)
    assert body["results"][0]["status"] == "would_fire" and "alert_id" not in body["results"][0]
    assert alerts.list_alert_events(db)["total"] == 0
    assert webhooks.list_deliveries(db)["total"] == 0
    assert alert_rules.get_rule(db, rule["rule_id"])["last_fired_at"] is None
    # Later, the rule really fires; a dry run after the errors left the window would resolve it.
    alerts.evaluate_alerts(db, private_ok, at=AT)
    later = alerts.evaluate_alerts(db, private_ok, at=AT + timedelta(minutes=95), dry_run=True)
    assert later["results"][0]["status"] == "would_resolve"
    assert alerts.list_alert_events(db)["events"][0]["resolved_at"] is None
    # A dry run before the firing ignores it (no cooldown from the future).
    assert alerts.evaluate_alerts(db, private_ok, at=AT - timedelta(seconds=30),
                                  dry_run=True)["results"][0]["status"] == "would_fire"


def test_the_cli_replays_with_dry_run_and_at(db, cli):
    _history(db)
    result = cli("alerts", "evaluate", "--dry-run", "--at", "2026-01-01T12:00:00Z", "--exit-code")
    assert result.exit_code == 3
    assert result.stdout == "WOULD FIRE errors: error_rate = 100 > 10\n"
    quiet = cli("alerts", "evaluate", "--dry-run", "--at", "2026-01-01T14:00:00Z", "--json")
    assert orjson.loads(quiet.stdout)["results"][0]["status"] == "ok"
    assert cli("alerts", "events", "--json").stdout.count('"alert_id"') == 0
    needs = cli("alerts", "evaluate", "--at", "2026-01-01T12:00:00Z")
    assert needs.exit_code == 2 and "--at needs --dry-run" in needs.stderr
    bad = cli("alerts", "evaluate", "--dry-run", "--at", "noon")
    assert bad.exit_code == 2 and "--at must be an ISO 8601 time" in bad.stderr


def test_http_dry_run(db, client):
    _history(db)
    body = client.post("/alerts/evaluate?dry_run=true&at=2026-01-01T12:00:00Z").get_json()
    assert body["would_fire"] == 1 and body["dry_run"] is True
    assert client.post("/alerts/evaluate?at=2026-01-01T12:00:00Z").status_code == 400
    assert client.post("/alerts/evaluate?dry_run=true&at=noon").status_code == 400
    assert client.get("/alerts/events").get_json()["total"] == 0


# --- a rule's severity -------------------------------------------------------------------------


@pytest.mark.parametrize("severity", ["critical", "error", "warning", "info"])
def test_a_rules_severity_is_pagerdutys(db, private_ok, receiver, severity):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "format": "pagerduty",
                                             "routing_key": "R0UTING"})
    rule = fire_one(db, private_ok, severity=severity.upper() if severity == "error" else severity)
    assert rule["severity"] == severity
    deliver_due(db, private_ok, at=AT)
    (trigger,) = _bodies(receiver)
    assert trigger["payload"]["severity"] == severity
    assert (trigger["payload"]["class"], trigger["payload"]["component"], trigger["payload"]["group"]) == \
           ("error_rate", "all-agents", "obsctl")


def test_severity_is_checked_and_changed_like_any_field(db, cli):
    made = cli("alerts", "rules", "add", "--name", "e", "--metric", "error_rate", "--operator", ">",
               "--threshold", "5", "--json")
    rule = orjson.loads(made.stdout)
    assert rule["severity"] == "warning"
    changed = cli("alerts", "rules", "update", rule["rule_id"], "--severity", "critical", "--json")
    assert orjson.loads(changed.stdout)["severity"] == "critical"
    bad = cli("alerts", "rules", "update", rule["rule_id"], "--severity", "urgent")
    assert bad.exit_code == 2 and "severity must be one of critical, error, warning, info" in bad.stderr
    with pytest.raises(InvalidInput, match="severity must be one of"):
        alert_rules.create_rule(db, {"name": "x", "metric": "error_rate", "operator": ">", "threshold": 1,
                                     "severity": 3})


def test_a_pagerduty_test_says_test_and_closes_its_incident(db, private_ok, receiver):
    hook = webhooks.create_webhook(db, private_ok, {"url": receiver.url, "format": "pagerduty",
                                                    "routing_key": "R0UTING"})
    row = webhooks.send_webhook_test(db, private_ok, hook["webhook_id"])
    assert row["status"] == "delivered" and row["last_error"] is None
    trigger, resolve = _bodies(receiver)
    key = f"obsctl-test-{hook['webhook_id']}"
    assert trigger["event_action"] == "trigger" and trigger["dedup_key"] == key
    assert trigger["payload"]["summary"].startswith("TEST: [obsctl] obsctl webhook test")
    assert trigger["payload"]["severity"] == "info"
    assert resolve == {"routing_key": "R0UTING", "event_action": "resolve", "dedup_key": key}
    assert len(webhooks.list_deliveries(db)["deliveries"]) == 1  # one test in the log


@pytest.mark.parametrize(("metric", "value", "shown"), [
    ("error_rate", 12.5, "12.5%"), ("tool_error_rate", 0.0, "0%"), ("p95_duration_ms", 850.0, "850 ms"),
    ("avg_cost", 0.4213, "$0.4213"), ("avg_cost", 7.2, "$7.20"), ("avg_tokens", 1200.0, "1200 tokens"),
    ("session_count", 3, "3 sessions"), ("error_rate", None, "no data")])
def test_slack_values_carry_their_unit(metric, value, shown):
    from obsctl.services.webhooks.payloads import with_unit

    assert with_unit(metric, value) == shown


@pytest.mark.parametrize(("minutes", "words"), [
    (1, "1 minute"), (45, "45 minutes"), (60, "1 hour"), (90, "90 minutes"), (1440, "1 day"),
    (2880, "2 days"), (180, "3 hours")])
def test_windows_in_words(minutes, words):
    from obsctl.services.webhooks.payloads import duration_words

    assert duration_words(minutes) == words


def test_with_a_public_url_pagerduty_links_the_rule_and_the_failing_session(db, private_ok, receiver):
    from dataclasses import replace

    from obsctl.config import Settings

    settings = replace(private_ok, public_url="https://obsctl.example.com")
    webhooks.create_webhook(db, settings, {"url": receiver.url, "format": "pagerduty", "routing_key": "R0UTING"})
    rule = fire_one(db, settings)
    deliver_due(db, settings, at=AT)
    (trigger,) = _bodies(receiver)
    assert trigger["links"] == [
        {"href": f"https://obsctl.example.com/alerts/events?rule_id={rule['rule_id']}", "text": "the rule's alerts"},
        {"href": "https://obsctl.example.com/triage/s", "text": "triage of session s"},
        {"href": "https://obsctl.example.com/sessions/s", "text": "session s"}]
    assert Settings.from_env({"OBSCTL_PUBLIC_URL": "https://x.example/obsctl/"}).public_url == "https://x.example/obsctl"
    with pytest.raises(InvalidInput, match="OBSCTL_PUBLIC_URL must be an http"):
        Settings.from_env({"OBSCTL_PUBLIC_URL": "obsctl.example.com"})


def test_without_a_public_url_there_are_no_links(db, private_ok, receiver):
    webhooks.create_webhook(db, private_ok, {"url": receiver.url, "format": "pagerduty", "routing_key": "R0UTING"})
    fire_one(db, private_ok)
    deliver_due(db, private_ok, at=AT)
    (trigger,) = _bodies(receiver)
    assert "links" not in trigger

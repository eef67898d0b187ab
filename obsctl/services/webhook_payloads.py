"""Webhook bodies: generic JSON, Slack (text + blocks), PagerDuty Events API v2."""

from __future__ import annotations

FORMATS = ("generic", "slack", "pagerduty")
PAGERDUTY_SEVERITY = "warning"


def summary(alert: dict) -> str:
    """One line describing a fired alert (also what `obsctl alerts evaluate` prints)."""
    scope = f" for agent {alert['agent_filter']}" if alert.get("agent_filter") else ""
    return (f"[obsctl] {alert['rule_name']}: {alert['metric']} = {_num(alert['value'])} "
            f"{alert['operator']} {_num(alert['threshold'])} over the last "
            f"{alert['window_minutes']} min{scope}")


def _num(value) -> str:
    if value is None:
        return "null"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def build_payload(webhook: dict, event_type: str, alert: dict, rule: dict) -> dict:
    """The body for one webhook in its format; `event_type` is alert.fired or webhook.test."""
    fmt = webhook["format"]
    if fmt == "slack":
        return _slack(event_type, alert)
    if fmt == "pagerduty":
        return _pagerduty(webhook, event_type, alert)
    return {"type": event_type, "alert": alert, "rule": rule}


def _slack(event_type: str, alert: dict) -> dict:
    text = summary(alert)
    if event_type != "alert.fired":
        text = f"[obsctl test] {text}"
    fields = [
        {"type": "mrkdwn", "text": f"*Metric*\n{alert['metric']}"},
        {"type": "mrkdwn", "text": f"*Value*\n{_num(alert['value'])}"},
        {"type": "mrkdwn", "text": f"*Condition*\n{alert['operator']} {_num(alert['threshold'])}"},
        {"type": "mrkdwn", "text": f"*Window*\n{alert['window_minutes']} min"},
        {"type": "mrkdwn", "text": f"*Agent*\n{alert.get('agent_filter') or 'all agents'}"},
        {"type": "mrkdwn", "text": f"*Fired at*\n{alert['fired_at']}"},
    ]
    return {
        "text": text,
        "blocks": [
            {"type": "header", "text": {"type": "plain_text", "text": f"Alert: {alert['rule_name']}"[:150]}},
            {"type": "section", "text": {"type": "mrkdwn", "text": text}},
            {"type": "section", "fields": fields},
            {"type": "context", "elements": [
                {"type": "mrkdwn", "text": f"alert `{alert['alert_id']}` · rule `{alert['rule_id']}` · "
                                           f"acknowledge with `obsctl alerts ack {alert['alert_id']}`"}]},
        ],
    }


def _pagerduty(webhook: dict, event_type: str, alert: dict) -> dict:
    # One dedup key per rule: repeated firings of a rule update its open incident instead
    # of paging again; a test event gets its own key.
    dedup = f"obsctl-{alert['rule_id']}" if event_type == "alert.fired" else f"obsctl-test-{webhook['webhook_id']}"
    return {
        "routing_key": webhook.get("routing_key"),
        "event_action": "trigger",
        "dedup_key": dedup,
        "client": "obsctl",
        "payload": {
            "summary": summary(alert)[:1024],
            "source": f"obsctl/{alert.get('agent_filter') or 'all-agents'}",
            "severity": "info" if event_type != "alert.fired" else PAGERDUTY_SEVERITY,
            "timestamp": alert["fired_at"],
            "component": alert["metric"],
            "custom_details": alert,
        },
    }


def sample_alert(webhook_id: str, fired_at: str) -> tuple[dict, dict]:
    """A made-up alert and rule for `POST /webhooks/:id/test`."""
    rule = {"rule_id": "rule_test", "name": "obsctl webhook test", "metric": "error_rate",
            "operator": ">", "threshold": 5.0, "window_minutes": 60, "cooldown_minutes": 15,
            "agent_filter": None, "enabled": True, "created_at": fired_at, "updated_at": fired_at,
            "last_fired_at": fired_at}
    alert = {"alert_id": f"alert_test_{webhook_id}", "rule_id": "rule_test",
             "rule_name": rule["name"], "metric": "error_rate", "operator": ">", "threshold": 5.0,
             "value": 12.5, "window_minutes": 60, "agent_filter": None, "fired_at": fired_at,
             "acknowledged": False, "acknowledged_at": None}
    return alert, rule

"""Webhook bodies: generic JSON, Slack (text + blocks), PagerDuty Events API v2.

Slack reads `&`, `<` and `>` as control characters in every text object (`<!channel>` pings
a channel, `<url|label>` makes a link, a line starting with `>` is a quote), and rule names,
agent names and metric values are not ours to trust: every value placed in Slack text is
escaped (&amp; &lt; &gt;) and every text is kept within Slack's documented limits, cut on a
character boundary that never splits an escape.
"""

from __future__ import annotations

PAGERDUTY_SEVERITY = "warning"
PAGERDUTY_ACTIONS = {"alert.resolved": "resolve", "alert.acknowledged": "acknowledge"}
PAGERDUTY_SUMMARY_MAX = 1024  # Events API v2: payload.summary
# Slack Block Kit limits (characters): header text, section text, each section field,
# a text object in a context block; the top-level text is kept to the section's length.
SLACK_HEADER_MAX = 150
SLACK_SECTION_MAX = 3000
SLACK_FIELD_MAX = 2000
SLACK_CONTEXT_MAX = 3000
SLACK_TEXT_MAX = 3000
_ELLIPSIS = "…"
_SLACK_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def slack_escape(value) -> str:
    """A value as literal Slack text: & < > become &amp; &lt; &gt;."""
    return str(value).translate(_SLACK_ESCAPES)


def fit(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters (ending with an ellipsis when cut), never in
    the middle of an &...; escape."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    amp = cut.rfind("&")
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    return cut + _ELLIPSIS


def summary(alert: dict, readable: bool = False) -> str:
    """One line describing a fired alert; `readable` (Slack's) writes values in their unit
    (`12.5%`, `$0.42`, `850 ms`) and the window in minutes, hours or days."""
    scope = f" for agent {alert['agent_filter']}" if alert.get("agent_filter") else ""
    value, threshold, window = _shown(alert["metric"], alert["value"], alert["threshold"],
                                      alert["window_minutes"], readable)
    return (f"[obsctl] {alert['rule_name']}: {alert['metric']} = {value} "
            f"{alert['operator']} {threshold} over the last {window}{scope}")


def _shown(metric: str, value, threshold, window_minutes: int, readable: bool) -> tuple[str, str, str]:
    if not readable:
        return _num(value), _num(threshold), f"{window_minutes} min"
    return with_unit(metric, value), with_unit(metric, threshold), duration_words(window_minutes)


def with_unit(metric: str, value) -> str:
    """A metric's value as people read it: percent, dollars, milliseconds, tokens, sessions."""
    if value is None:
        return "no data"
    if metric.endswith("_rate"):
        return f"{_num(value)}%"
    if metric.endswith("_ms"):
        return f"{_num(value)} ms"
    if metric == "avg_cost":
        return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"
    if metric == "avg_tokens":
        return f"{_num(value)} tokens"
    if metric == "session_count":
        return f"{_num(value)} sessions"
    return _num(value)


def duration_words(minutes: int) -> str:
    """`45 minutes`, `1 hour`, `90 minutes`, `24 hours`, `7 days`: the largest whole unit."""
    for size, unit in ((1440, "day"), (60, "hour")):
        if minutes >= size and minutes % size == 0:
            count = minutes // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def _num(value) -> str:
    if value is None:
        return "null"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def resolved_summary(alert: dict, rule: dict, readable: bool = False) -> str:
    """One line saying a rule's alert is over: the value now, against the rule's condition now
    (it may have been changed since the alert fired)."""
    scope = f" for agent {rule['agent_filter']}" if rule.get("agent_filter") else ""
    value, threshold, window = _shown(rule["metric"], alert.get("resolved_value"), rule["threshold"],
                                      rule["window_minutes"], readable)
    return (f"[obsctl] resolved: {rule['name']}: {rule['metric']} = {value}, no longer "
            f"{rule['operator']} {threshold} over the last {window}{scope} (firing since "
            f"{alert.get('firing_since') or alert['fired_at']})")


def build_payload(webhook: dict, event_type: str, alert: dict, rule: dict) -> dict:
    """The body for one webhook in its format; `event_type` is alert.fired, alert.resolved,
    alert.acknowledged or webhook.test."""
    fmt = webhook["format"]
    if fmt == "slack":
        return _slack(event_type, alert, rule)
    if fmt == "pagerduty":
        return _pagerduty(webhook, event_type, alert, rule)
    return {"type": event_type, "alert": alert, "rule": rule}


def _slack(event_type: str, alert: dict, rule: dict) -> dict:
    text = slack_escape(summary(alert, readable=True))
    header = "Alert"
    since = alert.get("firing_since")
    if event_type == "alert.resolved":
        header, text = "Resolved", slack_escape(resolved_summary(alert, rule, readable=True))
    elif event_type == "alert.acknowledged":
        header, text = "Acknowledged", f"Acknowledged at {slack_escape(alert.get('acknowledged_at'))}: {text}"
    elif event_type == "alert.fired" and since and since != alert["fired_at"]:
        text = f"Still firing since {slack_escape(since)}: {text}"
    elif event_type != "alert.fired":
        text = f"[obsctl test] {text}"

    def field(label: str, value) -> dict:
        return {"type": "mrkdwn", "text": fit(f"*{label}*\n{slack_escape(value)}", SLACK_FIELD_MAX)}

    alert_id, rule_id = slack_escape(alert["alert_id"]), slack_escape(alert["rule_id"])
    context = (f"alert `{alert_id}` · rule `{rule_id}` · "
               f"acknowledge with `obsctl alerts ack {alert_id}`")
    failing = [f"{f['severity']}: {slack_escape(f['title'])}" for f in alert.get("failures") or []]
    top = alert.get("contributors") or {}
    weighing = [f"{slack_escape(c['session_id'])} ({slack_escape(c.get('agent_name') or '-')}): "
                f"{c['tokens']:,} tokens, slowest {with_unit('avg_duration_ms', c['slowest_ms'])}"
                for c in top.get("sessions", [])]
    return {
        "text": fit(text, SLACK_TEXT_MAX),
        "blocks": [
            {"type": "header", "text": {"type": "plain_text",
                                        "text": fit(f"{header}: {slack_escape(alert['rule_name'])}",
                                                    SLACK_HEADER_MAX)}},
            {"type": "section", "text": {"type": "mrkdwn", "text": fit(text, SLACK_SECTION_MAX)}},
            {"type": "section", "fields": [
                field("Metric", alert["metric"]),
                field("Value", with_unit(alert["metric"], alert["value"])),
                field("Condition", f"{alert['operator']} {with_unit(alert['metric'], alert['threshold'])}"),
                field("Window", duration_words(alert["window_minutes"])),
                field("Agent", alert.get("agent_filter") or "all agents"),
                field("Fired at", alert["fired_at"]),
            ]},
            *([{"type": "section", "text": {"type": "mrkdwn",
                                            "text": fit("*Failing*\n" + "\n".join(failing), SLACK_SECTION_MAX)}}]
              if failing else []),
            *([{"type": "section", "text": {"type": "mrkdwn",
                                            "text": fit(f"*Sessions with {top['why']}*\n" + "\n".join(weighing),
                                                        SLACK_SECTION_MAX)}}]
              if weighing else []),
            {"type": "context", "elements": [
                {"type": "mrkdwn", "text": fit(context, SLACK_CONTEXT_MAX)}]},
        ],
    }


def _pagerduty(webhook: dict, event_type: str, alert: dict, rule: dict) -> dict:
    # One dedup key per rule: repeated firings of a rule update its open incident instead
    # of paging again, and the rule's resolve or acknowledge closes or holds that incident;
    # a test event gets its own key.
    dedup = (f"obsctl-test-{webhook['webhook_id']}" if event_type == "webhook.test"
             else f"obsctl-{alert['rule_id']}")
    if event_type in PAGERDUTY_ACTIONS:
        # Events API v2: resolve and acknowledge name the incident by its dedup_key alone.
        return {"routing_key": webhook.get("routing_key"), "event_action": PAGERDUTY_ACTIONS[event_type],
                "dedup_key": dedup}
    links = {"links": alert["links"]} if alert.get("links") else {}
    return {
        **links,
        "routing_key": webhook.get("routing_key"),
        "event_action": "trigger",
        "dedup_key": dedup,
        "client": "obsctl",
        "payload": {
            "summary": fit(("TEST: " if event_type == "webhook.test" else "") + summary(alert),
                           PAGERDUTY_SUMMARY_MAX),
            "source": f"obsctl/{alert.get('agent_filter') or 'all-agents'}",
            "severity": "info" if event_type != "alert.fired" else rule.get("severity") or PAGERDUTY_SEVERITY,
            "timestamp": alert["fired_at"],
            "component": alert.get("agent_filter") or "all-agents",
            "group": "obsctl",
            "class": alert["metric"],
            "custom_details": alert,
        },
    }


def pagerduty_test_resolve(webhook: dict) -> dict:
    """The resolve that closes the incident a PagerDuty test trigger opened."""
    return {"routing_key": webhook.get("routing_key"), "event_action": "resolve",
            "dedup_key": f"obsctl-test-{webhook['webhook_id']}"}


def sample_alert(webhook_id: str, fired_at: str) -> tuple[dict, dict]:
    """A made-up alert and rule for `POST /webhooks/:id/test`."""
    rule = {"rule_id": "rule_test", "name": "obsctl webhook test", "metric": "error_rate",
            "operator": ">", "threshold": 5.0, "window_minutes": 60, "cooldown_minutes": 15,
            "agent_filter": None, "enabled": True, "severity": "info", "created_at": fired_at, "updated_at": fired_at,
            "last_fired_at": fired_at}
    alert = {"alert_id": f"alert_test_{webhook_id}", "rule_id": "rule_test",
             "rule_name": rule["name"], "metric": "error_rate", "operator": ">", "threshold": 5.0,
             "value": 12.5, "window_minutes": 60, "agent_filter": None, "fired_at": fired_at,
             "acknowledged": False, "acknowledged_at": None, "resolved_at": None}
    return alert, rule

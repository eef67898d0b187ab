"""Evaluating alert rules, and the alert events they produce (list, acknowledge).

`evaluate_alerts` computes every enabled rule's metric (one scan per window and agent, see
services/metrics.py), then fires in one short write transaction: each firing writes its alert
event, stamps the rule's last_fired_at and queues one webhook delivery per matching webhook
(the outbox), all committed together. Deliveries are attempted afterwards, so a receiver that
is down or slow never loses an alert, never holds the write lock and never delays the result.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from urllib.parse import quote

from obsctl.errors import InvalidInput, NotFound
from obsctl.jsonutil import describe_value
from obsctl.models.alerts import EVENTS_LIMIT
from obsctl.services import webhooks
from obsctl.services.alerts.rules import rule_view
from obsctl.services.metrics import compute_metric_groups
from obsctl.services.sessions.lifecycle import complete_idle_sessions
from obsctl.store import Store
from obsctl.timeutil import format_ts, normalize_ts, now, now_iso, parse_ts

EQUALITY_TOLERANCE = 1e-9


def compare(value: float, operator: str, threshold: float) -> bool:
    """Apply a rule operator; == and != use an absolute tolerance of 1e-9."""
    if operator == "<":
        return value < threshold
    if operator == ">":
        return value > threshold
    if operator == "<=":
        return value <= threshold
    if operator == ">=":
        return value >= threshold
    if operator == "==":
        return abs(value - threshold) <= EQUALITY_TOLERANCE
    if operator == "!=":
        return abs(value - threshold) > EQUALITY_TOLERANCE
    raise ValueError(f"unknown operator {operator!r}")


def alert_view(row: dict) -> dict:
    """The public form of an alert event."""
    return {
        "alert_id": row["alert_id"],
        "rule_id": row["rule_id"],
        "rule_name": row["rule_name"],
        "metric": row["metric"],
        "operator": row["operator"],
        "threshold": row["threshold"],
        "value": row["value"],
        "window_minutes": row["window_minutes"],
        "agent_filter": row["agent_filter"],
        "fired_at": row["fired_at"],
        "acknowledged": bool(row["acknowledged"]),
        "acknowledged_at": row["acknowledged_at"],
        "resolved_at": row["resolved_at"],
    }


def parse_moment(text: str, name: str) -> datetime:
    """An ISO 8601 time (no offset: UTC) as an aware datetime; InvalidInput otherwise."""
    try:
        return parse_ts(normalize_ts(text.strip()))
    except (ValueError, AttributeError):
        raise InvalidInput(f"{name} must be an ISO 8601 time, e.g. 2026-03-10T19:00:00Z; "
                           f"got {describe_value(text)}") from None


def _in_cooldown(rule: dict, last_fired: str | None, at: datetime) -> bool:
    if not last_fired or rule["cooldown_minutes"] <= 0:
        return False
    return at - parse_ts(last_fired) < timedelta(minutes=rule["cooldown_minutes"])


def evaluate_alerts(store: Store, settings, *, at: datetime | None = None, dry_run: bool = False) -> dict:
    """Evaluate every enabled rule now (or `at`), fire those whose condition holds.

    Returns `{"evaluated_at", "evaluated", "fired", "results": [...]}`; each result has the
    rule's metric value and a status: fired, ok, cooldown, no_data (no data in the window;
    never fires, never resolves) or resolved (the rule's alerts were firing and its condition
    no longer holds: they are resolved now). Deliveries of the alerts fired (alert.fired) and
    resolved (alert.resolved) are queued, not sent: the caller runs a delivery pass
    (services/webhooks/delivery.deliver_due) or wakes the background sender.

    With `dry_run` nothing is recorded or queued: a rule that would fire is `would_fire` and
    one that would be resolved `would_resolve`, and the body has `"dry_run": true`. With `at`
    (a past moment, to tune thresholds on history) the windows end at `at`; a cooldown counts
    only firings before it.
    """
    if at is None and not dry_run:
        # Duration metrics and session counts see sessions that went idle as ended.
        complete_idle_sessions(store, getattr(settings, "session_idle_timeout", None))
    at = at or now()
    evaluated_at = format_ts(at)
    rules = store.alerts.list_rules(enabled_only=True)
    windows = {r["rule_id"]: format_ts(at - timedelta(minutes=r["window_minutes"])) for r in rules}
    queries = [(r["metric"], windows[r["rule_id"]], evaluated_at, r["agent_filter"]) for r in rules]
    values = compute_metric_groups(store, queries)

    results, candidates = [], []
    for rule, query in zip(rules, queries):
        value = values[query]
        result = {"rule_id": rule["rule_id"], "name": rule["name"], "metric": rule["metric"],
                  "operator": rule["operator"], "threshold": rule["threshold"], "value": value,
                  "status": "no_data" if value is None else "ok"}
        results.append(result)
        if value is not None and compare(value, rule["operator"], rule["threshold"]):
            candidates.append((rule, result))

    firing = {rule["rule_id"] for rule, _ in candidates}
    recovered = [(rule, result) for rule, result in zip(rules, results)
                 if result["status"] == "ok" and rule["rule_id"] not in firing]
    if dry_run:
        _rehearse(store, candidates, recovered, at)
    else:
        if candidates:
            _fire(store, candidates, at, _failures(store, candidates, at), getattr(settings, "public_url", None),
                  _contributors(store, candidates, at))
        if recovered:
            _resolve(store, recovered, at)
    fired = sum(1 for r in results if r["status"] == "fired")
    body = {"evaluated_at": evaluated_at, "evaluated": len(results), "fired": fired,
            "results": results}
    if dry_run:
        body["dry_run"] = True
        body["would_fire"] = sum(1 for r in results if r["status"] == "would_fire")
    return body


def _rehearse(store: Store, candidates: list, recovered: list, at: datetime) -> None:
    """The statuses an evaluation at `at` would give, without recording anything."""
    last = store.alerts.last_fired_at([rule["rule_id"] for rule, _ in candidates])
    for rule, result in candidates:
        fired = last.get(rule["rule_id"])
        before = fired if fired and parse_ts(fired) <= at else None
        result["status"] = "cooldown" if _in_cooldown(rule, before, at) else "would_fire"
    open_rules = {a["rule_id"] for a in store.alerts.unresolved_alerts([r["rule_id"] for r, _ in recovered])
                  if parse_ts(a["fired_at"]) <= at}
    for rule, result in recovered:
        if rule["rule_id"] in open_rules:
            result["status"] = "would_resolve"


# Rules on these metrics fire on errors: their alerts carry what was failing.
ERROR_METRICS = ("error_rate", "tool_error_rate")
ALERT_FAILURES = 3


def _failures(store: Store, candidates: list, at: datetime) -> dict[str, list[dict]]:
    """rule_id -> the top failures (services/incidents, one session is enough) in the window of
    each error-metric rule about to fire: what the page is about. Read before the firing's
    write transaction."""
    from obsctl.services.incidents import list_incidents

    found, read = {}, {}
    for rule, _ in candidates:
        if rule["metric"] not in ERROR_METRICS:
            continue
        scope = (rule["window_minutes"], rule["agent_filter"])  # rules sharing one are read once
        if scope not in read:
            read[scope] = list_incidents(
                store, since=format_ts(at - timedelta(minutes=rule["window_minutes"])), until=format_ts(at),
                agent=rule["agent_filter"], min_sessions=1, limit=ALERT_FAILURES)
        listed = read[scope]
        found[rule["rule_id"]] = [
            {key: incident[key] for key in ("incident_id", "title", "severity", "kind", "tool_name", "model",
                                            "failures", "sessions", "agents", "example", "first_seen",
                                            "last_seen", "session_ids", "agent_names")}
            for incident in listed["incidents"]]
    return found


# Rules on these metrics carry the sessions that weigh most in them: what the page is about.
CONTRIBUTOR_ORDER = {"avg_tokens": "tokens", "avg_cost": "tokens", "avg_duration_ms": "slowest",
                     "p95_duration_ms": "slowest"}
CONTRIBUTOR_WHY = {"tokens": "the most tokens in the window", "slowest": "the slowest events in the window"}


def _contributors(store: Store, candidates: list, at: datetime) -> dict[str, dict]:
    """rule_id -> {"by", "why", "sessions"}: for each rule on tokens, cost or latency about to
    fire, the top ALERT_FAILURES sessions of its window by tokens (also for cost: tokens are
    what is priced) or by their slowest event, with their agents. Read before the firing's
    write transaction."""
    found, read = {}, {}
    for rule, _ in candidates:
        by = CONTRIBUTOR_ORDER.get(rule["metric"])
        if by is None:
            continue
        scope = (rule["window_minutes"], rule["agent_filter"], by)
        if scope not in read:
            since = format_ts(at - timedelta(minutes=rule["window_minutes"]))
            sessions = store.metrics.top_sessions(since, format_ts(at), rule["agent_filter"], by, ALERT_FAILURES)
            for entry in sessions:
                row = store.sessions.get_session(entry["session_id"])
                entry["agent_name"] = row["agent_name"] if row else None
            read[scope] = {"by": by, "why": CONTRIBUTOR_WHY[by], "sessions": sessions}
        found[rule["rule_id"]] = read[scope]
    return found


def _links(base: str, rule_id: str, failures: list[dict]) -> list[dict]:
    """Where to look, on this obsctl's API (OBSCTL_PUBLIC_URL): the rule's alerts and, when
    something was failing, the triage and the events of the first session it hit."""
    links = [{"href": f"{base}/alerts/events?rule_id={quote(rule_id, safe='')}", "text": "the rule's alerts"}]
    sessions = failures[0]["session_ids"] if failures else []
    if sessions:
        sid = quote(sessions[0], safe="")
        links += [{"href": f"{base}/triage/{sid}", "text": f"triage of session {sessions[0]}"},
                  {"href": f"{base}/sessions/{sid}", "text": f"session {sessions[0]}"}]
    return links


def _fire(store: Store, candidates: list, at: datetime, failures: dict[str, list[dict]],
          public_url: str | None = None, contributors: dict[str, dict] | None = None) -> None:
    """Record firings, re-checking cooldowns under the write lock so that two concurrent
    evaluations (cron and the API) cannot both fire the same rule."""
    fired_at = format_ts(at)
    with store.transaction():
        last = store.alerts.last_fired_at([rule["rule_id"] for rule, _ in candidates])
        hooks = webhooks.enabled_webhooks(store)
        firing_since = _firing_since(store, [rule["rule_id"] for rule, _ in candidates])
        for rule, result in candidates:
            if rule["rule_id"] not in last:
                continue  # deleted since the metrics were computed
            if _in_cooldown(rule, last[rule["rule_id"]], at):
                result["status"] = "cooldown"
                continue
            alert = {
                "alert_id": f"alert_{uuid.uuid4().hex[:16]}", "rule_id": rule["rule_id"],
                "rule_name": rule["name"], "metric": rule["metric"], "operator": rule["operator"],
                "threshold": rule["threshold"], "value": result["value"],
                "window_minutes": rule["window_minutes"], "agent_filter": rule["agent_filter"],
                "fired_at": fired_at, "acknowledged": 0, "acknowledged_at": None,
            }
            store.alerts.record_firing({**alert, "resolved_at": None})
            rule = {**rule, "last_fired_at": fired_at}
            view = {**alert_view({**alert, "resolved_at": None}),
                    "firing_since": firing_since.get(rule["rule_id"], fired_at)}
            if rule["rule_id"] in failures:
                view["failures"] = failures[rule["rule_id"]]
            if contributors and rule["rule_id"] in contributors:
                view["contributors"] = contributors[rule["rule_id"]]
            if public_url:
                view["links"] = _links(public_url, rule["rule_id"], view.get("failures")
                                       or [{"session_ids": [c["session_id"] for c in
                                                            (view.get("contributors") or {}).get("sessions", [])]}])
            webhooks.enqueue_alert(store, hooks, view, rule_view(rule), fired_at)
            result["status"] = "fired"
            result["alert_id"] = alert["alert_id"]


def _firing_since(store: Store, rule_ids: list[str]) -> dict[str, str]:
    """rule_id -> when its oldest unresolved alert fired (rules firing since then)."""
    since: dict[str, str] = {}
    for alert in store.alerts.unresolved_alerts(rule_ids):  # oldest first
        since.setdefault(alert["rule_id"], alert["fired_at"])
    return since


def _resolve(store: Store, recovered: list, at: datetime) -> None:
    """Resolve the open alerts of rules whose condition no longer holds, and queue one
    alert.resolved delivery per rule (for its latest alert). A read first: most evaluations
    resolve nothing and take no write lock."""
    ids = [rule["rule_id"] for rule, _ in recovered]
    if not store.alerts.unresolved_alerts(ids):
        return
    resolved_at = format_ts(at)
    with store.transaction():
        open_alerts: dict[str, list[dict]] = {}
        for alert in store.alerts.unresolved_alerts(ids):  # again, under the write lock
            open_alerts.setdefault(alert["rule_id"], []).append(alert)
        hooks = webhooks.enabled_webhooks(store)
        for rule, result in recovered:
            alerts = open_alerts.get(rule["rule_id"])
            if not alerts:
                continue
            store.alerts.resolve_alerts([a["alert_id"] for a in alerts], resolved_at)
            latest = alerts[-1]
            view = {**alert_view({**latest, "resolved_at": resolved_at}), "firing_since": alerts[0]["fired_at"],
                    "resolved_value": result["value"]}
            webhooks.enqueue_alert(store, hooks, view, rule_view(rule), resolved_at, event_type="alert.resolved")
            result["status"] = "resolved"
            result["alert_id"] = latest["alert_id"]


def list_alert_events(store: Store, *, limit: int | None = None,
                      unacknowledged: bool = False, rule_id: str | None = None) -> dict:
    """`{"events": [...], "total": N}` newest first; limit default 50, 1-500 (more counts as 500)."""
    limit = EVENTS_LIMIT.resolve(limit)
    rows, total = store.alerts.list_alerts(limit=limit, unacknowledged=unacknowledged, rule_id=rule_id)
    return {"events": [alert_view(r) for r in rows], "total": total}


def acknowledge_alert(store: Store, alert_id: str, *, at: datetime | None = None) -> dict:
    """Mark an alert event acknowledged; acknowledging again keeps the first timestamp. The
    first acknowledgement of an alert still firing queues alert.acknowledged deliveries
    (PagerDuty's acknowledge) to the webhooks of its rule."""
    with store.transaction():
        before = store.alerts.get_alert(alert_id)
        if before is None:
            raise NotFound(f"alert {alert_id!r} not found")
        when = format_ts(at) if at is not None else now_iso()
        store.alerts.acknowledge_alert(alert_id, when)
        alert = alert_view(store.alerts.get_alert(alert_id) or before)  # read back in the transaction
        rule = store.alerts.get_rule(alert["rule_id"])
        if not before["acknowledged"] and before["resolved_at"] is None and rule is not None:
            webhooks.enqueue_alert(store, webhooks.enabled_webhooks(store), alert, rule_view(rule), when,
                                   event_type="alert.acknowledged")
        return alert


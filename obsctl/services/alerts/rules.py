"""Alert rules: create, list, update, delete (DECISIONS: Alerts and webhooks).

A rule is `rule_id` (generated), `name`, `metric`, `operator`, `threshold` (required on create),
`window_minutes` (60, 1-43200), `cooldown_minutes` (15, 0 allowed), `agent_filter` (optional;
an empty string clears it), `enabled` (default true), `created_at`, `updated_at`,
`last_fired_at`, and `severity` (critical, error, warning or info; default warning: how urgent
its alerts are, PagerDuty's payload.severity). Unknown fields are refused; the read-only fields are accepted and ignored so
that a rule read from the API can be sent back as it is.
"""

from __future__ import annotations

import math
import uuid
from typing import Any

from obsctl.errors import InvalidInput, NotFound
from obsctl.jsonutil import describe_value
from obsctl.models.alerts import COOLDOWN_MINUTES, DEFAULT_SEVERITY, MAX_NAME_LEN, SEVERITIES, WINDOW_MINUTES
from obsctl.services.metrics import METRICS, check_metric
from obsctl.services.operators import normalise_operator
from obsctl.store import Store
from obsctl.timeutil import now_iso
from obsctl.vocabulary import OPERATORS, SCORE_METRIC

# The limits are declared with the rule models (obsctl/models/alerts.py); the CLI reads them here.
DEFAULTS = {"window_minutes": WINDOW_MINUTES.default, "cooldown_minutes": COOLDOWN_MINUTES.default,
            "agent_filter": None, "enabled": True, "severity": DEFAULT_SEVERITY}
WRITABLE = ("name", "metric", "operator", "threshold", "window_minutes", "cooldown_minutes",
            "agent_filter", "enabled", "severity")
READ_ONLY = ("rule_id", "created_at", "updated_at", "last_fired_at")


def rule_view(row: dict) -> dict:
    """The public form of a stored rule."""
    return {
        "rule_id": row["rule_id"],
        "name": row["name"],
        "metric": row["metric"],
        "operator": row["operator"],
        "threshold": row["threshold"],
        "window_minutes": row["window_minutes"],
        "cooldown_minutes": row["cooldown_minutes"],
        "agent_filter": row["agent_filter"],
        "enabled": bool(row["enabled"]),
        "severity": row["severity"],
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
        "last_fired_at": row["last_fired_at"],
    }


def check_operator(value: Any) -> str:
    """An operator as its canonical symbol (words accepted), else InvalidInput."""
    return normalise_operator(value, OPERATORS)


def check_severity(value: Any) -> str:
    """critical, error, warning or info (any case), else InvalidInput."""
    if type(value) is str and value.strip().lower() in SEVERITIES:
        return value.strip().lower()
    raise InvalidInput(f"severity must be one of {', '.join(SEVERITIES)}; got {describe_value(value)}")


def check_threshold(value: Any) -> float:
    """A finite number (a JSON boolean is not one), else InvalidInput."""
    if type(value) not in (int, float) or not math.isfinite(value):
        raise InvalidInput(f"threshold must be a finite number; got {describe_value(value)}")
    return float(value)


def _check_field(name: str, value: Any) -> Any:
    """Validate one writable field and return its stored value."""
    if name == "name":
        if type(value) is not str or not value.strip():
            raise InvalidInput("name must be a non-empty string")
        if len(value) > MAX_NAME_LEN:
            raise InvalidInput(f"name must be at most {MAX_NAME_LEN} characters")
        return value
    if name == "metric":
        return check_metric(value)
    if name == "operator":
        return check_operator(value)
    if name == "threshold":
        return check_threshold(value)
    if name == "window_minutes":
        return WINDOW_MINUTES.check(value, nullable=False)
    if name == "cooldown_minutes":
        return COOLDOWN_MINUTES.check(value, nullable=False)
    if name == "agent_filter":
        if value is None or value == "":
            return None
        if type(value) is not str or len(value) > MAX_NAME_LEN:
            raise InvalidInput(f"agent_filter must be an agent name (a string of at most "
                               f"{MAX_NAME_LEN} characters) or null; got {describe_value(value)}")
        return value
    if name == "severity":
        return check_severity(value)
    if name == "enabled":
        if type(value) is not bool:
            raise InvalidInput(f"enabled must be true or false; got {describe_value(value)}")
        return 1 if value else 0
    raise AssertionError(name)


def _check_body(body: Any) -> dict:
    if type(body) is not dict:
        raise InvalidInput("the rule must be a JSON object")
    unknown = [k for k in body if k not in WRITABLE and k not in READ_ONLY]
    if unknown:
        raise InvalidInput(f"unknown rule field {unknown[0]!r}; rule fields are {', '.join(WRITABLE)}")
    return {k: _check_field(k, v) for k, v in body.items() if k in WRITABLE}


def require_rule(store: Store, rule_id: str) -> dict:
    """The stored rule row, or NotFound."""
    row = store.alerts.get_rule(rule_id)
    if row is None:
        raise NotFound(f"alert rule {rule_id!r} not found")
    return row


def check_rule_fields(body: Any, *, partial: bool = False) -> dict:
    """The stored values of a rule's fields (InvalidInput naming the first bad one); a whole
    rule (`partial` false) needs name, metric, operator and threshold and gets the defaults
    of the others."""
    fields = _check_body(body)
    if partial:
        return fields
    missing = [k for k in ("name", "metric", "operator", "threshold") if k not in fields]
    if missing:
        raise InvalidInput(f"missing required rule field{'s' if len(missing) > 1 else ''}: "
                           f"{', '.join(missing)}")
    return {**DEFAULTS, "enabled": 1, **fields}


def create_rule(store: Store, body: Any) -> dict:
    """Create a rule from its fields; name, metric, operator and threshold are required."""
    fields = check_rule_fields(body)
    now = now_iso()
    rule = {**fields, "rule_id": f"rule_{uuid.uuid4().hex[:16]}",
            "created_at": now, "updated_at": now, "last_fired_at": None}
    with store.transaction():
        store.alerts.insert_rule(rule)
    return rule_view(rule)


def list_rules(store: Store) -> dict:
    """`{"rules": [...], "total": N}` in creation order, enabled or not."""
    rules = [rule_view(r) for r in store.alerts.list_rules()]
    return {"rules": rules, "total": len(rules)}


def get_rule(store: Store, rule_id: str) -> dict:
    return rule_view(require_rule(store, rule_id))


def update_rule(store: Store, rule_id: str, body: Any) -> dict:
    """Partial update: only the fields present change; null clears agent_filter only."""
    fields = check_rule_fields(body, partial=True)
    with store.transaction():
        if fields:
            fields["updated_at"] = now_iso()
        if not store.alerts.update_rule(rule_id, fields):
            raise NotFound(f"alert rule {rule_id!r} not found")
        return rule_view(require_rule(store, rule_id))


def delete_rule(store: Store, rule_id: str) -> dict:
    """Delete a rule and all of its alert events; their pending webhook deliveries are
    cancelled (marked failed, saying so) instead of being retried for a day."""
    with store.transaction():
        store.webhooks.cancel_pending_for_rule(rule_id, f"cancelled: alert rule {rule_id} was removed")
        if not store.alerts.delete_rule(rule_id):
            raise NotFound(f"alert rule {rule_id!r} not found")
    return {"deleted": True, "rule_id": rule_id}


def list_metrics() -> dict:
    """`GET /alerts/metrics`: the metric names usable in rules, with a description of each."""
    metrics = [{"name": name, "description": text} for name, text in (*METRICS.items(), SCORE_METRIC)]
    return {"metrics": metrics, "total": len(metrics)}

"""`/alerts`: rules, evaluation, alert events and the metric catalogue."""

from __future__ import annotations

from flask import Blueprint, current_app

import obsctl.models.alerts as models
from obsctl.errors import InvalidInput
from obsctl.models.alerts import (
    AlertEvent,
    AlertMetricList,
    AlertRule,
    AlertRuleDeleted,
    AlertRuleInput,
    AlertRuleUpdate,
    EvaluationResult,
)
from obsctl.services import alerts
from obsctl.services.alerts import rules as alert_rules
from obsctl.web.http import (
    bool_arg,
    get_settings,
    get_store,
    json_body,
    json_response,
    str_arg,
)
from obsctl.web.openapi_util import (
    error_responses,
    json_content,
    operation,
    path_param,
    query_param,
    ref,
)
from obsctl.web.reads import serve_reads
from obsctl.web.routes.webhooks import SENDER_KEY

blueprint = Blueprint("alerts", __name__)
RATE_GROUP = "alerts"

# GET /alerts/rules, /alerts/rules/{rule_id} and /alerts/events, declared in models/alerts.py.
READ_PATHS, READ_MODELS = serve_reads(blueprint, models)

@blueprint.post("/alerts/rules")
def create_rule():
    return json_response(alert_rules.create_rule(get_store(), json_body()), 201)


@blueprint.put("/alerts/rules/<rule_id>")
def update_rule(rule_id: str):
    return json_response(alert_rules.update_rule(get_store(), rule_id, json_body()))


@blueprint.delete("/alerts/rules/<rule_id>")
def delete_rule(rule_id: str):
    return json_response(alert_rules.delete_rule(get_store(), rule_id))


@blueprint.post("/alerts/evaluate")
def evaluate():
    # With the background sender running (a served app) deliveries go to it, so the response
    # never waits on a receiver; without it (tests, embedded use) a bounded pass runs here.
    store, settings = get_store(), get_settings()
    dry_run = bool_arg("dry_run")
    at = str_arg("at")
    if at is not None and not dry_run:
        raise InvalidInput("at needs dry_run=true: an evaluation of a past moment records and sends nothing")
    body = alerts.evaluate_alerts(store, settings, at=alerts.parse_moment(at, "at") if at else None,
                                  dry_run=dry_run)
    if not dry_run:
        send_deliveries(store, settings)
    return json_response(body)


def send_deliveries(store, settings) -> None:
    sender = current_app.extensions.get(SENDER_KEY)
    if sender is not None:
        sender.wake()
    else:
        from obsctl.services.webhooks.delivery import deliver_due

        deliver_due(store, settings)


@blueprint.put("/alerts/events/<path:alert_id>/acknowledge")
def acknowledge(alert_id: str):
    # The first acknowledgement queues alert.acknowledged deliveries (PagerDuty's acknowledge).
    body = alerts.acknowledge_alert(get_store(), alert_id)
    send_deliveries(get_store(), get_settings())
    return json_response(body)


@blueprint.get("/alerts/metrics")
def list_metrics():
    return json_response(alert_rules.list_metrics())


OPENAPI_MODELS = (AlertRuleInput, AlertRuleUpdate, AlertRule, AlertRuleDeleted,
                  AlertEvent, EvaluationResult, AlertMetricList)

_RULE_ID = path_param("rule_id", "Alert rule id")

OPENAPI_PATHS = {
    "/alerts/rules": {
        "post": operation("alerts", "Create an alert rule", request=json_content(ref(AlertRuleInput)),
                          status=201, ok=json_content(ref(AlertRule), "Created"),
                          errors=error_responses(400)),
    },
    "/alerts/rules/{rule_id}": {
        "put": operation("alerts", "Update some fields of an alert rule", params=[_RULE_ID],
                         request=json_content(ref(AlertRuleUpdate)), ok=json_content(ref(AlertRule)),
                         errors=error_responses(400, 404)),
        "delete": operation(
            "alerts", "Delete an alert rule and all of its alert events", params=[_RULE_ID],
            ok=json_content(ref(AlertRuleDeleted)), errors=error_responses(404)),
    },
    "/alerts/evaluate": {
        "post": operation(
            "alerts", "Evaluate every enabled rule now; fire those whose condition holds "
            "(outside their cooldown) and queue their webhook deliveries",
            params=[
                query_param("dry_run", {"type": "boolean", "default": False},
                            "true: record and send nothing; rules that would fire or be resolved say so"),
                query_param("at", {"type": "string"},
                            "With dry_run: evaluate as of this ISO 8601 moment (windows end there)"),
            ],
            ok=json_content(ref(EvaluationResult)),
            errors=error_responses(400)),
    },
    "/alerts/events/{alert_id}/acknowledge": {
        "put": operation(
            "alerts", "Acknowledge an alert (again: keeps the first acknowledged_at)",
            params=[path_param("alert_id", "Alert id")], ok=json_content(ref(AlertEvent)),
            errors=error_responses(404)),
    },
    "/alerts/metrics": {
        "get": operation("alerts", "The metrics usable in alert rules and SLA targets",
                         ok=json_content(ref(AlertMetricList))),
    },
}

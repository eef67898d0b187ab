"""`/alerts`: rules, evaluation, alert events and the metric catalogue."""

from __future__ import annotations

from flask import Blueprint, current_app

from obsctl.services import alerts
from obsctl.services.alerts import rules as alert_rules
from obsctl.services.operators import spellings
from obsctl.web.http import (
    bool_arg,
    get_settings,
    get_store,
    int_arg,
    json_body,
    json_response,
    str_arg,
)
from obsctl.web.openapi_util import (
    NOT_BLANK,
    error_responses,
    int_query_param,
    json_content,
    operation,
    path_param,
    query_param,
)
from obsctl.web.routes.webhooks import SENDER_KEY

blueprint = Blueprint("alerts", __name__)
RATE_GROUP = "alerts"


@blueprint.post("/alerts/rules")
def create_rule():
    return json_response(alert_rules.create_rule(get_store(), json_body()), 201)


@blueprint.get("/alerts/rules")
def list_rules():
    return json_response(alert_rules.list_rules(get_store()))


@blueprint.get("/alerts/rules/<rule_id>")
def get_rule(rule_id: str):
    return json_response(alert_rules.get_rule(get_store(), rule_id))


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
    body = alerts.evaluate_alerts(store, settings)
    sender = current_app.extensions.get(SENDER_KEY)
    if sender is not None:
        sender.wake()
    else:
        from obsctl.services.webhooks.delivery import deliver_due

        deliver_due(store, settings)
    return json_response(body)


@blueprint.get("/alerts/events")
def list_events():
    return json_response(alerts.list_alert_events(
        get_store(),
        limit=int_arg("limit"),
        unacknowledged=bool_arg("unacknowledged"),
        rule_id=str_arg("rule_id"),
    ))


@blueprint.put("/alerts/events/<alert_id>/acknowledge")
def acknowledge(alert_id: str):
    return json_response(alerts.acknowledge_alert(get_store(), alert_id))


@blueprint.get("/alerts/metrics")
def list_metrics():
    return json_response(alert_rules.list_metrics())


_NUMBER_OR_NULL = {"type": ["number", "null"]}
_OPERATORS = list(alert_rules.OPERATORS)
_METRIC_NAMES = list(alert_rules.METRICS)
_WINDOW = {"type": "integer", "minimum": alert_rules.WINDOW_MINUTES.low,
           "maximum": alert_rules.WINDOW_MINUTES.high}
_COOLDOWN = {"type": "integer", "minimum": alert_rules.COOLDOWN_MINUTES.low,
             "maximum": alert_rules.COOLDOWN_MINUTES.high}
_RULE_FIELDS = {
    "name": {"type": "string", "minLength": 1, "maxLength": alert_rules.MAX_NAME_LEN,
             "pattern": NOT_BLANK},
    "metric": {"type": "string", "enum": _METRIC_NAMES},
    "operator": {"type": "string", "enum": _OPERATORS},
    "threshold": {"type": "number"},
    "window_minutes": {**_WINDOW, "default": alert_rules.WINDOW_MINUTES.default},
    "cooldown_minutes": {**_COOLDOWN, "default": alert_rules.COOLDOWN_MINUTES.default},
    "agent_filter": {"type": ["string", "null"], "maxLength": alert_rules.MAX_NAME_LEN,
                     "description": "Only this agent's sessions; null or empty = all agents"},
    "enabled": {"type": "boolean", "default": True},
}
_READ_ONLY = {name: {"readOnly": True} for name in alert_rules.READ_ONLY}
# What a request may send: the symbols or their words, stored as the symbol.
_INPUT_FIELDS = {**_RULE_FIELDS, "operator": {
    "type": "string", "enum": spellings(alert_rules.OPERATORS),
    "description": "Stored as the symbol; the words lt, gt, le/lte, ge/gte, eq, ne are accepted too"}}

OPENAPI_SCHEMAS = {
    "AlertRuleInput": {
        "type": "object",
        "required": ["name", "metric", "operator", "threshold"],
        "properties": {**_INPUT_FIELDS, **_READ_ONLY},
        "additionalProperties": False,
    },
    "AlertRuleUpdate": {
        "type": "object",
        "description": "Any subset of the rule fields; the others keep their values",
        "properties": {**_INPUT_FIELDS, **_READ_ONLY},
        "additionalProperties": False,
    },
    "AlertRule": {
        "type": "object",
        "required": ["rule_id", *_RULE_FIELDS, "created_at", "updated_at", "last_fired_at"],
        "properties": {
            "rule_id": {"type": "string"},
            **_RULE_FIELDS,
            "window_minutes": _WINDOW,
            "cooldown_minutes": _COOLDOWN,
            "agent_filter": {"type": ["string", "null"]},
            "created_at": {"$ref": "#/components/schemas/Timestamp"},
            "updated_at": {"$ref": "#/components/schemas/Timestamp"},
            "last_fired_at": {"type": ["string", "null"]},
        },
    },
    "AlertEvent": {
        "type": "object",
        "required": ["alert_id", "rule_id", "rule_name", "metric", "operator", "threshold", "value",
                     "window_minutes", "agent_filter", "fired_at", "acknowledged", "acknowledged_at"],
        "properties": {
            "alert_id": {"type": "string"},
            "rule_id": {"type": "string"},
            "rule_name": {"type": "string"},
            "metric": {"type": "string", "enum": _METRIC_NAMES},
            "operator": {"type": "string", "enum": _OPERATORS},
            "threshold": {"type": "number"},
            "value": _NUMBER_OR_NULL,
            "window_minutes": {"type": "integer"},
            "agent_filter": {"type": ["string", "null"]},
            "fired_at": {"$ref": "#/components/schemas/Timestamp"},
            "acknowledged": {"type": "boolean"},
            "acknowledged_at": {"type": ["string", "null"]},
        },
    },
    "EvaluationResult": {
        "type": "object",
        "required": ["evaluated_at", "evaluated", "fired", "results"],
        "properties": {
            "evaluated_at": {"$ref": "#/components/schemas/Timestamp"},
            "evaluated": {"type": "integer", "minimum": 0},
            "fired": {"type": "integer", "minimum": 0},
            "results": {"type": "array", "items": {
                "type": "object",
                "required": ["rule_id", "name", "metric", "operator", "threshold", "value", "status"],
                "properties": {
                    "rule_id": {"type": "string"},
                    "name": {"type": "string"},
                    "metric": {"type": "string", "enum": _METRIC_NAMES},
                    "operator": {"type": "string", "enum": _OPERATORS},
                    "threshold": {"type": "number"},
                    "value": _NUMBER_OR_NULL,
                    "status": {"type": "string", "enum": ["fired", "ok", "cooldown", "no_data"]},
                    "alert_id": {"type": "string", "description": "Only when status is fired"},
                },
            }},
        },
    },
}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _list_of(key: str, item: dict) -> dict:
    return json_content({
        "type": "object", "required": [key, "total"],
        "properties": {key: {"type": "array", "items": item}, "total": {"type": "integer", "minimum": 0}},
    })


_RULE_BODY = {"content": {"application/json": {"schema": _ref("AlertRuleInput")}}}
_UPDATE_BODY = {"content": {"application/json": {"schema": _ref("AlertRuleUpdate")}}}
_RULE_ID = path_param("rule_id", "Alert rule id")

OPENAPI_PATHS = {
    "/alerts/rules": {
        "post": operation("alerts", "Create an alert rule", request=_RULE_BODY, status=201,
                          ok=json_content(_ref("AlertRule"), "Created"), errors=error_responses(400)),
        "get": operation("alerts", "All alert rules, enabled or not, in creation order",
                         ok=_list_of("rules", _ref("AlertRule"))),
    },
    "/alerts/rules/{rule_id}": {
        "get": operation("alerts", "One alert rule", params=[_RULE_ID],
                         ok=json_content(_ref("AlertRule")), errors=error_responses(404)),
        "put": operation("alerts", "Update some fields of an alert rule", params=[_RULE_ID],
                         request=_UPDATE_BODY, ok=json_content(_ref("AlertRule")),
                         errors=error_responses(400, 404)),
        "delete": operation(
            "alerts", "Delete an alert rule and all of its alert events", params=[_RULE_ID],
            ok=json_content({"type": "object", "required": ["deleted", "rule_id"], "properties": {
                "deleted": {"type": "boolean", "const": True}, "rule_id": {"type": "string"}}}),
            errors=error_responses(404)),
    },
    "/alerts/evaluate": {
        "post": operation(
            "alerts", "Evaluate every enabled rule now; fire those whose condition holds "
            "(outside their cooldown) and queue their webhook deliveries",
            ok=json_content(_ref("EvaluationResult"))),
    },
    "/alerts/events": {
        "get": operation(
            "alerts", "Fired alerts, newest first",
            params=[
                int_query_param(alerts.EVENTS_LIMIT, "Alerts to return"),
                query_param("unacknowledged", {"type": "boolean", "default": False},
                            "true = only alerts not yet acknowledged"),
                query_param("rule_id", {"type": "string"}, "Only this rule's alerts"),
            ],
            ok=_list_of("events", _ref("AlertEvent")), errors=error_responses(400)),
    },
    "/alerts/events/{alert_id}/acknowledge": {
        "put": operation(
            "alerts", "Acknowledge an alert (again: keeps the first acknowledged_at)",
            params=[path_param("alert_id", "Alert id")], ok=json_content(_ref("AlertEvent")),
            errors=error_responses(404)),
    },
    "/alerts/metrics": {
        "get": operation("alerts", "The metrics usable in alert rules and SLA targets",
                         ok=_list_of("metrics", {
                             "type": "object", "required": ["name", "description"],
                             "properties": {"name": {"type": "string"},
                                            "description": {"type": "string"}}})),
    },
}

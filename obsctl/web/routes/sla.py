"""`/sla`: targets (upsert, list, delete), checks, history and summary."""

from __future__ import annotations

from flask import Blueprint

from obsctl.errors import InvalidInput
from obsctl.services import sla as service
from obsctl.services.metrics import METRICS
from obsctl.services.operators import spellings
from obsctl.services.sla.summary import sla_summary
from obsctl.web.http import get_settings, get_store, int_arg, json_body, json_response, str_arg
from obsctl.web.openapi_util import (
    NOT_BLANK,
    error_responses,
    int_query_param,
    json_content,
    operation,
    query_param,
)

blueprint = Blueprint("sla", __name__)
RATE_GROUP = "sla"


@blueprint.put("/sla/targets")
def put_target():
    target, created = service.put_target(get_store(), json_body())
    return json_response(target, 201 if created else 200)


@blueprint.get("/sla/targets")
def list_targets():
    return json_response(service.list_targets(get_store()))


@blueprint.delete("/sla/targets")
def delete_target():
    # The spec sends the pair as a JSON body; query parameters are accepted too because
    # some clients and proxies drop bodies on DELETE.
    body = json_body(required=False)
    if body is None:
        body = {"agent_name": str_arg("agent_name"), "metric": str_arg("metric")}
    elif type(body) is not dict:
        raise InvalidInput("the body must be a JSON object {agent_name, metric}")
    return json_response(service.delete_target(get_store(), body.get("agent_name"), body.get("metric")))


@blueprint.post("/sla/check")
def check():
    return json_response(service.check_sla(get_store(), get_settings()))


@blueprint.get("/sla/history")
def history():
    return json_response(service.sla_history(
        get_store(),
        agent_name=str_arg("agent_name"),
        hours=int_arg("hours"),
        limit=int_arg("limit"),
    ))


@blueprint.get("/sla/summary")
def summary():
    return json_response(sla_summary(get_store()))


_NUMBER_OR_NULL = {"type": ["number", "null"]}
_METRIC = {"type": "string", "enum": list(METRICS)}
_OPERATOR = {"type": "string", "enum": list(service.OPERATORS)}
_OPERATOR_INPUT = {"type": "string", "enum": spellings(service.OPERATORS),
                   "description": "Stored as the symbol; the words are accepted too (le, lte: <=; ge, gte: >=)"}
_AGENT_NAME = {"type": "string", "minLength": 1, "maxLength": service.MAX_AGENT_LEN,
               "pattern": NOT_BLANK, "description": "Not blank"}
_RESULT_PROPERTIES = {
    "agent_name": {"type": "string"},
    "metric": _METRIC,
    "operator": _OPERATOR,
    "target_value": {"type": "number"},
    "actual_value": _NUMBER_OR_NULL,
    "status": {"type": "string", "enum": list(service.STATUSES)},
}
_RESULT_REQUIRED = list(_RESULT_PROPERTIES)


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _snapshot_with(field: str, description: str) -> dict:
    return {"allOf": [_ref("SlaSnapshot"), {
        "type": "object", "required": [field],
        "properties": {field: {"type": ["number", "null"], "description": description}}}]}


OPENAPI_SCHEMAS = {
    "SlaTargetInput": {
        "type": "object",
        "required": ["agent_name", "metric", "target_value", "operator"],
        "additionalProperties": False,
        "properties": {
            "agent_name": _AGENT_NAME,
            "metric": _METRIC,
            "target_value": {"type": "number"},
            "operator": _OPERATOR_INPUT,
            "window_hours": {**service.WINDOW_HOURS.schema(), "type": ["integer", "null"],
                             "description": "Default 24 on create; kept on update when omitted"},
            "created_at": {"description": "Read-only: accepted and ignored"},
            "updated_at": {"description": "Read-only: accepted and ignored"},
        },
    },
    "SlaTarget": {
        "type": "object",
        "required": ["agent_name", "metric", "operator", "target_value", "window_hours",
                     "created_at", "updated_at"],
        "properties": {
            "agent_name": {"type": "string"},
            "metric": _METRIC,
            "operator": _OPERATOR,
            "target_value": {"type": "number"},
            "window_hours": {"type": "integer"},
            "created_at": _ref("Timestamp"),
            "updated_at": _ref("Timestamp"),
        },
    },
    "SlaResult": {"type": "object", "required": _RESULT_REQUIRED, "properties": _RESULT_PROPERTIES},
    "SlaSnapshot": {
        "type": "object",
        "required": [*_RESULT_REQUIRED, "checked_at"],
        "properties": {**_RESULT_PROPERTIES, "checked_at": _ref("Timestamp")},
    },
    "SlaCheck": {
        "type": "object",
        "required": ["checked_at", "results", "passed", "failed", "no_data"],
        "properties": {
            "checked_at": _ref("Timestamp"),
            "results": {"type": "array", "items": _ref("SlaResult")},
            "passed": {"type": "integer", "minimum": 0},
            "failed": {"type": "integer", "minimum": 0},
            "no_data": {"type": "integer", "minimum": 0},
        },
    },
    "SlaSummary": {
        "type": "object",
        "required": ["overall_pass_rate", "targets", "passed", "failed", "no_data", "unchecked",
                     "last_checked_at", "agents", "worst_offenders", "at_risk"],
        "properties": {
            "overall_pass_rate": {"type": ["number", "null"], "minimum": 0, "maximum": 100},
            "targets": {"type": "integer", "minimum": 0},
            "passed": {"type": "integer", "minimum": 0},
            "failed": {"type": "integer", "minimum": 0},
            "no_data": {"type": "integer", "minimum": 0},
            "unchecked": {"type": "integer", "minimum": 0},
            "last_checked_at": {"type": ["string", "null"]},
            "agents": {"type": "array", "items": {
                "type": "object",
                "required": ["agent_name", "targets", "passed", "failed", "no_data", "unchecked",
                             "pass_rate"],
                "properties": {
                    "agent_name": {"type": "string"},
                    "targets": {"type": "integer", "minimum": 0},
                    "passed": {"type": "integer", "minimum": 0},
                    "failed": {"type": "integer", "minimum": 0},
                    "no_data": {"type": "integer", "minimum": 0},
                    "unchecked": {"type": "integer", "minimum": 0},
                    "pass_rate": {"type": ["number", "null"], "minimum": 0, "maximum": 100},
                },
            }},
            "worst_offenders": {"type": "array", "items": _snapshot_with(
                "miss_percent", "How far the target is missed, in percent of the target value "
                "(null for a zero target)")},
            "at_risk": {"type": "array", "items": _snapshot_with(
                "margin_percent", "Distance to the target, in percent of the target value "
                "(null for a zero target)")},
        },
    },
}



def _described(op: dict, description: str) -> dict:
    op["description"] = description
    return op


OPENAPI_PATHS = {
    "/sla/targets": {
        "put": operation(
            "sla", "Create or update the SLA target of (agent_name, metric)",
            request=json_content(_ref("SlaTargetInput")),
            ok=json_content(_ref("SlaTarget"), "Updated"),
            extra_responses={"201": json_content(_ref("SlaTarget"), "Created")},
            errors=error_responses(400),
        ),
        "get": operation(
            "sla", "All SLA targets, by agent then metric",
            ok=json_content({
                "type": "object", "required": ["targets", "total"],
                "properties": {"targets": {"type": "array", "items": _ref("SlaTarget")},
                               "total": {"type": "integer", "minimum": 0}},
            }),
        ),
        "delete": _described(operation(
            "sla", "Remove the SLA target of (agent_name, metric); its history stays",
            request=json_content({"type": "object", "required": ["agent_name", "metric"],
                                  "properties": {"agent_name": _AGENT_NAME, "metric": _METRIC}}),
            ok=json_content({
                "type": "object", "required": ["deleted", "agent_name", "metric"],
                "properties": {"deleted": {"type": "boolean", "const": True},
                               "agent_name": {"type": "string"}, "metric": {"type": "string"}},
            }),
            errors=error_responses(400, 404),
        ), "The target is named by a JSON body with both agent_name and metric. For clients that "
           "cannot send a body with DELETE, the same pair is also accepted as the query parameters "
           "agent_name and metric (both required; used only when there is no body)."),
    },
    "/sla/check": {
        "post": operation(
            "sla", "Check every target now and record one snapshot per target",
            ok=json_content(_ref("SlaCheck")),
        ),
    },
    "/sla/history": {
        "get": operation(
            "sla", "Compliance snapshots, newest first",
            params=[
                query_param("agent_name", {"type": "string", "maxLength": service.MAX_AGENT_LEN,
                                           "pattern": f"^$|{NOT_BLANK}"},
                            "Only this agent's targets (empty: every agent; blank: refused)"),
                int_query_param(service.HISTORY_HOURS, "Lookback in hours"),
                int_query_param(service.HISTORY_LIMIT, "Snapshots to return"),
            ],
            ok=json_content({
                "type": "object", "required": ["snapshots", "total"],
                "properties": {"snapshots": {"type": "array", "items": _ref("SlaSnapshot")},
                               "total": {"type": "integer", "minimum": 0}},
            }),
            errors=error_responses(400),
        ),
    },
    "/sla/summary": {
        "get": operation(
            "sla", "Pass rates, worst offenders and targets at risk, from each target's latest check",
            ok=json_content(_ref("SlaSummary")),
        ),
    },
}

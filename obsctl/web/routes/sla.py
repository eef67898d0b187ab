"""`/sla`: targets (upsert, list, delete), checks, history and summary."""

from __future__ import annotations

from flask import Blueprint

import obsctl.models.sla as models
from obsctl.errors import InvalidInput
from obsctl.models.sla import (
    MAX_AGENT_LEN,
    SlaCheck,
    SlaHistory,
    SlaTarget,
    SlaTargetDeleted,
    SlaTargetInput,
    SlaTargetKey,
)
from obsctl.services import sla as service
from obsctl.web.http import get_settings, get_store, int_arg, json_body, json_response, str_arg
from obsctl.web.openapi_util import (
    NOT_BLANK,
    error_responses,
    inline,
    int_query_param,
    json_content,
    operation,
    query_param,
    ref,
)
from obsctl.web.reads import serve_reads

blueprint = Blueprint("sla", __name__)
RATE_GROUP = "sla"
# GET /sla/targets and /sla/summary, declared in models/sla.py.
READ_PATHS, READ_MODELS = serve_reads(blueprint, models)


@blueprint.put("/sla/targets")
def put_target():
    target, created = service.put_target(get_store(), json_body())
    return json_response(target, 201 if created else 200)


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


OPENAPI_MODELS = (SlaTargetInput, SlaTarget, SlaTargetDeleted, SlaCheck, SlaHistory)


def _described(op: dict, description: str) -> dict:
    op["description"] = description
    return op


OPENAPI_PATHS = {
    "/sla/targets": {
        "put": operation(
            "sla", "Create or update the SLA target of (agent_name, metric)",
            request=json_content(ref(SlaTargetInput)),
            ok=json_content(ref(SlaTarget), "Updated"),
            extra_responses={"201": json_content(ref(SlaTarget), "Created")},
            errors=error_responses(400),
        ),
        "delete": _described(operation(
            "sla", "Remove the SLA target of (agent_name, metric); its history stays",
            request=json_content(inline(SlaTargetKey)),
            ok=json_content(ref(SlaTargetDeleted)),
            errors=error_responses(400, 404),
        ), "The target is named by a JSON body with both agent_name and metric. For clients that "
           "cannot send a body with DELETE, the same pair is also accepted as the query parameters "
           "agent_name and metric (both required; used only when there is no body)."),
    },
    "/sla/check": {
        "post": operation(
            "sla", "Check every target now and record one snapshot per target",
            ok=json_content(ref(SlaCheck)),
        ),
    },
    "/sla/history": {
        "get": operation(
            "sla", "Compliance snapshots, newest first",
            params=[
                query_param("agent_name", {"type": "string", "maxLength": MAX_AGENT_LEN,
                                           "pattern": f"^$|{NOT_BLANK}"},
                            "Only this agent's targets (empty: every agent; blank: refused)"),
                int_query_param(service.HISTORY_HOURS, "Lookback in hours"),
                int_query_param(service.HISTORY_LIMIT, "Snapshots to return"),
            ],
            ok=json_content(ref(SlaHistory)),
            errors=error_responses(400),
        ),
    },
}

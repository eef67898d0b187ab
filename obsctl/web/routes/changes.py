"""`GET /changes` and `PUT /changes/{change_id}/acknowledge`: changes of agents' configurations
and what they did (services/changes.py)."""

from __future__ import annotations

from flask import Blueprint, request

from obsctl.errors import InvalidInput
from obsctl.models.changes import Change, ChangeAck, ChangeList
from obsctl.services import changes as service
from obsctl.services.pricing import pricer_for
from obsctl.web.http import get_settings, get_store, int_arg, json_body, json_response, str_arg
from obsctl.web.openapi_util import (
    error_responses,
    int_query_param,
    json_content,
    operation,
    path_param,
    query_param,
    ref,
)

blueprint = Blueprint("changes", __name__)
RATE_GROUP = "changes"


@blueprint.get("/changes")
def list_changes():
    return json_response(service.list_changes(
        get_store(), pricer=pricer_for(get_settings()), since=str_arg("since"),
        until=str_arg("until"), agent=str_arg("agent"), limit=int_arg("limit")))


@blueprint.put("/changes/<path:change_id>/acknowledge")
def acknowledge(change_id: str):
    body = {}
    if request.get_data(cache=True).strip():  # no body at all is fine; a body must be an object
        body = json_body()
        if not isinstance(body, dict):
            raise InvalidInput("request body must be a JSON object: {\"note\": \"...\"}")
    note = body.get("note")
    if note is not None and not isinstance(note, str):
        raise InvalidInput("note must be a string")
    return json_response(service.acknowledge_change(get_store(), change_id,
                                                    pricer=pricer_for(get_settings()), note=note))


OPENAPI_MODELS = (ChangeList, Change, ChangeAck)

OPENAPI_PATHS = {
    "/changes": {
        "get": operation(
            "changes",
            "Changes of agents' configurations (model, release) and what they did to LLM latency, "
            "cost and errors; unacknowledged regressions first",
            params=[
                query_param("since", {"type": "string"},
                            "An age before until (30m, 24h, 7d, 2w) or an ISO 8601 time; default 7d"),
                query_param("until", {"type": "string"}, "ISO 8601; default now"),
                query_param("agent", {"type": "string"}, "Only this agent's changes"),
                int_query_param(service.LIMIT, "Changes to return"),
            ],
            ok=json_content(ref(ChangeList)),
            errors=error_responses(400),
        ),
    },
    "/changes/{change_id}/acknowledge": {
        "put": operation(
            "changes",
            "Acknowledge a change: its configuration becomes the agent's baseline (again: keeps "
            "the first acknowledgement)",
            params=[path_param("change_id", "AGENT@CHANGED_AT, as GET /changes lists it")],
            request=json_content(ref(ChangeAck)), request_required=False,
            ok=json_content(ref(Change)),
            errors=error_responses(400, 404),
        ),
    },
}

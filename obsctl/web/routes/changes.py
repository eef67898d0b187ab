"""`GET /changes` and `PUT /changes/{change_id}/acknowledge`: changes of agents' configurations
and what they did (services/changes.py)."""

from __future__ import annotations

from flask import Blueprint, request

import obsctl.models.changes as models
from obsctl.errors import InvalidInput
from obsctl.models.changes import Change, ChangeAck
from obsctl.services import changes as service
from obsctl.services.pricing import pricer_for
from obsctl.web.http import get_settings, get_store, json_body, json_response
from obsctl.web.openapi_util import (
    error_responses,
    json_content,
    operation,
    path_param,
    ref,
)
from obsctl.web.reads import serve_reads

blueprint = Blueprint("changes", __name__)
RATE_GROUP = "changes"
# GET /changes, declared in models/changes.py.
READ_PATHS, READ_MODELS = serve_reads(blueprint, models)


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


OPENAPI_MODELS = (Change, ChangeAck)

OPENAPI_PATHS = {
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

"""`/postmortem`: the postmortem report of one session, and the sessions worth one."""

from __future__ import annotations

from flask import Blueprint

import obsctl.models.postmortem as models
from obsctl.models.postmortem import IncidentPostmortem, PostmortemReport
from obsctl.services import incidents
from obsctl.services import postmortem as service
from obsctl.services.pricing import pricer_for
from obsctl.web.http import get_settings, get_store, int_arg, json_response, str_arg
from obsctl.web.openapi_util import (
    error_responses,
    int_query_param,
    json_content,
    operation,
    path_param,
    query_param,
    ref,
    session_id_param,
)
from obsctl.web.reads import serve_reads

blueprint = Blueprint("postmortem", __name__)
RATE_GROUP = "postmortem"
# GET /postmortem/candidates, declared in models/postmortem.py.
READ_PATHS, READ_MODELS = serve_reads(blueprint, models)


@blueprint.get("/postmortem/incidents/<path:incident_id>")
def incident_postmortem(incident_id: str):
    return json_response(service.postmortem_incident(
        get_store(), incident_id, pricer=pricer_for(get_settings()), since=str_arg("since"),
        until=str_arg("until"), gap_minutes=int_arg("gap_minutes")))


@blueprint.post("/postmortem/<path:session_id>")
def postmortem(session_id: str):
    # No body is read: the report depends on the stored session only.
    return json_response(service.postmortem_session(get_store(), session_id, pricer=pricer_for(get_settings())))


OPENAPI_MODELS = (PostmortemReport, IncidentPostmortem)

OPENAPI_PATHS = {
    "/postmortem/incidents/{incident_id}": {
        "get": operation(
            "postmortem",
            "The postmortem of an incident (GET /incidents): impact, timeline, root cause, overlapping "
            "incidents, recommendations",
            params=[
                path_param("incident_id", "inc-..., as GET /incidents lists it"),
                query_param("since", {"type": "string"},
                            "An age before until (30m, 24h, 7d, 2w) or an ISO 8601 time holding the "
                            "incident's start; default 7d"),
                query_param("until", {"type": "string"}, "ISO 8601; default now"),
                int_query_param(incidents.GAP_MINUTES, "The gap the incident was listed with"),
            ],
            ok=json_content(ref(IncidentPostmortem)),
            errors=error_responses(400, 404),
        )
    },
    "/postmortem/{session_id}": {
        "post": operation(
            "postmortem",
            "Generate the postmortem report of one session (no request body)",
            params=[session_id_param()],
            ok=json_content(ref(PostmortemReport)),
            errors=error_responses(404),
        )
    },
}

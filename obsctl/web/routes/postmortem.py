"""`/postmortem`: the postmortem report of one session, and the sessions worth one."""

from __future__ import annotations

from flask import Blueprint

import obsctl.models.postmortem as models
from obsctl.models.postmortem import PostmortemReport
from obsctl.services import postmortem as service
from obsctl.services.pricing import pricer_for
from obsctl.web.http import get_settings, get_store, json_response
from obsctl.web.openapi_util import (
    error_responses,
    json_content,
    operation,
    ref,
    session_id_param,
)
from obsctl.web.reads import serve_reads

blueprint = Blueprint("postmortem", __name__)
RATE_GROUP = "postmortem"
# GET /postmortem/candidates and /postmortem/incidents/{incident_id}, declared in models/postmortem.py.
READ_PATHS, READ_MODELS = serve_reads(blueprint, models)


@blueprint.post("/postmortem/<path:session_id>")
def postmortem(session_id: str):
    # No body is read: the report depends on the stored session only.
    return json_response(service.postmortem_session(get_store(), session_id, pricer=pricer_for(get_settings())))


OPENAPI_MODELS = (PostmortemReport,)

OPENAPI_PATHS = {
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

"""`/triage`: the triage report of one session and the batch over recent sessions."""

from __future__ import annotations

from flask import Blueprint

import obsctl.models.triage as models
from obsctl.models.triage import TriageReport
from obsctl.services import triage as service
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

blueprint = Blueprint("triage", __name__)
RATE_GROUP = "triage"
# GET /triage/batch, declared in models/triage.py.
READ_PATHS, READ_MODELS = serve_reads(blueprint, models)


@blueprint.get("/triage/<path:session_id>")
def triage_session(session_id: str):
    return json_response(service.triage_session(get_store(), session_id, pricer=pricer_for(get_settings())))


OPENAPI_MODELS = (TriageReport,)

OPENAPI_PATHS = {
    "/triage/{session_id}": {
        "get": operation(
            "triage",
            "Triage one session: health score, grade, severity-ranked findings",
            params=[session_id_param()],
            ok=json_content(ref(TriageReport)),
            errors=error_responses(404),
        )
    },
}

"""`/triage`: the triage report of one session and the batch over recent sessions."""

from __future__ import annotations

from flask import Blueprint

from obsctl.models.triage import TriageBatch, TriageReport
from obsctl.services import triage as service
from obsctl.services.pricing import pricer_for
from obsctl.web.http import get_settings, get_store, int_arg, json_response, str_arg
from obsctl.web.openapi_util import (
    error_responses,
    int_query_param,
    json_content,
    operation,
    query_param,
    ref,
    session_id_param,
)

blueprint = Blueprint("triage", __name__)
RATE_GROUP = "triage"


# A fixed route: Werkzeug ranks literal segments above <session_id>. A session named "batch" is
# reached with the name escaped, `/triage/%62atch` (web/rawpath.py), as obsctl's client does.
@blueprint.get("/triage/batch")
def triage_batch():
    return json_response(service.triage_batch(
        get_store(),
        pricer=pricer_for(get_settings()),
        limit=int_arg("limit"),
        min_events=int_arg("min_events"),
        agent=str_arg("agent"),
        since=str_arg("since"),
        until=str_arg("until"),
    ))


@blueprint.get("/triage/<path:session_id>")
def triage_session(session_id: str):
    return json_response(service.triage_session(get_store(), session_id, pricer=pricer_for(get_settings())))


OPENAPI_MODELS = (TriageBatch, TriageReport)

OPENAPI_PATHS = {
    "/triage/batch": {
        "get": operation(
            "triage",
            "Triage the most recent sessions, worst health score first",
            params=[
                int_query_param(service.BATCH_LIMIT, "Sessions to triage"),
                int_query_param(service.BATCH_MIN_EVENTS, "Only sessions with at least this many events"),
                query_param("agent", {"type": "string"}, "Only this agent's sessions"),
                query_param("since", {"type": "string"},
                            "Only sessions started since: an age before until (24h, 7d) or an ISO 8601 time"),
                query_param("until", {"type": "string"}, "Only sessions started before this ISO 8601 time"),
            ],
            ok=json_content(ref(TriageBatch)),
            errors=error_responses(400),
        )
    },
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

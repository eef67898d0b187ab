"""`GET /incidents`: the same failure across sessions, grouped (services/incidents.py)."""

from __future__ import annotations

from flask import Blueprint

from obsctl.models.incidents import IncidentList
from obsctl.services import incidents as service
from obsctl.web.http import get_store, int_arg, json_response, str_arg
from obsctl.web.openapi_util import (
    error_responses,
    int_query_param,
    json_content,
    operation,
    query_param,
    ref,
)

blueprint = Blueprint("incidents", __name__)
RATE_GROUP = "incidents"


@blueprint.get("/incidents")
def list_incidents():
    return json_response(service.list_incidents(
        get_store(),
        since=str_arg("since"),
        until=str_arg("until"),
        agent=str_arg("agent"),
        min_sessions=int_arg("min_sessions"),
        gap_minutes=int_arg("gap_minutes"),
        limit=int_arg("limit"),
    ))


OPENAPI_MODELS = (IncidentList,)

OPENAPI_PATHS = {
    "/incidents": {
        "get": operation(
            "incidents",
            "Incidents: the same failure (error fingerprint, tool, model) in several sessions, "
            "most severe first",
            params=[
                query_param("since", {"type": "string"},
                            "An age before until (30m, 24h, 7d, 2w) or an ISO 8601 time; default 24h"),
                query_param("until", {"type": "string"}, "ISO 8601; default now"),
                query_param("agent", {"type": "string"}, "Only this agent's failures"),
                int_query_param(service.MIN_SESSIONS, "Sessions a failure must reach to be an incident"),
                int_query_param(service.GAP_MINUTES, "A pause this long ends an incident"),
                int_query_param(service.LIMIT, "Incidents to return"),
            ],
            ok=json_content(ref(IncidentList)),
            errors=error_responses(400),
        ),
    },
}

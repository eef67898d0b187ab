"""`/postmortem`: the postmortem report of one session, and the sessions worth one."""

from __future__ import annotations

from flask import Blueprint

from obsctl.services import postmortem as service
from obsctl.services.pricing import pricer_for
from obsctl.web.http import get_db, get_settings, int_arg, json_response, str_arg
from obsctl.web.openapi_util import (
    error_responses,
    json_content,
    operation,
    query_param,
    session_id_param,
)
from obsctl.web.routes.postmortem_schemas import POSTMORTEM_SCHEMAS

blueprint = Blueprint("postmortem", __name__)
RATE_GROUP = "postmortem"


@blueprint.get("/postmortem/candidates")
def candidates():
    return json_response(service.postmortem_candidates(
        get_db(),
        min_errors=int_arg("min_errors", service.CANDIDATES_DEFAULT_MIN_ERRORS, minimum=0),
        limit=int_arg("limit", service.CANDIDATES_DEFAULT_LIMIT, minimum=1,
                      maximum=service.CANDIDATES_MAX_LIMIT),
        agent=str_arg("agent"),
        days=int_arg("days", None, minimum=1, maximum=3650),
    ))


@blueprint.post("/postmortem/<session_id>")
def postmortem(session_id: str):
    # No body is read: the report depends on the stored session only.
    return json_response(service.postmortem_session(get_db(), session_id, pricer=pricer_for(get_settings())))


OPENAPI_SCHEMAS = POSTMORTEM_SCHEMAS

OPENAPI_PATHS = {
    "/postmortem/candidates": {
        "get": operation(
            "postmortem",
            "Sessions worth a postmortem: most severe first, then most errors, then newest",
            params=[
                query_param("min_errors", {"type": "integer",
                                           "default": service.CANDIDATES_DEFAULT_MIN_ERRORS},
                            "Only sessions with at least this many errors"),
                query_param("limit", {"type": "integer", "default": service.CANDIDATES_DEFAULT_LIMIT},
                            f"Clamped to 1..{service.CANDIDATES_MAX_LIMIT}"),
                query_param("agent", {"type": "string"}, "Only this agent's sessions"),
                query_param("days", {"type": "integer"},
                            "Only sessions started in the last N days (1..3650); default: all"),
            ],
            ok=json_content({
                "type": "object",
                "required": ["candidates", "total"],
                "properties": {
                    "candidates": {"type": "array",
                                   "items": {"$ref": "#/components/schemas/PostmortemCandidate"}},
                    "total": {"type": "integer", "minimum": 0},
                },
            }),
            errors=error_responses(400),
        )
    },
    "/postmortem/{session_id}": {
        "post": operation(
            "postmortem",
            "Generate the postmortem report of one session (no request body)",
            params=[session_id_param()],
            ok=json_content({"$ref": "#/components/schemas/PostmortemReport"}),
            errors=error_responses(404),
        )
    },
}

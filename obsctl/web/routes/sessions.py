from flask import Blueprint, request

from obsctl.models.sessions import SessionDetail, SessionList
from obsctl.services import sessions as service
from obsctl.vocabulary import SESSION_STATUSES
from obsctl.web.http import get_store, int_arg, json_response
from obsctl.web.openapi_util import (
    error_responses,
    int_query_param,
    json_content,
    operation,
    query_param,
    ref,
    session_id_param,
)

blueprint = Blueprint("sessions", __name__)
RATE_GROUP = "sessions"


def start_background(app):
    """Start the idle-session sweep of a served app; returns it (it has `stop()`)."""
    from obsctl.services.sessions.lifecycle import IdleSweeper

    return IdleSweeper(app.extensions["obsctl"].settings).start()


@blueprint.get("/sessions")
def list_sessions():
    return json_response(service.list_sessions(
        get_store(),
        status=request.args.get("status"),  # empty is invalid, not "no filter"
        limit=int_arg("limit"),
        offset=int_arg("offset"),
    ))


@blueprint.get("/sessions/<path:session_id>")
def get_session(session_id: str):
    return json_response(service.get_session(get_store(), session_id))


OPENAPI_MODELS = (SessionList,)

OPENAPI_PATHS = {
    "/sessions": {
        "get": operation(
            "sessions",
            "List sessions, newest first",
            params=[
                query_param("status", {"type": "string", "enum": list(SESSION_STATUSES)}),
                int_query_param(service.LIMIT, "Page size"),
                int_query_param(service.OFFSET, "Sessions to skip"),
            ],
            ok=json_content(ref(SessionList)),
            errors=error_responses(400),
        )
    },
    "/sessions/{session_id}": {
        "get": operation(
            "sessions",
            "One session with all of its events",
            params=[session_id_param()],
            ok=json_content(ref(SessionDetail)),
            errors=error_responses(404),
        )
    },
}

from flask import Blueprint, request

import obsctl.models.sessions as models
from obsctl.models.sessions import Score, ScoreInput, SessionDeleted, SessionList, SessionTags
from obsctl.services import sessions as service
from obsctl.services.sessions import filters, housekeeping
from obsctl.vocabulary import SESSION_STATUSES
from obsctl.web.http import bool_arg, get_store, int_arg, json_body, json_response
from obsctl.web.openapi_util import (
    error_responses,
    int_query_param,
    json_content,
    operation,
    query_param,
    ref,
    session_id_param,
)
from obsctl.web.reads import serve_reads

blueprint = Blueprint("sessions", __name__)
RATE_GROUP = "sessions"
# The reads declared in models/sessions.py (the agents list), routed and documented from there.
READ_PATHS, READ_MODELS = serve_reads(blueprint, models)


def start_background(app):
    """Start the idle-session sweep of a served app; returns it (it has `stop()`)."""
    from obsctl.services.sessions.lifecycle import IdleSweeper

    return IdleSweeper(app.extensions["obsctl"].settings).start()


@blueprint.get("/sessions")
def list_sessions():
    args = request.args
    return json_response(service.list_sessions(
        get_store(),
        status=args.get("status"),  # empty is invalid, not "no filter"
        limit=int_arg("limit"),
        offset=int_arg("offset"),
        cursor=args.get("cursor"),
        sort=args.get("sort"),
        has_errors=bool_arg("has_errors", None),
        since=args.get("since"), from_=args.get("from"), to=args.get("to"),
        **{name: int_arg(name) for name in filters.RANGE_PARAMS},
        **{name: args.get(name) for name in filters.COST_PARAMS},
        **{name: args.getlist(name) or None for name in filters.LIST_PARAMS},
    ))


@blueprint.delete("/sessions/<session_path:session_id>")
def delete_session(session_id: str):
    return json_response(housekeeping.delete_session(get_store(), session_id))


@blueprint.patch("/sessions/<path:session_id>/tags")
def tag_session(session_id: str):
    return json_response(housekeeping.tag_session(get_store(), session_id, json_body()))


@blueprint.post("/sessions/<path:session_id>/scores")
def score_session(session_id: str):
    return json_response(housekeeping.score_session(get_store(), session_id, json_body()), 201)


_PAIR = "^[A-Za-z0-9_.-]{1,64}[:=]"
_LIST_ITEMS = {"tag": {"type": "string", "pattern": _PAIR + "[^\\u0000]{1,256}$"},
               "metadata": {"type": "string", "pattern": _PAIR + "[^\\u0000]{0,256}$"}}

OPENAPI_MODELS = (SessionList, Score, ScoreInput, SessionTags, SessionDeleted)

OPENAPI_PATHS = {
    "/sessions": {
        "get": operation(
            "sessions",
            "List sessions, newest first",
            params=[
                query_param("status", {"type": "string", "enum": list(SESSION_STATUSES)}),
                int_query_param(service.LIMIT, "Page size"),
                int_query_param(service.OFFSET, "Sessions to skip (not with cursor)"),
                query_param("cursor", {"type": "string"}, "The `next` of the previous page: the page after it"),
                query_param("sort", {"type": "string", "enum": filters.sort_choices(), "default": filters.DEFAULT_SORT},
                            "Sort key; a leading - puts the largest (newest) first"),
                query_param("has_errors", {"type": "boolean"},
                            "true: only sessions with an error event; false: only those without"),
                query_param("since", {"type": "string"}, "Started at or after: an age (30m, 2h, 7d) or an ISO 8601 time"),
                query_param("from", {"type": "string", "format": "date-time"}, "Started at or after (instead of since)"),
                query_param("to", {"type": "string", "format": "date-time"}, "Started before"),
                *(int_query_param(param, f"{'At least' if name.startswith('min') else 'At most'} this many "
                                  f"{name.split('_', 1)[1]} (tokens: in + out)")
                  for name, param in filters.RANGE_PARAMS.items()),
                *(query_param(name, {"type": "number", "minimum": 0, "maximum": filters.MAX_COST},
                              f"{'At least' if name.startswith('min') else 'At most'} this cost in USD "
                              "(sessions without a priced call never match)")
                  for name in filters.COST_PARAMS),
                *({**query_param(name, {"type": "array", "items": _LIST_ITEMS.get(name, {"type": "string", "minLength": 1})},
                                 text),
                   "style": "form", "explode": True} for name, text in filters.LIST_PARAMS.items()),
            ],
            ok=json_content(ref(SessionList)),
            errors=error_responses(400),
        )
    },
    "/sessions/{session_id}": {
        "delete": operation(
            "sessions",
            "Delete a session with its events, tags and scores (the analytics rollups stay exact)",
            params=[session_id_param()],
            ok=json_content(ref(SessionDeleted)),
            errors=error_responses(404),
        ),
    },
    "/sessions/{session_id}/tags": {
        "patch": operation(
            "sessions",
            "Set tags (key: value) and remove them (key: null), as a JSON merge patch",
            params=[session_id_param()],
            request=json_content({"type": "object", "minProperties": 1,
                                  "propertyNames": {"pattern": "^[A-Za-z0-9_.-]{1,64}$"},
                                  "additionalProperties": {"anyOf": [{"type": "string", "minLength": 1,
                                                                      "maxLength": 256},
                                                                     {"type": "null"}]}}),
            ok=json_content(ref(SessionTags)),
            errors=error_responses(400, 404, 413),
        )
    },
    "/sessions/{session_id}/scores": {
        "post": operation(
            "sessions",
            "Score a session (feedback: a name, a number, an optional comment)",
            params=[session_id_param()],
            request=json_content(ref(ScoreInput)),
            status=201,
            ok=json_content(ref(Score), "Created"),
            errors=error_responses(400, 404, 413),
        )
    },
}

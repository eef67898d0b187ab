"""Explain, export and compare sessions. Shares the `/sessions` rate-limit group.

The explain and export routes take any session id, including ids with `/` (path converter);
`POST /sessions/compare` is a fixed route and cannot clash with `GET /sessions/<id>`.
"""

from flask import Blueprint, Response, request

from obsctl.models.sessions import CompareRequest, SessionComparison, SessionExplanation, SessionExport
from obsctl.services.sessions.compare import compare_sessions, parse_compare_body
from obsctl.services.sessions.explain import explain_session
from obsctl.services.sessions.export import export_session
from obsctl.web.http import get_store, json_body, json_response
from obsctl.web.openapi_util import (
    error_responses,
    json_content,
    operation,
    query_param,
    ref,
    session_id_param,
)

blueprint = Blueprint("session_views", __name__)
RATE_GROUP = "sessions"

# Up to this many events an export is sent whole with a Content-Length, which keeps the
# connection alive (waitress closes it after a chunked response); larger ones stream.
BUFFERED_EXPORT_EVENTS = 500


@blueprint.get("/sessions/<path:session_id>/explain")
def explain(session_id: str):
    return json_response(explain_session(get_store(), session_id))


@blueprint.get("/sessions/<path:session_id>/export")
def export(session_id: str):
    stream = export_session(get_store(), session_id, request.args.get("format", "json"))
    headers = {}
    if stream.format == "csv":
        headers["Content-Disposition"] = f'attachment; filename="{stream.filename}"'
    body = stream.chunks
    if stream.event_count <= BUFFERED_EXPORT_EVENTS:
        body = b"".join(body)
    # Otherwise a generator body: waitress sends it chunked as the events are read.
    return Response(body, content_type=stream.media_type, headers=headers)


@blueprint.post("/sessions/compare")
def compare():
    session_a, session_b = parse_compare_body(json_body())
    return json_response(compare_sessions(get_store(), session_a, session_b))


OPENAPI_MODELS = (CompareRequest, SessionComparison, SessionExplanation, SessionExport)

OPENAPI_PATHS = {
    "/sessions/{session_id}/explain": {
        "get": operation(
            "sessions",
            "A session explained as Markdown: header, timeline of every event, summary",
            params=[session_id_param()],
            ok=json_content(ref(SessionExplanation)),
            errors=error_responses(404),
        )
    },
    "/sessions/{session_id}/export": {
        "get": operation(
            "sessions",
            "Export a session as JSON (default) or CSV (streamed; CSV as an attachment)",
            params=[
                session_id_param(),
                query_param("format", {"type": "string", "enum": ["json", "csv"], "default": "json"}),
            ],
            ok={
                "description": "The export; CSV has the 13 columns of spec 2.3 and a "
                               'Content-Disposition: attachment; filename="session-<id>.csv" header',
                "content": {
                    "application/json": {"schema": ref(SessionExport)},
                    "text/csv": {"schema": {"type": "string"}},
                },
            },
            errors=error_responses(400, 404),
        )
    },
    "/sessions/compare": {
        "post": operation(
            "sessions",
            "Compare session_b against the baseline session_a",
            request=json_content(ref(CompareRequest)),
            ok=json_content(ref(SessionComparison)),
            errors=error_responses(400, 404, 413),
        )
    },
}

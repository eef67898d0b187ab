"""Explain, export and compare sessions. Shares the `/sessions` rate-limit group.

The explain and export routes take any session id, including ids with `/` (path converter);
`POST /sessions/compare` is a fixed route and cannot clash with `GET /sessions/<id>`.
"""

from collections.abc import Iterable

from flask import Blueprint, Response, request

from obsctl.models.compare import CompareRequest, SessionComparison
from obsctl.models.sessions import EventLine, SessionExport
from obsctl.services.sessions.bulk_export import FORMATS, MEDIA_TYPES, export_events, select_events
from obsctl.services.sessions.compare import compare_sessions, parse_compare_body
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


@blueprint.get("/sessions/<path:session_id>/export")
def export(session_id: str):
    stream = export_session(get_store(), session_id, request.args.get("format", "json"))
    headers = {}
    if stream.format == "csv":
        headers["Content-Disposition"] = f'attachment; filename="{stream.filename}"'
    body: Iterable[bytes] | bytes = stream.chunks
    if stream.event_count <= BUFFERED_EXPORT_EVENTS:
        body = b"".join(stream.chunks)
    # Otherwise a generator body: waitress sends it chunked as the events are read.
    return Response(body, content_type=stream.media_type, headers=headers)


@blueprint.get("/export")
def export_many():
    stream = export_events(get_store(), selection_args(), request.args.get("format", "jsonl"))
    # Streamed as read (chunked): the body is never built whole, whatever the number of events.
    return Response(stream.chunks, content_type=stream.media_type,
                    headers={"Content-Disposition": f'attachment; filename="{stream.filename}"'})


def selection_args():
    """The event selection of the query string (GET /export, GET /events/stream)."""
    args = request.args
    return select_events(since=args.get("since"), until=args.get("until"), agents=args.getlist("agent"),
                         statuses=args.getlist("status"), session_ids=args.getlist("session"),
                         event_types=args.getlist("event_type") + args.getlist("type"))


def selection_params() -> list[dict]:
    """The OpenAPI query parameters read by selection_args."""
    many = {"type": "array", "items": {"type": "string"}}
    return [
        query_param("since", {"type": "string"},
                    "Events at or after this time: ISO 8601, or an age before until (30m, 24h, 7d, 2w)"),
        query_param("until", {"type": "string"}, "Events before this time, ISO 8601"),
        query_param("agent", many, "Sessions of this agent (repeat for several)"),
        query_param("status", {"type": "array", "items": {"type": "string", "enum": ["active", "completed", "error"]}},
                    "Sessions with this status (repeat for several)"),
        query_param("session", many, "This session (repeat for several)"),
        query_param("event_type", many, "Events of this type (repeat for several)"),
        {**query_param("type", many, "The older name of event_type"), "deprecated": True},
    ]


@blueprint.post("/sessions/compare")
def compare():
    session_a, session_b = parse_compare_body(json_body())
    return json_response(compare_sessions(get_store(), session_a, session_b))


OPENAPI_MODELS = (CompareRequest, EventLine, SessionComparison, SessionExport)

OPENAPI_PATHS = {
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
    "/export": {
        "get": operation(
            "sessions",
            "Export the events of many sessions (all, or those the filters select) as JSON Lines "
            "(default), CSV or Parquet, streamed, as an attachment",
            params=[
                query_param("format", {"type": "string", "enum": list(FORMATS), "default": "jsonl"},
                            "parquet needs pyarrow on the server (pip install 'obsctl[parquet]'); "
                            "without it, 400"),
                *selection_params(),
            ],
            ok={
                "description": "One event a line (JSON Lines: an EventLine object each, re-ingestable) or "
                               "row (CSV and Parquet: the same 18 columns), in time order; "
                               'Content-Disposition: attachment; filename="obsctl-export.<format>"',
                "content": {
                    MEDIA_TYPES["jsonl"]: {"schema": {"type": "string", "description": "EventLine objects, "
                                                                                       "one a line"}},
                    "text/csv": {"schema": {"type": "string"}},
                    MEDIA_TYPES["parquet"]: {"schema": {"type": "string", "format": "binary"}},
                },
            },
            errors=error_responses(400),
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

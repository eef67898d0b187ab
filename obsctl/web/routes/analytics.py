"""`GET /analytics`: aggregate analytics across all sessions (spec 2.5)."""

from flask import Blueprint

from obsctl.services.analytics import get_analytics
from obsctl.web.http import get_store, json_response
from obsctl.web.openapi_util import json_content, operation, rate_field

blueprint = Blueprint("analytics", __name__)
RATE_GROUP = "analytics"


@blueprint.get("/analytics")
def analytics():
    return json_response(get_analytics(get_store()))


_INT = {"type": "integer", "minimum": 0}
_NUMBER = {"type": "number"}
_PERCENT = {"type": "number", "minimum": 0, "maximum": 100}
_NULLABLE_NUMBER = {"type": ["number", "null"]}
_NULLABLE_STRING = {"type": ["string", "null"]}


def _obj(**properties) -> dict:
    return {"type": "object", "required": list(properties), "properties": properties}


def _list(**properties) -> dict:
    return {"type": "array", "items": _obj(**properties)}


OPENAPI_SCHEMAS = {
    "Analytics": _obj(
        overview=_obj(
            total_sessions=_INT, active_sessions=_INT, completed_sessions=_INT,
            error_sessions=_INT,
            error_rate=rate_field("error_session_rate", _PERCENT,
                                  "The error_session_rate under the spec's name (of sessions, "
                                  "not events)"),
            error_session_rate=rate_field("error_session_rate", _PERCENT),
            total_events={**_INT, "description": "Every stored event, session_start and "
                                                  "session_end included"},
            total_tokens=_INT, total_tokens_in=_INT, total_tokens_out=_INT,
            avg_tokens_per_session=_NUMBER,
            earliest_session={**_NULLABLE_STRING, "description": "Earliest started_at"},
            latest_session={**_NULLABLE_STRING, "description": "Latest started_at"},
        ),
        duration={**_obj(avg_ms=_NULLABLE_NUMBER, min_ms=_NULLABLE_NUMBER, max_ms=_NULLABLE_NUMBER),
                  "description": "Wall-clock duration of ended sessions; null when none has ended"},
        top_agents={**_list(agent_name={"type": "string"}, session_count=_INT, total_tokens=_INT,
                            avg_tokens=_NUMBER),
                    "maxItems": 10, "description": "Top 10 agents by total tokens"},
        model_usage={**_list(model={"type": "string"}, call_count=_INT, total_tokens=_INT,
                             total_tokens_in=_INT, total_tokens_out=_INT,
                             avg_duration_ms=_NULLABLE_NUMBER),
                     "description": "Events with a model, most calls first"},
        event_types={**_list(event_type={"type": "string"}, count=_INT),
                     "description": "Without session_start and session_end, most frequent first"},
        sessions_over_time={**_list(day={"type": "string", "description": "YYYY-MM-DD (UTC)"},
                                    session_count=_INT, total_tokens=_INT),
                            "description": "Days with sessions started in the last 90 days (UTC), "
                                           "oldest first"},
        hourly_activity={**_list(hour={"type": "integer", "minimum": 0, "maximum": 23},
                                 event_count=_INT),
                         "minItems": 24, "maxItems": 24,
                         "description": "Events per hour of day (UTC) across all time, hours 0-23"},
    )
}

OPENAPI_PATHS = {
    "/analytics": {
        "get": operation(
            "analytics",
            "Aggregate analytics across all sessions",
            ok=json_content({"$ref": "#/components/schemas/Analytics"}),
        )
    }
}
